"""What a fresh process pays before it answers (issue targets: a cold `recall` on a
10k store ≤ 0.5 s, a cold `capture` ≤ 0.5 s, MCP ready ≤ 0.7 s, the warm server's first
recall ≤ 100 ms after it says ready), each timed from spawn, N times, median and tails.

- recall: `memoracle recall QUESTION --json` on the 10k-turn store of cold_recall.py
  (built once; `--keep DIR` reuses it);
- capture: `memoracle capture --user TEXT` of a new turn into that store;
- mcp: `memoracle mcp` on stdio, until it answers `initialize`, then its first
  `memory_recall` (tools/call) answered;
- serve: `memoracle serve` until its socket is there, then its first recall.

Each figure is given twice: wall time, and the CPU time the process spent (user +
system, from its rusage or /proc): on a machine shared with other work the first
measures the load as much as memoracle, the second does not. Every process uses the
default model, as a user's does. The model's ready-to-map cache
(HOME/cache/models, `embed.mapped`) is written by the first process that embeds: run
once with `--fresh-cache` to see the first process's cost (the cache removed first).

    python bench/cold_start.py [--size 10000] [--runs 10] [--keep DIR] [--fresh-cache]

The memoracle measured is the one `python -m memoracle.cli` finds: put another
checkout's src first on PYTHONPATH to measure it on the same store. Its modules are
byte-compiled first, as an installed package's are (with PYTHONDONTWRITEBYTECODE set, a
checkout's would otherwise be compiled again by every process).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import summary_ms, write_results
from cold_recall import CLI, QUESTIONS, _call, store

Timing = tuple[float, float]  # (wall seconds, CPU seconds)


def recall(home: Path, i: int) -> Timing:
    return _timed([*CLI, "--home", str(home), "recall", QUESTIONS[i % len(QUESTIONS)], "--json"])


def capture(home: Path, i: int) -> Timing:
    text = f"I booked the train to Lyon for the {i % 28 + 1}th, seat {i}."
    args = ["capture", "--user", text, "--session", f"cold-{os.getpid()}", "--turn", f"c{i}"]
    return _timed([*CLI, "--home", str(home), *args])


def _timed(args: list[str]) -> Timing:
    before = _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[3:5])} failed: {done.stderr}")
    return elapsed, _children_cpu() - before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mcp(home: Path, i: int) -> tuple[Timing, Timing]:
    """Spawn to `initialize` answered; then the first recall, answered."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [*CLI, "--home", str(home), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "bench", "version": "0"}}  # fmt: skip
        _rpc(server, 1, "initialize", hello)
        ready, ready_cpu = time.perf_counter() - started, _cpu(server.pid)
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        server.stdin.write("\n")
        first = time.perf_counter()
        ask = {"name": "memory_recall", "arguments": {"query": QUESTIONS[i % len(QUESTIONS)]}}
        _rpc(server, 2, "tools/call", ask)
        first_cpu = _cpu(server.pid) - ready_cpu
        return (ready, ready_cpu), (time.perf_counter() - first, first_cpu)
    finally:
        server.stdin.close()
        server.terminate()
        server.wait(30)


def _rpc(server: subprocess.Popen[str], key: int, method: str, params: dict[str, Any]) -> None:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": key, "method": method,
                                   "params": params}) + "\n")  # fmt: skip
    server.stdin.flush()
    while True:
        line = server.stdout.readline()
        if not line:
            raise SystemExit(f"the MCP server closed before answering {method}")
        reply = json.loads(line)
        if reply.get("id") == key:
            if "error" in reply or reply.get("result", {}).get("isError"):
                raise SystemExit(f"the MCP server said: {reply}")
            return


def serve(home: Path, i: int) -> tuple[Timing, Timing]:
    """Spawn to socket there; then the first recall, answered."""
    folder = Path(tempfile.mkdtemp(prefix="mc-", dir="/tmp"))
    path = folder / "s.sock"
    started = time.perf_counter()
    server = subprocess.Popen(
        [*CLI, "--home", str(home), "serve", "--socket", str(path)], stderr=subprocess.DEVNULL
    )
    try:
        while not path.exists():
            if server.poll() is not None:
                raise SystemExit("the warm server exited before it was ready")
            time.sleep(0.005)
        ready, ready_cpu = time.perf_counter() - started, _cpu(server.pid)
        first = time.perf_counter()
        _call(path, {"op": "recall", "message": QUESTIONS[i % len(QUESTIONS)]})
        first_cpu = _cpu(server.pid) - ready_cpu
        return (ready, ready_cpu), (time.perf_counter() - first, first_cpu)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def byte_compile() -> None:
    """The measured memoracle's modules compiled to __pycache__, as `pip install` does."""
    where = subprocess.run(
        [sys.executable, "-c", "import memoracle, os; print(os.path.dirname(memoracle.__file__))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    subprocess.run([sys.executable, "-m", "compileall", "-q", where], check=True)


def _add(result: dict[str, Any], name: str, timings: list[Timing]) -> None:
    result[name] = summary_ms([t[0] for t in timings])
    result[f"{name}_cpu"] = summary_ms([t[1] for t in timings])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10, help="processes of each kind")
    parser.add_argument("--keep", type=Path, help="build the store here and reuse it")
    parser.add_argument("--fresh-cache", action="store_true", help="remove the model cache")
    args = parser.parse_args()
    os.environ.pop("MEMORACLE_EMBEDDING_MODEL", None)  # the default model, as for a user
    home = store(args.size, args.keep)
    byte_compile()
    if args.fresh_cache:
        shutil.rmtree(home / "cache", ignore_errors=True)
        wall, cpu = recall(home, 0)
        print(f"first recall, cache written: {wall:.2f} s wall, {cpu:.2f} s CPU")
    result: dict[str, Any] = {"size": args.size, "runs": args.runs}
    for name, command in (("recall", recall), ("capture", capture)):
        _add(result, name, [command(home, i) for i in range(args.runs)])
    for name, door in (("mcp", mcp), ("serve", serve)):
        pairs = [door(home, i) for i in range(args.runs)]
        _add(result, f"{name}_ready", [p[0] for p in pairs])
        _add(result, f"{name}_first_recall", [p[1] for p in pairs])
    for key, value in result.items():
        print(f"{key}: {json.dumps(value)}")
    print(f"written to {write_results('cold_start', result)}")


if __name__ == "__main__":
    sys.exit(main())
