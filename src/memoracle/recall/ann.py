"""Approximate nearest neighbours: an HNSW graph for stores too big to scan exactly.

Owns `HnswIndex`, a faiss `IndexHNSWFlat` over unit float32 vectors with inner-product
(= cosine) similarity: its parameters, how many threads it may use, and its file — one
file holding the graph and the caller's label for each row, written atomically, checked
by a checksum, refused with an `EngineError` naming it when corrupt or of another
dimension. `ann_available()` says whether the optional `faiss-cpu` package is installed;
faiss is imported on first use, never when memoracle is imported, so the base install
works without it.

What it leaves to others: what each row stands for (the caller's content hashes, which
it passes as labels), when the index takes over from exact numpy search
(`embedding.ann_threshold`), where its file lives and when it is rebuilt
(`recall.vectors`), which hits a requester may see (`store.index`), and the vectors
themselves: the float32 BLOBs in SQLite are canonical, this index is derived and can
always be rebuilt from them.

Threads: faiss parallelises with OpenMP and by default takes every core. memoracle runs
on the user's machine next to the agent that calls it (the reference box has 2 cores), so
a query uses one thread (HNSW parallelises over queries, not within one: a second thread
would not make a single query faster) and building, a batch job, at most two. The limit
is set around each faiss call and restored after it (OpenMP keeps it per calling thread).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.errors import EngineError, InvalidInput, NotFound
from memoracle.files import replacing

# Measured with bench/ann_speed.py on this 2-core box, 100k 512-d vectors around 2,000
# topic centres, and around 200 (500 to a topic, as 2,000 topics would have at 1M):
# - ef_construction 40 (faiss' default) leaves parts of dense topics unreachable: recall@50
#   stalls at 0.984 whatever ef_search; 80 reaches 0.999 and builds ~20% slower.
# - M 16 needs ef_search 128 where M 32 needs 96, to save 128 B per 2 KB vector.
# - ef_search 128: recall@50 0.990 at 2-3 ms p50 with 2,000 topics (0.984 at 64 in half
#   the time; 0.993 at 256 in twice), 0.9997 with 200, 0.993 on LoCoMo's 5.9k turns
#   embedded by the default model. Uniform random 512-d vectors are out of reach (0.21
#   at 128, 0.53 at 512): no embedding model spreads text like that.
M = 32  # graph degree: 64 links per vector on the base layer, 32 on the layers above
EF_CONSTRUCTION = 80  # candidate list while inserting
EF_SEARCH = 128  # candidate list while searching; raised to k when k is larger

BUILD_THREADS = 2
QUERY_THREADS = 1

INSTALL_HINT = "pip install 'memoracle[ann]'"

_MAGIC = b"memoracle-hnsw\x00\x01"  # 14 bytes of name, a NUL, the format version
# magic, dim, rows, bytes of the faiss index, labels, bytes of the labels, and a crc32 of
# what follows the header: the faiss index, then the labels, UTF-8, one per line.
_HEADER = struct.Struct("<16sIQQQQI")
_CHUNK = 1 << 20


def ann_available() -> bool:
    """Whether faiss (the `ann` extra) is installed. Does not import it."""
    return importlib.util.find_spec("faiss") is not None


def _faiss() -> Any:
    # Typed as Any on purpose: faiss is optional, and mypy must pass without it installed.
    if not ann_available():
        raise InvalidInput(
            "The ANN index needs the 'faiss-cpu' package, which is not installed. "
            f"Install it with: {INSTALL_HINT}"
        )
    try:
        return importlib.import_module("faiss")
    except ImportError as exc:  # installed but broken (a missing shared library, say)
        raise InvalidInput(
            f"The ANN index needs faiss, which failed to import ({exc}). "
            f"Reinstall it with: {INSTALL_HINT}"
        ) from exc


@contextmanager
def _threads(faiss: Any, count: int) -> Iterator[None]:
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(count)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class HnswIndex:
    """An HNSW graph over unit float32 vectors; row numbers are the order rows were added.

    Build it from the matrix whose row i is the vector of the caller's i-th hash, append
    new vectors with `add` (they get the next row numbers), and `search` returns row
    numbers and cosine similarities, best first. Vectors must be L2-normalised, as every
    `Embedder` returns them: the index ranks by inner product and does not normalise.
    Searches may run in parallel threads; an `add` must not run alongside them.
    """

    def __init__(
        self,
        dim: int,
        *,
        m: int = M,
        ef_construction: int = EF_CONSTRUCTION,
        ef_search: int = EF_SEARCH,
    ) -> None:
        """An empty index for vectors of `dim` floats."""
        for name, value in (("dim", dim), ("m", m), ("ef_construction", ef_construction)):
            if value < 1:
                raise InvalidInput(f"HNSW {name} must be at least 1, got {value}.")
        faiss = _faiss()
        index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        self._faiss = faiss
        self._index = index
        self.dim = dim
        self.ef_search = ef_search

    @classmethod
    def build(
        cls,
        matrix: npt.ArrayLike,
        *,
        m: int = M,
        ef_construction: int = EF_CONSTRUCTION,
        ef_search: int = EF_SEARCH,
        threads: int = BUILD_THREADS,
    ) -> HnswIndex:
        """An index over the rows of `matrix` (n, dim); row i of the matrix is row id i."""
        rows = np.asarray(matrix, dtype=np.float32)
        if rows.ndim != 2:
            raise InvalidInput(f"Cannot index an array of shape {rows.shape}: expected (n, dim).")
        index = cls(rows.shape[1], m=m, ef_construction=ef_construction, ef_search=ef_search)
        index.add(rows, threads=threads)
        return index

    @property
    def m(self) -> int:
        return int(self._index.hnsw.nb_neighbors(1))

    @property
    def ef_construction(self) -> int:
        return int(self._index.hnsw.efConstruction)

    @property
    def ef_search(self) -> int:
        return self._ef_search

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if value < 1:
            raise InvalidInput(f"HNSW ef_search must be at least 1, got {value}.")
        self._ef_search = value

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def __repr__(self) -> str:
        return (
            f"HnswIndex(rows={len(self)}, dim={self.dim}, m={self.m}, "
            f"ef_construction={self.ef_construction}, ef_search={self.ef_search})"
        )

    def add(self, matrix: npt.ArrayLike, *, threads: int = BUILD_THREADS) -> None:
        """Append the rows of `matrix`; they get row ids len(self), len(self) + 1, ..."""
        rows = self._rows(matrix)
        if not len(rows):
            return
        with _threads(self._faiss, threads):
            self._index.add(rows)

    def search(
        self, query: npt.ArrayLike, k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The row ids of the (about) `k` nearest rows and their similarities, best first.

        Fewer than `k` when the index holds fewer rows. Approximate: a true neighbour may
        be missed (recall@50 ≥ 0.95 at the default `ef_search`, see bench/ann_speed.py).
        """
        vector = np.asarray(query, dtype=np.float32)
        if vector.shape != (self.dim,):
            raise InvalidInput(
                f"Cannot search with a query of shape {vector.shape}: expected ({self.dim},)."
            )
        count = min(k, len(self))
        if count < 1:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        params = self._faiss.SearchParametersHNSW()
        params.efSearch = max(self.ef_search, count)
        with _threads(self._faiss, QUERY_THREADS):
            sims, ids = self._index.search(vector.reshape(1, -1), count, params=params)
        found = ids[0] >= 0  # faiss pads with -1 when the graph yields fewer than k
        return ids[0][found].astype(np.int64, copy=False), sims[0][found]

    # -- the file ----------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, labels: Sequence[str] | None = None) -> None:
        """Write the index to `path` atomically: a reader sees the old file or the new one.

        `labels`, one per row (the caller's content hashes, say), are kept in the same
        file, so the graph and what its row numbers stand for cannot drift apart.
        """
        target = Path(path)
        names = b""
        if labels is not None:
            if len(labels) != len(self):
                raise InvalidInput(f"{len(labels)} labels for an index of {len(self)} rows.")
            names = "\n".join(labels).encode("utf-8")
            if names.count(b"\n") != max(0, len(labels) - 1):
                raise InvalidInput("ANN index labels must not contain a newline.")
        try:
            with replacing(target, durable=True) as temp, open(temp, "wb") as f:
                f.write(b"\0" * _HEADER.size)
                crc, size = 0, 0

                def write(chunk: bytes) -> int:
                    nonlocal crc, size
                    f.write(chunk)
                    crc = zlib.crc32(chunk, crc)
                    size += len(chunk)
                    return len(chunk)

                self._faiss.write_index(self._index, self._faiss.PyCallbackIOWriter(write))
                graph_bytes = size
                write(names)
                count = len(labels) if labels is not None else 0
                f.seek(0)
                f.write(
                    _HEADER.pack(_MAGIC, self.dim, len(self), graph_bytes, count, len(names), crc)
                )
        except (OSError, RuntimeError) as exc:
            raise EngineError(f"Cannot write the ANN index {target}: {exc}") from exc

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], dim: int, *, ef_search: int = EF_SEARCH
    ) -> tuple[HnswIndex, list[str]]:
        """The index saved at `path`, which must hold vectors of `dim` floats, and the
        labels saved with it (empty if there were none).

        NotFound if there is no file; EngineError if it is corrupt, not an index of ours,
        or of another dimension. The index is derived: rebuild it from the stored vectors.
        """
        target = Path(path)
        faiss = _faiss()

        def corrupt(why: str) -> EngineError:
            return EngineError(
                f"The ANN index {target} is corrupt ({why}); rebuild it from the stored vectors."
            )

        try:
            with target.open("rb") as f:
                head = f.read(_HEADER.size)
                if len(head) < _HEADER.size or not head.startswith(_MAGIC):
                    raise corrupt("not a memoracle HNSW file")
                _, file_dim, rows, graph_bytes, count, names_bytes, crc = _HEADER.unpack(head)
                if file_dim != dim:
                    raise EngineError(
                        f"The ANN index {target} holds {file_dim}-d vectors, not {dim}-d "
                        "(another embedding model); rebuild it from the stored vectors."
                    )
                # Checked before faiss parses anything: a flipped byte in the graph would
                # make searches read outside the index instead of failing here.
                actual, seen = 0, 0
                while chunk := f.read(_CHUNK):
                    actual = zlib.crc32(chunk, actual)
                    seen += len(chunk)
                if seen != graph_bytes + names_bytes:
                    raise corrupt(
                        f"{seen} bytes after the header, expected {graph_bytes + names_bytes}"
                    )
                if actual != crc:
                    raise corrupt("checksum mismatch")
                f.seek(_HEADER.size)
                index = faiss.read_index(faiss.PyCallbackIOReader(f.read, _CHUNK))
                f.seek(_HEADER.size + graph_bytes)
                names = f.read(names_bytes)
        except FileNotFoundError as exc:
            raise NotFound(f"No ANN index at {target}.") from exc
        except OSError as exc:
            raise EngineError(f"Cannot read the ANN index {target}: {exc}") from exc
        except RuntimeError as exc:  # faiss' own checks
            raise corrupt(str(exc).strip().splitlines()[-1]) from exc
        if (
            not isinstance(index, faiss.IndexHNSWFlat)
            or index.metric_type != faiss.METRIC_INNER_PRODUCT
            or index.d != dim
            or index.ntotal != rows
        ):
            raise corrupt(f"unexpected index {type(index).__name__} of {index.ntotal} rows")
        try:
            labels = names.decode("utf-8").split("\n") if count else []
        except UnicodeDecodeError as exc:
            raise corrupt("labels are not UTF-8") from exc
        if len(labels) != count or (count and count != rows):
            raise corrupt(f"{len(labels)} labels for {rows} rows")
        loaded = cls.__new__(cls)
        loaded._faiss = faiss
        loaded._index = index
        loaded.dim = dim
        loaded.ef_search = ef_search
        return loaded, labels

    def _rows(self, matrix: npt.ArrayLike) -> npt.NDArray[np.float32]:
        rows = np.ascontiguousarray(matrix, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self.dim:
            raise InvalidInput(
                f"Cannot add an array of shape {rows.shape}: expected (n, {self.dim})."
            )
        if not np.isfinite(rows).all():
            raise InvalidInput("Cannot index vectors with NaN or infinite values.")
        return rows
