"""Verified backups of the store, taken online with SQLite's backup API.

`backup()` copies the database through its own read connection, so it sees exactly the
last committed state (not a write transaction the caller may hold open) while other
connections keep writing to the WAL. The row counts it checks the copy against are read
in the same read transaction as the copy, so both describe one snapshot. The copy is
written under a temporary name, verified (`PRAGMA integrity_check`, row counts), synced
and only then renamed into place: a backup file that exists has passed verification.

When to back up (before a bulk change) and where the folder is are the engine's.
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

from memoracle.clock import as_utc
from memoracle.errors import InvalidInput, StoreError
from memoracle.files import replacing
from memoracle.storage_types import BackupInfo
from memoracle.store.db import BUSY_TIMEOUT_MS

# The tables whose row counts must match between the database and its copy.
COUNTED = ("memories", "episodes", "audit", "archive")
NAME = re.compile(r"^memoracle-(\d{8}T\d{6}Z)(?:-(\d+))?\.db$")
# A PostgreSQL store's backup (`server_backup`): its rows as gzipped JSON lines.
# Rotated and dated with the SQLite ones (`newest_backup`, `prune_backups`), never taken
# for an SQLite file (`taken_at`, what recovery and redaction read, is `NAME`'s alone).
SERVER_NAME = re.compile(r"^memoracle-(\d{8}T\d{6}Z)(?:-(\d+))?\.pg\.jsonl\.gz$")


def backup_name(now: datetime, n: int = 1) -> str:
    """`memoracle-20261202T143000Z.db` (the `n`th taken that second: `…Z-2.db`). The time
    is the engine clock's, so a run at `--now 2023-05-08` names its backup for that day."""
    return f"memoracle-{as_utc(now):%Y%m%dT%H%M%SZ}{'' if n == 1 else f'-{n}'}.db"


def free_name(folder: Path, now: datetime) -> Path:
    """A backup path in `folder` named for `now` that no backup has yet: a second backup
    in the same second (two runs at one `--now`) never replaces the first."""
    n = 1
    while (folder / backup_name(now, n)).exists():
        n += 1
    return folder / backup_name(now, n)


def taken_at(name: str, *, servers: bool = False) -> tuple[datetime, int] | None:
    """When the backup named `name` was taken and its number in that second, or None
    for a file not named like an SQLite backup (with `servers`, nor like a PostgreSQL
    store's)."""
    match = NAME.match(name) or (SERVER_NAME.match(name) if servers else None)
    if match is None:
        return None
    at = datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    return at, int(match.group(2) or 1)


def backup(source: Path, dest: Path) -> BackupInfo:
    """Copy the database at `source` to `dest` and verify the copy.

    An existing `dest` is replaced only by a verified copy. Raises StoreError naming the
    file when the copy cannot be written or fails verification (the bad copy is
    removed; the database itself is never changed)."""
    if str(source) == ":memory:":
        raise InvalidInput("An in-memory database has no file to back up.")
    started = time.perf_counter()
    partial = dest.with_name(dest.name + ".partial")
    try:
        _remove(partial)
        with replacing(dest, temp=partial, durable=True):
            counts = _copy(source, partial)
            problems = _problems(partial, counts)
            if problems:
                raise StoreError(
                    f"{dest}: the backup failed verification ({'; '.join(problems[:3])}); the"
                    " copy was removed and the database left as it was. Check free space and"
                    " try again."
                )
        size = dest.stat().st_size
    except sqlite3.Error as exc:
        _remove(partial)
        raise StoreError(f"{dest}: could not back up {source} ({exc}).") from None
    except OSError as exc:
        _remove(partial)
        raise StoreError(
            f"{dest}: the backup could not be written ({exc.strerror or exc})."
            " Check that the folder exists, is writable and has space."
        ) from None
    except BaseException:
        _remove(partial)
        raise
    return BackupInfo(
        path=dest, bytes=size, counts=counts, seconds=round(time.perf_counter() - started, 3)
    )


