"""Numbered migrations, applied on open, each in one transaction with its record.

A migration is a function `mNNN_name(conn)`. `apply()` runs those whose number is above
the recorded schema version, in order, and records each. A database written by a newer
memoracle (version above the last known migration) is refused, not touched.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime

from memoracle.errors import StoreError
from memoracle.store.db import from_db_time
from memoracle.store.episodes import search_text as episode_search_text
from memoracle.store.episodes import turn_key
from memoracle.store.memories import search_text as memory_search_text
from memoracle.text import content_hash
from memoracle.types import KINDS, LAYERS, SOURCES, STATUSES, VISIBILITIES, Scope, Turn


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run statements one by one: executescript() would COMMIT the open transaction."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            conn.execute(pending)
            pending = ""
    if pending.strip():
        raise StoreError(f"incomplete statement in migration: {pending.strip()[:80]}")


# Longer than 100 lines on purpose: a migration, whose schema must never change once shipped.
def m001_initial(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        f"""
        CREATE TABLE episodes (
            id          INTEGER PRIMARY KEY,
            turn_key    TEXT NOT NULL UNIQUE,
            session_id  TEXT,
            turn_id     TEXT,
            role        TEXT NOT NULL,
            speaker     TEXT,
            kind        TEXT NOT NULL DEFAULT 'message',
            text        TEXT NOT NULL,
            search_text TEXT NOT NULL,
            at          TEXT NOT NULL,
            created_at  TEXT NOT NULL,
            origin      TEXT,
            agent_id    TEXT,
            user_id     TEXT,
            chat_id     TEXT,
            visibility  TEXT NOT NULL DEFAULT 'private' CHECK (visibility IN {_in(VISIBILITIES)})
        );
        CREATE INDEX episodes_session ON episodes (session_id, turn_id);
        CREATE INDEX episodes_at ON episodes (at);

        CREATE TABLE memories (
            id               INTEGER PRIMARY KEY,
            kind             TEXT NOT NULL CHECK (kind IN {_in(KINDS)}),
            text             TEXT NOT NULL,
            search_text      TEXT NOT NULL,
            subject          TEXT,
            predicate        TEXT,
            object           TEXT,
            layer            TEXT NOT NULL CHECK (layer IN {_in(LAYERS)}),
            status           TEXT NOT NULL DEFAULT 'active' CHECK (status IN {_in(STATUSES)}),
            created_at       TEXT NOT NULL,
            observed_at      TEXT NOT NULL,
            valid_from       TEXT,
            valid_to         TEXT,
            due_at           TEXT,
            last_accessed_at TEXT NOT NULL,
            expires_at       TEXT,
            status_changed_at TEXT,
            activation       REAL NOT NULL DEFAULT 1.0 CHECK (activation BETWEEN 0 AND 1),
            importance       REAL NOT NULL DEFAULT 0.5,
            access_count     INTEGER NOT NULL DEFAULT 0,
            confidence       REAL NOT NULL DEFAULT 0.8,
            pinned           INTEGER NOT NULL DEFAULT 0,
            source           TEXT NOT NULL CHECK (source IN {_in(SOURCES)}),
            lang             TEXT,
            rule             TEXT,
            details          TEXT,
            agent_id         TEXT,
            user_id          TEXT,
            chat_id          TEXT,
            visibility       TEXT NOT NULL DEFAULT 'private'
                             CHECK (visibility IN {_in(VISIBILITIES)}),
            content_hash     TEXT NOT NULL,
            superseded_by    INTEGER REFERENCES memories (id)
        );
        CREATE INDEX memories_hash ON memories (content_hash);
        CREATE INDEX memories_status_kind ON memories (status, kind);
        CREATE INDEX memories_observed ON memories (observed_at);

        CREATE TABLE provenance (
            memory_id  INTEGER NOT NULL REFERENCES memories (id),
            episode_id INTEGER REFERENCES episodes (id),
            origin     TEXT,
            added_at   TEXT NOT NULL
        );
        CREATE UNIQUE INDEX provenance_unique
            ON provenance (memory_id, coalesce(episode_id, -1), coalesce(origin, ''));
        CREATE INDEX provenance_episode ON provenance (episode_id);

        CREATE TABLE audit (
            id        INTEGER PRIMARY KEY,
            at        TEXT NOT NULL,
            actor     TEXT NOT NULL,
            action    TEXT NOT NULL,
            memory_id INTEGER,
            detail    TEXT
        );
        CREATE INDEX audit_memory ON audit (memory_id);
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
            BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;

        CREATE TABLE runs (
            id          INTEGER PRIMARY KEY,
            kind        TEXT NOT NULL,
            started_at  TEXT NOT NULL,
            finished_at TEXT,
            status      TEXT NOT NULL DEFAULT 'running',
            counts      TEXT,
            error       TEXT
        );

        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            search_text, content = 'memories', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, search_text) VALUES (new.id, new.search_text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, search_text)
                VALUES ('delete', old.id, old.search_text);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF search_text ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, search_text)
                VALUES ('delete', old.id, old.search_text);
            INSERT INTO memories_fts (rowid, search_text) VALUES (new.id, new.search_text);
        END;

        CREATE VIRTUAL TABLE episodes_fts USING fts5 (
            search_text, content = 'episodes', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
            INSERT INTO episodes_fts (rowid, search_text) VALUES (new.id, new.search_text);
        END;
        CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
            INSERT INTO episodes_fts (episodes_fts, rowid, search_text)
                VALUES ('delete', old.id, old.search_text);
        END;
        CREATE TRIGGER episodes_fts_update AFTER UPDATE OF search_text ON episodes BEGIN
            INSERT INTO episodes_fts (episodes_fts, rowid, search_text)
                VALUES ('delete', old.id, old.search_text);
            INSERT INTO episodes_fts (rowid, search_text) VALUES (new.id, new.search_text);
        END;
        """,
    )


def m002_vectors(conn: sqlite3.Connection) -> None:
    """Embedding vectors keyed by (content hash, model): unchanged text is never embedded
    twice, and a model change leaves the old vectors in place until reindexed."""
    _run_script(
        conn,
        """
        CREATE TABLE vectors (
            content_hash TEXT NOT NULL,
            model_id     TEXT NOT NULL,
            dim          INTEGER NOT NULL,
            vector       BLOB NOT NULL,
            created_at   TEXT NOT NULL,
            PRIMARY KEY (content_hash, model_id)
        ) WITHOUT ROWID;
        ALTER TABLE episodes ADD COLUMN content_hash TEXT;
        CREATE INDEX episodes_hash ON episodes (content_hash);
        """,
    )
    rows = conn.execute("SELECT id, text FROM episodes").fetchall()
    conn.executemany(
        "UPDATE episodes SET content_hash = ? WHERE id = ?",
        [(content_hash(text), episode_id) for episode_id, text in rows],
    )


# Why a memory went to the cold tier. Frozen here: a CHECK cannot be altered, so a new
# reason needs a new migration (archive.py imports this tuple, not a copy of it).
ARCHIVE_REASONS: tuple[str, ...] = (
    "below_threshold",
    "over_max_facts",
    "superseded_retention",
    "expired",
    "manual",
)


def m003_archive(conn: sqlite3.Connection) -> None:
    """The cold tier. An archived memory keeps its `memories` row (its id, provenance and
    the `superseded_by` links pointing at it stay valid) with status 'archived'; the
    `archive` row says when and why, the status to give back on restore, and a JSON
    snapshot of the row and its provenance.

    Full-text search now indexes the view `memories_searchable` (every memory not
    archived) instead of `memories`, and the triggers follow status changes, so an
    archived memory leaves the index and a restored one comes back, and an FTS5
    'rebuild' cannot bring archived rows back."""
    unarchived = tuple(s for s in STATUSES if s != "archived")
    _run_script(
        conn,
        f"""
        CREATE TABLE archive (
            memory_id         INTEGER PRIMARY KEY REFERENCES memories (id),
            archived_at       TEXT NOT NULL,
            reason            TEXT NOT NULL CHECK (reason IN {_in(ARCHIVE_REASONS)}),
            score             REAL,
            prior_status      TEXT NOT NULL CHECK (prior_status IN {_in(unarchived)}),
            prior_changed_at  TEXT,
            record            TEXT NOT NULL
        );
        CREATE INDEX archive_at ON archive (archived_at);

        DROP TRIGGER memories_fts_insert;
        DROP TRIGGER memories_fts_delete;
        DROP TRIGGER memories_fts_update;
        DROP TABLE memories_fts;

        CREATE VIEW memories_searchable AS
            SELECT id, search_text FROM memories WHERE status != 'archived';
        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            search_text, content = 'memories_searchable', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        );
        INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');

        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
        WHEN new.status != 'archived' BEGIN
            INSERT INTO memories_fts (rowid, search_text) VALUES (new.id, new.search_text);
        END;
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
        WHEN old.status != 'archived' BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, search_text)
                VALUES ('delete', old.id, old.search_text);
        END;
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF search_text, status ON memories
        WHEN old.search_text IS NOT new.search_text
            OR (old.status = 'archived') != (new.status = 'archived') BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, search_text)
                SELECT 'delete', old.id, old.search_text WHERE old.status != 'archived';
            INSERT INTO memories_fts (rowid, search_text)
                SELECT new.id, new.search_text WHERE new.status != 'archived';
        END;
        """,
    )


Migration = Callable[[sqlite3.Connection], None]


def m004_vector_keys(conn: sqlite3.Connection) -> None:
    """A compact index of which texts have a vector for which model: "is this text
    embedded?" is asked of every row a search checks, and the table itself holds the
    2 KB BLOBs, so each lookup would read BLOB pages (44 s over 140k rows, cold)."""
    _run_script(conn, "CREATE INDEX vectors_model_hash ON vectors (model_id, content_hash);")


def m005_slots(conn: sqlite3.Connection) -> None:
    """The subject/attribute slot a memory fills ("user" / "lives_in" = "lyon"), so a new
    memory finds the ones it may contradict with one index lookup."""
    _run_script(
        conn,
        """
        CREATE TABLE slots (
            memory_id INTEGER PRIMARY KEY REFERENCES memories (id),
            subject   TEXT NOT NULL,
            attribute TEXT NOT NULL,
            value     TEXT NOT NULL,
            hedged    INTEGER NOT NULL DEFAULT 0,
            negated   INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX slots_key ON slots (subject, attribute);
        """,
    )


def m006_slots_per_statement(conn: sqlite3.Connection) -> None:
    """A memory fills every slot it states ("We upgraded to PostgreSQL 17": what is used,
    and its version), and each slot row says whether its memory is live, kept so by a
    trigger on any status change: a slot that saw thousands of values (each superseding
    the last) is then looked up through its live rows, not every memory it ever had."""
    _run_script(
        conn,
        """
        CREATE TABLE slots_new (
            memory_id INTEGER NOT NULL REFERENCES memories (id),
            subject   TEXT NOT NULL,
            attribute TEXT NOT NULL,
            value     TEXT NOT NULL,
            hedged    INTEGER NOT NULL DEFAULT 0,
            negated   INTEGER NOT NULL DEFAULT 0,
            live      INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (memory_id, subject, attribute)
        );
        INSERT INTO slots_new (memory_id, subject, attribute, value, hedged, negated, live)
            SELECT s.memory_id, s.subject, s.attribute, s.value, s.hedged, s.negated,
                   m.status IN ('active', 'disputed')
            FROM slots s JOIN memories m ON m.id = s.memory_id;
        DROP TABLE slots;
        ALTER TABLE slots_new RENAME TO slots;
        CREATE INDEX slots_live ON slots (subject, attribute, live);
        CREATE TRIGGER slots_live_status AFTER UPDATE OF status ON memories BEGIN
            UPDATE slots SET live = NEW.status IN ('active', 'disputed')
            WHERE memory_id = NEW.id;
        END;
        """,
    )


def m007_graph(conn: sqlite3.Connection) -> None:
    """The knowledge graph: entities (a canonical key, a name, a type), the names each
    was seen under, relations between them, and the memories stating each; `graph_read`
    marks memories whose text was read for it."""
    _run_script(
        conn,
        """
        CREATE TABLE entities (
            id         INTEGER PRIMARY KEY,
            key        TEXT NOT NULL UNIQUE,
            name       TEXT NOT NULL,
            type       TEXT NOT NULL,
            first_seen TEXT NOT NULL
        );
        CREATE INDEX entities_type ON entities (type);
        CREATE TABLE entity_aliases (
            entity_id INTEGER NOT NULL REFERENCES entities (id),
            alias     TEXT NOT NULL,
            PRIMARY KEY (entity_id, alias)
        );
        CREATE TABLE entity_memories (
            entity_id INTEGER NOT NULL REFERENCES entities (id),
            memory_id INTEGER NOT NULL REFERENCES memories (id),
            PRIMARY KEY (entity_id, memory_id)
        );
        CREATE INDEX entity_memories_memory ON entity_memories (memory_id);
        CREATE TABLE relations (
            id         INTEGER PRIMARY KEY,
            source_id  INTEGER NOT NULL REFERENCES entities (id),
            relation   TEXT NOT NULL,
            target_id  INTEGER NOT NULL REFERENCES entities (id),
            first_seen TEXT NOT NULL,
            UNIQUE (source_id, relation, target_id)
        );
        CREATE INDEX relations_target ON relations (target_id);
        CREATE TABLE relation_memories (
            relation_id INTEGER NOT NULL REFERENCES relations (id),
            memory_id   INTEGER NOT NULL REFERENCES memories (id),
            PRIMARY KEY (relation_id, memory_id)
        );
        CREATE TABLE graph_read (memory_id INTEGER PRIMARY KEY REFERENCES memories (id));
        """,
    )


def m008_held(conn: sqlite3.Connection) -> None:
    """Writes held back by the write audit (they look like prompt injection): the text
    as it came, where from, why, and a person's decision. A held captured turn keeps
    its episode, which search leaves out until it is confirmed."""
    _run_script(
        conn,
        f"""
        CREATE TABLE held (
            id          INTEGER PRIMARY KEY,
            held_at     TEXT NOT NULL,
            actor       TEXT NOT NULL,
            level       TEXT NOT NULL CHECK (level IN ('suspicious', 'dangerous')),
            reasons     TEXT NOT NULL,
            text        TEXT NOT NULL,
            kind        TEXT,
            source      TEXT NOT NULL,
            observed_at TEXT NOT NULL,
            agent_id    TEXT,
            user_id     TEXT,
            chat_id     TEXT,
            visibility  TEXT NOT NULL CHECK (visibility IN {_in(VISIBILITIES)}),
            episode_id  INTEGER REFERENCES episodes (id),
            origin      TEXT,
            decision    TEXT CHECK (decision IN ('confirm', 'reject')),
            decided_at  TEXT,
            decided_by  TEXT
        );
        CREATE INDEX held_at ON held (held_at);
        CREATE INDEX held_episode ON held (episode_id) WHERE episode_id IS NOT NULL;
        """,
    )


def m009_child_key_indexes(conn: sqlite3.Connection) -> None:
    """Index the two foreign keys whose child column had none: `memories.superseded_by`
    and `relation_memories.memory_id`. While a transaction holds a deferred foreign-key
    violation (an import meets a memory superseded by a newer one, whose line comes
    later), SQLite looks for the children of every memory inserted after it, and
    without an index each look is a scan of the table: an import of 33k memories took
    190 s, 8.5 s with the indexes."""
    _run_script(
        conn,
        """
        CREATE INDEX memories_superseded_by ON memories (superseded_by)
            WHERE superseded_by IS NOT NULL;
        CREATE INDEX relation_memories_memory ON relation_memories (memory_id);
        """,
    )


def m010_turn_keys(conn: sqlite3.Connection) -> None:
    """Turn keys name whose a turn is: the key (`episodes.turn_key`) now includes the
    turn's user and chat, and its time in UTC. Every stored turn gets the key it would
    get today, so reading the same file again still adds nothing; a turn whose new key
    another already took (only possible for turns told apart by a time zone change),
    or whose stored time cannot be read, keeps its old one."""
    rows = conn.execute(
        "SELECT id, agent_id, user_id, chat_id, visibility, session_id, role, speaker,"
        " turn_id, at, text FROM episodes"
    ).fetchall()
    for row in rows:
        id_, agent, user, chat, visibility, session, role, speaker, turn_id, at, text = row
        try:
            when = from_db_time(at)
        except (TypeError, ValueError):  # a time no version wrote: the old key stays
            continue
        key = turn_key(
            Turn(
                role=role,
                text=text,
                at=when,
                session_id=session,
                turn_id=turn_id,
                speaker=speaker,
            ),
            Scope(agent, user, chat, visibility),
        )
        conn.execute("UPDATE OR IGNORE episodes SET turn_key = ? WHERE id = ?", (key, id_))


def m011_expiry(conn: sqlite3.Connection) -> None:
    """Time to live. `memories.expires_at` has been there since m001, but nothing set it;
    now `remember --ttl/--until` does. A partial index over the memories that have one
    lets the nightly find the expired without reading every live memory; and a held
    write keeps its requested expiry, so confirming it stores what was asked."""
    _run_script(
        conn,
        """
        CREATE INDEX memories_expires ON memories (expires_at) WHERE expires_at IS NOT NULL;
        ALTER TABLE held ADD COLUMN expires_at TEXT;
        """,
    )


def m012_slot_values(conn: sqlite3.Connection) -> None:
    """Slots by value: a multi-valued slot ("prefers:other") gathers a value per memory,
    and a new memory compares itself only with those that begin like its own value
    (`Memories.in_slot`), a range of this index instead of a scan of the slot; those
    with a comma (matched by their parts) through a partial index of their own."""
    _run_script(
        conn,
        """
        CREATE INDEX slots_value ON slots (subject, attribute, live, value);
        CREATE INDEX slots_comma ON slots (subject, attribute, live) WHERE instr(value, ',') > 0;
        """,
    )


def _time_or_none(at: object) -> datetime | None:
    """A stored time, or None when the row holds none that parses (its text is still
    indexed, without the day in words)."""
    try:
        return from_db_time(str(at)) if at else None
    except ValueError:
        return None


def m013_stemmed_search_text(conn: sqlite3.Connection) -> None:
    """Stemmed search text. `search_text` (what FTS5 indexes) becomes the stemmed words
    (`text.search_form`: Snowball, Russian and English), an episode's with its speaker
    and its day in words; queries ask for stems. The FTS triggers re-index each row
    whose text changed (an archived memory stays out of the index)."""
    rows = conn.execute("SELECT id, text, subject, object FROM memories").fetchall()
    conn.executemany(
        "UPDATE memories SET search_text = ? WHERE id = ?",
        ((memory_search_text(text, subject, obj), id_) for id_, text, subject, obj in rows),
    )
    rows = conn.execute("SELECT id, text, speaker, at FROM episodes").fetchall()
    conn.executemany(
        "UPDATE episodes SET search_text = ? WHERE id = ?",
        (
            (episode_search_text(text, speaker, _time_or_none(at)), id_)
            for id_, text, speaker, at in rows
        ),
    )


def m014_memories_subject(conn: sqlite3.Connection) -> None:
    """Memories by subject: a new memory is compared by meaning with the newest live
    memories of its subject and kind (`Memories.of_subject`), a range of this index."""
    _run_script(conn, "CREATE INDEX memories_subject ON memories (subject, kind, id);")


MIGRATIONS: tuple[tuple[int, str, Migration], ...] = (
    (1, "initial", m001_initial),
    (2, "vectors", m002_vectors),
    (3, "archive", m003_archive),
    (4, "vector keys", m004_vector_keys),
    (5, "slots", m005_slots),
    (6, "slots per statement", m006_slots_per_statement),
    (7, "graph", m007_graph),
    (8, "held writes", m008_held),
    (9, "child key indexes", m009_child_key_indexes),
    (10, "turn keys", m010_turn_keys),
    (11, "expiry", m011_expiry),
    (12, "slot values", m012_slot_values),
    (13, "stemmed search text", m013_stemmed_search_text),
    (14, "memories by subject", m014_memories_subject),
)
LATEST = MIGRATIONS[-1][0]


def version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def check(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of a database opened read-only, which cannot be migrated:
    one at LATEST is read as it is, any other is refused untouched."""
    known = "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'"
    current = 0
    if conn.execute(known).fetchone() is not None:
        row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        current = int(row[0] or 0)
    if current != LATEST:
        raise StoreError(
            f"{path} has schema version {current} and this memoracle reads version {LATEST};"
            " the workspace is read-only, so it cannot be migrated here. Run memoracle"
            " where the workspace is writable; the database was not touched."
        )
    return current


def apply(conn: sqlite3.Connection, path: str, now: str) -> int:
    """Bring the schema up to LATEST; return the version it is now at."""
    current = version(conn)
    if current > LATEST:
        raise StoreError(
            f"{path} has schema version {current}, newer than this memoracle knows "
            f"({LATEST}). Upgrade memoracle; the database was not touched."
        )
    for number, name, migrate in MIGRATIONS:
        if number <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if version(conn) >= number:  # another process migrated while we waited
                conn.execute("ROLLBACK")
                continue
            migrate(conn)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (number, name, now),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return version(conn)
