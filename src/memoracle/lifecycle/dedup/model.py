"""What "the same memory" means, as numbers: the formula and its weights, the threshold,
a pair's `DedupScore`, and a group of duplicates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FORMULA = "dedup/v1"


THRESHOLD = 0.65


W_JACCARD = 0.45


W_SEGMENTS = 0.55


SUBSTITUTION = 0.85  # when each text has a word the other lacks and no vector says alike


SMOOTHING = 0.5  # words added to the smaller side of containment: 2 of 2 is weak evidence


ENTITY_LIFT = 0.2  # how far agreeing identifiers move the score towards 1


CONFLICT_FLOOR = 0.3  # what is left of a score whose entities all differ


# The default encoder (USE multilingual v3) gives unrelated texts < 0.35 and paraphrases
# 0.80-0.97; below VECTOR_LOW a vector adds nothing, from VECTOR_HIGH on it counts fully.
VECTOR_LOW = 0.6


VECTOR_HIGH = 0.95


ENTITY_KINDS = ("url", "email", "date", "id", "amount", "phone", "version", "number", "name")


# Kinds that identify something: agreeing on one lifts the score. Numbers and capitalised
# words ("name") are too common to lift; differing ones still count against.
_LIFTING = frozenset(("url", "email", "date", "id", "amount", "phone", "version"))


# Kinds compared through the words that stand for their values (`_value_word`): one
# agrees when its word is among the other text's words. For all but names that is key
# equality (a hex id by its first seven digits, so a short git hash agrees with its long
# form); a name ("Olga", sentence-initial "Call" too) agrees with the same word anywhere
# in the other text, so "Call the dentist" is no conflict with "Remind me to call the
# dentist". Dates and versions are compared pair by pair (`_agree`).
_KEYED_KINDS = frozenset(("url", "email", "id", "amount", "phone", "number", "name"))


Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class DedupScore:
    """How alike two texts are: each signal, the combined `score` and why, in a few words.

    `entities` and `vector` are None when they had nothing to say (no entity kind in both
    texts; no vectors). `conflicts` names the entity kinds that differ ("date", ...),
    plus "negation" when only one text is negated.
    """

    score: float
    jaccard: float
    containment: float
    segments: float
    entities: float | None
    vector: float | None
    conflicts: tuple[str, ...]
    reason: str


def is_duplicate(score: DedupScore, threshold: float = THRESHOLD) -> bool:
    """Whether `score` says duplicate: at least `threshold` (0.65 by default)."""
    return score.score >= threshold


@dataclass(frozen=True)
class DuplicateGroup:
    """Memories to merge into `keep`: each id in `merge` with its score against `keep`,
    best first. `keep` comes first in `rank` order (by default it is the lowest id)."""

    keep: int
    merge: tuple[tuple[int, DedupScore], ...]

    @property
    def merge_ids(self) -> tuple[int, ...]:
        return tuple(i for i, _ in self.merge)
