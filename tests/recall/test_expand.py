"""Entity expansion: names in a query found by the graph's keys, their neighbours'
memories brought into search through the graph only, never past the asker's scope, and
nothing changed at weight 0."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.engine.scope import view_for
from memoracle.recall import expand as expansion
from memoracle.recall import graph_list, hybrid
from memoracle.storage_types import View
from memoracle.types import Scope

QUERY = "Where does Anna's sister earn money?"


def _engine(tmp_path: Path, clock: FixedClock, weight: float) -> Engine:
    # Lexical only: in a store of five memories the nearest vectors are all of them.
    settings = load(
        tmp_path / f"home-{weight}",
        env={},
        overrides={"embedding.provider": "none", "search.graph_weight": str(weight)},
    )
    Engine.init(settings, clock=clock)
    return Engine.open(settings, clock=clock)


@pytest.fixture
def lexical(tmp_path: Path, clock: FixedClock) -> Iterator[Engine]:
    with _engine(tmp_path, clock, 0.5) as engine:
        yield engine


def _family(engine: Engine, scope: Scope | None = None) -> None:
    engine.remember("Anna's sister Lea lives in Lyon.", scope=scope)
    engine.remember("Lea works at Globex since March.", scope=scope)
    engine.remember("The weather in Paris was grey.", scope=scope)


def _texts(engine: Engine, query: str, scope: Scope | None = None) -> list[str]:
    return [h.text for h in engine.search(query, scope=scope).hits]


def test_a_neighbours_memory_is_found_only_through_the_graph(
    tmp_path: Path, clock: FixedClock
) -> None:
    # "Lea works at Globex" shares no word with the question: only the graph links it,
    # Anna -> (family_of) -> Lea -> the memories naming Lea.
    for weight, found in ((0.0, False), (0.5, True)):
        with _engine(tmp_path, clock, weight) as engine:
            _family(engine)
            texts = _texts(engine, QUERY)
            assert texts[0] == "Anna's sister Lea lives in Lyon."
            assert ("Lea works at Globex since March." in texts) is found
            assert "The weather in Paris was grey." not in texts
            hit = engine.search(QUERY).hits[-1]
            if found:  # no lexical or vector rank: its score is the graph list's alone
                assert (hit.scores.lexical_rank, hit.scores.vector_rank) == (None, None)
                assert hit.scores.rrf == pytest.approx(
                    0.5 * hybrid.MEMORY_LEXICAL_WEIGHT / (60 + 1)
                )


def test_names_meet_whatever_their_spelling(lexical: Engine) -> None:
    _family(lexical)
    lexical.remember("Marc works at Bank of America.")
    graph = lexical._store.graph
    anna, lea = (graph.find(k).id for k in ("anna", "lea"))  # type: ignore[union-attr]
    bank = graph.find("bank america").id  # type: ignore[union-attr]
    for query in ("what about anna?", "ANNA", "Anna’s plans", "my wife Anna"):
        assert expansion.named_entities(lexical._store, query) == {anna: "anna"}, query
    assert list(expansion.named_entities(lexical._store, "did lea or Anna call")) == [lea, anna]
    assert expansion.named_entities(lexical._store, "who works at bank of america") == {
        bank: "bank america"
    }
    assert expansion.named_entities(lexical._store, "the weather") == {}


def test_only_a_query_that_says_more_than_a_name_follows_a_relation(lexical: Engine) -> None:
    _family(lexical)
    lexical.remember("Lea lives in Lyon with her cat.")  # names Lea, not Anna
    store = lexical._store
    anna, lea = (store.graph.find(k).id for k in ("anna", "lea"))  # type: ignore[union-attr]

    def expand(query: str) -> expansion.Expansion:
        lexical_ids = [h.id for h in lexical.search(query, k=20).hits if h.source == "memory"]
        return expansion.expand(store, query, View(), lexical=lexical_ids, limit=10)

    found = expand(QUERY)
    assert (found.named, found.neighbours) == ((anna,), (lea,))
    # Lea's memories, newest first, but not the one naming Anna (found by her name)
    assert [store.memories.get_many([i])[0].text for i in found.memories] == [
        "Lea lives in Lyon with her cat.",
        "Lea works at Globex since March.",
    ]
    assert found.tiers == (0, 0)
    # a bare name, or words said next to no other name, point nowhere
    for query in ("Anna", "what about Anna?", "Anna earns money"):
        assert expand(query).memories == (), query


def test_the_speaker_placeholder_is_no_name(lexical: Engine) -> None:
    lexical.remember("My wife Anna works at Acme.")  # anna family_of user
    assert lexical._store.graph.find("user") is not None
    assert expansion.named_entities(lexical._store, "what does the user like?") == {}


def test_expansion_never_crosses_scope(lexical: Engine) -> None:
    alice = Scope(user="alice")
    group = Scope(user="alice", chat="tg:1", visibility="shared")
    # Alice said privately who Lea is; in the group she said only where Lea works.
    lexical.remember("Anna's sister Lea lives in Lyon.", scope=alice)
    lexical.remember("Lea works at Globex since March.", scope=group)
    lexical.remember("Lea's salary is 4000 euros.", scope=alice)
    assert "Lea works at Globex since March." in _texts(lexical, QUERY, alice)
    # The group sees no private memory, and no private relation links Anna to Lea.
    assert _texts(lexical, QUERY, group) == []
    assert _texts(lexical, "anna", group) == []
    graph = lexical._store.graph
    anna, lea = (graph.find(k).id for k in ("anna", "lea"))  # type: ignore[union-attr]
    assert graph.related([anna], [lea], view_for(lexical.settings, alice)) == {lea}
    assert graph.related([anna], [lea], view_for(lexical.settings, group)) == set()
    assert graph.newest_memories(lea, view_for(lexical.settings, group), limit=5, scan=5) == [
        lexical.search("Globex", scope=group).hits[0].id
    ]
    # Asked about Lea herself, the group gets only what it may see.
    assert _texts(lexical, "Lea", group) == ["Lea works at Globex since March."]
    assert _texts(lexical, QUERY, Scope(user="bob")) == []


def test_forgotten_memories_are_not_brought_back(lexical: Engine) -> None:
    _family(lexical)
    works = lexical.search("Globex").hits[0]
    lexical.forget(works.ref)
    assert "Lea works at Globex since March." not in _texts(lexical, QUERY)


def test_weight_zero_changes_nothing(
    tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("expansion ran at weight 0")

    with _engine(tmp_path, clock, 0.0) as engine:
        _family(engine)
        engine.remember("I met Anna's sister at the station.")
        queries = (QUERY, "anna", "Lea Lyon", "sister")
        before = {q: engine.search(q).hits for q in queries}
        with sqlite3.connect(engine.settings.db_path) as db:  # as if there were no graph
            db.execute("DELETE FROM entity_memories")
            db.execute("DELETE FROM relation_memories")
        monkeypatch.setattr(graph_list, "expand", refuse)
        assert {q: engine.search(q).hits for q in queries} == before


def test_the_query_orders_what_the_graph_brings(engine: Engine) -> None:
    # Hash vectors: texts sharing words and pieces of words are near. Newest first
    # would put the pottery first; the question is about work.
    _family(engine)
    engine.remember("I met Lea at the pottery studio.")
    query = "Where does Anna's sister work?"
    lexical = [h.id for h in engine.search(query, k=20).hits if h.source == "memory"]
    searcher = engine.searcher
    assert searcher.embedder is not None
    vector = searcher.embedder.embed_query(query)

    def texts(ids: list[int]) -> list[str]:
        return [m.text for m in engine.memories_by_id(ids)]

    def ordered(vector: npt.NDArray[np.float32] | None) -> list[int]:
        return graph_list.graph_list(
            engine._store,
            searcher.embedder,
            query,
            View(),
            lexical,
            vector,
            pool=hybrid.POOL,
            candidates=hybrid.GRAPH_CANDIDATES,
        )

    by_meaning = texts(ordered(vector))
    newest_first = texts(ordered(None))
    assert by_meaning == ["Lea works at Globex since March.", "I met Lea at the pottery studio."]
    assert newest_first == by_meaning[::-1]
