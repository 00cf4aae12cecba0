from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoracle.recall.fuse import (
    DECAY_FORMULA,
    Weighting,
    cosine_matrix,
    decay,
    final_score,
    jaccard_matrix,
    mmr,
    rrf,
    rrf_score,
    token_set,
)

# -- rrf -------------------------------------------------------------------------------


def test_rrf_sums_reciprocal_ranks_with_k_60() -> None:
    fused = rrf([["a", "b", "c"], ["b", "d"]])
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    assert list(fused) == ["b", "a", "d", "c"]  # best first


def test_rrf_ties_keep_first_appearance_and_repeats_count_once() -> None:
    fused = rrf([["x", "y"], ["y", "x"], ["z", "z"]], k=1)
    assert fused["x"] == fused["y"] == pytest.approx(1 / 2 + 1 / 3)
    assert fused["z"] == pytest.approx(1 / 2)
    assert list(fused) == ["x", "y", "z"]


def test_rrf_of_nothing_is_empty() -> None:
    assert rrf([]) == {}
    assert rrf([[], []]) == {}


def test_rrf_score_skips_absent_signals() -> None:
    assert rrf_score([1, None, 3]) == pytest.approx(1 / 61 + 1 / 63)
    assert rrf_score([None, None]) == 0.0


# -- decay -----------------------------------------------------------------------------


def test_decay_halves_every_half_life() -> None:
    assert DECAY_FORMULA == "halflife/v1"
    assert decay(1.0, 0, 30) == 1.0
    assert decay(1.0, 30, 30) == pytest.approx(0.5)
    assert decay(0.8, 60, 30) == pytest.approx(0.2)
    assert decay(1.0, 365, 30) == pytest.approx(0.5 ** (365 / 30))


def test_decay_evergreen_negative_age_and_bad_half_life() -> None:
    assert decay(0.7, 10_000, math.inf) == 0.7
    assert decay(0.7, -5, 30) == 0.7  # a future date counts as now
    assert decay(1.0, math.inf, 30) == 0.0
    with pytest.raises(ValueError, match="half_life_days"):
        decay(1.0, 1, 0)


@given(
    st.floats(0, 1),
    st.floats(0, 1000),
    st.floats(0, 1000),
    st.floats(0.5, 1000),
)
def test_decay_is_pure_in_time(strength: float, a: float, b: float, half_life: float) -> None:
    # Decaying a then b is decaying a + b: a missed night changes nothing.
    once = decay(strength, a + b, half_life)
    twice = decay(decay(strength, a, half_life), b, half_life)
    assert once == pytest.approx(twice, abs=1e-12)
    assert 0.0 <= once <= strength


# -- final_score -----------------------------------------------------------------------


def test_fresh_item_keeps_its_rrf() -> None:
    s = final_score(lexical_rank=1, vector_rank=2, similarity=0.8, activation=1.0)
    assert s is not None
    assert s.rrf == pytest.approx(1 / 61 + 1 / 62)
    assert s.recency == pytest.approx(1.0)
    assert s.activation == pytest.approx(1.0)
    assert s.final == pytest.approx(s.rrf)
    assert (s.lexical_rank, s.vector_rank, s.similarity) == (1, 2, 0.8)


def test_precomputed_rrf_and_boost() -> None:
    s = final_score(lexical_rank=4, vector_rank=None, rrf=0.05, boost=1.5)
    assert s is not None
    assert s.rrf == 0.05
    assert s.final == pytest.approx(0.075)


def test_old_unused_memory_strong_match_is_kept_but_ranked_lower() -> None:
    # Untouched for a year: activation 1.0 decayed over 365 days is ~0.0002.
    year_old = decay(1.0, 365, 30)
    old = final_score(lexical_rank=1, vector_rank=None, age_days=365, activation=year_old)
    fresh = final_score(lexical_rank=1, vector_rank=None, age_days=0, activation=1.0)
    assert old is not None and fresh is not None
    assert old.activation < 0.95 and old.recency < 0.85
    assert 0 < old.final < fresh.final
    assert old.final >= 0.72 * old.rrf - 1e-12  # never more than the weights take away


def test_old_unused_memory_weak_match_is_dropped() -> None:
    faded = decay(1.0, 365, 30)
    assert final_score(lexical_rank=9, vector_rank=12, age_days=365, activation=faded) is None
    kept = final_score(
        lexical_rank=9, vector_rank=12, age_days=365, activation=faded, drop_faded=False
    )
    assert kept.final == 0.0
    assert kept.rrf > 0  # explain still sees every signal


def test_strong_by_vector_rank_or_similarity() -> None:
    faded = 0.01
    assert final_score(lexical_rank=None, vector_rank=5, activation=faded) is not None
    assert final_score(lexical_rank=None, vector_rank=6, activation=faded) is None
    by_sim = Weighting(strong_similarity=0.6)
    assert (
        final_score(
            lexical_rank=None, vector_rank=40, similarity=0.7, activation=faded, weighting=by_sim
        )
        is not None
    )
    assert (
        final_score(
            lexical_rank=None, vector_rank=40, similarity=0.5, activation=faded, weighting=by_sim
        )
        is None
    )


def test_threshold_boundary_and_override() -> None:
    assert final_score(lexical_rank=10, vector_rank=None, activation=0.15) is not None
    assert final_score(lexical_rank=10, vector_rank=None, activation=0.149) is None
    assert final_score(lexical_rank=10, vector_rank=None, activation=0.2, threshold=0.3) is None


