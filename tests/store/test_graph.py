"""The graph tables: entities and relations stored once, linked to the memories stating
them, counted over live memories only."""

from __future__ import annotations

from memoracle.clock import FixedClock
from memoracle.store import Store
from memoracle.text import content_hash
from memoracle.types import NewMemory


def _memory(store: Store, text: str, clock: FixedClock) -> int:
    new = NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
    )
    return store.memories.insert(new, now=clock.now())


def test_entities_and_relations_are_stored_once_and_counted_over_live_memories(
    store: Store, clock: FixedClock
) -> None:
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
    with store.transaction():
        store.memories.set_status(first, "forgotten", now=now)
    assert [(e.key, e.memories) for e in store.graph.entities()] == [("anna", 1)]
    assert store.graph.relations() == []
