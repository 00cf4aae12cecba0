"""Activation and the promotion/archival score (docs/lifecycle.md), computed from time.

Owns `activation` — a memory's stored strength decayed from its last access,
`a · 0.5^(days / half-life)` with `decay.half_life_days` (30) and per-kind overrides
(guardrails never decay, decisions over 90 days) — and `score`: kind weight × recency ×
frequency × entity boost × completion penalty, with `rank` and the promotion
candidates. Both are pure functions of a memory and `now`: nothing is written back, so a
missed night changes nothing and running twice equals running once.

What it leaves to others: acting on the scores — archiving below the prune threshold,
choosing what MEMORY.md shows — is the engine's and `render`'s.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from memoracle.config import DecaySettings
from memoracle.types import Memory

__all__ = [
    "KIND_WEIGHTS",
    "NAME",
    "PROMOTE_AT",
    "MemoryScore",
    "activation",
    "entity_count",
    "rank",
    "score",
]

# What a kind is worth keeping (the Memory Pipeline's category weights, extended to our
# kinds): decisions and guardrails steer future work, errors prevent repeats.
KIND_WEIGHTS: Mapping[str, float] = {
    "decision": 3.0,
    "guardrail": 3.0,
    "error": 2.0,
    "fact": 1.5,
    "preference": 1.5,
    "pattern": 1.2,
    "insight": 1.2,
    "task": 1.2,
    "event": 1.0,
}
DONE_PENALTY = 0.3  # a finished task fades three times faster in the ranking
PROMOTE_AT = 1.0  # a score from which a memory belongs in MEMORY.md's block
_MAX_FREQUENCY = 2.0
_ENTITY_STEP = 0.1
_MAX_ENTITIES = 5
# Names and numbers a memory is about: a capitalised word after the first, or a number.
NAME = re.compile(r"(?<=\s)[A-ZÀ-ÖØ-ÞА-ЯЁ][\w'’-]+")
_NUMBER = re.compile(r"\b\d[\d.,:/-]*\b")


@dataclass(frozen=True)
class MemoryScore:
    """One memory's score and each of its factors (total = their product)."""

    memory_id: int
    kind_weight: float
    recency: float
    frequency: float
    entity: float
    completion: float
    total: float

    @property
    def promote(self) -> bool:
        return self.total >= PROMOTE_AT


def activation(memory: Memory, now: datetime, decay: DecaySettings) -> float:
    """The stored activation decayed from the last access to `now`, in [0, 1]."""
    half_life = decay.half_life_by_kind.get(memory.kind, decay.half_life_days)
    if memory.pinned or math.isinf(half_life):
        return memory.activation
    days = max(0.0, (now - memory.last_accessed_at).total_seconds() / 86400)
    return memory.activation * math.pow(0.5, days / half_life)


def entity_count(text: str) -> int:
    """Distinct names and numbers in `text` (a cheap stand-in until the graph exists)."""
    return len(set(NAME.findall(text)) | set(_NUMBER.findall(text)))


def score(memory: Memory, now: datetime, decay: DecaySettings) -> MemoryScore:
    """kind weight × recency (the decayed activation) × frequency (1 + log2(1 + accesses)
    / 4, at most 2) × entity boost (1 + 0.1 per name or number, at most 5) × completion
    (0.3 for a done task, else 1)."""
    kind_weight = KIND_WEIGHTS.get(memory.kind, 1.0)
    recency = activation(memory, now, decay)
    frequency = min(_MAX_FREQUENCY, 1.0 + math.log2(1 + max(0, memory.access_count)) / 4)
    entity = 1.0 + _ENTITY_STEP * min(_MAX_ENTITIES, entity_count(memory.text))
    completion = DONE_PENALTY if memory.kind == "task" and memory.details.get("done") else 1.0
    total = kind_weight * recency * frequency * entity * completion
    return MemoryScore(memory.id, kind_weight, recency, frequency, entity, completion, total)


def rank(memories: Iterable[Memory], now: datetime, decay: DecaySettings) -> list[MemoryScore]:
    """Scores best first (ties: the lower id, i.e. the older memory, first)."""
    scored = [score(m, now, decay) for m in memories]
    return sorted(scored, key=lambda s: (-s.total, s.memory_id))
