"""What a host pays per turn to reach memoracle, on a 10k-turn store: `memoracle recall`
as a cold process (target p50 ≤ 1 s), and recall + capture through the warm server,
`memoracle serve` on its unix socket (target per turn p50 ≤ 50 ms, p95 ≤ 150 ms).

The store is recall_speed.py's (synthetic agent turns through the capture path, a vector
of the default model's size for every text); it is built once (`--keep DIR` reuses it).
Cold: N processes `python -m memoracle.cli recall QUESTION --json`, one after another,
each timed from spawn to exit (the default embedding model is loaded by each, as it is
for a user). Warm: one server started, its first request (the model load) reported
apart, then per turn a recall of the question and a capture of a new turn with its own
id, each a fresh connection, as the OpenClaw plugin makes them.

    python bench/cold_recall.py [--size 10000] [--runs 10] [--turns 50] [--keep DIR]
    python bench/cold_recall.py --importtime     # the 25 slowest imports of one recall

The memoracle measured is the one `python -m memoracle.cli` finds: put another checkout's
src first on PYTHONPATH (with --turns 0) to measure it on the same store.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import summary_ms, write_results
from recall_speed import build

QUESTIONS = [
    "Where did Anna move last month?",
    "What do I need to finish by Friday?",
    "Which VPN did we decide to use?",
    "When is the dentist appointment?",
    "What did Marc recommend?",
    "Remind me what we agreed about the NAS",
    "Who went to Lisbon with me?",
    "What should I never do on the staging server?",
    "What is the plan for the garden beds?",
    "What did we say about the tax return?",
]
CLI = [sys.executable, "-m", "memoracle.cli"]


def store(size: int, keep: Path | None) -> Path:
    home = (keep or Path(tempfile.mkdtemp(prefix="memoracle-cold-"))) / f"store-{size}"
    if not (home / "memoracle.db").exists():
        started = time.perf_counter()
        build(home, size, random.Random(7)).close()
        print(f"built {size} turns in {time.perf_counter() - started:.0f} s at {home}")
    return home


def cold(home: Path, runs: int) -> dict[str, Any]:
    times = []
    for i in range(runs):
        question = QUESTIONS[i % len(QUESTIONS)]
        started = time.perf_counter()
        done = subprocess.run(
            [*CLI, "--home", str(home), "recall", question, "--json"],
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - started)
        if done.returncode != 0 or not json.loads(done.stdout)["text"]:
            raise SystemExit(f"recall failed: {done.stderr}")
    return summary_ms(times)


def _call(path: Path, request: dict[str, Any]) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        conn.sendall(json.dumps(request).encode() + b"\n")
        with conn.makefile("rb") as stream:
            reply: dict[str, Any] = json.loads(stream.readline())
    if not reply.get("ok"):
        raise SystemExit(f"the warm server said: {reply}")
    return reply


def warm(home: Path, turns: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="mw-", dir="/tmp"))
    session = f"warm-{os.getpid()}"  # new turns on every run of a kept store
    path = folder / "s.sock"
    server = subprocess.Popen(
        [*CLI, "--home", str(home), "serve", "--socket", str(path)],
        stderr=subprocess.DEVNULL,
    )
    try:
        started = time.perf_counter()
        while not path.exists():
            time.sleep(0.02)
        up = time.perf_counter() - started
        first = time.perf_counter()
        _call(path, {"op": "recall", "message": QUESTIONS[0]})
        first_recall = time.perf_counter() - first
        recalls, captures, per_turn = [], [], []
        for i in range(turns):
            question = QUESTIONS[i % len(QUESTIONS)]
            t0 = time.perf_counter()
            _call(path, {"op": "recall", "message": question, "budget": 2000})
            t1 = time.perf_counter()
            turn = [
                {"user": f"{question} Also, I booked the train for {i}.", "session": session,
                 "turn": f"u{i}"},
                {"assistant": "Noted.", "session": session, "turn": f"a{i}"},
            ]  # fmt: skip
            _call(path, {"op": "capture", "turns": turn})
            t2 = time.perf_counter()
            recalls.append(t1 - t0)
            captures.append(t2 - t1)
            per_turn.append(t2 - t0)
    finally:
        server.terminate()
        server.wait(30)
        with contextlib.suppress(OSError):
            folder.rmdir()
    return {
        "socket_up_s": round(up, 2),
        "first_recall_s": round(first_recall, 2),
        "recall": summary_ms(recalls),
        "capture": summary_ms(captures),
        "turn": summary_ms(per_turn),
    }


def importtime(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "memoracle.cli", "--home", str(home),
         "recall", QUESTIONS[0]],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
    rows = [r for r in rows if r[0].split(":")[1].strip().isdigit()]
    rows.sort(key=lambda r: -int(r[1]))
    for row in rows[:25]:
        print(f"{int(row[1]) / 1000:8.1f} ms cumulative  {row[2].rstrip()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10, help="cold recall processes")
    parser.add_argument("--turns", type=int, default=50, help="warm turns")
    parser.add_argument("--keep", type=Path, help="build the store here and reuse it")
    parser.add_argument("--importtime", action="store_true", help="print the slowest imports")
    args = parser.parse_args()
    os.environ.pop("MEMORACLE_EMBEDDING_MODEL", None)  # the default model, as for a user
    home = store(args.size, args.keep)
    if args.importtime:
        importtime(home)
        return
    result = {"size": args.size, "cold_recall": cold(home, args.runs)}
    print(f"cold recall, {args.runs} processes: {json.dumps(result['cold_recall'])}")
    if args.turns:  # --turns 0: the cold path only (a memoracle without `serve`)
        result["warm"] = warm(home, args.turns)
        print(f"warm, {args.turns} turns: {json.dumps(result['warm'])}")
    print(f"written to {write_results('cold_recall', result)}")


if __name__ == "__main__":
    main()
