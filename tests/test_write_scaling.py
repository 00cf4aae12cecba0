"""The write path's per-turn lookups stay bounded as the store grows, and find what they
found before: the slot candidates of a multi-valued slot are narrowed by value (an index
range), the near-duplicate candidates by word rarity (BM25 over a few hundred rows)."""

from __future__ import annotations

import itertools

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine, near
from memoracle.lifecycle.conflicts import MULTI_VALUED, same_value, value_prefix
from memoracle.types import Turn

VALUES = [
    "vim", "vimkalo", "vi", "emacs", "emacs lisp", "go", "golang", "rust", "rust lang",
    "python", "python 3", "pyth", "амстерд", "амстердам", "амстердама", "лион",
    "lyon, france", "france", "paris", "paris, france", "c", "c++", "c lang", "",
]  # fmt: skip


@pytest.mark.parametrize("attribute", sorted(MULTI_VALUED))
def test_a_value_prefix_keeps_every_value_same_value_matches(attribute: str) -> None:
    for new, old in itertools.product(VALUES, VALUES):
        prefix = value_prefix(attribute, new)
        if prefix is not None and same_value(attribute, new, old):
            assert old.startswith(prefix) or "," in old, (new, old, prefix)


def test_a_value_prefix_narrows_only_multi_valued_attributes() -> None:
    assert value_prefix("uses:other", "vimkalo") == "vimk"
    assert value_prefix("uses:other", "vi") == "vi"
    assert value_prefix("uses:other", "lyon, france") is None  # matched by its parts
    assert value_prefix("lives_in", "paris") is None  # any other value contradicts it


def _say(engine: Engine, clock: FixedClock, text: str, n: int) -> tuple[int, ...]:
    clock.advance(minutes=1)
    result = engine.capture([Turn("user", text, clock.now(), "s", str(n))])
    return tuple(m.id for m in result.added)


def test_a_repeat_in_a_crowded_multi_valued_slot_is_still_found(
    engine: Engine, clock: FixedClock
) -> None:
    (first,) = _say(engine, clock, "I prefer vimkalo for writing.", 0)
    for n in range(1, 120):  # a person's many preferences: one slot, "prefers:other"
        _say(engine, clock, f"I prefer tool{n}x{n * 7} for chore{n}.", n)
    (again,) = _say(engine, clock, "Honestly I really prefer vimkalo.", 999)
    assert again != first
    confirmed = [
        e for e in engine.audit_entries() if e.action == "confirm" and e.memory_id == first
    ]
    assert confirmed and confirmed[0].detail["by"] == f"m_{again}"
    assert not [e for e in engine.audit_entries() if e.action == "confirm" and e.memory_id != first]


def test_near_duplicates_are_still_merged_once_words_are_common(
    engine: Engine, clock: FixedClock
) -> None:
    for n in range(near.NEAR_COMMON + 20):  # "decided" and "use" in every memory
        _say(engine, clock, f"We decided to use lib{n}q for service{n}w.", n)
    (kept,) = _say(
        engine, clock, "We decided to use Grafana dashboards for the on-call paging.", -1
    )
    clock.advance(minutes=1)
    again = engine.capture(
        [Turn("user", "We decided to use Grafana dashboards for on-call paging.", None)]
    )
    assert again.added == () and [m.id for m in again.bumped] == [kept]


def test_the_near_duplicate_lookup_leaves_out_common_words(
    engine: Engine, clock: FixedClock
) -> None:
    text = "We decided to use Grafana dashboards for on-call paging."
    assert "decid" in _near_words(engine, text)  # a small store
    for n in range(near.NEAR_COMMON + 20):
        _say(engine, clock, f"We decided to use lib{n}q for service{n}w.", n)
    words = _near_words(engine, text)
    assert "grafana" in words
    assert "decid" not in words and "use" not in words
    # every word common: all of them at once, or nothing when that is common too
    assert near.near_query(engine, "We decided to use it.") is None


def _near_words(engine: Engine, text: str) -> set[str]:
    """The stems the near-duplicate lookup of `text` looks for."""
    found = near.near_query(engine, text)
    return {t.text for t in found.terms} if found is not None else set()