def _found(folder: Path, now: datetime | None) -> list[tuple[tuple[datetime, int], Path]]:
    """The backups in `folder` taken at or before `now` (all when None), newest first."""
    if not folder.is_dir():
        return []
    found = [
        (at, p) for p in folder.iterdir() if (at := taken_at(p.name, servers=True)) is not None
    ]
    if now is not None:
        found = [(at, p) for at, p in found if at[0] <= as_utc(now)]
    return sorted(found, reverse=True)


def newest_backup(folder: Path, *, now: datetime | None = None) -> datetime | None:
    """When the newest backup in `folder` was taken (from its name), or None. With `now`
    (the engine clock), only backups taken at or before it count: a run replayed at an
    earlier `--now` does not take a backup named for a later day as recent."""
    found = _found(folder, now)
    return found[0][0][0] if found else None


def prune_backups(folder: Path, *, keep: int, now: datetime | None = None) -> list[Path]:
    """Delete all but the newest `keep` backups in `folder` (by the time in their names);
    return the deleted paths. With `now` (the engine clock), only backups taken at or
    before it are rotated: the one just taken is always kept, and backups named for a
    later time (a run at another `--now`) are left alone. Files not named like a backup
    are never touched."""
    if keep < 1:
        raise InvalidInput(f"keep must be at least 1 (got {keep}): the newest backup stays.")
    removed = [path for _, path in _found(folder, now)[keep:]]
    for path in removed:
        try:
            path.unlink()
        except OSError as exc:
            raise StoreError(f"{path}: could not delete an old backup ({exc.strerror}).") from None
    return removed


def copy(source: Path, dest: Path) -> None:
    """Copy the committed database at `source` to `dest` (replaced), unverified: a
    scratch copy. StoreError names the file when it cannot be written."""
    try:
        _remove(dest)
        _copy(source, dest)
    except (sqlite3.Error, OSError) as exc:
        _remove(dest)
        raise StoreError(f"{dest}: could not copy {source} ({exc}).") from None


def _copy(source: Path, partial: Path) -> dict[str, int]:
    """Copy `source` into `partial`; return its row counts, read in the same snapshot."""
    src = sqlite3.connect(  # mode=rw: a missing database is an error, not a new file
        f"{source.resolve().as_uri()}?mode=rw",
        uri=True,
        isolation_level=None,
        timeout=BUSY_TIMEOUT_MS / 1000,
    )
    try:
        dst = sqlite3.connect(partial, isolation_level=None)
        try:
            # A deferred BEGIN plus a read pins one WAL snapshot; the backup, on the same
            # connection, reads that snapshot instead of starting its own.
            src.execute("BEGIN")
            counts = _counts(src)
            src.backup(dst)
            src.execute("COMMIT")
            # A backup is one self-contained file: no -wal/-shm beside it.
            dst.execute("PRAGMA journal_mode = DELETE")
        finally:
            dst.close()
    finally:
        src.close()
    return counts


def _problems(path: Path, expected: dict[str, int]) -> list[str]:
    """What is wrong with the copy at `path` (nothing: an empty list): SQLite's
    integrity check, then the row counts against `expected`."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            found = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
            if found != ["ok"]:
                return found
            counts = _counts(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return [str(exc)]
    if counts != expected:
        return [f"row counts {counts} differ from the database's {expected}"]
    return []


def _counts(conn: sqlite3.Connection) -> dict[str, int]:
    return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED}


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm", "-writer"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def row_counts(path: Path) -> dict[str, int]:
    """The row counts a backup's verification compares (`COUNTED`), of the database at
    `path`, read only. StoreError names a file that cannot be read as one."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return _counts(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot be read as a memoracle database ({exc}).") from None


def seal(path: Path, expected: dict[str, int]) -> None:
    """Make the rewritten copy at `path` a backup again — one self-contained file
    (journal mode DELETE, no -wal beside it), verified as `backup` verifies its copies
    (integrity check, row counts equal to `expected`) and synced — or raise StoreError
    naming what is wrong. The caller renames it into place only after this."""
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = DELETE").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: could not close the rewritten backup ({exc}).") from None
    problems = _problems(path, expected)
    if problems:
        raise StoreError(
            f"{path}: the rewritten backup failed verification ({'; '.join(problems[:3])})."
        )
    with open(path, "rb") as file:
        os.fsync(file.fileno())
