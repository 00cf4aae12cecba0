"""The append-only audit log: every change, with who did it and why.

Triggers in the schema refuse UPDATE and DELETE on this table, so history cannot be
rewritten through any door.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import AuditEntry
from memoracle.store import rows as row_to
from memoracle.store.db import SQLITE_ROWS, Database, db_time


class Audit:
    def __init__(self, db: Database) -> None:
        self._db = db

    def append(
        self,
        *,
        at: datetime,
        actor: str,
        action: str,
        memory_id: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self._db.execute(
            "INSERT INTO audit (at, actor, action, memory_id, detail) VALUES (?, ?, ?, ?, ?)",
            (
                db_time(at),
                actor,
                action,
                memory_id,
                json.dumps(detail, ensure_ascii=False, default=str) if detail else None,
            ),
        )

    def entries(
        self, *, memory_id: int | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditEntry]:
        """Entries about `memory_id`, or at or after `since`, or all: newest first."""
        clauses: list[str] = []
        params: list[object] = []
        if memory_id is not None:
            clauses.append("memory_id = ?")
            params.append(memory_id)
        if since is not None:
            clauses.append("at >= ?")
            params.append(db_time(since))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(
            f"SELECT id, at, actor, action, memory_id, detail FROM audit {where}"
            " ORDER BY id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [row_to.audit_entry(SQLITE_ROWS, r) for r in rows]

    def open_asks(self, action: str, closed_by: Sequence[str]) -> list[AuditEntry]:
        """The newest `action` entry of each memory that no later entry about it of
        `action` or `closed_by` answered (a "forget …" that fitted several memories and
        waits for a person), oldest first."""
        answers = (action, *closed_by)
        marks = ",".join("?" * len(answers))
        rows = self._db.execute(
            "SELECT a.id, a.at, a.actor, a.action, a.memory_id, a.detail FROM audit a"
            " WHERE a.action = ? AND a.memory_id IS NOT NULL AND NOT EXISTS (SELECT 1"
            " FROM audit b WHERE b.memory_id = a.memory_id AND b.id > a.id"
            f" AND b.action IN ({marks})) ORDER BY a.id",
            (action, *answers),
        ).fetchall()
        return [row_to.audit_entry(SQLITE_ROWS, r) for r in rows]

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM audit").fetchone()[0])
