"""The audit log and the runs table in PostgreSQL: `store.audit.Audit` and
`store.runs.Runs`, same signatures. The audit is append-only here too: triggers refuse
UPDATE, DELETE and TRUNCATE (schema.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import AuditEntry, Run
from memoracle.store import rows as row_to
from memoracle.store.db import db_time
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.memories import PG_ROWS, jsonb


class PgAudit:
    def __init__(self, db: PgDatabase) -> None:
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
            "INSERT INTO audit (at, actor, action, memory_id, detail) VALUES (%s, %s, %s, %s, %s)",
            (at, actor, action, memory_id, jsonb(detail) if detail else None),
        )

    def entries(
        self, *, memory_id: int | None = None, since: datetime | None = None, limit: int = 100
    ) -> list[AuditEntry]:
        """Entries about `memory_id`, or at or after `since`, or all: newest first."""
        rows = self._db.execute(
            "SELECT id, at, actor, action, memory_id, detail FROM audit"
            " WHERE (%s::bigint IS NULL OR memory_id = %s)"
            " AND (%s::timestamptz IS NULL OR at >= %s) ORDER BY id DESC LIMIT %s",
            (memory_id, memory_id, since, since, limit),
        ).fetchall()
        return [row_to.audit_entry(PG_ROWS, r) for r in rows]

    def open_asks(self, action: str, closed_by: Sequence[str]) -> list[AuditEntry]:
        """The newest `action` entry of each memory that no later entry about it of
        `action` or `closed_by` answered, oldest first."""
        rows = self._db.execute(
            "SELECT a.id, a.at, a.actor, a.action, a.memory_id, a.detail FROM audit a"
            " WHERE a.action = %s AND a.memory_id IS NOT NULL AND NOT EXISTS (SELECT 1"
            " FROM audit b WHERE b.memory_id = a.memory_id AND b.id > a.id"
            " AND b.action = ANY(%s)) ORDER BY a.id",
            (action, [action, *closed_by]),
        ).fetchall()
        return [row_to.audit_entry(PG_ROWS, r) for r in rows]

    def count(self) -> int:
        row = self._db.execute("SELECT count(*) FROM audit").fetchone()
        return int(row[0]) if row else 0


class PgRuns:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def start(self, kind: str, *, now: datetime) -> int:
        row = self._db.execute(
            "INSERT INTO runs (kind, started_at) VALUES (%s, %s) RETURNING id", (kind, now)
        ).fetchone()
        assert row is not None
        return int(row[0])

    def finish(
        self,
        run_id: int,
        *,
        now: datetime,
        status: str,
        counts: dict[str, int],
        error: str | None = None,
    ) -> None:
        self._db.execute(
            "UPDATE runs SET finished_at = %s, status = %s, counts = %s, error = %s WHERE id = %s",
            (now, status, jsonb(counts), error, run_id),
        )

    def last(self, kind: str, *, status: str | None = None) -> tuple[str, str | None, str] | None:
        """(started_at, finished_at, status) of the latest run of `kind` (with `status`),
        times as the SQLite store gives them (UTC ISO-8601 text)."""
        row = self._db.execute(
            "SELECT started_at, finished_at, status FROM runs WHERE kind = %s"
            " AND (%s::text IS NULL OR status = %s) ORDER BY id DESC LIMIT 1",
            (kind, status, status),
        ).fetchone()
        if row is None:
            return None
        return db_time(row[0]) or "", db_time(row[1]), row[2]

    def failed_since(self, prefix: str, since: datetime) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM runs WHERE starts_with(kind, %s) AND started_at >= %s"
            " AND status = 'failed' LIMIT 1",
            (prefix, since),
        ).fetchone()
        return row is not None

    def latest(self, kind: str, *, status: str | None = None) -> Run | None:
        row = self._db.execute(
            "SELECT started_at, finished_at, status, counts FROM runs WHERE kind = %s"
            " AND (%s::text IS NULL OR status = %s) ORDER BY id DESC LIMIT 1",
            (kind, status, status),
        ).fetchone()
        if row is None:
            return None
        return row_to.run(PG_ROWS, kind, row)
