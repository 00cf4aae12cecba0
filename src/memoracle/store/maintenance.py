"""The upkeep of the SQLite store, phrased by what the jobs need: is it whole (`check`),
how much space a compaction would give back (`reclaimable`) and the compaction itself
(`compact`), a verified backup (`backup`), a scratch copy to work on (`scratch_copy`),
its size on disk (`size`), whether anyone wrote since a given moment (`change_marker`),
one holder at a time of a job's lock (`exclusive`: a pid file beside the database), what
health shows of the file (`state`); and, for a store that may not open at all
(`SqliteMaintenance.at(path)`), the file's damage told cheaply or in full, its rows
counted, and the file set aside or replaced by a verified copy (`recover`, `doctor`, the
engine's guard).

Each backend answers these its own way: here with SQLite's pragmas, its backup API and
the file itself (`store.backup`, `store.safety`). `Store.maintenance` is the store's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from memoracle.errors import StoreError
from memoracle.files import pid_lock
from memoracle.storage_types import BackupInfo, Damage, FreeSpace, StoreState
from memoracle.store import backup as backups
from memoracle.store import safety
from memoracle.store.db import Database

__all__ = ["SqliteMaintenance"]


class SqliteMaintenance:
    """The maintenance of the SQLite store at `path`: over its open connection `db`
    (`Store.maintenance`), or, with none (`at`), of the file alone."""

    def __init__(self, path: Path, db: Database | None = None) -> None:
        self.path = path
        self._db = db

    @classmethod
    def at(cls, path: Path) -> SqliteMaintenance:
        """The maintenance of the file at `path`, which is not opened as a store: what
        can be told of it, and done to it, when it may be damaged."""
        return cls(path)

    # -- a store that is open ------------------------------------------------------

    def _open(self) -> Database:
        if self._db is None:
            raise StoreError(f"{self.path}: the store is not open here.")
        return self._db

    def change_marker(self) -> tuple[int, int]:
        """(another connection's commits, this connection's own writes): it changes
        exactly when something was written since it was last read. SQLite's PRAGMA
        data_version changes when another connection commits; total_changes counts the
        rows this connection has written since it opened, which data_version does not
        see."""
        db = self._open()
        return int(db.execute("PRAGMA data_version").fetchone()[0]), db.conn.total_changes

    def backup(self, folder: Path, *, now: datetime) -> BackupInfo:
        """A verified copy of the committed database in `folder`, named for `now`
        (`memoracle-20261202T143000Z.db`, `…Z-2.db` for a second one that second); see
        `backup.backup`. Call it outside a write transaction: what that transaction has
        not committed is not in the copy."""
        self._open()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{folder}: could not create the backup folder ({exc.strerror or exc})."
            ) from None
        return backups.backup(self.path, backups.free_name(folder, now))

    def check(self, limit: int = 5) -> list[str]:
        """SQLite's `PRAGMA quick_check` (read-only): ["ok"], or up to `limit` problems.
        A file too damaged to be checked raises `StoreError` naming it.

        The file is read once from start to end first. The check walks every b-tree a
        page at a time, and pages that are not in the OS cache are then read one by one,
        out of order: on a 2.7 GB store with a cold cache the check took 50 s (295 s
        while the disk was busy), and 8 s with the file read in order first (5 s) —
        2.4 s when it was already cached."""
        db = self._open()
        _read_through(self.path)
        try:
            rows = db.execute(f"PRAGMA quick_check({int(limit)})").fetchall()
        except sqlite3.DatabaseError as exc:  # raised while the rows are read
            raise StoreError(f"{self.path}: cannot be checked ({exc}).") from None
        return [str(r[0]) for r in rows]

    def reclaimable(self) -> FreeSpace:
        """The file's page count and free pages (`PRAGMA page_count`, `freelist_count`):
        what `compact` would give back."""
        db = self._open()

        def pragma(name: str) -> int:
            return int(db.execute(f"PRAGMA {name}").fetchone()[0])

        return FreeSpace(pragma("page_count"), pragma("freelist_count"), pragma("page_size"))

    def compact(self) -> int:
        """Rewrite the database without its free pages (`VACUUM`) and return the bytes the
        file shrank by. The WAL is checkpointed before and after, so the sizes compared
        are the file's own and the space is back on the disk when this returns. Call it
        outside a transaction; other connections may read meanwhile and wait to write.
        SQLite needs room for a second copy of the database while it runs: a full disk
        is a `StoreError` and the database is left as it was."""
        db = self._open()
        self._checkpoint()
        before = self.path.stat().st_size
        db.execute("VACUUM")
        self._checkpoint()
        return max(0, before - self.path.stat().st_size)

    def _checkpoint(self) -> None:
        """Copy the WAL into the file and truncate it (`wal_checkpoint(TRUNCATE)`); a
        reader that holds an old snapshot only makes it partial."""
        self._open().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def scratch_copy(self, dest: Path) -> None:
        """A plain copy of the committed database at `dest` (SQLite's backup API, page by
        page, so free pages and layout are as here), unverified: a scratch copy to work
        on, not a backup."""
        self._open()
        backups.copy(self.path, dest)

    def size(self) -> int:
        """The bytes the store takes on disk: the database file, its WAL and shm."""
        total = 0
        for suffix in ("", "-wal", "-shm"):
            part = Path(str(self.path) + suffix)
            if part.exists():
                total += part.stat().st_size
        return total

    @contextmanager
    def exclusive(self, name: str, *, who: str) -> Iterator[None]:
        """Hold job `name`'s lock for the block: `NAME.lock` beside the database (the
        nightly's is HOME/nightly.lock, the one `memoracle redact` and `uninstall` take
        too) holding our pid. While its holder lives, a `WorkspaceError` naming it as
        `who` ("Another nightly run"); a lock left by a process that is gone is taken
        over."""
        folder = self.path.parent
        path = folder / f"{name}.lock"
        with pid_lock(
            path,
            busy=lambda pid: (
                f"{who} (pid {pid}) is working on {folder}; "
                f"wait for it, or remove {path} if that process is gone."
            ),
        ):
            yield

    def state(self) -> StoreState:
        """The file: its path and bytes (`size`), checked by SQLite's quick check."""
        fields: dict[str, object] = {"path": str(self.path), "bytes": self.size()}
        return StoreState(str(self.path), fields, "SQLite's quick check")

    # -- the file, whether it opens or not -------------------------------------------

    def probe(self) -> Damage | None:
        """The damage a look at the file's bytes shows, or None; nothing is written
        (`safety.probe`: the checks a capture can afford on every open)."""
        return safety.probe(self.path)

    def damage(self, *, deep: bool = False) -> Damage | None:
        """Everything wrong with the store, cheapest first (`safety.inspect`): the
        file's bytes, the schema against its version, then SQLite's quick check or,
        `deep`, the full integrity check."""
        return safety.inspect(self.path, deep=deep)

    def check_file(self, *, deep: bool) -> list[str]:
        """SQLite's check of the file on a read-only connection (`safety.check`): ["ok"],
        or its problems; a file SQLite cannot read at all is one problem, its error."""
        return safety.check(self.path, deep=deep)

    def row_counts(self) -> dict[str, int]:
        """Rows of the tables a backup is checked against (`safety.counts`)."""
        return safety.counts(self.path)

    def set_aside(self, folder: Path, stamp: str) -> list[Path]:
        """Move the database and its WAL, shm and journal into `folder`, kept, never
        deleted (`safety.move_aside`). Returns where each went."""
        return safety.move_aside(self.path, folder, stamp)

    def copy_from(self, source: Path) -> None:
        """Make the file a byte copy of the self-contained store at `source` (a backup:
        no WAL beside it), whatever stood here (`safety.copy_file`)."""
        safety.copy_file(source, self.path)

    def replace_with(self, copy: Path) -> None:
        """Put the verified store at `copy` in the file's place (nothing may stand there),
        synced, so a crash leaves either no store or the whole copy."""
        safety.put_in_place(copy, self.path)


def _read_through(path: Path, chunk: int = 8 << 20) -> None:
    """Read the file at `path` in order, so the OS caches it (nothing is kept here); a
    file that cannot be read is left for SQLite to report."""
    try:
        with open(path, "rb", buffering=0) as file:
            while file.read(chunk):
                pass
    except OSError:
        return
