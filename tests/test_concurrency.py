"""Processes capturing into one workspace at once lose nothing and never fail with
'database is locked' (WAL + BEGIN IMMEDIATE + busy timeout), with the nightly job and
recall running beside them. The eight-writer scenario is bench/soak_concurrency.py's,
run here with small counts (the script runs the full ones)."""

from __future__ import annotations

import fcntl
import importlib
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine

pytestmark = pytest.mark.slow  # subprocesses and real servers: `make check` runs it

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
soak = importlib.import_module("soak_concurrency")

WRITER = textwrap.dedent(
    """
    import sys
    from datetime import datetime, UTC
    from pathlib import Path
    from memoracle.config import load
    from memoracle.engine import Engine
    from memoracle.types import Turn

    home, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    settings = load(home, env={})
    at = datetime(2023, 5, 8, tzinfo=UTC)
    with Engine.open(settings) as engine:
        for i in range(count):
            text = f"I prefer option {name}-{i}. Never deploy build {name}-{i} on Friday."
            engine.capture([Turn("user", text, at, f"session-{name}", str(i))])
    """
)


def test_two_processes_capture_at_once(settings: Settings, clock: FixedClock) -> None:
    Engine.init(settings, clock=clock)
    count = 150
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(settings.home), name, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "locked" not in err
    with Engine.open(settings, clock=clock) as engine:
        s = engine.stats()
    assert s.episodes == 2 * count
    assert s.sessions == 2
    assert s.memories == 2 * count * 2


def test_eight_writers_with_nightly_and_recall_running_lose_nothing(tmp_path: Path) -> None:
    got = soak.writers(tmp_path / "home", count=8, captures=12)
    assert got["errors"] == []  # no writer failed, none saw "database is locked"
    assert got["episodes"] == 8 * 12
    assert got["lost_turns"] == got["duplicated_turns"] == 0
    assert got["memories_added"] == 8 * 12 * 2  # each turn states two things
    assert got["lost_memories"] == got["duplicated_memories"] == 0
    assert got["runs"] >= 1 and got["recalls"] >= 1  # both ran beside the writers
    assert got["integrity"] == "ok"


HOLDER = textwrap.dedent(
    """
    import sys, time
    from datetime import UTC, datetime
    from pathlib import Path
    from memoracle.store import Store
    store = Store.open(Path(sys.argv[1]), now=datetime(2023, 5, 8, tzinfo=UTC))
    with store.transaction():
        print("holding", flush=True)
        time.sleep(60)
    """
)


def test_the_writer_lock_is_held_for_a_transaction_and_dropped_by_a_kill(
    settings: Settings, clock: FixedClock
) -> None:
    Engine.init(settings, clock=clock)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(settings.db_path)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    with open(f"{settings.db_path}-writer", "rb") as lock:
        with pytest.raises(BlockingIOError):  # writers queue here, a millisecond a try
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a killed holder's is gone
        fcntl.flock(lock, fcntl.LOCK_UN)
    with Engine.open(settings, clock=clock) as engine:
        engine.remember("Never deploy on Fridays.", kind="guardrail")  # not locked out
        assert engine.stats().memories == 1
