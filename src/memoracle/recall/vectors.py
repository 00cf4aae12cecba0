"""The vectors of one embedding model, in memory, for nearest-neighbour search.

Owns `InProcessIndex`, today's `VectorIndex` (`store.protocols`: what search asks of an
index of vectors, wherever they are), over `VectorSet`: the content hashes of searchable
texts (not archived memories, see `Index.searchable_vectors`) that have a vector, and the
nearest of them to a query — by an exact float32 matrix searched with numpy (grown in
place as vectors are added), or, from `embedding.ann_threshold` vectors up with the `ann`
extra installed, by an HNSW graph (`ann.HnswIndex`) kept in a file under HOME/index/ so
that the next process loads it instead of rebuilding it. `load_vectors` builds either
from the store.

The BLOBs in SQLite stay canonical: the file is derived, checked against the store when
loaded, completed with what it lacks, and rebuilt when it is damaged or a quarter of its
rows were archived since it was built. What it leaves to others: which items stand
behind a hash and who may see them (`store.index`), embedding (`embed`), and fusing the
lists (`hybrid`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memoracle.config import Settings
from memoracle.embed import from_blob
from memoracle.errors import EngineError
from memoracle.recall.ann import HnswIndex, ann_available
from memoracle.storage_types import View
from memoracle.store.protocols import SearchIndex, StoreBackend, VectorIndex

log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]

LOAD_BATCH = 10_000  # BLOBs decoded at a time while loading into an ANN index
SAVE_EVERY = 1_000  # vectors added since the ANN file was written before it is rewritten


class VectorSet:
    """Content hashes of one model with their vectors: exact search, or an HNSW graph."""

    def __init__(self, model_id: str, dim: int, *, ann: HnswIndex | None = None) -> None:
        self.model_id = model_id
        self.dim = dim
        self.ann = ann
        self.hashes: list[str] = []
        self.rows: dict[str, int] = {}
        self.unsaved = 0  # rows added to the graph since its file was written
        # What the store held when this set was last completed from it (`catch_up`):
        # the model's stored vectors, this process's own additions counted in, and the
        # newest memory, episode and audit ids. Rows archived since stay in the set
        # (search drops their hits by status) until it is loaded or built again.
        self.stored = 0
        self.seen = (0, 0, 0)
        self._buffer: Matrix = np.empty((0, dim), np.float32)

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def matrix(self) -> Matrix:
        """The exact-search matrix (row i is the vector of `hashes[i]`); empty with a graph."""
        return self._buffer[: len(self.hashes)]

    def reserve(self, count: int) -> None:
        """Room for `count` rows in all, so a bulk load copies each vector once."""
        if self.ann is None and count > len(self._buffer):
            grown = np.empty((count, self.dim), np.float32)
            grown[: len(self.hashes)] = self.matrix
            self._buffer = grown

    def add(self, hashes: Sequence[str], vectors: Matrix) -> int:
        """Add the vectors of hashes not yet present; return how many were added."""
        seen: set[str] = set()
        fresh: list[int] = []
        for i, h in enumerate(hashes):
            if h not in self.rows and h not in seen:
                seen.add(h)
                fresh.append(i)
        if not fresh:
            return 0
        rows = np.asarray(vectors, np.float32)[fresh]
        start = len(self.hashes)
        if self.ann is not None:
            self.ann.add(rows)
            self.unsaved += len(fresh)
        else:
            if start + len(fresh) > len(self._buffer):  # grow by half: amortised copies
                self.reserve(max(start + len(fresh), len(self._buffer) * 3 // 2 + 256))
            self._buffer[start : start + len(fresh)] = rows
        for n, i in enumerate(fresh):
            self.rows[hashes[i]] = start + n
            self.hashes.append(hashes[i])
        return len(fresh)

    def put(self, content_hash: str, vector: Matrix) -> None:
        """Add one vector to an exact set (the bulk load's path: no batching overhead)."""
        if content_hash in self.rows:
            return
        row = len(self.hashes)
        if row == len(self._buffer):
            self.reserve(row * 3 // 2 + 256)
        self._buffer[row] = vector
        self.rows[content_hash] = row
        self.hashes.append(content_hash)

    def nearest(self, query: Matrix, k: int) -> list[tuple[str, float]]:
        """Up to `k` (hash, cosine similarity) pairs, best first, similarity above 0
        (orthogonal or opposite: no relation at all)."""
        if not self.hashes or k < 1:
            return []
        if self.ann is not None:
            ids, sims = self.ann.search(query, k)
            pairs = zip(ids.tolist(), sims.tolist(), strict=True)
        else:
            all_sims = self.matrix @ query
            count = min(k, len(all_sims))
            best = np.argpartition(-all_sims, count - 1)[:count]
            best = best[np.argsort(-all_sims[best])]
            pairs = zip(best.tolist(), all_sims[best].tolist(), strict=True)
        return [(self.hashes[i], float(s)) for i, s in pairs if s > 0.0 and i < len(self.hashes)]

    def save(self, path: Path) -> None:
        """Write the graph and its hashes to `path` (atomic); nothing to do when exact."""
        if self.ann is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        self.ann.save(path, labels=self.hashes)
        self.unsaved = 0


class InProcessIndex:
    """The `VectorIndex` of one model whose vectors are loaded into this process: a
    `VectorSet` read from the store on the first `refresh` (`load_vectors`: the HNSW
    graph of HOME/index/ when there is one, else the exact matrix), then completed when
    the store changed (`catch_up`, when the store's `maintenance.change_marker` moved:
    another connection's commits, or this connection's own writes). It searches every vector it
    holds: `nearest` ignores the view, which search applies to the items behind the
    hashes (`nearest._items_behind`)."""

    def __init__(
        self, store: StoreBackend, model_id: str, dim: int, *, home: Path, ann_threshold: int
    ) -> None:
        self._store = store
        self._model_id = model_id
        self._dim = dim
        self._home = home
        self._threshold = ann_threshold
        self._found: VectorSet | None = None  # loaded by the first `refresh`
        self._version = -1  # the change marker (others' commits) at the last check
        self._own = -1  # and this connection's own changes then

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def ann(self) -> HnswIndex | None:
        """The HNSW graph searched, or None: exact search (or nothing loaded yet)."""
        return self._found.ann if self._found is not None else None

    @property
    def rows(self) -> dict[str, int]:
        """The hashes loaded, with their row numbers (empty before the first `refresh`)."""
        return self._found.rows if self._found is not None else {}

    def __len__(self) -> int:
        return len(self._found) if self._found is not None else 0

    def refresh(self) -> int:
        """Loaded once, then caught up when the store changed (another process, or this
        one, stored or restored texts). Corrupt blobs are skipped (and logged)."""
        version, own = self._store.maintenance.change_marker()
        added = 0
        if self._found is None:
            self._found = load_vectors(
                self._store.index,
                self._model_id,
                self._dim,
                ann_path=ann_file(self._home, self._model_id),
                ann_threshold=self._threshold,
            )
            added = len(self._found)
        elif version != self._version:
            added = catch_up(self._found, self._store.index)
        elif own != self._own:  # this process's vectors are in the set already
            added = catch_up(self._found, self._store.index, others=False)
        self._version, self._own = version, own
        return added

    def add(self, hashes: Sequence[str], vectors: Matrix) -> int:
        """What this process just stored: the store's count is not another's doing.
        Nothing before the first `refresh`, which reads them from the store."""
        if self._found is None:
            return 0
        added = self._found.add(hashes, vectors)
        self._found.stored += len(hashes)
        return added

    def nearest(
        self, query: Matrix, k: int, *, view: View | None = None
    ) -> list[tuple[str, float]]:
        return self._found.nearest(query, k) if self._found is not None else []

    def state(self) -> str:
        """ "exact" under `embedding.ann_threshold` searchable vectors; else "hnsw" when
        the graph's file exists, "missing" when not, "unavailable" without faiss."""
        if self._store.index.searchable_vector_count(self._model_id) < self._threshold:
            return "exact"
        if not ann_available():
            return "unavailable"
        return "hnsw" if ann_file(self._home, self._model_id).exists() else "missing"

    def rebuild_if_needed(self) -> bool:
        """Build and save the HNSW graph when the store should have one and it is
        missing, would not load, or holds a quarter of rows whose memories were archived
        since (they take places among the nearest and are then dropped)."""
        state = self.state()
        if state not in ("missing", "hnsw"):
            return False
        if state == "hnsw":
            self.refresh()
            found = self._found
            if found is not None and found.ann is not None:
                searchable = self._store.index.searchable_vector_count(self._model_id)
                archived = len(found) - searchable
                if archived * 4 < len(found):
                    return False  # loaded, completed from the store, mostly searchable
        path = ann_file(self._home, self._model_id)
        self._found = build_graph(self._store.index, self._model_id, self._dim, path)
        self._version, self._own = self._store.maintenance.change_marker()
        return True

    def persist(self) -> None:
        """Write the HNSW graph if enough was added since it was loaded (the next
        process completes it from the store anyway)."""
        found = self._found
        if (
            found is not None
            and found.ann is not None
            and found.unsaved >= min(SAVE_EVERY, max(1, len(found) // 20))
        ):
            save_quietly(found, ann_file(self._home, self._model_id))


if TYPE_CHECKING:
    _CHECKED: type[VectorIndex] = InProcessIndex  # mypy proves it is a VectorIndex

OpenIndex = Callable[[StoreBackend, Settings, str, int], VectorIndex]  # store, settings, model, dim


def in_process_index(
    store: StoreBackend, settings: Settings, model_id: str, dim: int
) -> VectorIndex:
    """The `OpenIndex` of every store: the index the database keeps when it keeps one
    (`StoreBackend.vector_index`: pgvector on PostgreSQL), else `InProcessIndex`, its
    HNSW graph under HOME/index/ (SQLite)."""
    kept = store.vector_index(model_id, dim)
    if kept is not None:
        return kept
    return InProcessIndex(
        store,
        model_id,
        dim,
        home=settings.home,
        ann_threshold=settings.embedding.ann_threshold,
    )


def ann_file(home: Path, model_id: str) -> Path:
    """Where the HNSW graph of `model_id` lives: HOME/index/<model>.hnsw."""
    return home / "index" / (re.sub(r"[^A-Za-z0-9._-]+", "_", model_id) + ".hnsw")


def load_vectors(
    index: SearchIndex, model_id: str, dim: int, *, ann_path: Path, ann_threshold: int
) -> VectorSet:
    """The vectors of `model_id` that search can use (`Index.searchable_vectors`): the
    HNSW graph from `ann_path` when there are at least `ann_threshold` of them, faiss is
    installed and the graph has been built (`build_graph`, run by `memoracle reindex`:
    building takes minutes, never a search's time); else an exact matrix. Corrupt BLOBs
    and vectors of another dimension are skipped and logged: lexical search still works."""
    stored, seen = index.vector_count(model_id), index.marks()
    count = index.searchable_vector_count(model_id)
    if count >= ann_threshold and ann_available():
        if ann_path.exists():
            graph = _load_graph(index, model_id, dim, ann_path)
            if graph is not None:
                return graph
        else:
            log.warning(
                "%d vectors of %s are searched exactly; run memoracle reindex to build"
                " the HNSW graph",
                count,
                model_id,
            )
    found = VectorSet(model_id, dim)
    found.reserve(count)
    bad = 0
    hashes: list[str] = []
    blobs: list[bytes] = []
    for h, stored_dim, blob in index.searchable_vectors(model_id):
        if stored_dim != dim or len(blob) != 4 * dim:
            bad += 1
            continue
        hashes.append(h)
        blobs.append(blob)
        if len(blobs) == LOAD_BATCH:
            bad += _put_many(found, hashes, blobs)
            hashes, blobs = [], []
    bad += _put_many(found, hashes, blobs)
    _report(bad, model_id)
    found.stored, found.seen = stored, seen
    return found


def _put_many(found: VectorSet, hashes: list[str], blobs: list[bytes]) -> int:
    """Decode a batch of BLOBs in one numpy call (per-row decoding costs more than the
    reading); rows with NaN or infinite values are skipped. Returns how many were."""
    if not blobs:
        return 0
    rows = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), found.dim)
    finite = np.isfinite(rows).all(axis=1)
    for h, row, ok in zip(hashes, rows, finite.tolist(), strict=True):
        if ok:
            found.put(h, row)
    return len(blobs) - int(finite.sum())


def build_graph(index: SearchIndex, model_id: str, dim: int, path: Path) -> VectorSet:
    """An HNSW graph of the searchable vectors of `model_id`, saved to `path` (the `ann`
    extra must be installed). About a millisecond a vector on two cores."""
    found = VectorSet(model_id, dim, ann=HnswIndex(dim))
    top_up(found, index)
    found.save(path)
    return found


def _load_graph(index: SearchIndex, model_id: str, dim: int, path: Path) -> VectorSet | None:
    """The graph in `path` completed from the store, or None (logged) when the file is
    damaged: exact search serves until `memoracle reindex` rebuilds it."""
    try:
        graph, labels = HnswIndex.load(path, dim)
    except EngineError as exc:
        log.warning("%s; searching exactly until memoracle reindex rebuilds it", exc)
        return None
    found = VectorSet(model_id, dim, ann=graph)
    for row, label in enumerate(labels):
        found.rows.setdefault(label, row)
        found.hashes.append(label)
    top_up(found, index)
    if found.unsaved >= SAVE_EVERY:
        save_quietly(found, path)
    return found


def top_up(found: VectorSet, index: SearchIndex) -> int:
    """Add every searchable vector the store has and `found` lacks (another process
    embedded them, or the graph file is older than the store); return how many were
    added. Lists every searchable text: `catch_up` is the cheap way between searches."""
    stored, seen = index.vector_count(found.model_id), index.marks()
    missing = [h for h in index.searchable_vector_hashes(found.model_id) if h not in found.rows]
    if len(missing) > LOAD_BATCH:
        log.info("adding %d vectors of %s", len(missing), found.model_id)
    added = _add_stored(found, index, missing)
    found.stored, found.seen = stored, seen
    return added


def catch_up(found: VectorSet, index: SearchIndex, *, others: bool = True) -> int:
    """Complete `found` after the store changed: `top_up` when another process stored
    vectors; else only the texts stored or restored since it last looked, whose vector
    may be stored already (the text of an archived memory). `others=False`: only this
    process wrote, and its vectors were added as it stored them (the count is not read).
    Returns how many were added."""
    if others and index.vector_count(found.model_id) != found.stored:
        return top_up(found, index)
    hashes, found.seen = index.searchable_since(found.seen)
    fresh = [h for h in hashes if h not in found.rows]
    return _add_stored(found, index, fresh)


def _add_stored(found: VectorSet, index: SearchIndex, hashes: Sequence[str]) -> int:
    """Add the stored vectors of those of `hashes` that have a sound one; return how
    many were added."""
    added = bad = 0
    for start in range(0, len(hashes), LOAD_BATCH):
        batch = hashes[start : start + LOAD_BATCH]
        chunk: list[str] = []
        vectors: list[Matrix] = []
        for h, stored_dim, blob in index.vectors_for(found.model_id, batch):
            vector = _decode(stored_dim, blob, found.dim)
            if vector is None:
                bad += 1
                continue
            chunk.append(h)
            vectors.append(vector)
        if chunk:
            added += found.add(chunk, np.stack(vectors))
    _report(bad, found.model_id)
    return added


def stored_vectors(
    index: SearchIndex, model_id: str, dim: int, hashes: Sequence[str]
) -> dict[str, Matrix]:
    """The stored vectors of `model_id` for those of `hashes` that have a sound one,
    read from the store (a few, for one search: an HNSW graph gives none back)."""
    found: dict[str, Matrix] = {}
    for h, stored_dim, blob in index.vectors_for(model_id, hashes):
        vector = _decode(stored_dim, blob, dim)
        if vector is not None:
            found[h] = vector
    return found


def save_quietly(found: VectorSet, path: Path) -> None:
    """`found.save`, logging instead of failing: a read-only home still searches, and
    the graph is completed from the store next time."""
    try:
        found.save(path)
    except (OSError, EngineError) as exc:
        log.warning("could not write %s: %s", path, exc)


def _decode(stored_dim: int, blob: bytes, dim: int) -> Matrix | None:
    if stored_dim != dim:
        return None
    try:
        return from_blob(blob, dim)
    except EngineError:
        return None


def _report(bad: int, model_id: str) -> None:
    if bad:
        log.warning("%d stored vectors of %s are corrupt and were skipped", bad, model_id)
