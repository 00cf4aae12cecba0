from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memoracle.errors import EngineError, InvalidInput, NotFound
from memoracle.recall.ann import HnswIndex, ann_available

pytest.importorskip("faiss")

Matrix = npt.NDArray[np.float32]


def unit_vectors(n: int, dim: int, seed: int = 0) -> Matrix:
    rows = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def exact_top(matrix: Matrix, query: Matrix, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-(matrix @ query))[:k]]


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    return unit_vectors(5000, 64)


@pytest.fixture(scope="module")
def index(matrix: Matrix) -> HnswIndex:
    return HnswIndex.build(matrix)


def test_ann_available() -> None:
    assert ann_available()


def test_a_stored_vector_finds_itself_first(matrix: Matrix, index: HnswIndex) -> None:
    assert len(index) == 5000
    for row in (0, 1234, 4999):
        ids, sims = index.search(matrix[row], 5)
        assert ids[0] == row
        assert sims[0] == pytest.approx(1.0, abs=1e-5)
        assert list(sims) == sorted(sims, reverse=True)
        assert ids.dtype == np.int64 and sims.dtype == np.float32


def test_recall_at_10_against_exact_search(matrix: Matrix, index: HnswIndex) -> None:
    queries = unit_vectors(200, 64, seed=1)
    recall = np.mean(
        [
            len(set(index.search(q, 10)[0].tolist()) & set(exact_top(matrix, q, 10))) / 10
            for q in queries
        ]
    )
    assert recall >= 0.95


def test_similarities_are_the_inner_products(matrix: Matrix, index: HnswIndex) -> None:
    query = unit_vectors(1, 64, seed=2)[0]
    ids, sims = index.search(query, 10)
    np.testing.assert_allclose(sims, matrix[ids] @ query, rtol=1e-5, atol=1e-6)


def test_add_appends_row_ids() -> None:
    rows = unit_vectors(300, 32, seed=3)
    index = HnswIndex.build(rows[:200])
    index.add(rows[200:])
    index.add(np.zeros((0, 32), np.float32))  # nothing to add is fine
    assert len(index) == 300
    for row in (0, 199, 200, 299):
        assert index.search(rows[row], 1)[0].tolist() == [row]


def test_an_empty_index_finds_nothing_and_k_is_capped() -> None:
    empty = HnswIndex(16)
    ids, sims = empty.search(unit_vectors(1, 16)[0], 10)
    assert len(empty) == 0 and ids.size == 0 and sims.size == 0
    small = HnswIndex.build(unit_vectors(3, 16))
    assert sorted(small.search(unit_vectors(1, 16, seed=4)[0], 10)[0].tolist()) == [0, 1, 2]


def test_ef_search_is_raised_to_k(matrix: Matrix) -> None:
    index = HnswIndex.build(matrix[:1000], ef_search=4)
    assert len(index.search(matrix[0], 100)[0]) == 100


def test_wrong_shapes_are_refused(index: HnswIndex) -> None:
    with pytest.raises(InvalidInput, match=r"expected \(64,\)"):
        index.search(np.zeros(32, np.float32), 5)
    with pytest.raises(InvalidInput, match=r"expected \(n, 64\)"):
        index.add(np.zeros((2, 32), np.float32))
    with pytest.raises(InvalidInput, match="NaN"):
        index.add(np.full((1, 64), np.nan, np.float32))
    with pytest.raises(InvalidInput):
        HnswIndex.build(np.zeros(64, np.float32))


def test_save_and_load_round_trip(tmp_path: Path, matrix: Matrix, index: HnswIndex) -> None:
    path = tmp_path / "vectors.hnsw"
    labels = [f"hash{i:05d}" for i in range(len(index))]
    index.save(path, labels=labels)
    loaded, got = HnswIndex.load(path, 64, ef_search=index.ef_search)
    assert got == labels
    assert len(loaded) == len(index) and loaded.dim == 64
    assert (loaded.m, loaded.ef_construction) == (index.m, index.ef_construction) == (32, 80)
    for q in unit_vectors(20, 64, seed=5):
        a, b = index.search(q, 10), loaded.search(q, 10)
        assert a[0].tolist() == b[0].tolist()
        np.testing.assert_array_equal(a[1], b[1])
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.hnsw"]  # no temp file left


def test_labels_are_optional_and_must_fit(tmp_path: Path) -> None:
    path = tmp_path / "vectors.hnsw"
    index = HnswIndex.build(unit_vectors(3, 16))
    index.save(path)
    assert HnswIndex.load(path, 16)[1] == []
    index.save(path, labels=["", "é", "c d"])
    assert HnswIndex.load(path, 16)[1] == ["", "é", "c d"]
    with pytest.raises(InvalidInput, match="2 labels for an index of 3 rows"):
        index.save(path, labels=["a", "b"])
    with pytest.raises(InvalidInput, match="newline"):
        index.save(path, labels=["a", "b\nc", "d"])
    HnswIndex(16).save(path, labels=[])
    loaded, labels = HnswIndex.load(path, 16)
    assert len(loaded) == 0 and labels == []


def test_save_replaces_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "vectors.hnsw"
    HnswIndex.build(unit_vectors(10, 16)).save(path)
    HnswIndex.build(unit_vectors(20, 16)).save(path)
    assert len(HnswIndex.load(path, 16)[0]) == 20


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"not an index at all",
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data[:5000] + bytes([data[5000] ^ 1]) + data[5001:],  # a flipped bit
        lambda data: data[:-3] + b"xyz",  # in the labels
        lambda data: data + b"\0",
        lambda data: b"",
    ],
    ids=["garbage", "truncated", "bit-flip", "labels", "trailing", "empty"],
)
def test_a_corrupt_file_is_an_engine_error_naming_it(
    tmp_path: Path, index: HnswIndex, damage: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "vectors.hnsw"
    index.save(path, labels=[str(i) for i in range(len(index))])
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(EngineError, match="corrupt") as caught:
        HnswIndex.load(path, 64)
    assert str(path) in str(caught.value)


def test_a_file_of_another_dimension_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vectors.hnsw"
    HnswIndex.build(unit_vectors(10, 16)).save(path)
    with pytest.raises(EngineError, match="16-d vectors, not 64-d") as caught:
        HnswIndex.load(path, 64)
    assert str(path) in str(caught.value)


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="No ANN index"):
        HnswIndex.load(tmp_path / "nothing.hnsw", 64)


def test_save_into_a_missing_directory_is_an_engine_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="Cannot write the ANN index"):
        HnswIndex.build(unit_vectors(5, 16)).save(tmp_path / "no" / "such" / "vectors.hnsw")


def test_queries_and_adds_leave_the_thread_limit_as_they_found_it() -> None:
    import faiss

    before = faiss.omp_get_max_threads()
    try:
        faiss.omp_set_num_threads(3)
        index = HnswIndex.build(unit_vectors(50, 16), threads=1)
        index.add(unit_vectors(5, 16, seed=6))
        index.search(unit_vectors(1, 16)[0], 5)
        assert faiss.omp_get_max_threads() == 3
    finally:
        faiss.omp_set_num_threads(before)


def test_without_faiss_the_error_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, package=None: None)
    assert not ann_available()
    with pytest.raises(InvalidInput, match=r"pip install 'memoracle\[ann\]'"):
        HnswIndex(16)
