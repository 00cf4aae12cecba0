"""What a search gives back (`SearchOutcome`: the hits, how they were found, the `Trace`
of what each stage kept) and the time a query names (`TimeWindow`). Values only: the
stages that fill them are `hybrid`'s order over `lexical`, `nearest`, `graph_list` and
`ranking`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memoracle.storage_types import LexicalQuery
from memoracle.types import Hit

Key = tuple[str, int]  # ("memory" | "episode", id)


@dataclass(frozen=True)
class TimeWindow:
    """The time a query names ("in May", "last week"): hits inside it are boosted; a
    question about that time `only` is answered by the time-window stage (`window`)."""

    start: datetime
    end: datetime
    only: bool = False


@dataclass(frozen=True)
class Trace:
    """What one search did, stage by stage, so `explain` can say where an item fell
    out: the lexical queries it ran and those it did not need, per (table, query) the
    id at and below which only a query's rarest words were scored (`lexical.matches`),
    each list's ranks, the query vector and the similarity of the last of the nearest
    looked up, the fused scores, the candidates scored (the best POOL * 2), the faded
    ones dropped (their activation), the items another hit stood for (a memory and its
    turn are one), and what was left for MMR."""

    queries: tuple[LexicalQuery, ...]
    untried: tuple[LexicalQuery, ...]
    cutoffs: dict[tuple[str, LexicalQuery], int]
    lexical: dict[Key, int]
    vector: dict[Key, int]
    graph: frozenset[Key]
    query_vector: npt.NDArray[np.float32] | None
    nearest_floor: float | None
    ranked: dict[Key, float]
    scored: tuple[Key, ...]
    faded: dict[Key, float]
    stood_for: dict[Key, str]
    kept: tuple[Key, ...]


@dataclass(frozen=True)
class SearchOutcome:
    """The hits, how they were found, why the answer may be partial (`note`: no
    embedding model, a service down, ...), and why there are none (`no_match`: the
    query is under the noise floor)."""

    hits: tuple[Hit, ...]
    mode: str  # "hybrid", "lexical" (asked for, or no vectors) or "vector" (asked for)
    note: str | None = None
    trace: Trace | None = None
    no_match: str | None = None
