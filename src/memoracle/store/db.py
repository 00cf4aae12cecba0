"""The SQLite connection: WAL, busy timeout, explicit transactions, error wrapping.

Every statement memoracle runs goes through `Database.execute`, so every sqlite3 error
comes out as a StoreError naming the database file.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from memoracle.clock import as_utc
from memoracle.errors import StoreError
from memoracle.store.rows import Reading

BUSY_TIMEOUT_MS = 30_000
# Writers queue on an OS lock beside the database, tried every millisecond: SQLite's own
# busy wait sleeps up to 100 ms between tries, and a process that waits while several
# others write turn after turn can sleep through every gap and time out (measured: a
# nightly run beside 8 capturing processes, bench/soak_concurrency.py).
WRITER_POLL_S = 0.001
WRITER_TRIES = BUSY_TIMEOUT_MS  # x WRITER_POLL_S: the busy timeout, at least


def writable(path: Path) -> bool:
    """Whether the database at `path` may be written: the file and its folder (SQLite
    writes its -wal and -shm files beside it). False on a read-only mount even for root;
    a folder that is missing is not writable."""
    folder = path.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return False
    return not path.exists() or os.access(path, os.W_OK)


class Database:
    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        self._depth = 0
        if readonly:
            self.conn = self._open_readonly()
            return
        try:
            self.conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
            )
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise self.error(exc) from None
        if str(mode).lower() != "wal" and str(path) != ":memory:":
            raise StoreError(f"{path}: could not switch to WAL journal mode (got {mode}).")

    def _open_readonly(self) -> sqlite3.Connection:
        """A connection that cannot write (`mode=ro`), for a workspace that is not
        writable. SQLite reads a WAL database read-only only if its -shm file exists or
        can be created; when it cannot (a read-only folder, the database closed cleanly
        so there is no -wal either) the file alone is the whole database, and it is opened
        `immutable=1` (no locks, no -shm). A -wal left behind that cannot be read is an
        error rather than a silently older view."""
        base = "file:" + quote(str(self.path.absolute()))
        try:
            return self._probe(f"{base}?mode=ro")
        except sqlite3.Error as exc:
            wal = Path(f"{self.path}-wal")
            if not self.path.exists() or (wal.exists() and wal.stat().st_size > 0):
                raise self.error(exc) from None
        try:
            return self._probe(f"{base}?mode=ro&immutable=1")
        except sqlite3.Error as exc:
            raise self.error(exc) from None

    @staticmethod
    def _probe(uri: str) -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def error(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        hint = ""
        if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
            hint = (
                " The file is not a memoracle database or is corrupt;"
                " restore it from a backup or an export."
            )
        elif self.readonly and "readonly" in text:
            hint = (
                " The workspace is read-only, so it was opened read-only and this needs"
                " to write; run it where the workspace is writable."
            )
        elif "readonly" in text or "read-only" in text:
            hint = " The workspace is read-only; check the permissions of the folder and file."
        elif "unable to open" in text:
            hint = " Check that the folder exists and is writable, or run: memoracle init"
        return StoreError(f"{self.path}: {text}.{hint}")

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise self.error(exc) from None

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            self.conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise self.error(exc) from None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """A write transaction taken with BEGIN IMMEDIATE, so concurrent writers queue on
        the busy timeout instead of failing on a lock upgrade, behind HOME's writer lock
        (`_writer_lock`), which they take in turn. Nested calls join the outer
        transaction."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        writer = self._writer_lock()
        try:
            self.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                try:
                    self.conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            self._depth = 0
            try:
                self.execute("COMMIT")
            except BaseException:  # a deferred constraint, a full disk: nothing half-kept
                if self.conn.in_transaction:
                    try:
                        self.conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                raise
        finally:
            self._release(writer)

    def _writer_lock(self) -> int | None:
        """Take HOME's writer lock (`WRITER_POLL_S`), or None where there is none to take:
        an in-memory database, a folder we cannot write (SQLite then says why), Windows.
        Held until the transaction ends; the OS drops it when a process dies, even killed.
        After `WRITER_TRIES` tries the transaction goes on to SQLite's own busy wait."""
        if str(self.path) == ":memory:" or sys.platform == "win32":
            return None
        import fcntl

        try:
            fd = os.open(f"{self.path}-writer", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None
        for _ in range(WRITER_TRIES):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                time.sleep(WRITER_POLL_S)
        return fd

    @staticmethod
    def _release(fd: int | None) -> None:
        if fd is not None:
            os.close(fd)  # releases the lock

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error as exc:
            raise self.error(exc) from None


T = TypeVar("T")

IN_CHUNK = 500  # values bound in one IN (...) list, well under SQLite's variable limit


def in_chunks(values: Sequence[T]) -> Iterator[tuple[list[T], str]]:
    """`values` a chunk at a time for an ``IN (...)`` list: each chunk and its
    placeholders ("?,?,?")."""
    for start in range(0, len(values), IN_CHUNK):
        chunk = list(values[start : start + IN_CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def db_time(value: datetime | None) -> str | None:
    """UTC ISO-8601 with microseconds: one fixed width, so text order is time order."""
    if value is None:
        return None
    return as_utc(value).isoformat(timespec="microseconds")


def from_db_time(value: str) -> datetime:
    return datetime.fromisoformat(value)


def maybe_time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


# What SQLite hands back: times as ISO-8601 text, JSON columns as JSON text.
SQLITE_ROWS = Reading(time=from_db_time, document=json.loads)


def require_fts5() -> None:
    """Raise StoreError, saying how to get one, unless this Python's SQLite has FTS5
    (memoracle's search indexes are FTS5 tables). Tried in memory: nothing on disk."""
    try:
        conn = sqlite3.connect(":memory:")
        try:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(
            f"This Python's SQLite has no FTS5 ({exc}); memoracle's search needs it. Use a"
            " Python whose sqlite3 module has FTS5 (python.org and Homebrew builds, uv's"
            " managed Pythons and most Linux distributions' python3 do; check with:"
            " python3 -c \"import sqlite3; sqlite3.connect(':memory:').execute('create"
            " virtual table t using fts5(x)')\"), then install memoracle with it."
            " Nothing was changed."
        ) from None
