"""Stored text rewritten in place on PostgreSQL, for `memoracle redact`: the same places
(`store.scrub.PLACES`) and the same semantics as the SQLite store's `Scrub` — the changed
values written back in one transaction with what derives from them brought in step
(search text, whose `tsv` column and GIN index follow; content hashes; a turn's key; an
entity key or alias made unique; the vectors of texts no row holds any more dropped).

What PostgreSQL adds: an UPDATE leaves the old row version in the table (and its old
index entries) until VACUUM removes it, so `secure_delete`, called again after the
rewrite commits, rewrites each table the rewrite changed with VACUUM FULL — a new copy
of the table and its indexes holding only the live rows, the old files removed. What
no store command reaches is said in docs/fleet.md (the WAL, its archives, replicas,
base backups).

A row of `slots` or `entity_aliases` is named by its `seq` (SQLite's rowid). The audit
log's append-only trigger is disabled for the rewrite's own transaction only (DDL is
transactional here too) and checked enabled again before it commits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from psycopg import sql

from memoracle.errors import StoreError
from memoracle.store.backup import COUNTED
from memoracle.store.episodes import turn_key
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.episodes import search_text as episode_search_text
from memoracle.store.postgres.memories import search_text as memory_search_text
from memoracle.store.scrub import PAGE, Place
from memoracle.text import content_hash
from memoracle.types import Scope, Turn

__all__ = ["PgScrub"]

_AUDIT_TRIGGER = "audit_no_update"  # refuses UPDATE and DELETE (TRUNCATE: another)


def _key(place: Place) -> str:
    """The column naming a row: SQLite's rowid is `seq` here."""
    return "seq" if place.key == "rowid" else place.key


