"""Search and recall through the engine: scope, time, fading, model changes, budgets."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.recall import hybrid
from memoracle.types import Scope, Turn

AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


def _say(
    engine: Engine, text: str, turn: str, *, scope: Scope | None = None, at: datetime = AT
) -> None:
    engine.capture([Turn("user", text, at, "s", turn)], scope=scope)


def test_search_finds_memories_and_turns_with_scores(engine: Engine) -> None:
    _say(engine, "I prefer green tea in the morning.", "1")
    _say(engine, "We talked about the garden shed yesterday.", "2")
    outcome = engine.search("green tea", k=5)
    assert outcome.mode == "hybrid"
    top = outcome.hits[0]
    assert "green tea" in top.text
    assert top.scores.lexical_rank == 1 and top.scores.final > 0
    assert top.turn_ids == ("1",)


def test_private_memories_never_reach_another_user_or_a_group(engine: Engine) -> None:
    alice = Scope(user="alice")
    _say(engine, "My bank PIN hint is the cat's birthday.", "1", scope=alice)
    _say(engine, "Never share the family calendar.", "2", scope=alice)
    assert engine.search("bank PIN hint", scope=alice).hits
    assert not engine.search("bank PIN hint", scope=Scope(user="bob")).hits
    group = Scope(chat="tg:1", visibility="shared")
    assert not engine.search("bank PIN hint", scope=group).hits
    block = engine.recall("what about the family calendar?", scope=group)
    assert "calendar" not in block.text  # neither the private memory nor the guardrail


def test_shared_memories_reach_their_group(engine: Engine) -> None:
    shared = Scope(chat="tg:1", visibility="shared")
    _say(engine, "The family trip is booked for Lisbon.", "1", scope=shared)
    assert engine.search("family trip Lisbon", scope=shared).hits
    assert not engine.search(
        "family trip Lisbon", scope=Scope(chat="tg:2", visibility="shared")
    ).hits


def test_a_memory_untouched_for_a_year_is_still_found(engine: Engine, clock: FixedClock) -> None:
    # An event (it fades), remembered without a turn (so no turn stands in for it).
    engine.remember("I went to the passport office downtown.", kind="event")
    engine.remember("I bought new running shoes.", kind="event")
    clock.advance(days=365)
    faded = engine.search("when did I go to the passport office", k=5)
    assert any("passport" in h.text for h in faded.hits)
    hit = next(h for h in faded.hits if h.source == "memory")
    assert hit.scores.activation < 1.0  # ranked lower, not lost


def test_as_of_returns_what_was_active_then(engine: Engine, clock: FixedClock) -> None:
    memory, _ = engine.remember("The office is at 5 Rue de la Paix")
    clock.advance(days=30)
    engine.forget(memory.ref)
    assert not [h for h in engine.search("office Rue de la Paix").hits if h.source == "memory"]
    then = engine.search("office Rue de la Paix", as_of=datetime(2023, 5, 20))  # wall-clock
    assert [h.ref for h in then.hits if h.source == "memory"] == [memory.ref]


def test_time_in_the_query_boosts_that_time(engine: Engine) -> None:
    _say(engine, "I went hiking in the Alps.", "1", at=datetime(2023, 5, 8, tzinfo=UTC))
    _say(engine, "I went hiking in the Pyrenees.", "2", at=datetime(2023, 8, 8, tzinfo=UTC))
    hits = engine.search("where did I go hiking in August 2023", k=2).hits
    assert "Pyrenees" in hits[0].text


def test_model_change_makes_search_lexical_until_reindex(
    settings: Settings, clock: FixedClock
) -> None:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        _say(engine, "I prefer green tea.", "1")
        assert engine.search("green tea").mode == "hybrid"
    other = load(settings.home, env={}, overrides={"embedding.model": "use"})
    with Engine.open(other, clock=clock) as engine:
        status = engine.index_status()
        assert status.stale and status.vectors == 0
        outcome = engine.search("green tea")
        assert outcome.mode == "lexical" and "memoracle reindex" in (outcome.note or "")
        assert outcome.hits  # lexical search still answers


def test_corrupt_vector_blob_degrades_to_lexical_for_that_item(engine: Engine) -> None:
    _say(engine, "I prefer green tea.", "1")
    assert engine.search("green tea").mode == "hybrid"
    conn = sqlite3.connect(engine.database_path)
    conn.execute("UPDATE vectors SET vector = x'0102'")
    conn.commit()
    conn.close()
    engine.searcher._cache = None  # another process changed the table
    outcome = engine.search("green tea")
    assert outcome.hits and "green tea" in outcome.hits[0].text


@pytest.mark.parametrize("query", ["", "   ", "\x00"])
def test_empty_query_is_refused_clearly(engine: Engine, query: str) -> None:
    with pytest.raises(InvalidInput, match="query is empty"):
        engine.search(query)


def test_a_huge_query_is_answered(engine: Engine) -> None:
    _say(engine, "I prefer green tea.", "1")
    assert engine.search("green tea " * 10_000).hits


@pytest.mark.parametrize("budget", [0, -5])
def test_a_non_positive_budget_is_refused(engine: Engine, budget: int) -> None:
    with pytest.raises(InvalidInput, match="positive"):
        engine.recall("hello", budget=budget)


def test_recall_slots_dates_ids_budget_and_boost(engine: Engine, clock: FixedClock) -> None:
    _say(engine, "Never push to main on Fridays.", "1")
    _say(engine, "I live in Lyon with my sister Anna.", "2")
    clock.advance(days=10)
    _say(engine, "I prefer short answers.", "3", at=clock.now())
    memory = engine.search("Lyon sister", k=1).hits[0].memory
    assert memory is not None
    before = engine.get(memory.ref).last_accessed_at
    block = engine.recall("where does my sister live?", budget=300)
    slots = [line.slot for line in block.lines]
    assert slots[0] == "guardrail" and "fresh" in slots and "search" in slots
    assert block.tokens <= 300
    assert all(line.text.startswith("- [") for line in block.lines)
    refs = [line.ref for line in block.lines]
    assert len(refs) == len(set(refs))
    assert engine.get(memory.ref).last_accessed_at > before  # recall boost


def test_recall_never_exceeds_a_tiny_budget(engine: Engine) -> None:
    for i in range(30):
        _say(engine, f"I like item number {i} because it is useful for the garden.", str(i))
    for budget in (1, 5, 20, 60, 200):
        assert engine.recall("garden items", budget=budget).tokens <= budget


def test_explain_says_why(engine: Engine) -> None:
    _say(engine, "I prefer green tea.", "1")
    memory = engine.list_memories()[0]
    found = engine.explain(memory.ref, query="green tea")
    assert found.rank == 1 and any("lexical" in r for r in found.reasons)
    missing = engine.explain(memory.ref, query="motorbike repairs")
    assert missing.rank is None


def test_common_words_search_the_newest_rows_and_rare_words_all(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hybrid, "LEXICAL_ROWS", 5)
    _say(engine, "The garden needs watering near the old pergola.", "old-rare")
    _say(engine, "The garden needs watering again.", "old-common")
    for n in range(20):
        _say(engine, f"The garden path number {n} needs sweeping.", f"new-{n}")
    hits = engine.search("garden pergola watering", k=30).hits
    lexical = {h.text for h in hits if h.scores.lexical_rank is not None}
    # "pergola" and "watering" are rare: their old turns are found lexically; "garden"
    # alone is too common to score over all rows, so only its newest matches are.
    assert any("pergola" in t for t in lexical)
    assert any("watering again" in t for t in lexical)
    assert any("number 19" in t for t in lexical)
    assert not any("number 0 " in t for t in lexical)


def test_the_rule_a_message_touches_comes_first_in_the_guardrail_slot(
    engine: Engine, clock: FixedClock
) -> None:
    migrations, _ = engine.remember("Never run database migrations on a Friday.", kind="guardrail")
    clock.advance(minutes=1)
    engine.remember("Always answer in English, whatever I write in.", kind="guardrail")
    block = engine.recall("Can I run the database migrations now?", budget=300)
    guarded = [line.ref for line in block.lines if line.slot == "guardrail"]
    assert guarded[0] == migrations.ref  # not the newer one, which comes first otherwise


def test_the_fresh_item_a_message_touches_comes_first_in_the_fresh_slot(
    engine: Engine, clock: FixedClock
) -> None:
    database, _ = engine.remember("Let's go with PostgreSQL 16 for Nextcloud's database.")
    clock.advance(minutes=1)
    for n in range(3):
        engine.remember(f"Greetings from Lisbon, day {n}: the pastel de nata hype is real.")
        clock.advance(minutes=1)
    block = engine.recall("Which database does Nextcloud use?", budget=300)
    fresh = [line.ref for line in block.lines if line.slot == "fresh"]
    assert fresh and fresh[0] == database.ref  # not the newer postcards, first otherwise
