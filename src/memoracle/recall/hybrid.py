"""Hybrid search: a query in, ranked hits out, each with its scores per signal.

Owns the order of operations (docs/retrieval.md): FTS5 BM25 over memories and episodes (AND of
the content words first, OR after; common words over their newest matches only, see
`Searcher._lexical`), vector similarity over the same items, the memories naming the
entities the query names or their graph neighbours (`expand`), Reciprocal Rank
Fusion, recency and activation weighting, a boost for items inside the time the query
names, source dedup (a memory and the turn it came from are one hit), MMR. The formulas are
`fuse`'s; which rows a requester may see is `store.index`'s; vectors are embedded by
`embed` and held in memory by `vectors` (exact, or the HNSW graph of `ann`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.embed import Embedder, to_blob
from memoracle.errors import EngineError, InvalidInput
from memoracle.lifecycle import scoring
from memoracle.recall import fuse, relevance
from memoracle.recall.ann import ann_available
from memoracle.recall.evidence import context_factors, neighbour_ids
from memoracle.recall.expand import expand
from memoracle.recall.hits import dedup_sources as _dedup_sources
from memoracle.recall.hits import hit as _hit
from memoracle.recall.hits import time_of as _time_of
from memoracle.recall.hits import unsupported as _unsupported
from memoracle.recall.hits import with_provenance as _with_provenance
from memoracle.recall.landing import Lander
from memoracle.recall.lists import MEMORY_LEXICAL_WEIGHT as MEMORY_LEXICAL_WEIGHT
from memoracle.recall.lists import Mode, fuse_lists
from memoracle.recall.query import FtsQuery, Term, any_of, fts_queries
from memoracle.recall.vectors import (
    SAVE_EVERY,
    VectorSet,
    ann_file,
    build_graph,
    catch_up,
    load_vectors,
    save_quietly,
    stored_vectors,
)
from memoracle.recall.window import window_hits
from memoracle.store import Store, View
from memoracle.types import Episode, Hit, Memory

POOL = 100  # candidates taken from each signal before fusion
VECTOR_POOL = 200  # nearest hashes looked up (several items may share one text)
LEXICAL_ROWS = 500  # matches one FTS5 query may score (BM25: ~2 µs a row)
EMBED_AT_SEARCH = 2000  # at most this many missing vectors are embedded by a search
EVERGREEN_LAYERS = ("semantic", "procedural")
LANDING_NOTE = (
    "vectors are being added in the background: texts without one yet are found by their words"
)
GRAPH_CANDIDATES = 200  # memories the graph proposes, before the query orders them
SESSION_WEIGHT = 1.0  # how much a turn gains from its session's evidence (`evidence`)
SPEAKER_FACTOR = 1.6  # turns said by the person the query names (`evidence`)
NEIGHBOUR_WEIGHT = 0.2  # share of a best turn's score its neighbours gain (`evidence`)


@dataclass(frozen=True)
class TimeWindow:
    """The time a query names ("in May", "last week"): hits inside it are boosted; a
    question about that time `only` is answered by the time-window stage (`window`)."""

    start: datetime
    end: datetime
    only: bool = False


Key = tuple[str, int]  # ("memory" | "episode", id)


@dataclass(frozen=True)
class Trace:
    """What one search did, stage by stage, so `explain` can say where an item fell
    out: the FTS5 queries it ran and those it did not need, per (table, expression) the
    id at and below which only a query's rarest words were scored (`Searcher._lexical`),
    each list's ranks, the query vector and the similarity of the last of the nearest
    looked up, the fused scores, the candidates scored (the best POOL * 2), the faded
    ones dropped (their activation), the items another hit stood for (a memory and its
    turn are one), and what was left for MMR."""

    queries: tuple[FtsQuery, ...]
    untried: tuple[FtsQuery, ...]
    cutoffs: dict[tuple[str, str], int]
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


class Searcher:
    """Search over one store. Keeps the vectors of the configured model in memory."""

    def __init__(self, store: Store, settings: Settings, embedder: Embedder | None) -> None:
        self.store = store
        self.settings = settings
        self.embedder = embedder
        self._set: VectorSet | None = None
        self._version = -1  # the database's data_version when the vectors were last checked
        self._own = -1  # and this connection's own changes then
        self._marks: dict[str, tuple[int, int]] = {}  # model -> (memory id, episode id) checked
        # The vectors in memory are read by searches and grown by the background worker
        # (`landing`): one lock, held for a batch's commit, never for its embedding.
        self._lock = threading.RLock()
        self.lander: Lander | None = None
        self._executor: ThreadPoolExecutor | None = None  # the query's vector, beside FTS5

    # -- background vectors --------------------------------------------------------------

    def land_in_background(self, open_store: Callable[[], Store], clock: Clock) -> Lander | None:
        """Start landing missing vectors in a worker thread (`landing.Lander`), on a
        connection `open_store` opens; from then on a search embeds nothing itself. None
        when there is nothing to embed with, or the store is read-only."""
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
                    with self.store.transaction():
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
            self._set.stored += len(hashes)

    def _model_id(self) -> str | None:
        return self.embedder.model_id if self.embedder is not None else None

    def _vectors(self) -> VectorSet | None:
        """This model's vectors in memory: loaded once, then caught up when the store
        changed (another process, or this one, stored or restored texts). Corrupt blobs
        are skipped (and logged)."""
        if self.embedder is None:
            return None
        model_id, dim = self.embedder.model_id, self.embedder.dim
        version, own = self.store.data_version(), self.store.own_changes()
        found = self._set
        if found is None or found.model_id != model_id:
            found = self._set = load_vectors(
                self.store.index,
                model_id,
                dim,
                ann_path=ann_file(self.settings.home, model_id),
                ann_threshold=self.settings.embedding.ann_threshold,
            )
        elif version != self._version:
            catch_up(found, self.store.index)
        elif own != self._own:  # this process's vectors are in the set already
            catch_up(found, self.store.index, others=False)
        self._version, self._own = version, own
        return found

    def ann_state(self) -> str:
        """How this model's vectors are searched: see `IndexStatus.ann`."""
        if self.embedder is None:
            return "exact"
        model_id = self.embedder.model_id
        if (
            self.store.index.searchable_vector_count(model_id)
            < self.settings.embedding.ann_threshold
        ):
            return "exact"
        if not ann_available():
            return "unavailable"
        return "hnsw" if ann_file(self.settings.home, model_id).exists() else "missing"

    def build_graph_if_needed(self) -> bool:
        """Build and save the HNSW graph when the store should have one and it is
        missing, would not load, or holds a quarter of rows whose memories were archived
        since (they take places among the nearest and are then dropped); return whether
        one was built."""
        state = self.ann_state()
        if self.embedder is None or state not in ("missing", "hnsw"):
            return False
        with self._lock:  # the worker adds nothing while the graph is replaced
            if state == "hnsw":
                found = self._vectors()
                if found is not None and found.ann is not None:
                    searchable = self.store.index.searchable_vector_count(found.model_id)
                    archived = len(found) - searchable
                    if archived * 4 < len(found):
                        return False  # loaded, completed from the store, mostly searchable
            model_id, dim = self.embedder.model_id, self.embedder.dim
            path = ann_file(self.settings.home, model_id)
            self._set = build_graph(self.store.index, model_id, dim, path)
            self._version, self._own = self.store.data_version(), self.store.own_changes()
            return True

    def close(self) -> None:
        """Write the HNSW graph if enough was added since it was loaded (the next
        process completes it from the store anyway). A background worker is stopped
        first, its batch in hand stored."""
        self.stop_landing()
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        found = self._set
        if (
            found is not None
            and found.ann is not None
            and found.unsaved >= min(SAVE_EVERY, max(1, len(found) // 20))
        ):
            save_quietly(found, ann_file(self.settings.home, found.model_id))

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
    ) -> SearchOutcome:
        """`mode` "lexical" fuses the lexical lists only (no query is embedded), "vector"
        the vector lists only (InvalidInput without an embedding model)."""
        if window is not None and window.only and mode == "hybrid":  # the time-window stage
            dated = window_hits(self.store, view, window.start, window.end, k=k)
            return SearchOutcome(tuple(dated), "window")
        # A kind filter asks for memories of those kinds: a raw turn has no kind.
        turns = not view.kinds
        if mode == "vector" and self.embedder is None:
            raise InvalidInput(
                "A vector-only search needs an embedding model (embedding.provider); "
                "none is configured. Search without --vector-only."
            )
        vector_m: list[tuple[int, float]] = []
        vector_e: list[tuple[int, float]] = []
        query_vector: npt.NDArray[np.float32] | None = None
        floor: list[float] = []
        found_by, note = "lexical", None
        # The query is embedded and its nearest texts found in a worker thread while
        # FTS5 runs here (numpy, faiss and SQLite all let go of the GIL): the same work,
        # in the time of the longer of the two instead of their sum.
        vector_job: Future[tuple[npt.NDArray[np.float32], list[tuple[str, float]]]] | None = None
        pending = 0
        lander = self.lander
        if self.embedder is None:
            note = "no embedding model configured: lexical search only"
        elif mode != "lexical":
            try:
                # With a worker landing vectors, what has landed answers now, the rest
                # by its words; without one, the search embeds what is missing first.
                pending = 0 if lander else self.embed_missing(now=now, limit=EMBED_AT_SEARCH)
                with self._lock:
                    found = self._vectors()
                if found is not None and len(found):
                    vector_job = self._pool().submit(self._embed_near, self.embedder, found, query)
            except EngineError as exc:  # an embedding service is down: answer lexically
                note = f"vector search unavailable ({exc}); lexical search only"

        lexical_m: list[int] = []
        lexical_e: list[int] = []
        tried: list[FtsQuery] = []
        cutoffs: dict[tuple[str, str], int] = {}
        every_query = fts_queries(query) if mode != "vector" else []
        for fts_query in every_query:
            tried.append(fts_query)
            lexical_m += [
                i for i in self._lexical("memories", fts_query, view, cutoffs) if i not in lexical_m
            ]
            if turns:
                lexical_e += [
                    i
                    for i in self._lexical("episodes", fts_query, view, cutoffs)
                    if i not in lexical_e
                ]
            if len(lexical_m) + len(lexical_e) >= POOL:
                break

        if vector_job is not None:
            try:
                query_vector, nearest = vector_job.result()
                vector_m, vector_e = self._nearest(nearest, view, floor)
                vector_e = vector_e if turns else []
                found_by = "vector" if mode == "vector" else "hybrid"
            except EngineError as exc:  # an embedding service is down: answer lexically
                note = f"vector search unavailable ({exc}); lexical search only"
        if note is None and self.embedder is not None:
            if pending == EMBED_AT_SEARCH:  # maybe more: those are found lexically
                note = "some items have no vector yet: run memoracle reindex"
            elif lander is not None and lander.busy:
                note = LANDING_NOTE

        graph_weight = self.settings.search.graph_weight
        graph_m = (  # entity expansion: the graph's list, fused like the others
            self._graph_list(query, view, lexical_m, query_vector) if graph_weight > 0 else []
        )
        unsupported = _unsupported(
            bool(lexical_m or lexical_e or graph_m),
            [s for _, s in vector_m + vector_e],
            self.settings.search.similarity_floor,
        )
        if unsupported is not None:
            return SearchOutcome((), found_by, note, no_match=unsupported)

        ranked = fuse_lists(  # weighted: docs/retrieval.md, "Fusion"
            lexical_m=lexical_m,
            lexical_e=lexical_e,
            vector_m=[i for i, _ in vector_m],
            vector_e=[i for i, _ in vector_e],
            graph_m=graph_m,
            rrf_k=self.settings.search.rrf_k,
            vector_weight=self.settings.search.vector_weight,
            graph_weight=graph_weight,
        )
        lists = dict(ranked)  # before the context, for `explain`
        lexical_rank = {("memory", i): r for r, i in enumerate(lexical_m, 1)}
        lexical_rank.update({("episode", i): r for r, i in enumerate(lexical_e, 1)})
        vector_rank = {("memory", i): r for r, (i, _) in enumerate(vector_m, 1)}
        vector_rank.update({("episode", i): r for r, (i, _) in enumerate(vector_e, 1)})
        similarity = {("memory", i): s for i, s in vector_m}
        similarity.update({("episode", i): s for i, s in vector_e})

        # The turns beside the best ones join them (not for "when": its answer is one turn).
        neighbour_weight = 0.0 if when_question or not turns else NEIGHBOUR_WEIGHT
        beside = (
            self.store.index.visible_episodes(neighbour_ids(ranked), view)
            if neighbour_weight
            else []
        )
        candidates = self.store.episodes.get_many([i for s, i in ranked if s == "episode"] + beside)
        context = context_factors(
            ranked, candidates, query, SESSION_WEIGHT, SPEAKER_FACTOR, neighbour_weight
        )
        ranked = context.scores
        top = sorted(ranked, key=ranked.__getitem__, reverse=True)[: POOL * 2]
        memories = {
            m.id: m for m in self.store.memories.get_many([i for s, i in top if s == "memory"])
        }
        episodes = {e.id: e for e in candidates}  # every episode in `top` is a candidate
        hits: list[Hit] = []
        faded: dict[Key, float] = {}
        for key in top:
            source, item_id = key
            memory = memories.get(item_id) if source == "memory" else None
            episode = episodes.get(item_id) if source == "episode" else None
            if memory is None and episode is None:
                continue
            at = _time_of(memory, episode)
            scores = fuse.final_score(
                rrf=ranked[key],
                lexical_rank=lexical_rank.get(key),
                vector_rank=vector_rank.get(key),
                similarity=similarity.get(key),
                age_days=max(0.0, (now - at).total_seconds() / 86400),
                half_life_days=self.settings.search.recency_half_life_days,
                evergreen=memory is not None
                and (memory.pinned or memory.layer in EVERGREEN_LAYERS),
                activation=self._activation(memory, now) if memory is not None else None,
                threshold=self.settings.search.activation_threshold,
                boost=_time_boost(memory, episode, window, when_question),
            )
            if scores is None:
                faded[key] = self._activation(memory, now) if memory is not None else 0.0
                continue
            scores = replace(
                scores,
                fused=lists.get(key, 0.0),
                neighbours=context.neighbours.get(key, 0.0),
                session=context.session.get(key, 1.0),
                speaker=context.speaker.get(key, 1.0),
            )
            hits.append(_hit(source, item_id, memory, episode, scores))

        hits = relevance.touching(hits, self.settings.search.hit_floor, graph_m, window)
        stood_for: dict[Key, str] = {}
        hits = _dedup_sources(sorted(hits, key=lambda h: h.scores.final, reverse=True), stood_for)
        kept = tuple((h.source, h.id) for h in hits)
        hits = self._diversify(hits, k)
        trace = Trace(
            queries=tuple(tried),
            untried=tuple(every_query[len(tried) :]),
            cutoffs=cutoffs,
            lexical=lexical_rank,
            vector=vector_rank,
            graph=frozenset(("memory", i) for i in graph_m),
            query_vector=query_vector,
            nearest_floor=floor[0] if floor else None,
            ranked=ranked,
            scored=tuple(top),
            faded=faded,
            stood_for=stood_for,
            kept=kept,
        )
        return SearchOutcome(tuple(_with_provenance(self.store, hits)), found_by, note, trace)

    def _graph_list(
        self,
        query: str,
        view: View,
        lexical: list[int],
        query_vector: npt.NDArray[np.float32] | None,
    ) -> list[int]:
        """The memories about the graph neighbours the query points to (`expand`), at
        most POOL: neighbour by neighbour, and about one neighbour, most similar to the
        query first when there is a query vector (the graph picks whom, the query's
        meaning what about them), else newest first."""
        expansion = expand(self.store, query, view, lexical=lexical, limit=GRAPH_CANDIDATES)
        ids = list(expansion.memories)
        if query_vector is None or self.embedder is None or len(ids) < 2:
            return ids[:POOL]
        tier = dict(zip(ids, expansion.tiers, strict=True))
        hashes = {i: h for i, (_, h) in self.store.graph.memory_texts(ids).items()}
        vectors = stored_vectors(
            self.store.index,
            self.embedder.model_id,
            self.embedder.dim,
            sorted(set(hashes.values())),
        )
        similarity = {
            i: float(vectors[h] @ query_vector) if (h := hashes.get(i, "")) in vectors else -1.0
            for i in ids
        }
        return sorted(ids, key=lambda i: (tier[i], -similarity[i]))[:POOL]

    def _lexical(
        self,
        table: str,
        query: FtsQuery,
        view: View,
        cutoffs: dict[tuple[str, str], int] | None = None,
    ) -> list[int]:
        """Ids in `table` matching `query`, best BM25 first, at most POOL.

        BM25 scores every row that matches, so words found in tens of thousands of rows
        would cost tens of milliseconds. When more than LEXICAL_ROWS rows match, the
        query runs over its LEXICAL_ROWS newest matches only and, for OR, its rarest
        words (together in at most LEXICAL_ROWS rows), which say the most, run over all
        rows as well: a strong match to an old item stays reachable; only old items that
        share nothing but common words with the query are left to the vector search
        (docs/retrieval.md). `cutoffs` learns, per (table, expression), the id at and
        below which only the rarest words were scored."""
        index = self.store.index
        run = index.lexical_memories if table == "memories" else index.lexical_episodes
        since = index.newest_matches_from(table, query.expression, count=LEXICAL_ROWS)
        if since is None:
            return [i for i, _ in run(query.expression, view, limit=POOL)]
        if cutoffs is not None:
            cutoffs[(table, query.expression)] = since
        found = run(query.expression, view, limit=POOL, min_id=since)
        if query.any:
            counts = [index.match_count(table, t.quoted(), cap=LEXICAL_ROWS) for t in query.terms]
            rare: list[Term] = []
            total = 0
            for count, term in sorted(zip(counts, query.terms, strict=True), key=lambda p: p[0]):
                if total + count > LEXICAL_ROWS:
                    break
                rare.append(term)
                total += count
            if rare:
                found += run(any_of(rare).expression, view, limit=POOL)
        best: dict[int, float] = {}
        for item_id, score in found:  # FTS5's BM25 is negative: lower is better
            best[item_id] = min(score, best.get(item_id, score))
        return sorted(best, key=best.__getitem__)[:POOL]

    def _embed_near(
        self, embedder: Embedder, found: VectorSet, query: str
    ) -> tuple[npt.NDArray[np.float32], list[tuple[str, float]]]:
        """In the worker thread: the query's vector and its VECTOR_POOL nearest texts
        (the lock keeps the background worker from growing the set meanwhile)."""
        vector = embedder.embed_query(query)
        with self._lock:
            return vector, found.nearest(vector, VECTOR_POOL)

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="memoracle-query")
        return self._executor

    def _nearest(
        self, nearest: list[tuple[str, float]], view: View, floor: list[float]
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The memories and turns behind the VECTOR_POOL nearest texts, at most POOL of
        each; `floor` learns the similarity of the last text looked up when all
        VECTOR_POOL were (an item less similar was not)."""
        if len(nearest) == VECTOR_POOL:
            floor.append(nearest[-1][1])
        score = dict(nearest)
        order = {h: n for n, (h, _) in enumerate(nearest)}
        hashes = list(score)
        index = self.store.index
        memories = sorted(index.memories_with_hashes(hashes, view), key=lambda r: order[r[1]])
        episodes = sorted(index.episodes_with_hashes(hashes, view), key=lambda r: order[r[1]])
        return (
            [(i, score[h]) for i, h in memories[:POOL]],
            [(i, score[h]) for i, h in episodes[:POOL]],
        )

    def _activation(self, memory: Memory, now: datetime) -> float:
        """Activation decayed from its last access to `now` (computed, never stored),
        as `score` and `list` see it: pinned memories never decay."""
        return scoring.activation(memory, now, self.settings.decay)

    def _diversify(self, hits: list[Hit], k: int) -> list[Hit]:
        """MMR over the hits' words: near-repeats of a better hit give way to others.
        At `search.mmr_lambda` 1 (the default) MMR keeps the order it is given, so the
        hits' word sets (about 3 ms at 100k) are not computed at all."""
        lam = self.settings.search.mmr_lambda
        if len(hits) <= 1 or lam >= 1.0:  # the hits come sorted by final score
            return hits[:k]
        relevance = [h.scores.final for h in hits]
        similar = fuse.jaccard_matrix([h.text for h in hits])
        return [hits[i] for i in fuse.mmr(relevance, similar, lam=lam, k=k)]


def _time_boost(
    memory: Memory | None, episode: Episode | None, window: TimeWindow | None, when: bool
) -> float:
    boost = 1.0
    if window is not None:
        at = _time_of(memory, episode)
        boost *= 1.5 if window.start <= at < window.end else 1.0
    if when and memory is not None and memory.valid_from is not None:
        boost *= 1.2
    return boost
