"""Every retrieval and scoring setting docs/config.md lists has its documented effect:
each case opens two stores that differ in that one setting, runs the same scenario,
and checks the outcome moves in the documented direction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine

Measure = Callable[[Engine, FixedClock], float]
NOW = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def _said(engine: Engine, clock: FixedClock, text: str, days_ago: float, kind: str) -> str:
    """A memory remembered `days_ago` (said then, untouched since)."""
    now = clock.now()
    clock.set(now - timedelta(days=days_ago))
    memory, _ = engine.remember(text, kind=kind)
    clock.set(now)
    return memory.ref


def _slot_lines(slot: str, message: str = "garden notebook") -> Measure:
    def measure(engine: Engine, clock: FixedClock) -> float:
        for i in range(12):
            _said(engine, clock, f"Never deploy service number {i} on a Friday.", 30, "guardrail")
            _said(engine, clock, f"The garden bed {i} needs compost and mulch.", 10, "fact")
            _said(engine, clock, f"I bought a blue notebook number {i} today.", 0.1, "event")
        block = engine.recall(message, budget=400)
        return sum(line.slot == slot for line in block.lines)

    return measure


def _recall_tokens(engine: Engine, clock: FixedClock) -> float:
    for i in range(40):
        _said(engine, clock, f"The garden bed {i} needs compost, mulch and water.", 10, "fact")
    return engine.recall("garden").tokens


def _fresh_after_30_hours(engine: Engine, clock: FixedClock) -> float:
    _said(engine, clock, "I bought a blue notebook yesterday.", 30 / 24, "event")
    return sum(line.slot == "fresh" for line in engine.recall("my blue notebook").lines)


def _activation_after_recall(engine: Engine, clock: FixedClock) -> float:
    ref = _said(engine, clock, "I visited the harbour museum.", 60, "event")
    engine.recall("harbour museum")
    return engine.get(ref).activation


def _hits(engine: Engine, clock: FixedClock) -> float:
    for i in range(8):
        _said(engine, clock, f"The garden bed {i} needs compost.", 1, "fact")
    return len(engine.search("garden compost").hits)


def _top_rrf(engine: Engine, clock: FixedClock) -> float:
    _said(engine, clock, "The garden bed needs compost.", 1, "fact")
    return engine.search("garden compost").hits[0].scores.rrf


def _distinct_rank(engine: Engine, clock: FixedClock) -> float:
    """Where the one different answer lands among near-repeats of a better one (lower
    is earlier): MMR's diversity moves it up."""
    for shop in ("market", "shop", "store", "stall"):
        _said(engine, clock, f"I like red apples from the {shop} on Main Street.", 1, "preference")
    _said(engine, clock, "Red apples grow in the orchard.", 1, "fact")
    texts = [h.text for h in engine.search("red apples from the market street", k=5).hits]
    return texts.index("Red apples grow in the orchard.")


def _weak_old_match_found(kind: str) -> Measure:
    """A weak match to a memory of `kind` untouched for 200 days (a fact's activation is
    0.01 then, a decision's 0.21): kept or dropped by the threshold."""

    def measure(engine: Engine, clock: FixedClock) -> float:
        for i in range(6):  # better matches: the old one is not among the top 5 (strong)
            _said(engine, clock, f"Tomato plant {i} in the garden needs water.", 1, "fact")
        _said(engine, clock, "The garden gate of the old house is green.", 200, kind)
        texts = [h.text for h in engine.search("garden tomato water", k=10).hits]
        return float("The garden gate of the old house is green." in texts)

    return measure


def _recency(engine: Engine, clock: FixedClock) -> float:
    _said(engine, clock, "I visited the harbour museum.", 60, "event")
    return engine.search("harbour museum").hits[0].scores.recency


def _neighbour_found(engine: Engine, clock: FixedClock) -> float:
    engine.remember("Anna's sister Lea lives in Lyon.")
    engine.remember("Lea works at Globex since March.")
    texts = [h.text for h in engine.search("Where does Anna's sister earn money?").hits]
    return float("Lea works at Globex since March." in texts)


def _unworded_hits(engine: Engine, clock: FixedClock) -> float:
    """Hits for a query sharing no word with the store, only some of its letters (the
    hash embedder's trigrams): a weak likeness the floor cuts off."""
    _said(engine, clock, "The garden bed needs compost.", 1, "fact")
    return len(engine.search("bedlam").hits)


