from __future__ import annotations

import os
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


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # The hash embedder: deterministic, no model to load. One test loads the real one.
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
