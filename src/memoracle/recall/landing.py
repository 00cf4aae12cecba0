"""Vectors landed in the background, for a long-running host (`memoracle serve`, or an
`Engine` whose host calls `land_vectors_in_background`).

Without it the texts that have no vector yet are embedded and stored before each search
(up to `hybrid.EMBED_AT_SEARCH`, `Searcher.land_for_search`), so the first search after a
burst of captures pays for them.
`Lander` moves that work to a worker thread with its own SQLite connection: it wakes when
poked (after each capture, and once at start for what an earlier process left), embeds
the missing texts in small batches, stores each batch in its own short transaction and
adds it to the searcher's vectors in memory. Captures never wait for the embedding (at
most for one batch's commit, a few milliseconds, behind the writer lock as any two
writers); a search meanwhile answers with what has landed and finds the rest by their
words, saying so in its note. `stop` finishes the batch in hand (stored, never half
kept), closes the connection and joins the thread.

What a requester may see is not this module's concern: it stores vectors keyed by
content hash, and every search still goes through `store.index`'s visibility rule.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from memoracle.clock import Clock
from memoracle.embed import Embedder, to_blob
from memoracle.errors import EngineError
from memoracle.store.protocols import StoreBackend

log = logging.getLogger(__name__)

BATCH = 64  # texts embedded and stored at a time: a search waits for at most one commit
RETRY_S = 30.0  # after a failed batch (an embedding service down), the next try
THREAD_NAME = "memoracle-vectors"  # the worker thread's name, seen in a thread dump


class Lander:
    """One worker thread that embeds missing vectors and hands them to `deliver`.

    `open_store` opens the worker's own connection (in its thread); `deliver(hashes,
    vectors, store_batch)` is called with a function that commits the batch, so the
    searcher can commit and add it to its vectors under one lock (a search never sees a
    stored vector missing from memory, nor counts another process's work twice)."""

    def __init__(
        self,
        open_store: Callable[[], StoreBackend],
        embedder: Embedder,
        clock: Clock,
        deliver: Callable[[list[str], npt.NDArray[np.float32], Callable[[], None]], None],
        *,
        batch: int = BATCH,
    ) -> None:
        self._open_store = open_store
        self._embedder = embedder
        self._clock = clock
        self._deliver = deliver
        self._batch = batch
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._idle = threading.Event()
        self._thread: threading.Thread | None = None
        self.landed = 0  # vectors stored and added since start
        self.error: str | None = None  # the last batch's failure, until one succeeds

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def busy(self) -> bool:
        """Poked and not done yet: some texts may still lack a vector."""
        return self.running and not self._idle.is_set()

    def start(self) -> None:
        """Start the worker (once); it looks for missing vectors straight away."""
        if self._thread is not None:
            return
        self._idle.clear()
        self._wake.set()
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """New texts were stored: land their vectors soon. Never blocks."""
        if self._thread is not None:
            self._idle.clear()
            self._wake.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every text poked about has a vector (or the worker stopped)."""
        return self._idle.wait(timeout)

    def stop(self, timeout: float | None = None) -> None:
        """Finish the batch in hand, close the worker's connection, join the thread."""
        thread = self._thread
        if thread is None:
            return
        self._stopping.set()
        self._wake.set()
        thread.join(timeout)
        self._thread = None

    # -- the worker ----------------------------------------------------------------------

    def _run(self) -> None:
        try:
            store = self._open_store()
        except EngineError as exc:
            log.warning("background vectors off: %s", exc)
            self.error = str(exc)
            self._idle.set()
            return
        try:
            mark = (0, 0)
            while not self._stopping.is_set():
                self._wake.wait()
                self._wake.clear()
                if self._stopping.is_set():
                    break
                try:
                    while not self._stopping.is_set():
                        count, mark = self._one_batch(store, mark)
                        if count == 0:  # a short batch is no end: a text said twice
                            break  # counts once
                    self.error = None
                except EngineError as exc:  # a service down, a locked store: later
                    self.error = str(exc)
                    log.warning("background vectors: %s; trying again later", exc)
                    if not self._wake.is_set() and not self._stopping.wait(RETRY_S):
                        self._wake.set()
                    continue
                if not self._wake.is_set():
                    self._idle.set()
        finally:
            with contextlib.suppress(EngineError):
                store.close()
            self._idle.set()

    def _one_batch(self, store: StoreBackend, mark: tuple[int, int]) -> tuple[int, tuple[int, int]]:
        """Embed, store and deliver the next batch after `mark`; return its size and the
        mark reached (a row seen is not scanned again)."""
        model_id, dim = self._embedder.model_id, self._embedder.dim
        batch, reached = store.index.missing_vectors(model_id, after=mark, limit=self._batch)
        if not batch:
            return 0, reached
        vectors = self._embedder.embed_documents([text for _, text in batch])
        hashes = [h for h, _ in batch]
        rows = [(h, model_id, dim, to_blob(v)) for h, v in zip(hashes, vectors, strict=True)]

        def commit() -> None:
            with store.transaction(scopes=()):  # no owner's items: waits for none
                store.index.put_vectors(rows, now=self._clock.now())

        self._deliver(hashes, vectors, commit)
        self.landed += len(batch)
        return len(batch), reached
