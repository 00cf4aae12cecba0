"""The same turn captured twice (two sessions, two doors) never fills the recall block
twice: the block's lines are one per item, by normalised text and by the turn a memory
came from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.engine.search import same_items
from memoracle.recall.budget import EstimateCounter, pack
from memoracle.types import Turn

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
SAID = "haha the grey cat Miso knocked the shelter flyer off the table again"  # no memory


def _lines_saying(engine: Engine, message: str, word: str) -> list[str]:
    block = engine.recall(message, budget=2000)
    return [line.text for line in block.lines if word.casefold() in line.text.casefold()]


def test_a_turn_captured_twice_is_one_line(engine: Engine, clock: FixedClock) -> None:
    engine.capture([Turn("user", SAID, T0, "session-a", None)])
    clock.advance(hours=1)
    engine.capture([Turn("user", f"  {SAID.upper()} ", T0 + timedelta(hours=1), "session-b")])
    assert len(engine.turns_by_id([1, 2])) == 2  # stored twice
    assert not engine.list_memories()
    lines = _lines_saying(engine, "the grey cat Miso from the shelter", "Miso")
    assert len(lines) == 1, lines


def test_a_turn_and_its_memory_are_one_line_but_two_memories_of_a_turn_stay(
    engine: Engine,
) -> None:
    # one turn, two memories: both stay; the turn itself is not a third line
    engine.capture([Turn("user", "I live in Paris. Never deploy on Fridays.", T0, "s")])
    memories = engine.list_memories()
    assert len(memories) == 2
    turn = engine.turns_by_id([1])
    same = same_items(memories, turn)
    slots = [
        ("fresh", 0.5, [(m.ref, f"- {m.text}") for m in memories]),
        ("search", 0.5, [("e_1", "- I live in Paris. Never deploy on Fridays.")]),
    ]
    packed = pack(slots, 500, EstimateCounter(), same=same)
    assert [line.ref for line in packed.lines] == [m.ref for m in memories]
    lone = [m for m in memories if "Paris" in m.text]
    packed = pack(
        [("search", 1.0, [("e_1", "- the turn"), (lone[0].ref, "- Paris")])],
        500,
        EstimateCounter(),
        same=same_items(lone, turn),
    )
    assert [line.ref for line in packed.lines] == ["e_1"]
