"""Stored text rewritten in place, for `memoracle redact`: every column that holds text
a person or an agent said (or a copy of it), read page by page, and the changed values
written back in one transaction with what derives from them brought in step — search
text, content hashes, both full-text indexes rebuilt, vectors of texts no row holds any
more dropped — so that no copy of the old text is left in a row, an index or a page.

The one place the audit log is written to other than by appending: its triggers refuse
UPDATE, so a redaction lifts them for its own transaction and puts them back, word for
word, before it commits (what was changed is itself audited, by the job, without the
text). Which values change, and how, is the job's (`memoracle.jobs.scrub`); this module
only reads and writes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from memoracle.errors import StoreError
from memoracle.store.backup import COUNTED
from memoracle.store.db import Database, from_db_time
from memoracle.store.episodes import search_text as episode_search_text
from memoracle.store.episodes import turn_key
from memoracle.store.memories import search_text as memory_search_text
from memoracle.text import content_hash
from memoracle.types import Scope, Turn

__all__ = ["PLACES", "Place", "Scrub"]

PAGE = 2000


@dataclass(frozen=True)
class Place:
    """A column of stored text: its table, the column, the key naming a row (`ref`
    prefixes it in reports: m_12, e_7, h_3), and whether it holds JSON."""

    table: str
    column: str
    key: str = "id"
    ref: str = ""
    json: bool = False

    @property
    def name(self) -> str:
        return f"{self.table}.{self.column}"


PLACES: tuple[Place, ...] = (
    Place("memories", "text", ref="m_"),
    Place("memories", "subject", ref="m_"),
    Place("memories", "predicate", ref="m_"),
    Place("memories", "object", ref="m_"),
    Place("memories", "details", ref="m_", json=True),
    Place("episodes", "text", ref="e_"),
    Place("episodes", "speaker", ref="e_"),
    Place("held", "text", ref="h_"),
    Place("archive", "record", key="memory_id", ref="m_", json=True),
    Place("slots", "value", key="rowid"),
    Place("entities", "name", ref="entity "),
    Place("entities", "key", ref="entity "),
    Place("entity_aliases", "alias", key="rowid"),
    Place("audit", "detail", ref="audit ", json=True),
    Place("runs", "error", ref="run "),
)
"""Every column of stored text, primary texts first (a memory's text, a turn's, a held
write's): the job learns from them what a secret looked like before it cleans the rest."""

PRIMARY = PLACES[:1] + PLACES[5:6] + PLACES[7:8]

_AUDIT_TRIGGERS = ("audit_no_update", "audit_no_delete")


class Scrub:
    def __init__(self, db: Database) -> None:
        self._db = db

    def values(self, place: Place) -> Iterator[tuple[int, str]]:
        """(key, value) of every row of `place` holding a value, in key order, a page
        at a time."""
        after = -(1 << 62)
        sql = (
            f"SELECT {place.key}, {place.column} FROM {place.table}"
            f" WHERE {place.key} > ? AND {place.column} IS NOT NULL"
            f" ORDER BY {place.key} LIMIT {PAGE}"
        )
        while True:
            rows = self._db.execute(sql, (after,)).fetchall()
            if not rows:
                return
            for key, value in rows:
                yield int(key), str(value)
            after = int(rows[-1][0])

    def rewrite(self, changes: Mapping[Place, Sequence[tuple[int, str]]]) -> int:
        """Write each place's new values (key, value) in one transaction, and bring in
        step what derives from them: a memory's and a turn's search text and content
        hash (and a turn key), an entity key another entity already has (made unique with `#id`), an
        alias twice on one entity (one kept), both FTS indexes (rebuilt from their
        rows, so no segment keeps an old term), the vectors of the old texts no row
        holds any more (dropped; `reindex` embeds the new ones). Returns the vectors
        dropped. Call it with no transaction open."""
        with self._db.transaction():
            old_hashes = self._hashes(changes)
            for place, rows in changes.items():
                if rows:
                    self._write(place, rows)
            self._derive(changes)
            dropped = self._drop_vectors(old_hashes)
            for fts in ("memories_fts", "episodes_fts"):
                self._db.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
        return dropped

    def _write(self, place: Place, rows: Sequence[tuple[int, str]]) -> None:
        if place.table == "audit":
            self._rewrite_audit(rows)
        elif place.table == "entities" and place.column == "key":
            for key, value in rows:
                taken = self._db.execute(
                    "SELECT 1 FROM entities WHERE key = ? AND id != ?", (value, key)
                ).fetchone()
                self._db.execute(
                    "UPDATE entities SET key = ? WHERE id = ?",
                    (f"{value}#{key}" if taken else value, key),
                )
        elif place.table == "entity_aliases":
            for key, value in rows:
                self._db.execute(
                    "UPDATE OR IGNORE entity_aliases SET alias = ? WHERE rowid = ?", (value, key)
                )
                self._db.execute(
                    "DELETE FROM entity_aliases WHERE rowid = ? AND alias != ?", (key, value)
                )
        else:
            self._db.executemany(
                f"UPDATE {place.table} SET {place.column} = ? WHERE {place.key} = ?",
                [(value, key) for key, value in rows],
            )

    def _rewrite_audit(self, rows: Sequence[tuple[int, str]]) -> None:
        """The audit log's detail column rewritten: its append-only triggers dropped,
        the rows updated and the triggers created again from their own SQL, inside the
        caller's transaction (DDL is transactional in SQLite: nothing else sees a log
        without them, and a failure puts them back with the rollback)."""
        triggers = self._db.execute(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'audit'"
            " ORDER BY name"
        ).fetchall()
        for name, _sql in triggers:
            self._db.execute(f'DROP TRIGGER "{name}"')
        self._db.executemany(
            "UPDATE audit SET detail = ? WHERE id = ?", [(value, key) for key, value in rows]
        )
        for _name, sql in triggers:
            self._db.execute(sql)
        names = {
            str(r[0])
            for r in self._db.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'audit'"
            )
        }
        missing = [t for t in _AUDIT_TRIGGERS if t not in names]
        if missing:  # never commit an audit log that can be rewritten
            raise StoreError(f"the audit log lost its triggers {missing}; nothing was changed.")

    def _hashes(self, changes: Mapping[Place, Sequence[tuple[int, str]]]) -> set[str]:
        """The content hashes of the memories and turns whose text is about to change."""
        found: set[str] = set()
        for place, rows in changes.items():
            if place.column != "text" or place.table not in ("memories", "episodes"):
                continue
            for key, _value in rows:
                row = self._db.execute(
                    f"SELECT content_hash FROM {place.table} WHERE id = ?", (key,)
                ).fetchone()
                if row is not None and row[0]:
                    found.add(str(row[0]))
        return found

    def _derive(self, changes: Mapping[Place, Sequence[tuple[int, str]]]) -> None:
        memories = {k for p, rows in changes.items() if p.table == "memories" for k, _ in rows}
        episodes = {k for p, rows in changes.items() if p.table == "episodes" for k, _ in rows}
        for memory_id in sorted(memories):
            text, subject, obj = self._db.execute(
                "SELECT text, subject, object FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
            self._db.execute(
                "UPDATE memories SET search_text = ?, content_hash = ? WHERE id = ?",
                (memory_search_text(text, subject, obj), content_hash(text), memory_id),
            )
        for episode_id in sorted(episodes):
            self._derive_episode(episode_id)

    def _derive_episode(self, episode_id: int) -> None:
        """A rewritten turn's search text, content hash and turn key: the key of a turn
        without an id is a hash over its text, and a hash of a short secret in a known
        sentence can be guessed back, so the key becomes the one today's capture gives
        the redacted turn (`#id` after it if another turn already has that one)."""
        row = self._db.execute(
            "SELECT text, speaker, at, session_id, turn_id, role, agent_id, user_id, chat_id,"
            " visibility FROM episodes WHERE id = ?",
            (episode_id,),
        ).fetchone()
        text, speaker, at, session, turn_id, role, agent, user, chat, visibility = row
        try:
            when = from_db_time(at) if at else None
        except ValueError:
            when = None
        self._db.execute(
            "UPDATE episodes SET search_text = ?, content_hash = ? WHERE id = ?",
            (episode_search_text(text, speaker, when), content_hash(text), episode_id),
        )
        if when is None or turn_id:
            return  # a key by turn id holds no text
        turn = Turn(role, text, when, session, turn_id, speaker=speaker)
        key = turn_key(turn, Scope(agent, user, chat, visibility))
        taken = self._db.execute(
            "SELECT 1 FROM episodes WHERE turn_key = ? AND id != ?", (key, episode_id)
        ).fetchone()
        self._db.execute(
            "UPDATE episodes SET turn_key = ? WHERE id = ?",
            (f"{key}#{episode_id}" if taken else key, episode_id),
        )

    def _drop_vectors(self, hashes: set[str]) -> int:
        dropped = 0
        for digest in sorted(hashes):
            used = self._db.execute(
                "SELECT 1 FROM memories WHERE content_hash = ?"
                " UNION ALL SELECT 1 FROM episodes WHERE content_hash = ? LIMIT 1",
                (digest, digest),
            ).fetchone()
            if used is None:
                cursor = self._db.execute("DELETE FROM vectors WHERE content_hash = ?", (digest,))
                dropped += max(cursor.rowcount, 0)
        return dropped

    def counts(self) -> dict[str, int]:
        """The row counts a backup is verified by (`backup.COUNTED`): a redaction
        changes none of them but the audit log's."""
        return {
            t: int(self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED
        }

    def secure_delete(self) -> None:
        """Deleted content is overwritten with zeros from now on, on this connection
        (`PRAGMA secure_delete`), so the pages a rewrite frees hold no old text even
        before VACUUM gives them back."""
        self._db.execute("PRAGMA secure_delete = ON")