class PgScrub:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._rewritten: set[str] = set()  # tables whose old row versions VACUUM removes

    def values(self, place: Place) -> Iterator[tuple[int, str]]:
        """(key, value) of every row of `place` holding a value, in key order, a page
        at a time (a JSON column as its text)."""
        key, column = sql.Identifier(_key(place)), sql.Identifier(place.column)
        value = sql.SQL("{}::text").format(column) if place.json else column
        query = sql.SQL(
            "SELECT {k}, {v} FROM {t} WHERE {k} > %s AND {c} IS NOT NULL ORDER BY {k} LIMIT {n}"
        ).format(k=key, v=value, t=sql.Identifier(place.table), c=column, n=sql.Literal(PAGE))
        after = -(1 << 62)
        while True:
            rows = self._db.execute(query, (after,)).fetchall()
            if not rows:
                return
            for k, v in rows:
                yield int(k), str(v)
            after = int(rows[-1][0])

    def rewrite(self, changes: Mapping[Place, Sequence[tuple[int, str]]]) -> int:
        """Write each place's new values (key, value) in one transaction and bring in
        step what derives from them (see the module's docstring). Returns the vectors
        dropped. Then call `secure_delete`, outside any transaction."""
        with self._db.transaction():
            old_hashes = self._hashes(changes)
            for place, rows in changes.items():
                if rows:
                    self._write(place, rows)
                    self._rewritten.add(place.table)
            self._derive(changes)
            dropped = self._drop_vectors(old_hashes)
        if dropped:
            self._rewritten.add("vectors")
        return dropped

    def _write(self, place: Place, rows: Sequence[tuple[int, str]]) -> None:
        if place.table == "audit":
            self._rewrite_audit(rows)
        elif place.table == "entities" and place.column == "key":
            for key, value in rows:
                taken = self._db.execute(
                    "SELECT 1 FROM entities WHERE key = %s AND id != %s", (value, key)
                ).fetchone()
                self._db.execute(
                    "UPDATE entities SET key = %s WHERE id = %s",
                    (f"{value}#{key}" if taken else value, key),
                )
        elif place.table == "entity_aliases":
            for key, value in rows:  # an alias the entity has already: this one goes
                self._db.execute(
                    "UPDATE entity_aliases a SET alias = %s WHERE seq = %s AND NOT EXISTS"
                    " (SELECT 1 FROM entity_aliases o WHERE o.entity_id = a.entity_id"
                    " AND o.alias = %s)",
                    (value, key, value),
                )
                self._db.execute(
                    "DELETE FROM entity_aliases WHERE seq = %s AND alias != %s", (key, value)
                )
        else:
            cast = sql.SQL("::jsonb" if place.json else "")
            self._db.executemany(
                sql.SQL("UPDATE {t} SET {c} = %s{cast} WHERE {k} = %s")
                .format(
                    t=sql.Identifier(place.table),
                    c=sql.Identifier(place.column),
                    cast=cast,
                    k=sql.Identifier(_key(place)),
                )
                .as_string(self._db.conn),
                [(value, key) for key, value in rows],
            )

    def _rewrite_audit(self, rows: Sequence[tuple[int, str]]) -> None:
        """The audit log's detail rewritten with its append-only trigger disabled for
        this transaction only: a failure rolls the ALTER back with the rest, and the
        transaction does not commit unless the trigger is enabled again."""
        self._db.execute(f"ALTER TABLE audit DISABLE TRIGGER {_AUDIT_TRIGGER}")
        self._db.executemany(
            "UPDATE audit SET detail = %s::jsonb WHERE id = %s",
            [(value, key) for key, value in rows],
        )
        self._db.execute(f"ALTER TABLE audit ENABLE TRIGGER {_AUDIT_TRIGGER}")
        row = self._db.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'audit'::regclass"
            " AND tgname IN ('audit_no_update', 'audit_no_truncate') AND tgenabled = 'O'"
        ).fetchone()
        if row is None or int(row[0]) != 2:  # never commit a log that can be rewritten
            raise StoreError("the audit log lost its triggers; nothing was changed.")

    def _hashes(self, changes: Mapping[Place, Sequence[tuple[int, str]]]) -> set[str]:
        """The content hashes of the memories and turns whose text is about to change."""
        found: set[str] = set()
        for place, rows in changes.items():
            if place.column != "text" or place.table not in ("memories", "episodes") or not rows:
                continue
            query = sql.SQL("SELECT content_hash FROM {} WHERE id = ANY(%s)").format(
                sql.Identifier(place.table)
            )
            for (digest,) in self._db.execute(query, ([k for k, _ in rows],)).fetchall():
                if digest:
                    found.add(str(digest))
        return found

    def _derive(self, changes: Mapping[Place, Sequence[tuple[int, str]]]) -> None:
        memories = {k for p, rows in changes.items() if p.table == "memories" for k, _ in rows}
        episodes = {k for p, rows in changes.items() if p.table == "episodes" for k, _ in rows}
        for memory_id in sorted(memories):
            text, subject, obj = self._db.execute(
                "SELECT text, subject, object FROM memories WHERE id = %s", (memory_id,)
            ).fetchone() or ("", None, None)
            self._db.execute(
                "UPDATE memories SET search_text = %s, content_hash = %s WHERE id = %s",
                (memory_search_text(text, subject, obj), content_hash(text), memory_id),
            )
        for episode_id in sorted(episodes):
            self._derive_episode(episode_id)

    def _derive_episode(self, episode_id: int) -> None:
        """A rewritten turn's search text, content hash and turn key: a key without a
        turn id is a hash over the text (a short secret in a known sentence can be
        guessed back from it), so it becomes the key today's capture gives the redacted
        turn (`#id` after it if another turn has that one already)."""
        row = self._db.execute(
            "SELECT text, speaker, at, session_id, turn_id, role, agent_id, user_id, chat_id,"
            " visibility FROM episodes WHERE id = %s",
            (episode_id,),
        ).fetchone()
        if row is None:
            return
        text, speaker, at, session, turn_id, role, agent, user, chat, visibility = row
        self._db.execute(
            "UPDATE episodes SET search_text = %s, content_hash = %s WHERE id = %s",
            (episode_search_text(text, speaker, at), content_hash(text), episode_id),
        )
        if turn_id:
            return  # a key by turn id holds no text
        turn = Turn(role, text, at, session, turn_id, speaker=speaker)
        key = turn_key(turn, Scope(agent, user, chat, visibility))
        taken = self._db.execute(
            "SELECT 1 FROM episodes WHERE turn_key = %s AND id != %s", (key, episode_id)
        ).fetchone()
        self._db.execute(
            "UPDATE episodes SET turn_key = %s WHERE id = %s",
            (f"{key}#{episode_id}" if taken else key, episode_id),
        )

    def _drop_vectors(self, hashes: set[str]) -> int:
        dropped = 0
        for digest in sorted(hashes):
            used = self._db.execute(
                "SELECT 1 FROM memories WHERE content_hash = %s"
                " UNION ALL SELECT 1 FROM episodes WHERE content_hash = %s LIMIT 1",
                (digest, digest),
            ).fetchone()
            if used is None:
                cursor = self._db.execute("DELETE FROM vectors WHERE content_hash = %s", (digest,))
                dropped += max(cursor.rowcount, 0)
        return dropped

    def counts(self) -> dict[str, int]:
        """The row counts a backup is verified by (`backup.COUNTED`)."""
        out: dict[str, int] = {}
        for table in COUNTED:
            row = self._db.execute(
                sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table))
            ).fetchone()
            out[table] = int(row[0]) if row else 0
        return out

    def secure_delete(self) -> None:
        """The old row versions a rewrite left behind removed from the tables' files:
        VACUUM FULL of each table rewritten since the last call (nothing before a
        rewrite; the engine calls it before and after one). It takes each table's
        exclusive lock for as long as the copy takes, and cannot run inside a
        transaction: a `StoreError` says so."""
        if not self._rewritten:
            return
        if self._db.in_transaction:
            raise StoreError(
                f"{self._db.url}: VACUUM cannot run inside a transaction; call"
                " secure_delete after the rewrite commits."
            )
        for table in sorted(self._rewritten):
            self._db.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(table)))
        self._rewritten.clear()
