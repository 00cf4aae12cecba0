"""Hybrid search: a query in, ranked hits out, each with its scores per signal.

Owns the order of operations (docs/retrieval.md), `Searcher.search`, one named stage
after another: the time-window stage (`window`) for a question about a time only; the
query embedded and its nearest texts found in a worker thread (`nearest`) while FTS5
BM25 runs over memories and episodes (`lexical`: AND of the content words first, OR
after; common words over their newest matches only); the memories naming the entities
the query names or their graph neighbours (`graph_list`); the noise floor; then
(`ranking`) weighted Reciprocal Rank Fusion, the turns beside the best ones, their
session and speaker, recency and activation weighting and a boost for items inside the
time the query names; the per-hit floor (`relevance`: only the hits that touch the query
stay); source dedup (a memory and the turn it came from are one hit, `hits`); MMR; and
the `Trace` of what each stage kept (`outcome`). The formulas are `fuse`'s; which rows a
requester may see is `store.index`'s.

A search reads only. Also keeps the configured model's vector index (a `VectorIndex` of
`store.protocols`; on SQLite `vectors.InProcessIndex` holds the vectors in memory: exact,
or the HNSW graph of `ann`; on PostgreSQL the backend's own, pgvector's, searched in the
database: `vectors.in_process_index` picks): the texts that have no vector yet are
embedded and stored before a search (`Searcher.land_for_search`, which the engine calls
first), or by a background worker in a long-running host (`landing`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.embed import Embedder, to_blob
from memoracle.errors import EngineError, InvalidInput
from memoracle.recall import relevance
from memoracle.recall.evidence import Context
from memoracle.recall.graph_list import graph_list
from memoracle.recall.hits import dedup_sources as _dedup_sources
from memoracle.recall.hits import unsupported as _unsupported
from memoracle.recall.hits import with_provenance as _with_provenance
from memoracle.recall.landing import Lander
from memoracle.recall.lexical import LexicalLists, lexical_lists
from memoracle.recall.lists import MEMORY_LEXICAL_WEIGHT as MEMORY_LEXICAL_WEIGHT
from memoracle.recall.lists import Mode
from memoracle.recall.nearest import NO_VECTORS, Near, VectorLists, embed_near, vector_lists
from memoracle.recall.outcome import Key as Key
from memoracle.recall.outcome import SearchOutcome as SearchOutcome
from memoracle.recall.outcome import TimeWindow as TimeWindow
from memoracle.recall.outcome import Trace
from memoracle.recall.query import lexical_queries
from memoracle.recall.ranking import (
    Fused,
    Scored,
    diversify,
    fuse_candidates,
    score_candidates,
    with_context,
)
from memoracle.recall.vectors import OpenIndex, in_process_index
from memoracle.recall.window import window_hits
from memoracle.storage_types import View
from memoracle.store.protocols import StoreBackend, VectorIndex
from memoracle.types import Episode, Hit

POOL = 100  # candidates taken from each signal before fusion
VECTOR_POOL = 200  # nearest hashes looked up (several items may share one text)
LEXICAL_ROWS = 500  # matches one FTS5 query may score (BM25: ~2 µs a row)
EMBED_AT_SEARCH = 2000  # at most this many missing vectors are embedded before a search
LANDING_NOTE = (
    "vectors are being added in the background: texts without one yet are found by their words"
)
GRAPH_CANDIDATES = 200  # memories the graph proposes, before the query orders them
SESSION_WEIGHT = 1.0  # how much a turn gains from its session's evidence (`evidence`)
SPEAKER_FACTOR = 1.6  # turns said by the person the query names (`evidence`)
NEIGHBOUR_WEIGHT = 0.2  # share of a best turn's score its neighbours gain (`evidence`)


@dataclass(frozen=True)
class Landed:
    """What was stored for a search before it ran (`Searcher.land_for_search`): how many
    texts were embedded, or why none could be (`failure`: an embedding service down)."""

    count: int = 0
    failure: str | None = None


NOTHING_LANDED = Landed()


class Searcher:
    """Search over one store. Keeps the configured model's vector index."""

    def __init__(
        self,
        store: StoreBackend,
        settings: Settings,
        embedder: Embedder | None,
        *,
        open_index: OpenIndex = in_process_index,
    ) -> None:
        """`open_index` makes the vector index of a model (`VectorIndex`): today's keeps
        the vectors in this process; a backend that holds them in its database gives its own."""
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self._open_index = open_index
        self._set: VectorIndex | None = None  # the configured model's, once searched
        self._marks: dict[str, tuple[int, int]] = {}  # model -> (memory id, episode id) checked
        # The vectors in memory are read by searches and grown by the background worker
        # (`landing`): one lock, held for a batch's commit, never for its embedding.
        self._lock = threading.RLock()
        self.lander: Lander | None = None
        self._executor: ThreadPoolExecutor | None = None  # the query's vector, beside FTS5

    # -- background vectors --------------------------------------------------------------

    def land_in_background(
        self, open_store: Callable[[], StoreBackend], clock: Clock
    ) -> Lander | None:
        """Start landing missing vectors in a worker thread (`landing.Lander`), on a
        connection `open_store` opens; from then on nothing is embedded before a search.
        None when there is nothing to embed with, or the store is read-only."""
        if self.lander is None and self.embedder is not None and not self.store.readonly:
            self.lander = Lander(open_store, self.embedder, clock, self._deliver)
            self.lander.start()
        return self.lander

    def poke(self) -> None:
        """Texts were stored: the worker, if there is one, lands their vectors."""
        if self.lander is not None:
            self.lander.poke()

    def stop_landing(self) -> None:
        """Stop the worker cleanly (the batch in hand is stored first)."""
        lander, self.lander = self.lander, None
        if lander is not None:
            lander.stop()

    def _deliver(
        self, hashes: list[str], vectors: npt.NDArray[np.float32], commit: Callable[[], None]
    ) -> None:
        """The worker's batch: stored and added to the vectors in memory as one step."""
        with self._lock:
            commit()
            self._append(hashes, vectors)

    # -- vectors -----------------------------------------------------------------------

    def embed_missing(self, *, now: datetime, limit: int | None = None) -> int:
        """Embed live memories and turns that have no vector for the model yet; return
        how many were embedded. Unchanged text (same content hash) is never embedded
        twice, and rows already checked in this process are not scanned again. A store
        opened read-only stores nothing: its texts without a vector are found by words."""
        if self.embedder is None or self.store.readonly:
            return 0
        model_id = self.embedder.model_id
        mark = self._marks.get(model_id, (0, 0))
        done = 0
        while limit is None or done < limit:
            step = 256 if limit is None else min(256, limit - done)
            batch, reached = self.store.index.missing_vectors(model_id, after=mark, limit=step)
            if batch:
                vectors = self.embedder.embed_documents([text for _, text in batch])
                rows = [
                    (h, model_id, self.embedder.dim, to_blob(v))
                    for (h, _), v in zip(batch, vectors, strict=True)
                ]
                with self._lock:
                    with self.store.transaction(scopes=()):  # no owner's items
                        self.store.index.put_vectors(rows, now=now)
                    self._append([h for h, _ in batch], vectors)
                done += len(batch)
            mark = reached
            self._marks[model_id] = mark
            if len(batch) < step:
                break
        return done

    def _append(self, hashes: list[str], vectors: npt.NDArray[np.float32]) -> None:
        """Add what this process just stored: the store's count is not another's doing."""
        if self._set is not None and self._set.model_id == self._model_id():
            self._set.add(hashes, vectors)

    def _model_id(self) -> str | None:
        return self.embedder.model_id if self.embedder is not None else None

    def _index(self, model_id: str, dim: int) -> VectorIndex:
        """The vector index of `model_id`: the one in hand, or a new one (not loaded)."""
        if self._set is not None and self._set.model_id == model_id:
            return self._set
        return self._open_index(self.store, self.settings, model_id, dim)

    def _vectors(self) -> VectorIndex | None:
        """This model's vector index, brought up to date with the store (`refresh`)."""
        if self.embedder is None:
            return None
        found = self._set = self._index(self.embedder.model_id, self.embedder.dim)
        found.refresh()
        return found

    def ann_state(self) -> str:
        """How this model's vectors are searched: see `IndexStatus.ann`."""
        if self.embedder is None:
            return "exact"
        return self._index(self.embedder.model_id, self.embedder.dim).state()

    def build_graph_if_needed(self) -> bool:
        """Build the index's derived structure (the HNSW graph) when the store should
        have one and it is missing, damaged or out of date (`rebuild_if_needed`); return
        whether one was built."""
        if self.embedder is None:
            return False
        with self._lock:  # the worker adds nothing while the graph is replaced
            found = self._set = self._index(self.embedder.model_id, self.embedder.dim)
            return found.rebuild_if_needed()

    def close(self) -> None:
        """Keep what the next process should not redo (`persist`: the HNSW graph, if
        enough was added since it was loaded). A background worker is stopped first,
        its batch in hand stored."""
        self.stop_landing()
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        if self._set is not None:
            self._set.persist()

    def land_for_search(
        self, *, now: datetime, mode: Mode = "hybrid", window: TimeWindow | None = None
    ) -> Landed:
        """The one write a search needs, done before it so the search itself only reads:
        without a background worker, the texts that have no vector yet (at most
        EMBED_AT_SEARCH) are embedded and stored, so the search finds them by meaning.
        Nothing when the search compares no vectors (`mode` "lexical", no embedding
        model, a question about a time only) or a worker lands them."""
        if self.embedder is None or self.lander is not None or mode == "lexical":
            return NOTHING_LANDED
        if _window_only(window, mode):
            return NOTHING_LANDED
        try:
            return Landed(self.embed_missing(now=now, limit=EMBED_AT_SEARCH))
        except EngineError as exc:  # an embedding service is down: the search answers lexically
            return Landed(failure=str(exc))

    # -- search ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        view: View,
        k: int,
        now: datetime,
        window: TimeWindow | None = None,
        when_question: bool = False,
        mode: Mode = "hybrid",
        landed: Landed = NOTHING_LANDED,
    ) -> SearchOutcome:
        """`mode` "lexical" fuses the lexical lists only (no query is embedded), "vector"
        the vector lists only (InvalidInput without an embedding model). `landed` is what
        `land_for_search` stored for it (for the note). Reads only."""
        if window is not None and _window_only(window, mode):  # the time-window stage
            dated = window_hits(self.store, view, window.start, window.end, k=k)
            return SearchOutcome(tuple(dated), "window")
        self._check_mode(mode)
        turns = not view.kinds  # a kind filter asks for memories of those kinds: a turn has none
        lander = self.lander
        job, note = self._start_vector_search(query, view, mode, landed)  # the embedding thread
        lexical = self._lexical_lists(query, view, mode, turns)  # the lexical loop, meanwhile
        vectors = self._vector_lists(job, view, turns)
        found_by = "lexical" if job is None or vectors.failure is not None else mode
        note = self._note(note, vectors, landed, lander)
        graph = self._graph_list(query, view, lexical, vectors)
        unsupported = self._under_the_floor(lexical, vectors, graph)
        if unsupported is not None:
            return SearchOutcome((), found_by, note, no_match=unsupported)
        fused = fuse_candidates(lexical, vectors, graph, self.settings)
        context, episodes = self._context(fused, view, query, turns, when_question)
        scored = score_candidates(
            self.store,
            fused,
            context,
            episodes,
            now=now,
            settings=self.settings,
            window=window,
            when_question=when_question,
            count=POOL * 2,
        )
        floor = self.settings.search.hit_floor  # the relevance stage: hits that touch it
        touching = relevance.touching(scored.hits, floor, graph, window)
        stood_for: dict[Key, str] = {}  # source dedup: a memory and its turn are one hit
        hits = _dedup_sources(sorted(touching, key=_final, reverse=True), stood_for)
        kept = tuple((h.source, h.id) for h in hits)
        hits = diversify(hits, k, self.settings.search.mmr_lambda)
        trace = _trace(lexical, vectors, graph, fused, context.scores, scored, stood_for, kept)
        return SearchOutcome(tuple(_with_provenance(self.store, hits)), found_by, note, trace)

    def _check_mode(self, mode: Mode) -> None:
        if mode == "vector" and self.embedder is None:
            raise InvalidInput(
                "A vector-only search needs an embedding model (embedding.provider); "
                "none is configured. Search without --vector-only."
            )

    def _lexical_lists(self, query: str, view: View, mode: Mode, turns: bool) -> LexicalLists:
        """The lexical stage (`lexical`): none for a vector-only search."""
        queries = lexical_queries(query) if mode != "vector" else []
        return lexical_lists(
            self.store.index, queries, view, turns=turns, pool=POOL, rows=LEXICAL_ROWS
        )

    def _note(
        self, note: str | None, vectors: VectorLists, landed: Landed, lander: Lander | None
    ) -> str | None:
        """Why the answer may be partial: the vector stage failed, or some texts have no
        vector yet (`_partial`), unless an earlier stage said why already."""
        if vectors.failure is not None:
            return _unavailable(vectors.failure)
        if note is None and self.embedder is not None:
            return _partial(landed, lander)
        return note

    def _under_the_floor(
        self, lexical: LexicalLists, vectors: VectorLists, graph: list[int]
    ) -> str | None:
        """The noise floor (`hits.unsupported`): why nothing supports the query, if so."""
        return _unsupported(
            bool(lexical.memories or lexical.episodes or graph),
            [s for _, s in vectors.memories + vectors.episodes],
            self.settings.search.similarity_floor,
        )

    def _context(
        self, fused: Fused, view: View, query: str, turns: bool, when_question: bool
    ) -> tuple[Context, list[Episode]]:
        """The turns' context (`ranking.with_context`): the turns beside the best ones
        join them (not for "when": its answer is one turn), then session and speaker."""
        return with_context(
            self.store,
            fused,
            view,
            query,
            neighbour_weight=0.0 if when_question or not turns else NEIGHBOUR_WEIGHT,
            session_weight=SESSION_WEIGHT,
            speaker_factor=SPEAKER_FACTOR,
        )

    def _start_vector_search(
        self, query: str, view: View, mode: Mode, landed: Landed
    ) -> tuple[Future[Near] | None, str | None]:
        """The query embedded and its nearest texts found in a worker thread while FTS5
        runs here (`nearest`); None when there is nothing to compare with, and the note
        saying why when the search will be lexical only."""
        if self.embedder is None:
            return None, "no embedding model configured: lexical search only"
        if mode == "lexical":
            return None, None
        if landed.failure is not None:
            return None, _unavailable(landed.failure)
        try:
            # With a worker landing vectors, what has landed answers now, the rest by
            # its words; without one, `land_for_search` stored what was missing first.
            with self._lock:
                found = self._vectors()
        except EngineError as exc:
            return None, _unavailable(str(exc))
        if found is None or not len(found):
            return None, None
        job = self._pool().submit(
            embed_near, self.embedder, found, query, self._lock, VECTOR_POOL, view
        )
        return job, None

    def _vector_lists(self, job: Future[Near] | None, view: View, turns: bool) -> VectorLists:
        """The vector stage's lists, once the worker thread is done (`nearest`)."""
        if job is None:
            return NO_VECTORS
        return vector_lists(job, self.store.index, view, turns=turns, pool=POOL, count=VECTOR_POOL)

    def _graph_list(
        self, query: str, view: View, lexical: LexicalLists, vectors: VectorLists
    ) -> list[int]:
        """Entity expansion: the graph's list (`graph_list`), fused like the others;
        empty at `search.graph_weight` 0."""
        if self.settings.search.graph_weight <= 0:
            return []
        return graph_list(
            self.store,
            self.embedder,
            query,
            view,
            lexical.memories,
            vectors.query_vector,
            pool=POOL,
            candidates=GRAPH_CANDIDATES,
        )

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="memoracle-query")
        return self._executor


