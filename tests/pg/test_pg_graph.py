"""The graph's tables on both backends (the `backend` fixture; SQLite alone where
PostgreSQL's packages are missing): entities and relations stored once, linked to the
memories stating them, counted over live memories only, and what search and the graph
log read of them."""

from __future__ import annotations

from typing import Any

from memoracle.clock import FixedClock
from memoracle.storage_types import View
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope


def _memory(store: Any, text: str, clock: FixedClock, scope: Scope | None = None) -> int:
    new = NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
        scope=scope or Scope(),
    )
    return int(store.memories.insert(new, now=clock.now()))


def test_entities_and_relations_are_stored_once_and_counted_over_live_memories(
    backend: Any, clock: FixedClock
) -> None:
    store = backend
    now = clock.now()
    with store.transaction():
        first = _memory(store, "My wife Anna works at Acme.", clock)
        second = _memory(store, "Anna's office is in Lyon.", clock)
        anna = store.graph.entity("anna", "my wife Anna", "Person", now=now)
        assert store.graph.entity("anna", "Anna's", "Organization", now=now) == anna
        acme = store.graph.entity("acme", "Acme", "Organization", now=now)
        works = store.graph.relation(anna, "works_at", acme, now=now)
        assert store.graph.relation(anna, "works_at", acme, now=now) == works
        store.graph.link(first, entities=[anna, acme], relations=[works])
        store.graph.link(second, entities=[anna])
        silent = _memory(store, "ok", clock)
        store.graph.link(silent)  # read, named nothing
    found = store.graph.find("anna")
    assert found is not None and found.type == "Person"  # the first type stays
    assert found.aliases == ("my wife Anna", "Anna's") and found.memories == 2
    assert [(e.key, e.memories) for e in store.graph.entities()] == [("anna", 2), ("acme", 1)]
    assert [(r.source, r.relation, r.target) for r in store.graph.relations(entity=acme)] == [
        ("anna", "works_at", "acme")
    ]
    assert store.graph.memories_of([anna], limit=10) == [second, first]
    assert store.graph.unread(limit=10) == []
    snapshot = store.graph.snapshot()
    assert sorted(snapshot.entities) == [
        ("acme", "Acme", "Organization", ("Acme",)),
        ("anna", "my wife Anna", "Person", ("my wife Anna", "Anna's")),
    ]
    assert snapshot.relations == [("anna", "works_at", "acme")]
    assert sorted(snapshot.entity_links) == [("acme", first), ("anna", first), ("anna", second)]
    assert snapshot.relation_links == [("anna", "works_at", "acme", first)]
    with store.transaction():
        store.memories.set_status(first, "forgotten", now=now)
    assert [(e.key, e.memories) for e in store.graph.entities()] == [("anna", 1)]
    assert store.graph.relations() == []
    assert store.graph.counts() == {"entities": 2, "orphans": 1, "relations": 1}


def test_what_search_reads_of_the_graph_keeps_to_the_rule(backend: Any, clock: FixedClock) -> None:
    store = backend
    now = clock.now()
    alice, bob = Scope(user="alice"), Scope(user="bob")
    with store.transaction():
        hers = _memory(store, "Bank of America holds Alice's savings", clock, alice)
        his = _memory(store, "Bob banks with Bank of America too", clock, bob)
        bank = store.graph.entity("bank america", "Bank of America", "Organization", now=now)
        savings = store.graph.entity("savings", "savings", "Concept", now=now)
        banker = store.graph.entity("bank", "bank", "Concept", now=now)
        holds = store.graph.relation(bank, "holds", savings, now=now)
        store.graph.link(hers, entities=[bank, savings], relations=[holds])
        store.graph.link(his, entities=[bank])
    assert store.graph.ids_of(["bank america", "nobody"]) == {"bank america": bank}
    assert store.graph.longer_keys(["bank"], limit=5) == ["bank america"]
    assert store.graph.related([bank], [savings, banker], View(alice)) == {savings}
    assert store.graph.related([bank], [savings], View(bob)) == set()
    assert store.graph.newest_memories(bank, View(bob), limit=5, scan=10) == [his]
    assert store.graph.memories_of([bank], limit=5, view=View(alice)) == [hers]
    assert [e.key for e in store.graph.entities(view=View(bob))] == ["bank america"]
    assert store.graph.find("savings", view=View(bob)) is None
    assert store.graph.entities_of([hers]) == {hers: [bank, savings]}
    assert store.graph.memory_texts([his]) == {
        his: (
            "Bob banks with Bank of America too",
            content_hash("Bob banks with Bank of America too"),
        )
    }
