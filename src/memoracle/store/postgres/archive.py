"""The cold tier in PostgreSQL: `store.archive.Archive`'s methods, same signatures and the
same `ArchivedMemory` values. The snapshot a row keeps (`record`) is written as the
SQLite store writes it — every column of the memory by name, times as UTC ISO-8601
text, flags as 0/1, `details` as JSON text, and its provenance — so the dated JSONL of
either backend reads alike; `search_text` is this backend's (words unstemmed)."""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memoracle.errors import InvalidInput, NotFound
from memoracle.storage_types import ArchivedMemory
from memoracle.store import rows as row_to
from memoracle.store.archive import REASONS
from memoracle.store.db import db_time
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.logs import PgAudit
from memoracle.store.postgres.memories import PG_ROWS, PgMemories, jsonb
from memoracle.types import LIVE, Memory

_FIELDS = "memory_id, archived_at, reason, score, prior_status, record"
# The memories columns a snapshot holds, in the SQLite table's order (no `tsv`).
_RECORD = (
    "id, kind, text, search_text, subject, predicate, object, layer, status, created_at,"
    " observed_at, valid_from, valid_to, due_at, last_accessed_at, expires_at,"
    " status_changed_at, activation, importance, access_count, confidence, pinned, source,"
    " lang, rule, details, agent_id, user_id, chat_id, visibility, content_hash, superseded_by"
)