def test_evergreen_items_are_exempt_from_recency_only() -> None:
    for kw in ({"evergreen": True}, {"half_life_days": math.inf}):
        s = final_score(lexical_rank=20, vector_rank=None, age_days=3650, activation=1.0, **kw)
        assert s is not None
        assert s.recency == 1.0 and s.activation == 1.0
        assert s.final == pytest.approx(1 / 80)
        # Their activation still weighs, and a faded weak match is still dropped: a
        # fact nobody recalled for a year is not the store's best answer.
        weak = final_score(lexical_rank=20, vector_rank=None, activation=0.5, **kw)
        assert weak is not None and weak.activation == pytest.approx(0.95)
        assert final_score(lexical_rank=20, vector_rank=None, activation=0.1, **kw) is None
        assert final_score(lexical_rank=2, vector_rank=None, activation=0.1, **kw) is not None


def test_items_without_activation_are_never_faded() -> None:
    # Raw turns have no activation: only recency weighs on them.
    s = final_score(lexical_rank=50, vector_rank=None, age_days=3650, activation=None)
    assert s is not None
    assert s.activation == 1.0
    assert s.recency == pytest.approx(0.8, abs=1e-6)


def test_recency_weight_follows_the_half_life() -> None:
    w = Weighting(recency_weight=0.5)
    s = final_score(lexical_rank=1, vector_rank=None, age_days=30, weighting=w)
    assert s is not None
    assert s.recency == pytest.approx(0.5 + 0.5 * 0.5)


@given(
    st.one_of(st.none(), st.integers(1, 500)),
    st.one_of(st.none(), st.integers(1, 500)),
    st.floats(-10, 5000),
    st.one_of(st.none(), st.floats(0, 1)),
)
def test_final_never_exceeds_rrf_nor_goes_negative(
    lexical: int | None, vector: int | None, age: float, activation: float | None
) -> None:
    s = final_score(
        lexical_rank=lexical,
        vector_rank=vector,
        age_days=age,
        activation=activation,
        drop_faded=False,
    )
    assert 0.0 <= s.final <= s.rrf + 1e-15
    assert 0.0 < s.recency <= 1.0 and 0.0 < s.activation <= 1.0


# -- mmr -------------------------------------------------------------------------------


def _reference_mmr(rel: list[float], sim: np.ndarray, lam: float, k: int) -> list[int]:
    """MMR written out plainly, to check the vectorised one against."""
    top = max(rel)
    pool, picked = list(range(len(rel))), []
    while pool and len(picked) < k:

        def value(c: int) -> float:
            penalty = max((sim[c][p] for p in picked), default=0.0)
            return lam * rel[c] / top - (1 - lam) * penalty

        best = max(pool, key=value)
        picked.append(best)
        pool.remove(best)
    return picked


def test_mmr_with_no_similarity_is_relevance_order() -> None:
    assert mmr([0.1, 0.3, 0.2], np.zeros((3, 3)), k=3) == [1, 2, 0]


def test_mmr_skips_near_duplicates() -> None:
    sim = np.eye(3)
    sim[0, 1] = sim[1, 0] = 1.0  # 0 and 1 say the same thing
    assert mmr([1.0, 0.99, 0.8], sim, k=2) == [0, 2]
    assert mmr([1.0, 0.99, 0.8], sim, lam=1.0, k=2) == [0, 1]  # relevance only


def test_mmr_is_scale_free_in_relevance() -> None:
    # RRF-sized scores (~0.03) must weigh like 0..1 ones against similarity.
    sim = np.zeros((3, 3))
    sim[0, 1] = sim[1, 0] = 0.9
    big = mmr([1.0, 0.95, 0.6], sim, k=2)
    small = mmr([0.033, 0.03135, 0.0198], sim, k=2)
    assert big == small == [0, 2]


def test_mmr_edges() -> None:
    assert mmr([], np.zeros((0, 0)), k=3) == []
    assert mmr([1.0], np.zeros((1, 1)), k=0) == []
    assert mmr([0.0, 0.0], np.zeros((2, 2)), k=2) == [0, 1]


def test_mmr_matches_the_plain_algorithm_on_vectors() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(40, 16)).astype(np.float32)
    vectors[5] = vectors[0] * 2  # a duplicate direction of the best
    relevance = np.linspace(1.0, 0.1, 40)
    relevance[5] = 0.99
    sim = cosine_matrix(vectors)
    picked = mmr(relevance, sim, lam=0.7, k=10)
    assert picked == _reference_mmr(relevance.tolist(), sim, 0.7, 10)
    assert picked[0] == 0 and 5 not in picked[:3]
    assert cosine_matrix(np.zeros((2, 4))).tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_jaccard_matrix_uses_index_form() -> None:
    assert token_set("Ёлка, ёлка!") == frozenset({"елка"})
    sim = jaccard_matrix(["I live in Lyon", "i LIVE in lyon.", "dogs bark", "", ""])
    assert sim[0, 1] == 1.0 and sim[0, 2] == 0.0
    assert sim[3, 4] == 0.0  # both empty
    assert sim[0, 2] == sim[2, 0]
    assert jaccard_matrix(["red apple", "red pear"])[0, 1] == pytest.approx(1 / 3)
