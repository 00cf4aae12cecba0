"""The vector stage of a search: the query embedded and its nearest texts found in a
worker thread while the lexical stage runs (numpy, faiss and SQLite all let go of the
GIL: the same work in the time of the longer of the two), then the memories and turns
behind those texts. Reads only: the vectors in memory are `vectors`', and the texts
that lack one are stored before a search, never during one (`hybrid`).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memoracle.embed import Embedder
from memoracle.errors import EngineError
from memoracle.storage_types import View
from memoracle.store.protocols import SearchIndex, VectorIndex

Vector = npt.NDArray[np.float32]
Near = tuple[Vector, list[tuple[str, float]]]  # the query's vector, its nearest (hash, cosine)


@dataclass(frozen=True)
class VectorLists:
    """The memories' and turns' (id, cosine similarity) pairs, nearest first; the query's
    vector; the similarity of the last text looked up when as many as were asked for
    came back (`floor`: an item less similar was not looked up); and why the stage
    failed (`failure`: an embedding service down), when it did."""

    memories: list[tuple[int, float]]
    episodes: list[tuple[int, float]]
    query_vector: Vector | None = None
    floor: float | None = None
    failure: str | None = None


NO_VECTORS = VectorLists([], [])


def embed_near(
    embedder: Embedder,
    found: VectorIndex,
    query: str,
    lock: threading.RLock,
    count: int,
    view: View | None = None,
) -> Near:
    """In the worker thread: the query's vector and its `count` nearest texts, which an
    index that can may narrow to what `view` sees (`lock` keeps the background worker
    from growing the index meanwhile)."""
    vector = embedder.embed_query(query)
    with lock:
        return vector, found.nearest(vector, count, view=view)


def vector_lists(
    job: Future[Near], index: SearchIndex, view: View, *, turns: bool, pool: int, count: int
) -> VectorLists:
    """Wait for `job` (`embed_near` asked for `count` texts), then the memories and turns
    (when `turns`) that `view` may see behind its nearest texts, at most `pool` of each."""
    query_vector: Vector | None = None
    floor: float | None = None
    try:
        query_vector, nearest = job.result()
        if len(nearest) == count:
            floor = nearest[-1][1]
        memories, episodes = _items_behind(index, nearest, view, pool)
    except EngineError as exc:  # an embedding service is down: the search answers lexically
        return VectorLists([], [], query_vector, floor, failure=str(exc))
    return VectorLists(memories, episodes if turns else [], query_vector, floor)


def _items_behind(
    index: SearchIndex, nearest: list[tuple[str, float]], view: View, pool: int
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """The memories and turns behind the nearest texts, in their order, at most `pool`
    of each (several items may share one text)."""
    score = dict(nearest)
    order = {h: n for n, (h, _) in enumerate(nearest)}
    hashes = list(score)
    memories = sorted(index.memories_with_hashes(hashes, view), key=lambda r: order[r[1]])
    episodes = sorted(index.episodes_with_hashes(hashes, view), key=lambda r: order[r[1]])
    return (
        [(i, score[h]) for i, h in memories[:pool]],
        [(i, score[h]) for i, h in episodes[:pool]],
    )
