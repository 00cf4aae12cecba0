"""The lifecycle through the engine: contradictions at capture, pending and resolve."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.types import Scope, Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _say(engine: Engine, text: str, turn: str, *, speaker: str | None = None) -> None:
    role = "speaker" if speaker else "user"
    engine.capture([Turn(role, text, AT, "s", turn, speaker=speaker)])


def _by_text(engine: Engine, part: str) -> str:
    found = [m for m in engine.list_memories(status=None) if part in m.text]
    assert len(found) == 1, [m.text for m in engine.list_memories(status=None)]
    return found[0].ref


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Paris.", "I moved to Lyon."),
        ("Я живу в Париже.", "Я переехал в Лион."),
        ("J'habite à Paris.", "J'ai déménagé à Lyon."),
        ("Vivo en París.", "Me mudé a Lyon."),
    ],
)
def test_a_clear_contradiction_supersedes_the_old_memory(
    engine: Engine, clock: FixedClock, old: str, new: str
) -> None:
    _say(engine, old, "1")
    clock.advance(days=1)
    _say(engine, new, "2")
    before, after = engine.get(_by_text(engine, old[:8])), engine.get(_by_text(engine, new[:8]))
    assert before.status == "superseded" and before.superseded_by == after.id
    assert after.status == "active"
    # Kept, and what was true then is still answerable.
    assert [m.id for m in engine.list_memories()] == [after.id]
    actions = [e.action for e in engine.history(before.id)]
    assert "supersede" in actions


def test_a_hedged_contradiction_disputes_and_resolve_settles_it(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, "I live in Paris.", "1")
    _say(engine, "I might move to Lyon.", "2")
    paris = engine.get(_by_text(engine, "Paris"))
    assert paris.status == "disputed"
    pending = engine.pending()
    assert [(p.memory.id, p.by.id if p.by else None) for p in pending] == [
        (paris.id, engine.get(_by_text(engine, "Lyon")).id)
    ]
    kept = engine.resolve(paris.ref, confirm=True)
    assert kept.status == "active" and engine.pending() == []

    _say(engine, "I might move to Berlin.", "3")
    assert engine.get(paris.ref).status == "disputed"
    gone = engine.resolve(paris.ref, confirm=False, replacement="I live in Berlin now.")
    assert gone.status == "superseded"
    berlin = engine.get(gone.superseded_by or 0)
    assert berlin.text == "I live in Berlin now." and berlin.source == "user-stated"


def test_resolve_refuses_what_is_not_disputed(engine: Engine) -> None:
    _say(engine, "I live in Paris.", "1")
    with pytest.raises(InvalidInput, match="not disputed"):
        engine.resolve(_by_text(engine, "Paris"), confirm=True)


def test_the_same_value_again_raises_confidence(engine: Engine) -> None:
    _say(engine, "I live in Paris.", "1")
    first = engine.get(_by_text(engine, "live in Paris"))
    _say(engine, "I'm living in Paris these days.", "2")
    assert engine.get(first.ref).confidence == pytest.approx(first.confidence + 0.1)


def test_speakers_and_owners_do_not_contradict_each_other(engine: Engine) -> None:
    _say(engine, "I live in Paris.", "1", speaker="Caroline")
    _say(engine, "I live in Lyon.", "2", speaker="Melanie")
    engine.capture([Turn("user", "I live in Oslo.", AT, "s", "3")], scope=Scope(user="bob"))
    assert all(m.status == "active" for m in engine.list_memories(status=None))


@pytest.mark.parametrize(
    "replacement",
    [
        "Lyon",  # a bare value: no rule reads it
        "I'm moving to Lyon.",  # alone, the rules read it as an event
        "I might move to Lyon.",  # the very text of the event that disputed it
        "I live in Lyon now.",
    ],
)
def test_a_replacement_keeps_the_kind_and_slot_of_what_it_replaces(
    engine: Engine, replacement: str
) -> None:
    _say(engine, "I live in Paris.", "1")
    _say(engine, "I might move to Lyon.", "2")
    paris = engine.get(_by_text(engine, "Paris"))
    assert paris.status == "disputed"
    gone = engine.resolve(paris.ref, confirm=False, replacement=replacement)
    new = engine.get(gone.superseded_by or 0)
    assert new.text == replacement and new.source == "user-stated"
    assert (new.kind, new.layer, new.subject, new.predicate) == (
        "fact",
        "semantic",
        "user",
        "lives_in",
    )
    assert engine._store.memories.slot_values([new.id])[new.id] == {("user", "lives_in"): "lyon"}
    # The slot is the old one's: saying the same value again confirms the replacement.
    _say(engine, "I live in Lyon.", "3")
    assert engine.get(new.ref).status == "active"
    assert engine.get(new.ref).confidence > new.confidence


def test_a_speakers_replacement_stays_about_the_speaker(engine: Engine) -> None:
    _say(engine, "I live in Paris.", "1", speaker="Caroline")
    _say(engine, "I might move to Lyon.", "2", speaker="Caroline")
    paris = engine.get(_by_text(engine, "Paris"))
    assert paris.status == "disputed"
    gone = engine.resolve(paris.ref, confirm=False, replacement="Lyon")
    new = engine.get(gone.superseded_by or 0)
    assert (new.kind, new.subject, new.predicate) == ("fact", paris.subject, "lives_in")
    held = engine._store.memories.slot_values([paris.id])[paris.id]
    assert engine._store.memories.slot_values([new.id])[new.id] == {key: "lyon" for key in held}


def test_a_task_reported_done_scores_lower(engine: Engine, clock: FixedClock) -> None:
    engine.capture([Turn("user", "I need to renew my passport before June.", AT, "s", "t1")])
    later = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
    clock.set(later)

    def completion() -> float:
        return next(s.completion for m, s in engine.score() if m.kind == "task")

    assert completion() == 1.0
    engine.capture([Turn("user", "I renewed my passport this morning.", later, "s", "t2")])
    assert completion() == 0.3
