"""A nightly run killed with SIGKILL at random points of its work (counted from when it
takes its lock; a run takes about half a second here), and at its very start: the next
run finishes the work and nothing is lost (subprocess test: the store is left as a real
kill leaves it). The points come from a seed shown in each test's id; set
MEMORACLE_KILL_SEED to run the same points again.

Then kills of every kind in turn (a nightly run, an ingest, a capture loop) on one
workspace: bench/soak_concurrency.py's scenario with a handful of rounds (the script
runs over a hundred)."""

from __future__ import annotations

import importlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine

pytestmark = pytest.mark.slow  # subprocesses and real servers: `make check` runs it

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
soak = importlib.import_module("soak_concurrency")

RUN = textwrap.dedent(
    """
    import sys
    from datetime import datetime
    from pathlib import Path
    from memoracle.jobs import nightly
    from memoracle.clock import FixedClock
    from memoracle.config import load
    from memoracle.engine import Engine

    settings = load(Path(sys.argv[1]), env={}, overrides={"embedding.model": "hash"})
    with Engine.open(settings, clock=FixedClock(datetime.fromisoformat(sys.argv[2]))) as e:
        nightly.run_nightly(e)
    """
)


def _counts(settings: Settings) -> tuple[int, str]:
    with sqlite3.connect(settings.db_path) as db:
        memories = db.execute("SELECT count(*) FROM memories").fetchone()[0]
        check = db.execute("PRAGMA integrity_check").fetchone()[0]
    return int(memories), str(check)


SEED = int(os.environ.get("MEMORACLE_KILL_SEED") or time.time_ns() % 1_000_000)
_RNG = random.Random(SEED)
POINTS = [0.0, *sorted(round(_RNG.uniform(0, 0.6), 3) for _ in range(4))]


@pytest.mark.parametrize("after", POINTS, ids=[f"{p}s-seed{SEED}" for p in POINTS])
def test_a_killed_nightly_run_loses_nothing_and_the_next_one_finishes(
    settings: Settings, clock: FixedClock, after: float
) -> None:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        for n in range(150):
            engine.remember(f"Ticket ABC-{n} was closed by Marc on the staging server.")
            engine.remember(f"Ticket ABC-{n} was closed by Marc on the staging server today.")
        engine.remember("Never deploy on Fridays.", kind="guardrail")
    clock.advance(days=200)
    before, _ = _counts(settings)
    now = clock.now().isoformat()
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(settings.home), now])
    lock = settings.home / "nightly.lock"
    deadline = time.monotonic() + 60
    while not lock.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)  # the run has begun its work once it holds the lock
    time.sleep(after)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)

    assert _counts(settings) == (before, "ok")  # a kill never deletes or corrupts
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(settings.home), now], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr  # the dead run's lock is taken over
    assert _counts(settings) == (before, "ok")
    with Engine.open(settings, clock=FixedClock(clock.now() + timedelta(seconds=1))) as engine:
        assert engine.duplicates() == []  # the merges were finished
        assert engine._store.runs.last("nightly:clean", status="ok") is not None
        memory_md = (settings.files_dir / "MEMORY.md").read_text()
    assert "memoracle:begin" in memory_md and "memoracle:end" in memory_md
    assert "Never deploy on Fridays." in memory_md


def test_kills_of_nightly_ingest_and_capture_never_corrupt_or_lose(tmp_path: Path) -> None:
    got = soak.kills(tmp_path / "home", rounds=6, seed=SEED, log_turns=400)
    assert got["by_target"] == {"nightly": 2, "ingest": 2, "capture": 2}
    # per kill: integrity ok, counts never drop, committed captures kept, MEMORY.md
    # whole; at the end: every log turn stored once, MEMORY.md written
    assert got["problems"] == [], f"seed {SEED}"
    assert got["integrity"] == "ok"
    assert got["episodes"] >= 400 + got["capture_turns_committed"]
