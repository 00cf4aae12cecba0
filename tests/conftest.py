from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.store import Store

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test touches the real per-user data dir or inherits a developer's settings."""
    monkeypatch.setenv("MEMORACLE_HOME", str(tmp_path / "home"))
    for name in list(os.environ):
        if name.startswith("MEMORACLE_") and name != "MEMORACLE_HOME":
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True, scope="session")
def _one_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test's HOME maps the real model from one cache folder (87 MB, written by the
    first test that embeds), not one each (`embed.mapped`)."""
    import memoracle.engine.state

    patch = pytest.MonkeyPatch()
    patch.setattr(memoracle.engine.state, "MODELS_DIR", tmp_path_factory.mktemp("models"))
    yield
    patch.undo()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # The hash embedder: deterministic, no model to load (`use` below has the real one).
    return load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})


@pytest.fixture
def store(tmp_path: Path, clock: FixedClock) -> Iterator[Store]:
    s = Store.open(tmp_path / "store.db", now=clock.now())
    yield s
    s.close()


@pytest.fixture
def engine(settings: Settings, clock: FixedClock) -> Iterator[Engine]:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as e:
        yield e


@pytest.fixture
def use(tmp_path: Path, clock: FixedClock) -> Iterator[Engine]:
    """An engine with the real multilingual model, for what depends on meaning (the
    hash embedder knows none)."""
    settings = load(tmp_path / "use-home", env={}, overrides={"embedding.model": "use"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as e:
        yield e


FAKE_CRONTAB = """#!/bin/sh
table="$FAKE_CRONTAB_FILE"
if [ "$1" = "-l" ]; then
  [ -f "$table" ] || { echo "no crontab for tester" >&2; exit 1; }
  cat "$table"
elif [ "$1" = "-" ]; then
  cat > "$table"
fi
"""


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `crontab` on PATH, its table in a file (returned, not yet created): no
    test touches the real one."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "crontab"
    program.write_text(FAKE_CRONTAB)
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    table = tmp_path / "crontab.txt"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB_FILE", str(table))
    return table
