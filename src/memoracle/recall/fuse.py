"""Rank fusion, time weighting and diversification: pure functions over ranks and scores.

Owns Reciprocal Rank Fusion (`rrf`), the half-life decay (`decay`), the final score of a
hit (`final_score`, with the activation threshold and its strong-match exemption) and
Maximal Marginal Relevance (`mmr` over a similarity matrix: `jaccard_matrix`,
`cosine_matrix`). It reads no
clock, database or model: callers pass ages in days, ranks and vectors. Which lists to
fuse, what counts as a hit and how hits are deduplicated by source is `hybrid`'s business.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar, overload

import numpy as np
import numpy.typing as npt

from memoracle.text import fts_terms
from memoracle.types import Scores

__all__ = [
    "DECAY_FORMULA",
    "DEFAULT_WEIGHTING",
    "FUSION_FORMULA",
    "HALF_LIFE_DAYS",
    "RRF_K",
    "Weighting",
    "decay",
    "final_score",
    "cosine_matrix",
    "jaccard_matrix",
    "mmr",
    "rrf",
    "rrf_score",
    "token_set",
]

K = TypeVar("K", bound=Hashable)

DECAY_FORMULA = "halflife/v1"
FUSION_FORMULA = "rrf60*recency*activation/v1"
RRF_K = 60
HALF_LIFE_DAYS = 30.0


# -- Reciprocal Rank Fusion ------------------------------------------------------------


def rrf(rankings: Sequence[Sequence[K]], k: int = RRF_K) -> dict[K, float]:
    """Reciprocal Rank Fusion of best-first `rankings`: key -> Σ 1 / (k + rank).

    Ranks are 1-based; a key repeated inside one ranking counts at its first place only.
    The result is ordered best first (ties keep the order in which keys first appear).
    """
    scores: dict[K, float] = {}
    for ranking in rankings:
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    order = sorted(scores, key=lambda key: -scores[key])  # stable: ties keep first appearance
    return {key: scores[key] for key in order}


def rrf_score(ranks: Iterable[int | None], k: int = RRF_K) -> float:
    """RRF contribution of one item given its 1-based rank in each list (None: absent)."""
    return sum(1.0 / (k + rank) for rank in ranks if rank is not None)


# -- Time ------------------------------------------------------------------------------


def decay(strength: float, age_days: float, half_life_days: float) -> float:
    """`strength · 0.5^(age_days / half_life_days)` (formula `DECAY_FORMULA`).

    An infinite half-life (evergreen: pinned guardrails) leaves `strength` unchanged; a
    negative age (a clock that moved back, a date in the future) counts as age 0. Pure in
    time, so computing it late or twice gives the same answer.
    """
    if not half_life_days > 0:
        raise ValueError(f"half_life_days must be > 0 (math.inf: never), got {half_life_days}")
    if math.isinf(half_life_days):
        return strength
    return strength * math.pow(0.5, max(age_days, 0.0) / half_life_days)


@dataclass(frozen=True)
class Weighting:
    """How recency and activation reweight the fused rank, and which matches are strong.

    `recency_weight` and `activation_weight` are the share of the score each may take
    away: a weight is `(1 - w) + w · x` for x in 0..1, so an old, unused memory keeps at
    least `(1 - w_r)(1 - w_a)` of its score (0.72 by default): ranked lower, not lost.
    `threshold` is the activation under which a memory is faded. A match is strong when
    it is in the top `strong_rank` of the lexical or the vector list, or its similarity
    reaches `strong_similarity` (off by default: similarity scales differ by embedder).
    """

    rrf_k: int = RRF_K
    recency_weight: float = 0.2
    activation_weight: float = 0.1
    threshold: float = 0.15
    strong_rank: int = 5
    strong_similarity: float | None = None


DEFAULT_WEIGHTING = Weighting()


@overload
def final_score(
    *,
    lexical_rank: int | None,
    vector_rank: int | None,
    similarity: float | None = ...,
    rrf: float | None = ...,
    age_days: float = ...,
    half_life_days: float = ...,
    evergreen: bool = ...,
    activation: float | None = ...,
    threshold: float | None = ...,
    boost: float = ...,
    weighting: Weighting = ...,
    drop_faded: Literal[True] = ...,
) -> Scores | None: ...


@overload
def final_score(
    *,
    lexical_rank: int | None,
    vector_rank: int | None,
    similarity: float | None = ...,
    rrf: float | None = ...,
    age_days: float = ...,
    half_life_days: float = ...,
    evergreen: bool = ...,
    activation: float | None = ...,
    threshold: float | None = ...,
    boost: float = ...,
    weighting: Weighting = ...,
    drop_faded: Literal[False],
) -> Scores: ...


def final_score(
    *,
    lexical_rank: int | None,
    vector_rank: int | None,
    similarity: float | None = None,
    rrf: float | None = None,
    age_days: float = 0.0,
    half_life_days: float = HALF_LIFE_DAYS,
    evergreen: bool = False,
    activation: float | None = None,
    threshold: float | None = None,
    boost: float = 1.0,
    weighting: Weighting = DEFAULT_WEIGHTING,
    drop_faded: bool = True,
) -> Scores | None:
    """The scores of one candidate hit (formula `FUSION_FORMULA`); None if filtered out.

    - `rrf`: the item's fused score from `rrf` over all the lists the caller fused
      (memories and turns, lexical and vector, ...); when None, `rrf_score` of the two
      ranks. Ranks are 1-based positions in that signal's own list, None when absent.
    - `recency` = (1 - w_r) + w_r · decay(1, age_days, half_life_days), `age_days` being
      how long ago the item was said or became valid.
    - `activation` (argument) is the item's current activation in 0..1, already decayed
      from its last access (`decay(stored, idle_days, kind_half_life)`), or None for
      items without one (raw turns). Its weight is (1 - w_a) + w_a · activation.
    - Evergreen items (`evergreen=True`, or an infinite recency half-life) get 1.0 for
      recency: a fact is as true a year after it was said. Their activation still
      weighs and fades them like any memory's: an evergreen item nobody recalls is not
      what the store knows best (a guardrail's activation never decays, so it never fades).
    - `final` = rrf · recency · activation weight · `boost` (the caller's time boost:
      "in May", "when did ...").

    Threshold: an item whose activation is under `threshold` (default
    `weighting.threshold`, 0.15) is faded, and a faded item with a weak match is dropped
    (None; with `drop_faded=False`, returned with `final` 0.0 so `explain` can show why).
    A strong match (top `strong_rank` lexical or vector, or similarity at least
    `strong_similarity`) to a faded memory is kept and ranked lower by its weights: a
    memory untouched for a year stays reachable by a precise query.
    """
    fused = rrf_score((lexical_rank, vector_rank), weighting.rrf_k) if rrf is None else rrf
    w_r, w_a = weighting.recency_weight, weighting.activation_weight
    recency = 1.0
    if not (evergreen or math.isinf(half_life_days)):
        recency = (1.0 - w_r) + w_r * decay(1.0, age_days, half_life_days)
    weight = 1.0
    faded = False
    if activation is not None:
        weight = (1.0 - w_a) + w_a * min(max(activation, 0.0), 1.0)
        faded = activation < (weighting.threshold if threshold is None else threshold)
    final = fused * recency * weight * boost
    if faded and not _strong(lexical_rank, vector_rank, similarity, weighting):
        if drop_faded:
            return None
        final = 0.0
    return Scores(lexical_rank, vector_rank, similarity, fused, recency, weight, final, boost=boost)


def _strong(
    lexical_rank: int | None, vector_rank: int | None, similarity: float | None, w: Weighting
) -> bool:
    if lexical_rank is not None and lexical_rank <= w.strong_rank:
        return True
    if vector_rank is not None and vector_rank <= w.strong_rank:
        return True
    return (
        similarity is not None
        and w.strong_similarity is not None
        and (similarity >= w.strong_similarity)
    )


# -- Maximal Marginal Relevance --------------------------------------------------------


def mmr(
    relevance: npt.ArrayLike, similarity: npt.ArrayLike, *, lam: float = 0.7, k: int
) -> list[int]:
    """Greedy Maximal Marginal Relevance: up to `k` indices into `relevance`, in pick
    order, given the (n, n) matrix of pairwise `similarity`.

    Each step picks the candidate maximising `lam · rel - (1 - lam) · max sim to those
    already picked` (0 for the first pick). Relevance is divided by its maximum first,
    so RRF-sized scores (≈ 0.03) weigh against similarities in 0..1 as intended. Ties
    go to the earlier candidate. O(k · n) with numpy: 100 candidates cost well under a
    millisecond.
    """
    rel = np.asarray(relevance, dtype=np.float64).reshape(-1)
    n = rel.shape[0]
    k = min(k, n)
    if k <= 0:
        return []
    sim = np.asarray(similarity, dtype=np.float64).reshape(n, n)
    top = float(rel.max())
    gain = lam * (rel / top if top > 0 else rel)
    penalty = np.zeros(n, dtype=np.float64)
    taken = np.zeros(n, dtype=bool)
    picked: list[int] = []
    for step in range(k):
        best = int(np.argmax(np.where(taken, -np.inf, gain - penalty)))
        picked.append(best)
        taken[best] = True
        row = (1.0 - lam) * sim[best]
        penalty = row if step == 0 else np.maximum(penalty, row)
    return picked


def cosine_matrix(vectors: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Pairwise cosine similarity of row vectors (a zero row is similar to nothing)."""
    mat = np.asarray(vectors, dtype=np.float64)
    mat = mat.reshape(mat.shape[0], -1)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    unit = mat / np.where(norms > 0, norms, 1.0)
    return unit @ unit.T


def token_set(text: str) -> frozenset[str]:
    """Case-folded words of `text` in index form (NFKC, ё→е): the unit of `jaccard`."""
    return frozenset(word.casefold() for word in fts_terms(text))


def jaccard_matrix(texts: Sequence[str]) -> npt.NDArray[np.float64]:
    """Pairwise token Jaccard |a ∩ b| / |a ∪ b| of `texts` (0 when both are empty),
    each text split once (`token_set`), all pairs at once with numpy."""
    sets = [token_set(t) for t in texts]
    vocabulary: dict[str, int] = {}
    for words in sets:
        for word in words:
            vocabulary.setdefault(word, len(vocabulary))
    present = np.zeros((len(sets), max(1, len(vocabulary))), dtype=np.float64)
    for row, words in enumerate(sets):
        present[row, [vocabulary[w] for w in words]] = 1.0
    inter = present @ present.T
    sizes = present.sum(axis=1)
    union = sizes[:, None] + sizes[None, :] - inter
    out: npt.NDArray[np.float64] = np.zeros_like(inter)
    np.divide(inter, union, out=out, where=union > 0)
    return out