def _decayed(kind: str) -> Measure:
    def measure(engine: Engine, clock: FixedClock) -> float:
        ref = _said(engine, clock, "We chose Postgres for the billing service.", 60, kind)
        return engine.activation(engine.get(ref))[0]

    return measure


@dataclass(frozen=True)
class Case:
    key: str
    low: str
    high: str
    measure: Measure
    rises: bool = True  # the documented direction: the outcome grows with the value
    extra: tuple[tuple[str, str], ...] = ()


SHARES = (("recall.guardrail_share", "0.1"), ("recall.fresh_share", "0.3"))
CASES = {
    "budget_tokens": Case("recall.budget_tokens", "300", "1500", _recall_tokens),
    "guardrail_share": Case(
        "recall.guardrail_share",
        "0.05",
        "0.4",
        _slot_lines("guardrail"),
        extra=(("recall.fresh_share", "0.2"), ("recall.search_share", "0.2")),
    ),
    "fresh_share": Case(
        "recall.fresh_share",
        "0.1",
        "0.5",
        _slot_lines("fresh"),
        extra=(("recall.guardrail_share", "0.1"), ("recall.search_share", "0.2")),
    ),
    "search_share": Case("recall.search_share", "0.1", "0.6", _slot_lines("search"), extra=SHARES),
    "fresh_hours": Case("recall.fresh_hours", "12", "48", _fresh_after_30_hours),
    "boost": Case("recall.boost", "0.1", "0.6", _activation_after_recall),
    "k": Case("search.k", "2", "6", _hits),
    "rrf_k": Case("search.rrf_k", "10", "100", _top_rrf, rises=False),
    "vector_weight": Case("search.vector_weight", "0", "1", _top_rrf),
    "mmr_lambda": Case("search.mmr_lambda", "0.3", "1", _distinct_rank),
    **{
        f"activation_threshold-{kind}": Case(
            "search.activation_threshold",
            "0",
            "0.3",
            _weak_old_match_found(kind),
            rises=False,
            extra=(("embedding.provider", "none"),),
        )
        for kind in ("fact", "preference", "decision", "event")
    },
    "recency_half_life_days": Case("search.recency_half_life_days", "10", "100", _recency),
    "graph_weight": Case(
        "search.graph_weight",
        "0",
        "0.5",
        _neighbour_found,
        extra=(("embedding.provider", "none"),),
    ),
    "similarity_floor": Case(
        "search.similarity_floor",
        "-1",
        "0.9",
        _unworded_hits,
        rises=False,
        extra=(("search.hit_floor", "-1"),),
    ),
    "hit_floor": Case(
        "search.hit_floor",
        "-1",
        "0.9",
        _unworded_hits,
        rises=False,
        extra=(("search.similarity_floor", "-1"),),
    ),
    "half_life_days": Case("decay.half_life_days", "10", "100", _decayed("event")),
    "half_life_by_kind": Case(
        "decay.half_life_by_kind", "decision=10", "decision=100", _decayed("decision")
    ),
}


def _run(tmp_path: Path, case: Case, value: str) -> float:
    overrides = {"embedding.model": "hash", **dict(case.extra), case.key: value}
    settings = load(tmp_path / f"home-{value}", env={}, overrides=overrides)
    clock = FixedClock(NOW)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        return case.measure(engine, clock)


@pytest.mark.parametrize("name", list(CASES))
def test_each_tunable_has_its_documented_effect(tmp_path: Path, name: str) -> None:
    case = CASES[name]
    low, high = _run(tmp_path, case, case.low), _run(tmp_path, case, case.high)
    if case.rises:
        assert high > low, f"{case.key}: {case.low} -> {low}, {case.high} -> {high}"
    else:
        assert high < low, f"{case.key}: {case.low} -> {low}, {case.high} -> {high}"


def test_every_retrieval_and_scoring_setting_has_a_case(tmp_path: Path) -> None:
    keys = {
        key
        for key, *_ in load(tmp_path, env={}).items()
        if key.split(".")[0] in ("recall", "search", "decay")
    }
    assert keys == {case.key for case in CASES.values()}
