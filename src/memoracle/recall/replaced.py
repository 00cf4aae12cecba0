"""Turns that state a value since replaced ("I live in Paris", after "I moved to Lyon").

A raw turn is ranked beside the memories made from it, but it does not know what came
later: when every memory it gave was superseded, what it says is no longer true.
`settle_replaced` moves such turns below every other hit, keeping their order among
themselves, and marks each with when its value stopped being true (`Hit.replaced_at`),
so a reader labels it ("earlier, until 2025-03") instead of taking it as current. Which
turns those are is the store's to say (`Memories.replaced_turns`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from memoracle.types import Hit

__all__ = ["settle_replaced"]


def settle_replaced(hits: Sequence[Hit], replaced: Mapping[int, datetime]) -> list[Hit]:
    """`hits` with the turns in `replaced` (episode id -> when their value was replaced)
    moved after every other hit and marked with `replaced_at`."""
    current = [h for h in hits if h.source != "episode" or h.id not in replaced]
    earlier = [
        replace(h, replaced_at=replaced[h.id])
        for h in hits
        if h.source == "episode" and h.id in replaced
    ]
    return current + earlier
