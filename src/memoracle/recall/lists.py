"""The lists a search fuses, and what each contributed: the turns' and memories'
lexical lists, the vector lists and the graph's list, each weighted (docs/retrieval.md,
"Fusion"), and the search modes that choose among them (`MODES`: `hybrid`, `lexical`
for BM25 alone, `vector` for the embeddings alone; the seed skills' `--lexical-only`
and `--vector-only`). Pure: ranks in, scores out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from memoracle.recall import fuse

__all__ = ["MEMORY_LEXICAL_WEIGHT", "MODES", "Mode", "fuse_lists", "list_weight"]

Key = tuple[str, int]  # ("memory" | "episode", id)
Mode = Literal["hybrid", "lexical", "vector"]
MODES: tuple[Mode, ...] = ("hybrid", "lexical", "vector")

# The memories' lexical list weighs less than the turns': a memory is short, so BM25
# ranks it high for any word it shares, and at equal weight the 5th-best memory ranks
# beside the 5th-best turn however weak its match. On LoCoMo (conversations 0-4), the
# memories' list at weight 1 cost 6 points of R@5 (.431 -> .497 without it); at 0.3 it
# costs nothing there and still finds a memory stated once and never said as a turn.
MEMORY_LEXICAL_WEIGHT = 0.3


def list_weight(source: str, signal: str, vector_weight: float, graph_weight: float) -> float:
    """The weight of one list in the fusion: `signal` is "lexical", "vector" or "graph"
    and `source` "memory" or "episode"."""
    if signal == "vector":
        return vector_weight
    if signal == "graph":  # a list of memories, weighed like the memories' lexical list
        return graph_weight * MEMORY_LEXICAL_WEIGHT
    return MEMORY_LEXICAL_WEIGHT if source == "memory" else 1.0


def fuse_lists(
    *,
    lexical_m: Sequence[int],
    lexical_e: Sequence[int],
    vector_m: Sequence[int],
    vector_e: Sequence[int],
    graph_m: Sequence[int],
    rrf_k: int,
    vector_weight: float,
    graph_weight: float,
) -> dict[Key, float]:
    """Weighted Reciprocal Rank Fusion of the lists (each best first): each item's
    Σ weight / (rrf_k + rank) over the lists it is in (`list_weight`). On LoCoMo the
    vector lists alone are far weaker than BM25, and at equal weight they pull good
    lexical hits down (docs/embeddings.md)."""
    # One RRF per group, added in this order (ties keep the order keys first appear).
    groups: list[tuple[str, list[tuple[str, Sequence[int]]]]] = [
        ("lexical", [("episode", lexical_e)]),
        ("lexical", [("memory", lexical_m)]),
        ("vector", [("memory", vector_m), ("episode", vector_e)]),
        ("graph", [("memory", graph_m)]),
    ]
    ranked: dict[Key, float] = {}
    for signal, lists in groups:
        fused = fuse.rrf([[(source, i) for i in ids] for source, ids in lists], k=rrf_k)
        for key, value in fused.items():
            weight = list_weight(key[0], signal, vector_weight, graph_weight)
            ranked[key] = ranked.get(key, 0.0) + weight * value
    return ranked
