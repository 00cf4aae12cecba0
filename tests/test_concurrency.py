"""Two processes capturing into one workspace at once lose nothing and never fail with
'database is locked' (WAL + BEGIN IMMEDIATE + busy timeout)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine

pytestmark = pytest.mark.slow  # subprocesses and real servers: `make check` runs it

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
