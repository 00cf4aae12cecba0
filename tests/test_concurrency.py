"""Processes capturing into one workspace at once lose nothing and never fail with
'database is locked' (WAL + BEGIN IMMEDIATE + busy timeout), with the nightly job and
recall running beside them. The eight-writer scenario is bench/soak_concurrency.py's,
run here with small counts (the script runs the full ones)."""

from __future__ import annotations

import importlib
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
