"""Recall's `VectorIndex` on PostgreSQL: the vectors stay in the database and pgvector's
HNSW index finds the nearest (`PgIndex.nearest_texts`), narrowed there to the texts the
asking view may see. Nothing is loaded into the process, so every host of a fleet
searches the same index and none holds a copy of every vector.

It runs on a connection of its own, opened on the first search: recall asks for the
nearest texts in a worker thread while the lexical lists are read on the store's
connection, as on SQLite. The store closes it (`PgStore.close`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memoracle.storage_types import View
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.index import PgIndex

__all__ = ["PgVectorIndex"]

Matrix = npt.NDArray[np.float32]


class PgVectorIndex:
    """The vectors of one model in pgvector (see the module's docstring)."""

    def __init__(self, connect: Callable[[], PgDatabase], model_id: str, dim: int) -> None:
        self._connect = connect
        self._db: PgDatabase | None = None
        self._model_id = model_id
        self._dim = dim
        self._any = False  # whether the database holds a vector of the model (`refresh`)

    def _index(self) -> PgIndex:
        if self._db is None:
            self._db = self._connect()
        return PgIndex(self._db)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def __len__(self) -> int:
        """1 when the database holds a vector of this model, else 0 (a search is then
        lexical only); a count would read the whole table on every search."""
        return int(self._any)

    def refresh(self) -> int:
        """Nothing to load: whether there is a vector to search at all is looked up."""
        self._any = self._index().has_vectors(self._model_id, self._dim)
        return 0

    def add(self, hashes: Sequence[str], vectors: Matrix) -> int:
        """The vectors are in the database once committed, and in its index with them."""
        self._any = self._any or bool(len(hashes))
        return 0

    def nearest(
        self, query: Matrix, k: int, *, view: View | None = None
    ) -> list[tuple[str, float]]:
        """Up to `k` (content hash, cosine similarity) of the texts `view` may see,
        best first, similarity above 0."""
        rows = self._index().nearest_texts(self._model_id, [float(x) for x in query], view, limit=k)
        return [(h, 1.0 - d) for h, d in rows if d < 1.0]

    def state(self) -> str:
        """ "hnsw": pgvector's index, made with the model's first vector."""
        return "hnsw"

    def rebuild_if_needed(self) -> bool:
        """Never: the server keeps its HNSW index up to date with every insert."""
        return False

    def persist(self) -> None:
        """Nothing to keep: the index is the server's."""

    def close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()


if TYPE_CHECKING:
    from memoracle.store.protocols import VectorIndex

    _CHECKED: type[VectorIndex] = PgVectorIndex  # mypy proves it is a VectorIndex
