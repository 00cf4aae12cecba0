"""Search on PostgreSQL: each language stemmed by its own text-search configuration,
recall's queries finding what they find on SQLite, and vectors in pgvector's HNSW index
searched under the visibility rule."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pgharness import MISSING, SKIP_REASON

from memoracle.clock import FixedClock
from memoracle.recall.query import lexical_queries
from memoracle.storage_types import View
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)


def _new(
    text: str, clock: FixedClock, *, lang: str | None = None, scope: Scope | None = None
) -> NewMemory:
    return NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
        lang=lang,
        scope=scope or Scope(),
    )


@pytest.fixture
def pg(pg_store_url: str, clock: FixedClock) -> Iterator[Any]:
    from memoracle.store.postgres import PgStore

    store = PgStore.open(pg_store_url, now=clock.now())
    yield store
    store.close()


def test_each_language_is_stemmed_by_its_own_configuration(pg: Any, clock: FixedClock) -> None:
    said = {
        "fr": "Nous mangions des pommes, il mangeait des poires",
        "es": "Estamos corriendo por el parque",
        "ru": "Мы купили ёлки на рынке",
        "en": "She was running through the gardens",
        "de": "Wir kaufen Äpfel",
    }
    with pg.transaction():
        ids = {
            lang: pg.memories.insert(_new(t, clock, lang=lang), now=clock.now())
            for lang, t in said.items()
        }
    assert pg.memories.match("mangeaient") == [ids["fr"]]  # French: mang-
    assert pg.memories.match("corren") == [ids["es"]]  # Spanish: corr-
    assert pg.memories.match("ёлка рынка") == [ids["ru"]]  # Russian, ё folded
    assert pg.memories.match("runs garden") == [ids["en"]]
    assert pg.memories.match("apfel") == [ids["de"]]  # simple: accents dropped, no stem
    assert pg.memories.match("kauft") == []  # and no German stemmer
    with psycopg.connect(_url(pg), autocommit=True) as conn:
        stored = dict(conn.execute("SELECT lang, tsv::text FROM memories").fetchall())
    assert "'mang'" in stored["fr"] and "'nous'" in stored["fr"]  # no stop words dropped
    assert "'corr'" in stored["es"] and "'рынк'" in stored["ru"]


def _url(pg: Any) -> str:
    """The URL `pg` was opened with, to look at its rows directly."""
    info = pg._db.conn.info
    return f"postgresql://{info.user}:{info.password}@{info.host}:{info.port}/{info.dbname}"


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (
            "Caroline went to the LGBTQ support group on Sunday",
            "When did Caroline go to the support group?",
        ),
        ("We celebrated my daughter's birthdays at the lake", "birthday at the lake"),
        ("Мы сняли квартиру в Берлине", "где квартира?"),
        ("I moved to Hamburg last spring", "Гамбург"),
    ],
)
def test_recalls_queries_find_on_postgresql_what_they_find_on_sqlite(
    backend: Any, clock: FixedClock, text: str, question: str
) -> None:
    with backend.transaction():
        wanted = backend.memories.insert(_new(text, clock), now=clock.now())
        backend.memories.insert(_new("Nothing to do with it at all", clock), now=clock.now())
    found = [
        [i for i, _ in backend.index.lexical_memories(q, View(), limit=5)]
        for q in lexical_queries(question)
    ]
    assert [wanted] in found


def test_a_shorter_text_saying_the_words_ranks_first_as_with_bm25(
    backend: Any, clock: FixedClock
) -> None:
    texts = (
        "I went to the passport office downtown last spring.",
        "The office downtown is closed.",
        "Our office downtown moved.",
    )
    with backend.transaction():
        ids = [backend.memories.insert(_new(t, clock), now=clock.now()) for t in texts]
    (query,) = lexical_queries("office downtown")[:1]
    ranked = [i for i, _ in backend.index.lexical_memories(query, View(), limit=5)]
    assert ranked[-1] == ids[0]  # the long one last, not first by its older id
    assert backend.memories.match("office downtown")[-1] == ids[0]


def test_vectors_are_searched_in_the_hnsw_index_under_the_rule(pg: Any, clock: FixedClock) -> None:
    rng = np.random.default_rng(7)
    alice, bob = Scope(user="alice"), Scope(user="bob")
    texts = [(f"alice note {i}", alice) for i in range(30)] + [("bob's secret", bob)]
    vectors = {t: rng.standard_normal(16).astype(np.float32) for t, _ in texts}
    with pg.transaction():
        ids = {t: pg.memories.insert(_new(t, clock, scope=s), now=clock.now()) for t, s in texts}
        pg.index.put_vectors(
            [(content_hash(t), "m", 16, v.tobytes()) for t, v in vectors.items()], now=clock.now()
        )
    query = vectors["bob's secret"] + 0.05 * vectors["alice note 3"]
    as_bob = pg.index.nearest_memories("m", query.tolist(), View(bob), limit=3)
    assert [i for i, _ in as_bob] == [ids["bob's secret"]]
    as_alice = pg.index.nearest_memories("m", query.tolist(), View(alice), limit=3)
    assert ids["bob's secret"] not in [i for i, _ in as_alice] and len(as_alice) == 3
    exact = sorted(
        (float(1 - v @ query / (np.linalg.norm(v) * np.linalg.norm(query))), ids[t])
        for t, v in vectors.items()
        if t.startswith("alice")
    )
    assert [i for i, _ in as_alice] == [i for _, i in exact[:3]]
    assert as_alice[0][1] == pytest.approx(exact[0][0], abs=1e-5)
    blob = next(pg.index.vectors_for("m", [content_hash("alice note 3")]))
    assert blob == (content_hash("alice note 3"), 16, vectors["alice note 3"].tobytes())
    assert pg.index.vector_models() == {"m": (16, 31)}
    with psycopg.connect(_url(pg), autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        # and no sort: with a few rows, statistics left by earlier tests can make the
        # model's btree plus a sort look cheaper; the HNSW index hands rows over in order
        conn.execute("SET enable_sort = off")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                "EXPLAIN SELECT content_hash FROM vectors v WHERE v.model_id = 'm' AND v.dim = 16"
                " ORDER BY (v.vector::vector(16)) <=> %s::vector(16) LIMIT 40",
                (str(query.tolist()),),
            )
        )
    assert "vectors_hnsw_1" in plan, plan


def test_recalls_vector_index_is_pgvectors_under_the_rule_at_any_depth(
    pg: Any, clock: FixedClock
) -> None:
    """Recall's `VectorIndex` on PostgreSQL (`vector_index`): the nearest texts a view
    may see, found in the database (nothing loaded), even when a search asks for more
    candidates than pgvector's `hnsw.ef_search` allows (1000: at most 100 hits asked
    for an overfetch of 10 each)."""
    rng = np.random.default_rng(3)
    alice, bob = Scope(user="alice"), Scope(user="bob")
    texts = [(f"alice note {i}", alice) for i in range(20)] + [("bob's secret", bob)]
    vectors = {t: rng.standard_normal(16).astype(np.float32) for t, _ in texts}
    with pg.transaction():
        for t, s in texts:
            pg.memories.insert(_new(t, clock, scope=s), now=clock.now())
        pg.index.put_vectors(
            [(content_hash(t), "m", 16, v.tobytes()) for t, v in vectors.items()], now=clock.now()
        )
    index = pg.vector_index("m", 16)
    assert index.refresh() == 0 and len(index) == 1 and index.state() == "hnsw"
    query = vectors["bob's secret"]
    as_alice = index.nearest(query, 200, view=View(alice))
    assert content_hash("bob's secret") not in {h for h, _ in as_alice}
    assert len(as_alice) == sum(
        1 for t in vectors if t.startswith("alice") and float(vectors[t] @ query) > 0
    )
    as_bob = index.nearest(query, 200, view=View(bob))
    assert as_bob[0][0] == content_hash("bob's secret")
    assert as_bob[0][1] == pytest.approx(1.0, abs=1e-5)
    assert len(pg.index.nearest_memories("m", query.tolist(), View(alice), limit=150)) == 20
    assert pg.vector_index("other-model", 16).refresh() == 0


def test_a_vector_search_does_not_wait_for_a_writer(
    pg: Any, pg_store_url: str, clock: FixedClock
) -> None:
    """A search runs while another connection holds the write lock (a long capture)."""
    from memoracle.store.postgres import PgStore

    vector = np.ones(4, dtype=np.float32)
    with pg.transaction():
        pg.memories.insert(_new("a note", clock), now=clock.now())
        pg.index.put_vectors([(content_hash("a note"), "m", 4, vector.tobytes())], now=clock.now())
    writer = PgStore.open(pg_store_url, now=clock.now())
    try:
        with writer.transaction():  # holds the writer lock until the search is done
            writer._db.execute("SET LOCAL lock_timeout = '2s'")
            pg._db.execute("SET lock_timeout = '2s'")
            found = pg.index.nearest_memories("m", vector.tolist(), View(), limit=1)
    finally:
        writer.close()
    assert [i for i, _ in found] == [1]
