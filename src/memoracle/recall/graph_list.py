"""The graph's list of a search: the memories about the graph neighbours the query
points to (`expand`), ordered by the query's meaning when there is a query vector (the
graph picks whom, the query's meaning what about them). Reads the store only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memoracle.embed import Embedder
from memoracle.recall.expand import expand
from memoracle.recall.vectors import stored_vectors
from memoracle.storage_types import View
from memoracle.store.protocols import StoreBackend


def graph_list(
    store: StoreBackend,
    embedder: Embedder | None,
    query: str,
    view: View,
    lexical: list[int],
    query_vector: npt.NDArray[np.float32] | None,
    *,
    pool: int,
    candidates: int,
) -> list[int]:
    """The memories about the graph neighbours the query points to (of at most
    `candidates` the graph proposes, given the query's `lexical` memories), at most
    `pool`: neighbour by neighbour, and about one neighbour, most similar to the query
    first when there is a query vector, else newest first."""
    expansion = expand(store, query, view, lexical=lexical, limit=candidates)
    ids = list(expansion.memories)
    if query_vector is None or embedder is None or len(ids) < 2:
        return ids[:pool]
    tier = dict(zip(ids, expansion.tiers, strict=True))
    hashes = {i: h for i, (_, h) in store.graph.memory_texts(ids).items()}
    vectors = stored_vectors(
        store.index, embedder.model_id, embedder.dim, sorted(set(hashes.values()))
    )
    similarity = {
        i: float(vectors[h] @ query_vector) if (h := hashes.get(i, "")) in vectors else -1.0
        for i in ids
    }
    return sorted(ids, key=lambda i: (tier[i], -similarity[i]))[:pool]
