"""The in-memory vector set: exact search, growth, top-up from the store, the HNSW file."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.embed import to_blob
from memoracle.engine import Engine
from memoracle.recall.vectors import (
    VectorSet,
    ann_file,
    build_graph,
    catch_up,
    load_vectors,
    top_up,
)
from memoracle.store import Store
from memoracle.types import NewMemory, Turn

DIM = 16


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _put(store: Store, clock: FixedClock, hashes: list[str], vectors: np.ndarray) -> list[int]:
    """A memory for each hash (its text's, as far as the vectors know) with its vector;
    returns the memory ids."""
    with store.transaction():
        ids = [
            store.memories.insert(
                NewMemory("fact", f"fact {h}", "semantic", "capture", clock.now(), h),
                now=clock.now(),
            )
            for h in hashes
        ]
        store.index.put_vectors(
            [(h, "m", DIM, to_blob(v)) for h, v in zip(hashes, vectors, strict=True)],
            now=clock.now(),
        )
    return ids


def test_exact_search_grows_in_place_and_matches_brute_force() -> None:
    rng = np.random.default_rng(1)
    vectors = _unit(rng, 1000)
    found = VectorSet("m", DIM)
    for start in range(0, 1000, 37):  # many small appends: the buffer grows by half
        found.add([f"h{i}" for i in range(start, min(start + 37, 1000))], vectors[start:][:37])
    assert len(found) == 1000 and found.matrix.shape == (1000, DIM)
    query = vectors[123]
    best = found.nearest(query, 10)
    expected = np.argsort(-(vectors @ query))[:10]
    assert [h for h, _ in best] == [f"h{i}" for i in expected if vectors[i] @ query > 0]
    assert best[0] == ("h123", pytest.approx(1.0, abs=1e-5))


def test_known_and_repeated_hashes_are_added_once() -> None:
    v = _unit(np.random.default_rng(2), 3)
    found = VectorSet("m", DIM)
    assert found.add(["a", "b", "a"], v) == 2
    assert found.add(["b", "c"], v[:2]) == 1
    assert found.hashes == ["a", "b", "c"]
    assert found.nearest(v[0], 0) == [] and VectorSet("m", DIM).nearest(v[0], 5) == []


def test_load_skips_corrupt_blobs_and_tops_up_what_others_added(
    store: Store, clock: FixedClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rng = np.random.default_rng(3)
    _put(store, clock, ["a", "b"], _unit(rng, 2))
    with store.transaction():
        store.memories.insert(
            NewMemory("fact", "fact bad", "semantic", "capture", clock.now(), "bad"),
            now=clock.now(),
        )
        store.index.put_vectors([("bad", "m", DIM, b"\x00" * 7)], now=clock.now())
    with caplog.at_level(logging.WARNING):
        found = load_vectors(store.index, "m", DIM, ann_path=tmp_path / "x", ann_threshold=10**9)
    assert sorted(found.hashes) == ["a", "b"] and "corrupt" in caplog.text
    _put(store, clock, ["c", "d"], _unit(rng, 2))
    assert top_up(found, store.index) == 2 and len(found) == 4


def test_archived_memories_vectors_are_left_out_until_restored(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    vectors = _unit(np.random.default_rng(5), 5)
    ids = _put(store, clock, ["a", "b", "c", "d", "e"], vectors)
    store.archive.move([(i, "manual", None) for i in ids[2:]], now=clock.now(), actor="test")
    found = load_vectors(store.index, "m", DIM, ann_path=tmp_path / "x", ann_threshold=10**9)
    assert sorted(found.hashes) == ["a", "b"]
    assert "c" not in {h for h, _ in found.nearest(vectors[2], 5)}  # takes no live hit's place
    assert catch_up(found, store.index) == 0

    store.archive.restore(ids[2], now=clock.now(), actor="test")  # its vector is stored
    assert store.index.searchable_vector_count("m") == 3
    assert catch_up(found, store.index) == 1 and found.nearest(vectors[2], 1)[0][0] == "c"

    with store.transaction():  # said again: a new memory with an archived memory's text
        store.memories.insert(
            NewMemory("fact", "fact d", "semantic", "capture", clock.now(), "d"), now=clock.now()
        )
    assert catch_up(found, store.index) == 1 and found.nearest(vectors[3], 1)[0][0] == "d"

    _put(store, clock, ["f"], _unit(np.random.default_rng(6), 1))  # another process embedded
    assert catch_up(found, store.index) == 1 and sorted(found.hashes) == ["a", "b", "c", "d", "f"]
    assert catch_up(found, store.index) == 0  # nothing new: nothing read but the marks


def test_model_ids_become_safe_file_names(tmp_path: Path) -> None:
    assert ann_file(tmp_path, "ollama:nomic/embed text") == tmp_path / "index" / (
        "ollama_nomic_embed_text.hnsw"
    )


def test_a_big_store_searches_its_hnsw_graph_once_built(
    store: Store, clock: FixedClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("faiss")
    rng = np.random.default_rng(4)
    vectors = _unit(rng, 300)
    _put(store, clock, [f"h{i}" for i in range(300)], vectors)
    path = tmp_path / "index" / "m.hnsw"
    with caplog.at_level(logging.WARNING):  # a search never spends minutes building one
        exact = load_vectors(store.index, "m", DIM, ann_path=path, ann_threshold=100)
    assert exact.ann is None and "run memoracle reindex" in caplog.text

    built = build_graph(store.index, "m", DIM, path)
    assert built.ann is not None and path.exists() and len(built) == 300
    _put(store, clock, ["new"], _unit(rng, 1))
    found = load_vectors(store.index, "m", DIM, ann_path=path, ann_threshold=100)
    assert found.ann is not None and found.hashes[:300] == built.hashes
    assert found.hashes[300:] == ["new"] and found.unsaved == 1  # completed from the store
    assert found.nearest(vectors[7], 5)[0][0] == "h7"
    assert [h for h, _ in found.nearest(vectors[7], 5)] == [
        h for h, _ in exact.nearest(vectors[7], 5)
    ]

    caplog.clear()
    path.write_bytes(b"garbage")  # a damaged file is not trusted: exact until rebuilt
    with caplog.at_level(logging.WARNING):
        fallback = load_vectors(store.index, "m", DIM, ann_path=path, ann_threshold=100)
    assert fallback.ann is None and len(fallback) == 301 and "corrupt" in caplog.text


def test_reindex_builds_the_graph_and_search_uses_it(settings: Settings, clock: FixedClock) -> None:
    pytest.importorskip("faiss")
    small = replace(settings, embedding=replace(settings.embedding, ann_threshold=5))
    Engine.init(small, clock=clock)
    with Engine.open(small, clock=clock) as engine:
        engine.capture(
            [Turn("user", f"I planted {n} tulips by the fence.", clock.now(), "s", str(n))
             for n in range(6)]
        )  # fmt: skip
        assert engine.index_status().ann == "exact"  # nothing embedded yet
        engine.reindex()
        assert engine.index_status().ann == "hnsw"
    with Engine.open(small, clock=clock) as engine:
        outcome = engine.search("tulips", k=3)
        assert outcome.mode == "hybrid" and outcome.hits
        assert engine.searcher._set is not None and engine.searcher._set.ann is not None


def test_reindex_rebuilds_the_graph_once_a_quarter_of_it_is_archived(
    settings: Settings, clock: FixedClock
) -> None:
    pytest.importorskip("faiss")
    small = replace(settings, embedding=replace(settings.embedding, ann_threshold=5))
    Engine.init(small, clock=clock)
    with Engine.open(small, clock=clock) as engine:
        ids = [engine.remember(f"{n} tulips grow by the fence.")[0].id for n in range(8)]
        engine.reindex()
        path = ann_file(small.home, engine.index_status().model or "")
        built = path.stat().st_mtime_ns
    with Engine.open(small, clock=clock) as engine:
        assert not engine.searcher.build_graph_if_needed()  # nothing archived: kept
        with engine._store.transaction():
            for memory_id in ids[:2]:  # a quarter
                engine._store.memories.set_status(memory_id, "archived", now=clock.now())
    with Engine.open(small, clock=clock) as engine:
        before = engine.searcher._vectors()
        assert before is not None and len(before) == 8  # loaded from the file as it was
        engine.reindex()
        after = engine.searcher._set
        assert after is not None and after.ann is not None and len(after) == 6
        assert path.stat().st_mtime_ns != built


def test_a_text_said_again_in_this_process_reaches_the_set(
    settings: Settings, clock: FixedClock
) -> None:
    """SQLite's data_version misses one's own writes: the set catches up on them too."""
    text = "The spare key is under the blue flowerpot."
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        first, _ = engine.remember(text)
        engine.reindex()
        engine._store.archive.move([(first.id, "manual", None)], now=clock.now(), actor="test")
    with Engine.open(settings, clock=clock) as engine:
        found = engine.searcher._vectors()
        assert found is not None and first.content_hash not in found.rows
        again, inserted = engine.remember(text)  # its vector is stored: nothing to embed
        assert inserted and again.content_hash == first.content_hash
        assert engine.searcher._vectors() is found and first.content_hash in found.rows
