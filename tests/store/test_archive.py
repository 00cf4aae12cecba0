"""The cold tier where it is SQLite's own: its FTS5 index and its migrations. What both
backends do alike (move, restore, snapshot, audit) is tests/pg/test_pg_archive.py's,
run on SQLite and on PostgreSQL through the `backend` fixture."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from memoracle.clock import FixedClock
from memoracle.store import Store, schema
from memoracle.text import content_hash, search_form
from memoracle.types import NewMemory


def _new(text: str, clock: FixedClock, **kw: object) -> NewMemory:
    base = NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _add(store: Store, clock: FixedClock, text: str, **kw: object) -> int:
    with store.transaction():
        return store.memories.insert(_new(text, clock, **kw), now=clock.now())


def test_fts_index_stays_consistent(store: Store, clock: FixedClock) -> None:
    a = _add(store, clock, "Kept in the index")
    b = _add(store, clock, "Archived from the index")
    with store.transaction():
        store.archive.move([(b, "manual", None)], now=clock.now(), actor="t")
    conn = sqlite3.connect(store.path)
    try:
        # Editing an archived row's text must not touch the index; a rebuild (from the
        # searchable view) must not bring it back.
        edited = search_form("archived edited index")
        conn.execute("UPDATE memories SET search_text = ? WHERE id = ?", (edited, b))
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')")
        conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')")
        conn.commit()
    finally:
        conn.close()
    assert store.memories.match("index") == [a]
    store.archive.restore(b, now=clock.now(), actor="t")
    assert set(store.memories.match("index")) == {a, b}
    assert store.memories.match("edited") == [b]


def test_migration_3_from_a_schema_2_database(tmp_path: Path, clock: FixedClock) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.version(conn)
    schema.m001_initial(conn)
    schema.m002_vectors(conn)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'initial', 'x'), (2, 'vectors', 'x')")
    for status, text in (("active", "green tea daily"), ("forgotten", "green tea never")):
        conn.execute(
            "INSERT INTO memories (kind, text, search_text, layer, status, created_at,"
            " observed_at, last_accessed_at, source, content_hash)"
            " VALUES ('fact', ?, ?, 'semantic', ?, 'x', 'x', 'x', 'capture', 'h')",
            (text, text, status),
        )
    conn.close()

    store = Store.open(path, now=clock.now())
    try:
        assert store.schema_version == schema.LATEST
        assert store.memories.match("green tea") == [1]
        assert store.memories.match("green tea", statuses=("forgotten",)) == [2]  # reindexed
        with store.transaction():
            assert store.archive.move([(1, "manual", None)], now=clock.now(), actor="t") == 1
        assert store.memories.match("green tea") == []
    finally:
        store.close()
