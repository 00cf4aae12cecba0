"""Activation and the promotion/archival score (docs/lifecycle.md), computed from time.

Owns `activation` — a memory's stored strength decayed from its last access,
`a · 0.5^(days / half-life)` with `decay.half_life_days` (30) and per-kind overrides
(guardrails never decay, decisions over 90 days) — and `score`: kind weight × recency ×
frequency × entity boost × completion penalty (a task a later event reports done,
`done_tasks`), with `rank` and the promotion candidates. All are pure functions of
memories and `now`: nothing is written back, so a missed night changes nothing and
running twice equals running once.

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
from memoracle.language.words import content_words, fold
from memoracle.types import Memory

__all__ = [
    "KIND_WEIGHTS",
    "NAME",
    "PROMOTE_AT",
    "MemoryScore",
    "activation",
    "done_tasks",
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
_MIN_SHARED = 2  # word stems a later event must share with a task to report it done
_STEM = 5
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


def score(
    memory: Memory, now: datetime, decay: DecaySettings, *, done: bool = False
) -> MemoryScore:
    """kind weight × recency (the decayed activation) × frequency (1 + log2(1 + accesses)
    / 4, at most 2) × entity boost (1 + 0.1 per name or number, at most 5) × completion
    (0.3 for a done task — `done`, or `details.done` — else 1)."""
    kind_weight = KIND_WEIGHTS.get(memory.kind, 1.0)
    recency = activation(memory, now, decay)
    frequency = min(_MAX_FREQUENCY, 1.0 + math.log2(1 + max(0, memory.access_count)) / 4)
    entity = 1.0 + _ENTITY_STEP * min(_MAX_ENTITIES, entity_count(memory.text))
    finished = memory.kind == "task" and (done or bool(memory.details.get("done")))
    completion = DONE_PENALTY if finished else 1.0
    total = kind_weight * recency * frequency * entity * completion
    return MemoryScore(memory.id, kind_weight, recency, frequency, entity, completion, total)


def rank(memories: Iterable[Memory], now: datetime, decay: DecaySettings) -> list[MemoryScore]:
    """Scores best first (ties: the lower id, i.e. the older memory, first); a task
    that a later event reports done (`done_tasks`) gets the completion penalty."""
    found = list(memories)
    done = done_tasks(found)
    scored = [score(m, now, decay, done=m.id in done) for m in found]
    return sorted(scored, key=lambda s: (-s.total, s.memory_id))


def done_tasks(memories: Iterable[Memory]) -> set[int]:
    """The tasks among `memories` that a later event of the same owner and speaker
    reports done: "I need to renew my passport", then "I renewed my passport".

    Capture keeps both, the task and the event; nothing marks the task finished, so
    the event is the evidence. It must share at least two word stems (`_stems`) with
    the task and at least half of the task's: "renew" and "passport" of "need, renew,
    passport". Word stems, not words, so "renew"/"renewed", "продлить"/"продлил" meet;
    no verb list, so it holds in every language capture reads."""
    found = list(memories)
    by_stem: dict[str, list[Memory]] = {}
    for m in found:
        if m.kind == "event":
            for word in _stems(m.text):
                by_stem.setdefault(word, []).append(m)
    done: set[int] = set()
    for task in found:
        if task.kind != "task":
            continue
        stems = _stems(task.text)
        shared: dict[int, int] = {}
        for word in stems:
            for event in by_stem.get(word, ()):
                if (
                    event.observed_at > task.observed_at
                    and event.subject == task.subject
                    and event.scope == task.scope
                ):
                    shared[event.id] = shared.get(event.id, 0) + 1
        need = max(_MIN_SHARED, math.ceil(len(stems) / 2))
        if any(count >= need for count in shared.values()):
            done.add(task.id)
    return done


def _stems(text: str) -> set[str]:
    """The content words of `text`, folded and cut to their first `_STEM` letters."""
    return {fold(w)[:_STEM] for w in content_words(text)}
