"""The candidates of a search's lists ranked into hits, stage by stage: fusion (the
lists' weighted RRF, `fuse_candidates`), the turns' context (the turns beside the best
ones, their session and speaker, `with_context`), scoring (recency, activation, the
time the query names, `score_candidates`) and MMR (`diversify`). The formulas are
`fuse`'s and `evidence`'s; this module reads the candidates from the store and applies
them in order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from memoracle.config import Settings
from memoracle.lifecycle import scoring
from memoracle.recall import fuse
from memoracle.recall.evidence import Context, context_factors, neighbour_ids
from memoracle.recall.hits import hit, time_of
from memoracle.recall.lexical import LexicalLists
from memoracle.recall.lists import fuse_lists
from memoracle.recall.nearest import VectorLists
from memoracle.recall.outcome import Key, TimeWindow
from memoracle.storage_types import View
from memoracle.store.protocols import StoreBackend
from memoracle.types import Episode, Hit, Memory

EVERGREEN_LAYERS = ("semantic", "procedural")


@dataclass(frozen=True)
class Fused:
    """The lists fused: each candidate's weighted RRF score (`scores`), and per item its
    rank in the lexical and vector lists and its cosine similarity to the query."""

    scores: dict[Key, float]
    lexical_rank: dict[Key, int]
    vector_rank: dict[Key, int]
    similarity: dict[Key, float]


def fuse_candidates(
    lexical: LexicalLists, vectors: VectorLists, graph: list[int], settings: Settings
) -> Fused:
    """Weighted Reciprocal Rank Fusion of the lists (docs/retrieval.md, "Fusion")."""
    weights = settings.search
    scores = fuse_lists(
        lexical_m=lexical.memories,
        lexical_e=lexical.episodes,
        vector_m=[i for i, _ in vectors.memories],
        vector_e=[i for i, _ in vectors.episodes],
        graph_m=graph,
        rrf_k=weights.rrf_k,
        vector_weight=weights.vector_weight,
        graph_weight=weights.graph_weight,
    )
    lexical_rank = {("memory", i): r for r, i in enumerate(lexical.memories, 1)}
    lexical_rank.update({("episode", i): r for r, i in enumerate(lexical.episodes, 1)})
    vector_rank = {("memory", i): r for r, (i, _) in enumerate(vectors.memories, 1)}
    vector_rank.update({("episode", i): r for r, (i, _) in enumerate(vectors.episodes, 1)})
    similarity = {("memory", i): s for i, s in vectors.memories}
    similarity.update({("episode", i): s for i, s in vectors.episodes})
    return Fused(scores, lexical_rank, vector_rank, similarity)


def with_context(
    store: StoreBackend,
    fused: Fused,
    view: View,
    query: str,
    *,
    neighbour_weight: float,
    session_weight: float,
    speaker_factor: float,
) -> tuple[Context, list[Episode]]:
    """The fused scores after the turns' context (`evidence.context_factors`): the turns
    beside the best ones (looked up in `view`, unless `neighbour_weight` is 0) join
    them, then the session and speaker boosts. Also the candidate turns, read once."""
    beside = (
        store.index.visible_episodes(neighbour_ids(fused.scores), view) if neighbour_weight else []
    )
    turns = [i for s, i in fused.scores if s == "episode"]
    candidates = store.episodes.get_many(turns + beside)
    context = context_factors(
        fused.scores, candidates, query, session_weight, speaker_factor, neighbour_weight
    )
    return context, candidates


@dataclass(frozen=True)
class Scored:
    """The hits of the candidates scored (`top`, the best by their context score), in
    that order; the faded ones dropped, with their activation."""

    hits: list[Hit]
    top: tuple[Key, ...]
    faded: dict[Key, float]


def score_candidates(
    store: StoreBackend,
    fused: Fused,
    context: Context,
    episodes: list[Episode],
    *,
    now: datetime,
    settings: Settings,
    window: TimeWindow | None,
    when_question: bool,
    count: int,
) -> Scored:
    """The best `count` candidates by their context score, each scored
    (`fuse.final_score`: recency, activation, the time the query names); the faded are
    dropped. `episodes` holds every turn among the candidates."""
    ranked = context.scores
    top = sorted(ranked, key=ranked.__getitem__, reverse=True)[:count]
    memories = {m.id: m for m in store.memories.get_many([i for s, i in top if s == "memory"])}
    turns = {e.id: e for e in episodes}
    hits: list[Hit] = []
    faded: dict[Key, float] = {}
    for key in top:
        source, item_id = key
        memory = memories.get(item_id) if source == "memory" else None
        episode = turns.get(item_id) if source == "episode" else None
        if memory is None and episode is None:
            continue
        scores = fuse.final_score(
            rrf=ranked[key],
            lexical_rank=fused.lexical_rank.get(key),
            vector_rank=fused.vector_rank.get(key),
            similarity=fused.similarity.get(key),
            age_days=max(0.0, (now - time_of(memory, episode)).total_seconds() / 86400),
            half_life_days=settings.search.recency_half_life_days,
            evergreen=memory is not None and (memory.pinned or memory.layer in EVERGREEN_LAYERS),
            activation=_activation(memory, now, settings) if memory is not None else None,
            threshold=settings.search.activation_threshold,
            boost=time_boost(memory, episode, window, when_question),
        )
        if scores is None:
            faded[key] = _activation(memory, now, settings) if memory is not None else 0.0
            continue
        scores = replace(
            scores,
            fused=fused.scores.get(key, 0.0),
            neighbours=context.neighbours.get(key, 0.0),
            session=context.session.get(key, 1.0),
            speaker=context.speaker.get(key, 1.0),
        )
        hits.append(hit(source, item_id, memory, episode, scores))
    return Scored(hits, tuple(top), faded)


def _activation(memory: Memory, now: datetime, settings: Settings) -> float:
    """Activation decayed from its last access to `now` (computed, never stored),
    as `score` and `list` see it: pinned memories never decay."""
    return scoring.activation(memory, now, settings.decay)


def time_boost(
    memory: Memory | None, episode: Episode | None, window: TimeWindow | None, when: bool
) -> float:
    """The boost of an item inside the time the query names (×1.5), and of a memory
    with a date of its own for a "when" question (×1.2)."""
    boost = 1.0
    if window is not None:
        at = time_of(memory, episode)
        boost *= 1.5 if window.start <= at < window.end else 1.0
    if when and memory is not None and memory.valid_from is not None:
        boost *= 1.2
    return boost


def diversify(hits: list[Hit], k: int, lam: float) -> list[Hit]:
    """MMR over the hits' words: near-repeats of a better hit give way to others.
    At `lam` (`search.mmr_lambda`) 1, the default, MMR keeps the order it is given, so
    the hits' word sets (about 3 ms at 100k) are not computed at all."""
    if len(hits) <= 1 or lam >= 1.0:  # the hits come sorted by final score
        return hits[:k]
    relevance = [h.scores.final for h in hits]
    similar = fuse.jaccard_matrix([h.text for h in hits])
    return [hits[i] for i in fuse.mmr(relevance, similar, lam=lam, k=k)]
