"""A query with nothing behind it gets nothing: no hits, a note saying why (engine, CLI,
JSON), and a recall block without a search slot; a real query is still answered, by
its words or by its meaning alone. Also: `--kind` returns memories of those kinds only."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.mcp_server import MemoryTools
from memoracle.recall import hybrid, relevance
from memoracle.types import Turn

AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)

STORE = [
    "I prefer green tea in the morning.",
    "My sister Anna lives in Lyon.",
    "We decided to use MySQL for the billing service.",
    "Never push to main on Fridays.",
    "I went hiking in the Alps with my brother last summer.",
    "I need to renew my passport before June.",
    "The staging server is staging.internal:8443.",
    "I adopted a puppy named Biscuit.",
    "My favourite book is Dune.",
    "I play the guitar every evening.",
]

# Nonsense, and topics nothing in STORE (nor any LoCoMo conversation) speaks of. The
# same list calibrated the floor on LoCoMo (docs/retrieval.md#the-noise-floor).
UNSUPPORTED = [
    "zxqv blorft",
    "qwxz plonk vrimble",
    "asdfgh jkl",
    "flurbo snizzle",
    "blarg frobnicate wibble",
    "grommish thwump",
    "vexnor quibbit",
    "zzzyx qwop",
    "mnbvcx lkjhg",
    "snorfle glimp drazzle",
    "kubernetes pod eviction",
    "ethereum gas fees",
    "postgres vacuum autovacuum",
    "mitochondrial haplogroup",
    "einsum tensor contraction",
    "byzantine fault tolerance",
    "chlorophyll absorption spectrum",
    "semiconductor doping",
    "volcanic tephra stratigraphy",
    "cryptocurrency mining rig",
    "hadron collider luminosity",
]


@pytest.fixture
def filled(engine: Engine) -> Engine:
    for i, text in enumerate(STORE):
        engine.capture([Turn("user", text, AT, "s", str(i))])
    return engine


@pytest.mark.parametrize("query", UNSUPPORTED)
def test_an_unsupported_query_gets_nothing_and_says_why(filled: Engine, query: str) -> None:
    outcome = filled.search(query)
    assert outcome.hits == ()
    assert outcome.no_match is not None and "search.similarity_floor" in outcome.no_match
    block = filled.recall(query)
    assert not [line for line in block.lines if line.slot == "search"]
    assert block.note == outcome.no_match
    assert block.degraded is None  # nothing is broken: there is just nothing to say


def test_without_the_floor_nonsense_gets_the_stores_items(
    filled: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the floors prevent: the nearest vectors of "blorft" are simply returned.
    monkeypatch.setattr(hybrid, "_unsupported", lambda *_: None)
    monkeypatch.setattr(relevance, "touching", lambda hits, *_: list(hits))
    assert filled.search("snorfle glimp drazzle").hits


def test_explain_says_the_query_is_under_the_floor(filled: Engine) -> None:
    ref = filled.search("green tea").hits[0].ref
    reasons = filled.explain(ref, query="zxqv blorft").reasons
    assert any("search.similarity_floor" in r for r in reasons)


def test_a_supported_query_is_answered(filled: Engine) -> None:
    outcome = filled.search("where does Anna live")
    assert outcome.no_match is None
    assert outcome.hits[0].text == "Anna (User's sister) lives in Lyon."  # the statement


@pytest.mark.slow
def test_meaning_alone_clears_the_floor(tmp_path: Path) -> None:
    # No shared word, but close in meaning for the real (default) model.
    settings = load(tmp_path / "home", env={}, overrides={})
    clock = FixedClock(AT)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.remember("My sister Anna lives in Lyon.")
        outcome = engine.search("which city is my sibling based in")  # cosine 0.41
        assert outcome.no_match is None
        assert outcome.hits[0].text == "My sister Anna lives in Lyon."
        assert engine.search("zxqv blorft").hits == ()


def test_the_cli_says_no_match_in_text_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "h"), "--set", "embedding.model=hash"]
    assert runner.invoke(main, [*home, "init"]).exit_code == 0
    assert runner.invoke(main, [*home, "remember", "My sister Anna lives in Lyon."]).exit_code == 0
    text = runner.invoke(main, [*home, "search", "zxqv blorft"])
    assert text.exit_code == 0 and "no match: no memory or turn shares a word" in text.output
    found = json.loads(runner.invoke(main, [*home, "search", "zxqv blorft", "--json"]).output)
    assert found["hits"] == [] and "similarity_floor" in found["no_match"]
    block = json.loads(runner.invoke(main, [*home, "recall", "zxqv blorft", "--json"]).output)
    assert "similarity_floor" in block["note"] and block["degraded"] is None
    answered = json.loads(runner.invoke(main, [*home, "search", "Anna", "--json"]).output)
    assert answered["no_match"] is None and answered["hits"]


def test_a_kind_filter_returns_only_memories_of_those_kinds(filled: Engine) -> None:
    query = "Anna Lyon green tea hiking puppy staging server"
    # A question keeps no memory: its turn can only come back as a turn.
    filled.capture([Turn("user", "Is Anna going hiking with the puppy?", AT, "s", "q")])
    everything = filled.search(query, k=20)
    assert any(h.source == "episode" for h in everything.hits)  # unfiltered: turns too
    for kinds in (("fact",), ("preference", "event"), ("event",)):
        hits = filled.search(query, k=20, kinds=kinds).hits
        assert hits and all(h.memory is not None and h.memory.kind in kinds for h in hits)


def test_the_mcp_tools_say_why_nothing_was_found(engine: Engine) -> None:
    engine.remember("I prefer green tea in the morning.")
    tools = MemoryTools(engine.settings, clock=engine.clock)
    try:
        found = tools.memory_search("zxqv blorft")
        assert found.structured_content is not None
        assert found.structured_content["no_match"] and found.structured_content["hits"] == []
        assert "no match" in found.content[0].text  # type: ignore[union-attr]
        recalled = tools.memory_recall("zxqv blorft")
        assert "(note: " in recalled.content[0].text  # type: ignore[union-attr]
    finally:
        tools.close()
