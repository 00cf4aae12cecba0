"""The search index on SQLite: a migration's backfill, and the searchable vectors that
leave out texts only archived memories hold. Vectors still to compute, resumed from
their mark, are tests/pg/test_pg_held_and_recall.py's, on both backends through the
`backend` fixture."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.store import Store, schema
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn


def _turn(store: Store, clock: FixedClock, text: str, key: str) -> None:
    with store.transaction():
        store.episodes.insert(
            Turn("user", text, turn_id=key), at=clock.now(), now=clock.now(), scope=Scope()
        )


def test_migration_2_backfills_episode_hashes(tmp_path: Path, clock: FixedClock) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.version(conn)
    schema.m001_initial(conn)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', 'x')")
    conn.execute(
        "INSERT INTO episodes (turn_key, role, text, search_text, at, created_at)"
        " VALUES ('k', 'user', 'Hello there', 'Hello there', 'x', 'x')"
    )
    conn.close()
    store = Store.open(path, now=clock.now())
    assert store.schema_version == schema.LATEST
    assert store.index.missing_vectors("m", limit=5)[0] == [
        (content_hash("Hello there"), "Hello there")
    ]
    store.close()


@pytest.mark.parametrize("cold", [1, 40], ids=["mostly-live", "mostly-archived"])
def test_searchable_vectors_leave_out_texts_only_archived_memories_hold(
    store: Store, clock: FixedClock, cold: int
) -> None:
    """Found from either side (live texts or every vector), the same texts: a live
    memory's or a turn's, even when an archived memory or another model shares them."""

    def memory(text: str) -> int:
        new = NewMemory("fact", text, "semantic", "capture", clock.now(), content_hash(text))
        return store.memories.insert(new, now=clock.now())

    with store.transaction():
        for i in range(3):
            memory(f"live {i}")
        archived = [memory(f"cold {i}") for i in range(cold)]
        archived += [memory("live 0"), memory("said in a turn")]  # texts live elsewhere
        memory("live, with no vector yet")
    _turn(store, clock, "said in a turn", "t1")
    _turn(store, clock, "a turn", "t2")
    for i in range(10):  # turns not embedded yet: live texts without a vector
        _turn(store, clock, f"turn {i}", f"new {i}")
    texts = [f"live {i}" for i in range(3)] + [f"cold {i}" for i in range(cold)]
    texts += ["said in a turn", "a turn"]
    with store.transaction():
        store.index.put_vectors(
            [(content_hash(t), "m", 2, t.encode()[:8].ljust(8)) for t in texts], now=clock.now()
        )
        store.index.put_vectors([(content_hash("cold 0"), "other", 2, b"x" * 8)], now=clock.now())
    store.archive.move([(i, "manual", None) for i in archived], now=clock.now(), actor="test")

    expected = {content_hash(t) for t in texts if not t.startswith("cold")}
    assert set(store.index.searchable_vector_hashes("m")) == expected
    assert {h for h, _, _ in store.index.searchable_vectors("m")} == expected
    assert store.index.searchable_vector_count("m") == len(expected) == 5
    assert store.index.vector_count("m") == 5 + cold
    assert store.index.searchable_vector_count("other") == 0
