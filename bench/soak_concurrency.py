"""Soak: many processes on one workspace, and processes killed with SIGKILL mid-work.

1. `writers`: W writer processes capture N turns each (one transaction per turn, as an
   agent host does) while a nightly process runs the nightly job in a loop and a
   recall process recalls in a loop. Afterwards: every turn stored exactly once, every
   memory a writer was told it added is there, no two live copies of one memory, no
   "database is locked", `PRAGMA integrity_check` ok.
2. `kills`: K rounds on one workspace; each starts a nightly run, an ingest of an agent
   log or a capture loop, lets it work a random while, and kills it with SIGKILL.
   After each kill: the store passes `integrity_check`, its memory and episode counts
   never drop, every turn the capture loop reported committed is stored, MEMORY.md is
   whole (both markers) or absent. At the end an undisturbed nightly run and a second
   ingest of the log finish the work: no duplicate turns, every log turn stored once.

The tests run small counts of both (tests/test_concurrency.py,
tests/test_nightly_killed.py); this script runs the full ones:

    python bench/soak_concurrency.py [--writers 8] [--captures 200] [--kills 120] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

OVERRIDES = '{"embedding.model": "hash"}'
_OPEN = """
import json, sys, time
from pathlib import Path
from memoracle.config import load
from memoracle.engine import Engine
home = Path(sys.argv[1])
settings = load(home, env={}, overrides=json.loads(sys.argv[2]))
"""

WRITER = _OPEN + textwrap.dedent(
    """
    from memoracle.types import Turn
    name, count = sys.argv[3], int(sys.argv[4])
    added = []
    with Engine.open(settings) as engine:
        for i in range(count):
            text = (
                f"We decided to use tool{name}x{i} for project{name}y{i}."
                f" I prefer editor{name}z{i} for writing."
            )
            result = engine.capture([Turn("user", text, None, f"session-{name}", str(i))])
            added += [m.id for m in result.added]
    print(json.dumps({"added": added}))
    """
)

NIGHTLY_LOOP = _OPEN + textwrap.dedent(
    """
    from memoracle.jobs import nightly
    stop, runs = Path(sys.argv[3]), 0
    while not stop.exists():
        with Engine.open(settings) as engine:
            nightly.run_nightly(engine)
        runs += 1
    print(json.dumps({"runs": runs}))
    """
)

RECALL_LOOP = _OPEN + textwrap.dedent(
    """
    stop, recalls, found = Path(sys.argv[3]), 0, 0
    with Engine.open(settings) as engine:
        while not stop.exists():
            block = engine.recall("which tool did we decide to use for the project?")
            recalls += 1
            found += bool(block.lines)
    print(json.dumps({"recalls": recalls, "found": found}))
    """
)

# The killed workers print "go" once their engine is open, so a kill lands in the work.
NIGHTLY_ONCE = _OPEN + textwrap.dedent(
    """
    from memoracle.jobs import nightly
    with Engine.open(settings) as engine:
        print("go", flush=True)
        nightly.run_nightly(engine)
    """
)

INGEST = _OPEN + textwrap.dedent(
    """
    with Engine.open(settings) as engine:
        print("go", flush=True)
        engine.ingest([Path(sys.argv[3])], fmt="jsonl")
    """
)

CAPTURE_LOOP = _OPEN + textwrap.dedent(
    """
    from memoracle.types import Turn
    tag = sys.argv[3]
    with Engine.open(settings) as engine:
        print("go", flush=True)
        for i in range(100_000):
            text = f"We decided to use kit{tag}q{i} for module{tag}w{i}."
            engine.capture([Turn("user", text, None, f"capture-{tag}", str(i))])
            print(f"committed {i}", flush=True)
    """
)


def _python(script: str, *args: object) -> list[str]:
    return [sys.executable, "-c", script, *(str(a) for a in args)]


def init(home: Path) -> None:
    """A workspace with the hash embedder (no model to load), and a first MEMORY.md."""
    subprocess.run(
        _python(
            _OPEN + "Engine.init(settings)\nwith Engine.open(settings) as e:\n"
            "    e.remember('Never deploy on Fridays.', kind='guardrail')\n",
            home,
            OVERRIDES,
        ),
        check=True,
    )


def facts(db_path: Path) -> dict[str, Any]:
    """What the checks read straight from the file (as a crash leaves it)."""
    with sqlite3.connect(db_path, timeout=60) as db:
        one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "integrity": one("PRAGMA integrity_check"),
            "memories": one("SELECT count(*) FROM memories"),
            "episodes": one("SELECT count(*) FROM episodes"),
            "live_duplicates": one(
                "SELECT count(*) FROM (SELECT 1 FROM memories"
                " WHERE status IN ('active', 'disputed') GROUP BY content_hash, subject,"
                " agent_id, user_id, chat_id HAVING count(*) > 1)"
            ),
            "turns": {
                (str(s), str(t)) for s, t in db.execute("SELECT session_id, turn_id FROM episodes")
            },
            "ids": {int(r[0]) for r in db.execute("SELECT id FROM memories")},
        }


def writers(home: Path, *, count: int = 8, captures: int = 200) -> dict[str, Any]:
    """Scenario 1 (module docstring); returns its counts and whether each check held."""
    init(home)
    stop = home / "stop"
    started = time.perf_counter()
    loops = [
        subprocess.Popen(_python(s, home, OVERRIDES, stop), stdout=subprocess.PIPE, text=True)
        for s in (NIGHTLY_LOOP, RECALL_LOOP)
    ]
    procs = [
        subprocess.Popen(
            _python(WRITER, home, OVERRIDES, f"w{n}", captures),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    added: list[int] = []
    errors: list[str] = []
    for proc in procs:
        out, err = proc.communicate(timeout=1800)
        if proc.returncode != 0 or "locked" in err:
            errors.append(err[-2000:])
        else:
            added += json.loads(out)["added"]
    stop.touch()
    extra: dict[str, Any] = {}
    for proc in loops:
        out, _ = proc.communicate(timeout=600)
        if proc.returncode != 0:
            errors.append(f"loop exited {proc.returncode}")
        else:
            extra.update(json.loads(out))
    seconds = time.perf_counter() - started
    got = facts(home / "memoracle.db")
    wanted = {(f"session-w{n}", str(i)) for n in range(count) for i in range(captures)}
    return {
        "writers": count,
        "captures_each": captures,
        "seconds": round(seconds, 1),
        **extra,
        "episodes": got["episodes"],
        "memories_added": len(added),
        "lost_turns": len(wanted - got["turns"]),
        "duplicated_turns": got["episodes"] - len(got["turns"]),
        "lost_memories": len(set(added) - got["ids"]),
        "duplicated_memories": got["live_duplicates"] + len(added) - len(set(added)),
        "errors": errors,
        "integrity": got["integrity"],
    }


def agent_log(path: Path, turns: int) -> None:
    """An agent log of `turns` user turns that each state something new."""
    with path.open("w") as f:
        for i in range(turns):
            text = f"I prefer gadget{i} for chore{i}." if i % 2 else f"We use lib{i} for job{i}."
            f.write(json.dumps({"role": "user", "content": text, "id": f"t{i}"}) + "\n")


def _kill_one(home: Path, target: str, log: Path, rng: random.Random, round_: int) -> set[str]:
    """Start `target`, wait for its "go", let it work a random while, SIGKILL it.
    Returns the turn ids a capture loop said it committed."""
    script, arg, window = {
        "nightly": (NIGHTLY_ONCE, "", 1.0),
        "ingest": (INGEST, log, 3.0),
        "capture": (CAPTURE_LOOP, round_, 3.0),
    }[target]
    proc = subprocess.Popen(
        _python(script, home, OVERRIDES, arg), stdout=subprocess.PIPE, text=True, bufsize=1
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # "go" (or "" if it died first)
    time.sleep(rng.uniform(0, window))
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    return {line.split()[1] for line in out.splitlines() if line.startswith("committed ")}


def _memory_md_whole(home: Path) -> bool:
    path = home / "workspace" / "MEMORY.md"
    if not path.exists():
        return True
    text = path.read_text()
    return "memoracle:begin" in text and "memoracle:end" in text


def kills(home: Path, *, rounds: int = 120, seed: int = 0, log_turns: int = 3000) -> dict[str, Any]:
    """Scenario 2 (module docstring); returns its counts and each kind of failure seen."""
    rng = random.Random(seed)
    init(home)
    log = home / "agent.jsonl"
    agent_log(log, log_turns)
    problems: list[str] = []
    targets = ("nightly", "ingest", "capture")
    done = {t: 0 for t in targets}
    last = facts(home / "memoracle.db")
    committed: set[tuple[str, str]] = set()
    for n in range(rounds):
        target = targets[n % 3]
        ids = _kill_one(home, target, log, rng, n)
        committed |= {(f"capture-{n}", i) for i in ids}
        done[target] += 1
        now = facts(home / "memoracle.db")
        where = f"round {n} ({target}, seed {seed})"
        if now["integrity"] != "ok":
            problems.append(f"{where}: integrity {now['integrity']}")
        if now["memories"] < last["memories"] or now["episodes"] < last["episodes"]:
            problems.append(f"{where}: counts dropped")
        if committed - now["turns"]:
            problems.append(f"{where}: {len(committed - now['turns'])} committed turns lost")
        if not _memory_md_whole(home):
            problems.append(f"{where}: MEMORY.md half-written")
        last = now
    finish = [
        subprocess.run(_python(NIGHTLY_ONCE, home, OVERRIDES, ""), capture_output=True),
        subprocess.run(_python(INGEST, home, OVERRIDES, log), capture_output=True),
    ]
    problems += [f"final run failed: {p.stderr.decode()[-500:]}" for p in finish if p.returncode]
    end = facts(home / "memoracle.db")
    log_ids = {(str(log), f"t{i}") for i in range(log_turns)}
    stored = {(s, t) for s, t in end["turns"] if s == str(log)}
    if stored != log_ids:
        problems.append(f"after the final ingest {len(log_ids - stored)} log turns missing")
    if end["episodes"] != len(end["turns"]):
        problems.append("duplicate turns")
    if not _memory_md_whole(home) or not (home / "workspace" / "MEMORY.md").exists():
        problems.append("MEMORY.md missing or half-written after the final nightly run")
    return {
        "kills": sum(done.values()),
        "by_target": done,
        "seed": seed,
        "capture_turns_committed": len(committed),
        "memories": end["memories"],
        "episodes": end["episodes"],
        "integrity": end["integrity"],
        "problems": problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--captures", type=int, default=200)
    parser.add_argument("--kills", type=int, default=120)
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SEED", "0") or 0))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one = writers(Path(tmp) / "writers", count=args.writers, captures=args.captures)
        print(json.dumps(one, indent=2))
        two = kills(Path(tmp) / "kills", rounds=args.kills, seed=args.seed)
        print(json.dumps(two, indent=2))
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import write_results

    print(f"results: {write_results('soak_concurrency', {'writers': one, 'kills': two})}")


if __name__ == "__main__":
    main()
