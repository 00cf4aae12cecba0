from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.errors import StoreError
from memoracle.recall.query import lexical_queries
from memoracle.storage_types import View
from memoracle.store import Store, schema
from memoracle.types import Scope, Turn


def test_open_applies_migrations_and_records_version(store: Store) -> None:
    assert store.schema_version == schema.LATEST
    conn = sqlite3.connect(store.path)
    rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
    names = [
        "initial",
        "vectors",
        "archive",
        "vector keys",
        "slots",
        "slots per statement",
        "graph",
        "held writes",
        "child key indexes",
        "turn keys",
    ]
    numbered = [
        *enumerate(names, 1),
        (11, "expiry"),
        (12, "slot values"),
        (13, "stemmed search text"),
        (14, "memories by subject"),
    ]
    assert rows == numbered
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_every_foreign_key_has_an_index_on_its_child_column(store: Store) -> None:
    # Without one, a transaction holding a deferred violation (an import) scans the
    # child table for every parent row inserted after it: an import goes quadratic.
    conn = sqlite3.connect(store.path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    unindexed = []
    for table in tables:
        leading = {
            conn.execute(f"PRAGMA index_info({index[1]})").fetchone()[2]
            for index in conn.execute(f"PRAGMA index_list({table})")
        }
        leading |= {r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[5] == 1}
        for fk in conn.execute(f"PRAGMA foreign_key_list({table})"):
            if fk[3] not in leading:
                unindexed.append(f"{table}.{fk[3]}")
    assert unindexed == []
    plan = conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM memories WHERE superseded_by = ?", (1,)
    ).fetchall()
    assert "memories_superseded_by" in str(plan)


def test_reopen_is_idempotent(tmp_path: Path, clock: FixedClock) -> None:
    for _ in range(3):
        Store.open(tmp_path / "x.db", now=clock.now()).close()
    conn = sqlite3.connect(tmp_path / "x.db")
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(
        schema.MIGRATIONS
    )


def test_newer_schema_is_refused_untouched(tmp_path: Path, clock: FixedClock) -> None:
    path = tmp_path / "x.db"
    Store.open(path, now=clock.now()).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer than this memoracle"):
        Store.open(path, now=clock.now())
    assert path.read_bytes() == before


def test_not_a_database_names_the_file(tmp_path: Path, clock: FixedClock) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="junk.db"):
        Store.open(path, now=clock.now())


def test_audit_log_is_append_only(store: Store, clock: FixedClock) -> None:
    with store.transaction():
        store.audit.append(at=clock.now(), actor="test", action="add", memory_id=1)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit SET action = 'x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM audit")


def test_transaction_rolls_back_on_error(store: Store, clock: FixedClock) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.audit.append(at=clock.now(), actor="test", action="add")
        raise RuntimeError("boom")
    assert store.audit.count() == 0


def test_a_commit_that_fails_rolls_back_and_the_store_goes_on(
    store: Store, clock: FixedClock
) -> None:
    """A deferred foreign key checked at COMMIT: the transaction is undone, not left
    open, and the next one works."""
    db = store._db
    with pytest.raises(StoreError, match="FOREIGN KEY"), store.transaction():
        db.execute("PRAGMA defer_foreign_keys = ON")
        db.execute(
            "INSERT INTO provenance (memory_id, episode_id, added_at) VALUES (999, 999, ?)",
            ("2026-01-01T00:00:00+00:00",),
        )
    assert not db.conn.in_transaction
    assert db.execute("SELECT count(*) FROM provenance").fetchone()[0] == 0
    with store.transaction():
        store.audit.append(at=clock.now(), actor="test", action="add")
    assert store.audit.count() == 1


def test_migration_10_rekeys_stored_turns_so_reading_again_adds_nothing(
    tmp_path: Path, clock: FixedClock
) -> None:
    path = tmp_path / "v9.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.version(conn)
    for number, name, migrate in schema.MIGRATIONS[:9]:
        migrate(conn)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'x')", (number, name))
    conn.execute(
        "INSERT INTO episodes (turn_key, session_id, turn_id, role, text, search_text, at,"
        " created_at, user_id, chat_id, visibility) VALUES ('written-by-schema-9', 's', '7',"
        " 'user', 'I moved to Porto.', 'I moved to Porto.', ?, ?, 'alice', 'dm', 'private')",
        (clock.now().isoformat(), clock.now().isoformat()),
    )
    conn.close()
    turn = Turn("user", "I moved to Porto.", session_id="s", turn_id="7")
    alice = Scope(user="alice", chat="dm")
    store = Store.open(path, now=clock.now())
    try:
        assert store.episodes.has_turn(replace(turn, at=clock.now()), alice)
        with store.transaction():
            again = store.episodes.insert(turn, at=clock.now(), now=clock.now(), scope=alice)
        assert again is None and store.episodes.count() == 1
    finally:
        store.close()


def test_migration_13_stems_the_search_text_of_stored_rows(
    tmp_path: Path, clock: FixedClock
) -> None:
    """A store written before stemming finds its old rows by inflected words, the
    speaker and the day in words, once opened (the triggers re-index each row)."""
    path = tmp_path / "v12.db"
    conn = sqlite3.connect(path, isolation_level=None)
    schema.version(conn)
    for number, name, migrate in schema.MIGRATIONS[:12]:
        migrate(conn)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?, 'x')", (number, name))
    at = "2023-05-07T18:00:00.000000+00:00"
    conn.execute(
        "INSERT INTO episodes (turn_key, session_id, turn_id, role, speaker, text, search_text,"
        " at, created_at, visibility) VALUES ('k', 's', '1', 'user', 'Мария',"
        " 'Мы купили квартиру', 'Мы купили квартиру', ?, ?, 'private')",
        (at, at),
    )
    conn.execute(
        "INSERT INTO memories (kind, text, search_text, layer, status, created_at, observed_at,"
        " last_accessed_at, source, content_hash, visibility) VALUES ('fact',"
        " 'Caroline paints sunsets', 'Caroline paints sunsets', 'semantic', 'active', ?, ?, ?,"
        " 'manual', 'h', 'private')",
        (at, at, at),
    )
    conn.close()
    store = Store.open(path, now=clock.now())
    try:
        assert store.schema_version == schema.LATEST
        view = View()
        for words in ("квартира", "Мария", "7 May 2023"):
            query = lexical_queries(words)[0]
            assert [i for i, _ in store.index.lexical_episodes(query, view, limit=5)] == [1]
        assert store.memories.match("painting sunset") == [1]
    finally:
        store.close()
