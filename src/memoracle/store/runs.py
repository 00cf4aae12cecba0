"""Runs: each long job's start, end, counts and error (ingest now; nightly steps later)."""

from __future__ import annotations

import json
from datetime import datetime

from memoracle.storage_types import Run
from memoracle.store import rows as row_to
from memoracle.store.db import SQLITE_ROWS, Database, db_time


class Runs:
    def __init__(self, db: Database) -> None:
        self._db = db

    def start(self, kind: str, *, now: datetime) -> int:
        row = self._db.execute(
            "INSERT INTO runs (kind, started_at) VALUES (?, ?) RETURNING id", (kind, db_time(now))
        ).fetchone()
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
            "UPDATE runs SET finished_at = ?, status = ?, counts = ?, error = ? WHERE id = ?",
            (db_time(now), status, json.dumps(counts), error, run_id),
        )

    def last(self, kind: str, *, status: str | None = None) -> tuple[str, str | None, str] | None:
        """(started_at, finished_at, status) of the latest run of `kind` (with `status`)."""
        row = self._db.execute(
            "SELECT started_at, finished_at, status FROM runs WHERE kind = ?"
            " AND (? IS NULL OR status = ?) ORDER BY id DESC LIMIT 1",
            (kind, status, status),
        ).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def failed_since(self, prefix: str, since: datetime) -> bool:
        """Whether a run whose kind starts with `prefix` and that started at `since` or
        later ended "failed"."""
        row = self._db.execute(
            "SELECT 1 FROM runs WHERE substr(kind, 1, ?) = ? AND started_at >= ?"
            " AND status = 'failed' LIMIT 1",
            (len(prefix), prefix, db_time(since)),
        ).fetchone()
        return row is not None

    def latest(self, kind: str, *, status: str | None = None) -> Run | None:
        """The latest run of `kind` (that ended with `status`), with its counts."""
        row = self._db.execute(
            "SELECT started_at, finished_at, status, counts FROM runs WHERE kind = ?"
            " AND (? IS NULL OR status = ?) ORDER BY id DESC LIMIT 1",
            (kind, status, status),
        ).fetchone()
        if row is None:
            return None
        return row_to.run(SQLITE_ROWS, kind, row)
