from __future__ import annotations

import sqlite3
from pathlib import Path

from memoracle.clock import FixedClock
from memoracle.store import Store, schema
from memoracle.text import content_hash
from memoracle.types import Scope, Turn


def _turn(store: Store, clock: FixedClock, text: str, key: str) -> None:
    with store.transaction():
        store.episodes.insert(
            Turn("user", text), key=key, at=clock.now(), now=clock.now(), scope=Scope()
        )


def test_missing_vectors_resume_from_their_mark(store: Store, clock: FixedClock) -> None:
    for i in range(5):
        _turn(store, clock, f"turn number {i}", str(i))
    _turn(store, clock, "turn number 0", "dup")  # same text: one vector
    first, mark = store.index.missing_vectors("m", limit=3)
    assert len(first) == 3
    rest, mark = store.index.missing_vectors("m", after=mark, limit=10)
    assert {h for h, _ in first + rest} == {content_hash(f"turn number {i}") for i in range(5)}
    with store.transaction():
        store.index.put_vectors([(h, "m", 2, b"\0" * 8) for h, _ in first + rest], now=clock.now())
    assert store.index.missing_vectors("m", after=mark, limit=10)[0] == []
    assert store.index.count_missing("m") == 0 and store.index.count_missing("other") == 5
    _turn(store, clock, "a new turn", "new")
    assert [t for _, t in store.index.missing_vectors("m", after=mark, limit=10)[0]] == [
        "a new turn"
    ]


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