def _window_only(window: TimeWindow | None, mode: Mode) -> bool:
    """A question about a time only, which the time-window stage answers (`window`)."""
    return window is not None and window.only and mode == "hybrid"


def _unavailable(failure: str) -> str:
    return f"vector search unavailable ({failure}); lexical search only"


def _partial(landed: Landed, lander: Lander | None) -> str | None:
    """Why some texts were found by their words only: more were missing a vector than
    one search embeds, or the background worker has not landed them yet."""
    if landed.count == EMBED_AT_SEARCH:  # maybe more: those are found lexically
        return "some items have no vector yet: run memoracle reindex"
    if lander is not None and lander.busy:
        return LANDING_NOTE
    return None


def _final(hit: Hit) -> float:
    return hit.scores.final


def _trace(
    lexical: LexicalLists,
    vectors: VectorLists,
    graph: list[int],
    fused: Fused,
    ranked: dict[Key, float],
    scored: Scored,
    stood_for: dict[Key, str],
    kept: tuple[Key, ...],
) -> Trace:
    """What each stage kept, for `explain` (`why`)."""
    return Trace(
        queries=lexical.tried,
        untried=lexical.untried,
        cutoffs=lexical.cutoffs,
        lexical=fused.lexical_rank,
        vector=fused.vector_rank,
        graph=frozenset(("memory", i) for i in graph),
        query_vector=vectors.query_vector,
        nearest_floor=vectors.floor,
        ranked=ranked,
        scored=scored.top,
        faded=scored.faded,
        stood_for=stood_for,
        kept=kept,
    )
