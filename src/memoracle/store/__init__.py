"""The store: the only place that writes SQL.

`Store.open(path)` connects, applies migrations and exposes the repositories: one per
table or group of tables (`store.memories`, `store.episodes`, `store.audit`,
`store.runs`, `store.archive`, `store.graph`, `store.held`), `store.index` (search SQL,
the visibility rule as SQL, vectors), and two that read or rewrite across tables:
`store.scrub` (every column of stored text, for `memoracle redact`) and `store.browse`
(the web page's filtered, paged reads). Writes happen inside `store.transaction()`;
`store.backup(folder)` writes a verified copy. What the engine and search may ask of a
store, whatever the backend, is `protocols.StoreBackend`; `Store` is the SQLite one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memoracle.errors import StoreDamaged, StoreError
from memoracle.store import backup as backups
from memoracle.store import safety, schema
from memoracle.store.archive import Archive, ArchivedMemory
from memoracle.store.audit import Audit, AuditEntry
from memoracle.store.backup import BackupInfo, prune_backups
from memoracle.store.browse import Browse
from memoracle.store.db import Database, db_time, require_fts5, writable
from memoracle.store.episodes import Episodes
from memoracle.store.graph import Graph
from memoracle.store.held import Held
from memoracle.store.index import Index, View
from memoracle.store.memories import Memories
from memoracle.store.runs import Runs
from memoracle.store.scrub import Scrub

# SQLite's answers for a file that is not a whole database (SQLITE_CORRUPT, SQLITE_NOTADB).
DAMAGED_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)

__all__ = [
    "ArchivedMemory",
    "AuditEntry",
    "BackupInfo",
    "FreeSpace",
    "Store",
    "View",
    "prune_backups",
    "require_fts5",
    "writable",
]


@dataclass(frozen=True)
class FreeSpace:
    """The database file's pages, and how many of them are free (SQLite's freelist:
    pages left by deleted rows and merged index segments, kept for reuse; only VACUUM
    gives them back to the disk)."""

    pages: int
    free_pages: int
    page_size: int

    @property
    def share(self) -> float:
        return self.free_pages / self.pages if self.pages else 0.0

    @property
    def free_bytes(self) -> int:
        return self.free_pages * self.page_size


class Store:
    def __init__(self, db: Database, version: int) -> None:
        self._db = db
        self.path = db.path
        self.readonly = db.readonly  # opened `mode=ro`: reads only, see `open`
        self.schema_version = version
        self.memories = Memories(db)
        self.episodes = Episodes(db)
        self.audit = Audit(db)
        self.runs = Runs(db)
        self.index = Index(db)
        self.archive = Archive(db, self.memories, self.audit)
        self.graph = Graph(db)
        self.held = Held(db)
        self.scrub = Scrub(db)
        self.browse = Browse(db)  # the web page's reads (memoracle ui)

    @classmethod
    def open(
        cls, path: Path, *, now: datetime, readonly: bool | None = None, existing: bool = False
    ) -> Store:
        """Open (and migrate) the database at `path`. `readonly` None: read-only exactly
        when the file or its folder is not writable (a read-only home or mount), so the
        read commands still work there; such a store is never migrated, and a write
        through it is a `StoreError` saying the workspace is read-only. A file with no
        tables is given them (a new store), unless `existing` says a store was there
        before: then it is `StoreDamaged`, as is any store whose schema lacks a table,
        index or trigger its version has — never migrated over, never changed."""
        if readonly is None:
            readonly = path.exists() and not writable(path)
        db = Database(path, readonly=readonly)
        try:
            missing = safety.missing_objects(db.conn)
            if missing and (existing or missing != ["every table"]):
                raise StoreDamaged(
                    f"{path}: the store lacks {', '.join(missing[:5])}; it was left as it is."
                )
            if readonly:
                version = schema.check(db.conn, str(path))
            else:
                version = schema.apply(db.conn, str(path), db_time(now) or "")
        except sqlite3.Error as exc:
            db.close()
            if getattr(exc, "sqlite_errorcode", None) in DAMAGED_CODES:
                raise StoreDamaged(str(db.error(exc))) from None
            raise db.error(exc) from None
        except BaseException:
            db.close()
            raise
        return cls(db, version)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def data_version(self) -> int:
        """Changes when another connection commits (SQLite's PRAGMA data_version)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def own_changes(self) -> int:
        """Rows this connection has written since it opened (SQLite's total_changes):
        what `data_version` does not see."""
        return self._db.conn.total_changes

    def backup(self, folder: Path, *, now: datetime) -> BackupInfo:
        """A verified copy of the committed database in `folder`, named for `now`
        (`memoracle-20261202T143000Z.db`, `…Z-2.db` for a second one that second); see
        `backup.backup`. Call it outside a write transaction: what that transaction has
        not committed is not in the copy."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{folder}: could not create the backup folder ({exc.strerror or exc})."
            ) from None
        return backups.backup(self.path, backups.free_name(folder, now))

    def quick_check(self, limit: int = 5) -> list[str]:
        """SQLite's `PRAGMA quick_check` (read-only): ["ok"], or up to `limit` problems.
        A file too damaged to be checked raises `StoreError` naming it.

        The file is read once from start to end first. The check walks every b-tree a
        page at a time, and pages that are not in the OS cache are then read one by one,
        out of order: on a 2.7 GB store with a cold cache the check took 50 s (295 s
        while the disk was busy), and 8 s with the file read in order first (5 s) —
        2.4 s when it was already cached."""
        _read_through(self.path)
        try:
            rows = self._db.execute(f"PRAGMA quick_check({int(limit)})").fetchall()
        except sqlite3.DatabaseError as exc:  # raised while the rows are read
            raise StoreError(f"{self.path}: cannot be checked ({exc}).") from None
        return [str(r[0]) for r in rows]

    def free_space(self) -> FreeSpace:
        """The file's page count and free pages (`PRAGMA page_count`, `freelist_count`)."""

        def pragma(name: str) -> int:
            return int(self._db.execute(f"PRAGMA {name}").fetchone()[0])

        return FreeSpace(pragma("page_count"), pragma("freelist_count"), pragma("page_size"))

    def vacuum(self) -> int:
        """Rewrite the database without its free pages (`VACUUM`) and return the bytes the
        file shrank by. The WAL is checkpointed before and after, so the sizes compared
        are the file's own and the space is back on the disk when this returns. Call it
        outside a transaction; other connections may read meanwhile and wait to write.
        SQLite needs room for a second copy of the database while it runs: a full disk
        is a `StoreError` and the database is left as it was."""
        self._checkpoint()
        before = self.path.stat().st_size
        self._db.execute("VACUUM")
        self._checkpoint()
        return max(0, before - self.path.stat().st_size)

    def _checkpoint(self) -> None:
        """Copy the WAL into the file and truncate it (`wal_checkpoint(TRUNCATE)`); a
        reader that holds an old snapshot only makes it partial."""
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def copy_to(self, dest: Path) -> None:
        """A plain copy of the committed database at `dest` (SQLite's backup API, page by
        page, so free pages and layout are as here), unverified: a scratch copy to work
        on, not a backup."""
        backups.copy(self.path, dest)

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(self.path) + suffix)
            if part.exists():
                total += part.stat().st_size
        return total

    def close(self) -> None:
        self._db.close()


def _read_through(path: Path, chunk: int = 8 << 20) -> None:
    """Read the file at `path` in order, so the OS caches it (nothing is kept here); a
    file that cannot be read is left for SQLite to report."""
    try:
        with open(path, "rb", buffering=0) as file:
            while file.read(chunk):
                pass
    except OSError:
        return
