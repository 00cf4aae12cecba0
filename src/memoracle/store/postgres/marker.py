"""The part of a PostgreSQL store's upkeep search and the web page need before the
rest is written (`store.postgres.maintenance`, issue 32): whether the database changed
(`change_marker`) and its size. The rest of `Maintenance` (backups, checks, compaction,
a scratch copy) is refused with a `StoreError` that says so, never answered falsely.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from memoracle.errors import StoreError
from memoracle.storage_types import BackupInfo, FreeSpace
from memoracle.store.postgres.connection import PgDatabase

__all__ = ["PgChangeMarker"]


class PgChangeMarker:
    """`Maintenance` of a PostgreSQL store, as far as it goes today."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def change_marker(self) -> tuple[int, int]:
        """(the server's write-ahead log position, 0): every commit that wrote anything,
        this connection's or another host's, writes a commit record and so moves it (it
        may also move without a change of rows: a checkpoint, a VACUUM — then a reader
        reads again for nothing, never the other way round)."""
        row = self._db.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()
        return (int(row[0]) if row else 0), 0

    def size(self) -> int:
        """The database's size on the server, in bytes."""
        row = self._db.execute("SELECT pg_database_size(current_database())").fetchone()
        return int(row[0]) if row else 0

    def _not_yet(self, what: str) -> StoreError:
        return StoreError(
            f"{self._db.url}: {what} is not available for a PostgreSQL store in this"
            " version; use the server's own tools (pg_dump, VACUUM, amcheck) meanwhile."
        )

    def backup(self, folder: Path, *, now: datetime) -> BackupInfo:
        raise self._not_yet("memoracle's backup")

    def check(self, limit: int = 5) -> list[str]:
        raise self._not_yet("the integrity check")

    def reclaimable(self) -> FreeSpace:
        raise self._not_yet("measuring free space")

    def compact(self) -> int:
        raise self._not_yet("compaction")

    def scratch_copy(self, dest: Path) -> None:
        raise self._not_yet("a scratch copy")
