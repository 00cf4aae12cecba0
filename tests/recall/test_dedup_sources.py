"""A memory and the turn it was said in are one hit (`hits.dedup_sources`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from memoracle.recall.hits import dedup_sources as _dedup_sources
from memoracle.types import Episode, Hit, Memory, Scores

AT = datetime(2026, 1, 1, tzinfo=UTC)
TURN = Episode(id=7, role="user", text="I live in Lyon now.", at=AT, created_at=AT)
MEMORY = Memory(
    id=3,
    kind="fact",
    text="Lives in Lyon",
    layer="semantic",
    status="active",
    created_at=AT,
    observed_at=AT,
    last_accessed_at=AT,
    activation=1.0,
    importance=0.5,
    access_count=0,
    confidence=1.0,
    pinned=False,
    source="capture",
    content_hash="h",
    episode_ids=(7,),
)


def _scores(final: float) -> Scores:
    return Scores(1, None, None, final, 1.0, 1.0, final)


def test_a_memory_takes_the_place_of_its_turn_ranked_higher() -> None:
    turn = Hit("episode", 7, TURN.text, AT, _scores(0.02), episode=TURN)
    other = Hit("episode", 8, "Something else", AT, _scores(0.01), episode=replace(TURN, id=8))
    memory = Hit("memory", 3, MEMORY.text, AT, _scores(0.005), memory=MEMORY)
    stood_for: dict[tuple[str, int], str] = {}
    out = _dedup_sources([turn, other, memory], stood_for)
    assert [(h.source, h.id) for h in out] == [("memory", 3), ("episode", 8)]
    assert out[0].scores.final == 0.02  # the better of the two places
    assert stood_for == {("episode", 7): memory.ref}


def test_a_turn_below_its_memory_is_left_out() -> None:
    memory = Hit("memory", 3, MEMORY.text, AT, _scores(0.03), memory=MEMORY)
    turn = Hit("episode", 7, TURN.text, AT, _scores(0.02), episode=TURN)
    stood_for: dict[tuple[str, int], str] = {}
    assert _dedup_sources([memory, turn], stood_for) == [memory]
    assert stood_for == {("episode", 7): memory.ref}


def test_a_memory_merged_from_two_turns_leads_them_both() -> None:
    merged = replace(MEMORY, episode_ids=(7, 8))
    first = Hit("episode", 7, TURN.text, AT, _scores(0.03), episode=TURN)
    again = Hit("episode", 8, "Lyon it is", AT, _scores(0.02), episode=replace(TURN, id=8))
    memory = Hit("memory", 3, MEMORY.text, AT, _scores(0.01), memory=merged)
    stood_for: dict[tuple[str, int], str] = {}
    out = _dedup_sources([first, again, memory], stood_for)
    assert [(h.source, h.id) for h in out] == [("memory", 3)]
    assert out[0].scores.final == 0.03
    assert stood_for == {("episode", 7): memory.ref, ("episode", 8): memory.ref}


def test_two_claims_of_one_turn_are_two_hits() -> None:
    turn = Hit("episode", 7, TURN.text, AT, _scores(0.03), episode=TURN)
    home = Hit("memory", 3, MEMORY.text, AT, _scores(0.02), memory=MEMORY)
    work = replace(MEMORY, id=4, text="Works at Datadog")
    job = Hit("memory", 4, work.text, AT, _scores(0.01), memory=work)
    stood_for: dict[tuple[str, int], str] = {}
    out = _dedup_sources([turn, home, job], stood_for)
    assert [(h.source, h.id) for h in out] == [("memory", 3), ("memory", 4)]
    assert stood_for == {("episode", 7): home.ref}