def _sqlite_value(value: Any) -> Any:
    """A column's value as the SQLite store holds it."""
    if isinstance(value, datetime):
        return db_time(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


class PgArchive:
    def __init__(self, db: PgDatabase, memories: PgMemories, audit: PgAudit) -> None:
        self._db = db
        self._memories = memories
        self._audit = audit

    def move(
        self,
        items: Iterable[tuple[int, str, float | None]],
        *,
        now: datetime,
        actor: str,
    ) -> int:
        """Archive each (memory id, reason, score); return how many were archived.
        Already archived memories are skipped; an unknown id or reason raises and
        nothing of the call is kept."""
        wanted = builtins.list(items)
        for _, reason, _ in wanted:
            if reason not in REASONS:
                raise InvalidInput(
                    f"Unknown archive reason {reason!r}; expected one of: {', '.join(REASONS)}."
                )
        ids = [i for i, _, _ in wanted]
        known = {
            int(r[0])
            for r in self._db.execute("SELECT id FROM memories WHERE id = ANY(%s)", (ids,))
        }
        for memory_id in ids:
            if memory_id not in known:
                raise NotFound(
                    f"No memory 'm_{memory_id}' to archive. Try: memoracle list --status all"
                )
        moved = 0
        with self._db.transaction():
            for memory_id, reason, score in wanted:
                moved += self._move_one(memory_id, reason, score, now=now, actor=actor)
        return moved

    def _move_one(
        self, memory_id: int, reason: str, score: float | None, *, now: datetime, actor: str
    ) -> int:
        cursor = self._db.execute(f"SELECT {_RECORD} FROM memories WHERE id = %s", (memory_id,))
        row = cursor.fetchone()
        assert row is not None and cursor.description is not None
        raw = dict(zip([d.name for d in cursor.description], row, strict=True))
        status = str(raw["status"])
        if status == "archived":
            return 0
        record = {name: _sqlite_value(value) for name, value in raw.items()}
        record["provenance"] = [
            {"episode_id": episode_id, "origin": origin, "added_at": db_time(added_at)}
            for episode_id, origin, added_at in self._db.execute(
                "SELECT episode_id, origin, added_at FROM provenance WHERE memory_id = %s"
                " ORDER BY id",
                (memory_id,),
            )
        ]
        changed = raw["status_changed_at"]
        self._db.execute(
            "INSERT INTO archive (memory_id, archived_at, reason, score, prior_status,"
            " prior_changed_at, record) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (memory_id, now, reason, score, status, changed, jsonb(record)),
        )
        # A live memory stops being live now; a superseded or forgotten one stopped
        # earlier and keeps that time (View.as_of reads it).
        self._db.execute(
            "UPDATE memories SET status = 'archived', status_changed_at = %s WHERE id = %s",
            (now if status in LIVE else changed, memory_id),
        )
        detail: dict[str, Any] = {"reason": reason, "from": status}
        if score is not None:
            detail["score"] = score
        self._audit.append(
            at=now, actor=actor, action="archive", memory_id=memory_id, detail=detail
        )
        return 1

    def restore(self, memory_id: int, *, now: datetime, actor: str) -> Memory:
        """Bring an archived memory back exactly as it was: its prior status and status
        time, and its place in search."""
        with self._db.transaction():
            row = self._db.execute(
                "SELECT m.status, a.prior_status, a.prior_changed_at, a.archived_at, a.reason"
                " FROM memories m LEFT JOIN archive a ON a.memory_id = m.id WHERE m.id = %s",
                (memory_id,),
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"No memory 'm_{memory_id}' to restore. Try: memoracle list --status archived"
                )
            status, prior_status, prior_changed_at, archived_at, reason = row
            if status != "archived" or prior_status is None:
                raise InvalidInput(
                    f"Memory 'm_{memory_id}' is {status}, not archived: nothing to restore."
                )
            self._db.execute(
                "UPDATE memories SET status = %s, status_changed_at = %s WHERE id = %s",
                (prior_status, prior_changed_at, memory_id),
            )
            self._db.execute("DELETE FROM archive WHERE memory_id = %s", (memory_id,))
            self._audit.append(
                at=now,
                actor=actor,
                action="restore",
                memory_id=memory_id,
                detail={"to": prior_status, "archived_at": db_time(archived_at), "reason": reason},
            )
            memory = self._memories.get(memory_id)
        if memory is None:
            raise NotFound(f"No memory 'm_{memory_id}'.")
        return memory

    def get(self, memory_id: int) -> ArchivedMemory | None:
        row = self._db.execute(
            f"SELECT {_FIELDS} FROM archive WHERE memory_id = %s", (memory_id,)
        ).fetchone()
        return None if row is None else row_to.archived(PG_ROWS, row)

    def count(self) -> int:
        row = self._db.execute("SELECT count(*) FROM archive").fetchone()
        return int(row[0]) if row else 0

    def in_order(
        self, *, after: ArchivedMemory | None = None, limit: int = 1000
    ) -> builtins.list[ArchivedMemory]:
        """Archived memories in the order they were archived (then by id), starting just
        after `after`, a page at a time."""
        where, params = "", ()
        if after is not None:
            where = "WHERE (archived_at, memory_id) > (%s, %s)"
            params = (after.archived_at, after.memory_id)  # type: ignore[assignment]
        rows = self._db.execute(
            f"SELECT {_FIELDS} FROM archive {where} ORDER BY archived_at, memory_id LIMIT %s",
            (*params, limit),
        ).fetchall()
        return [row_to.archived(PG_ROWS, r) for r in rows]

    def position(self, memory_id: int) -> int | None:
        """How many archived memories come up to and including `memory_id` in the order
        of `in_order`; None when it is not archived."""
        row = self._db.execute(
            "SELECT count(*) FROM archive a, archive m WHERE m.memory_id = %s"
            " AND (a.archived_at, a.memory_id) <= (m.archived_at, m.memory_id)",
            (memory_id,),
        ).fetchone()
        return (int(row[0]) or None) if row else None

    def records_since(self, when: datetime) -> builtins.list[ArchivedMemory]:
        """Memories archived at or after `when`, oldest first."""
        rows = self._db.execute(
            f"SELECT {_FIELDS} FROM archive WHERE archived_at >= %s"
            " ORDER BY archived_at, memory_id",
            (when,),
        ).fetchall()
        return [row_to.archived(PG_ROWS, r) for r in rows]
