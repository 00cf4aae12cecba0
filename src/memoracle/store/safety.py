"""Is the database file a whole memoracle store? Told cheaply before it is opened, in
full on demand, and put back from a verified backup.

`probe` looks at the file without letting SQLite write to it (a 0-byte file opened
by SQLite becomes a new, empty database: the silent re-creation this module exists to
stop): missing, not a file, unreadable, empty, not SQLite, cut short. `missing_objects`
compares the schema with the one its recorded version should have (a dropped table,
index or trigger). `check` runs SQLite's quick or full integrity check on a read-only
connection. `restore` moves a damaged file aside (never deleted) and puts a copy in
its place that has passed the integrity check.

Whether the workspace was in use (so an empty file is damage, not a fresh start) and
what to tell the person are the engine's and the doctor's.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from functools import cache
from pathlib import Path

from memoracle.errors import StoreError
from memoracle.files import fsync_dir, fsync_path
from memoracle.storage_types import Damage
from memoracle.store import schema
from memoracle.store.backup import COUNTED

__all__ = [
    "SIDE_FILES",
    "check",
    "counts",
    "inspect",
    "missing_objects",
    "move_aside",
    "probe",
    "put_in_place",
]

HEADER = b"SQLite format 3\x00"
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's files beside the database
WAL_HEADER_BYTES = 32  # a WAL no longer than its header holds no frame


def probe(path: Path) -> Damage | None:
    """The damage a look at the file's bytes shows, or None. SQLite never opens it
    here, so nothing is written: the checks a capture can afford on every open."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return Damage("missing", f"{path} does not exist")
    except OSError as exc:
        return Damage("unreadable", f"{path} cannot be looked at ({exc.strerror or exc})")
    if not path.is_file():
        return Damage("not_a_file", f"{path} is not a file (a folder or a device stands there)")
    try:
        with open(path, "rb") as file:
            head = file.read(100)
    except OSError as exc:
        return Damage("unreadable", f"{path} cannot be read ({exc.strerror or exc})")
    if info.st_size == 0:
        return Damage("empty", f"{path} is empty (0 bytes): its tables are gone")
    if not head.startswith(HEADER):
        return Damage("not_sqlite", f"{path} does not start with SQLite's header")
    return _cut_short(path, head, info.st_size)


def _cut_short(path: Path, head: bytes, size: int) -> Damage | None:
    """The file is shorter than its header says, or not a whole number of pages. Not
    judged while a WAL with frames is beside it: a checkpoint cut off by a crash may
    leave the file short, and the WAL holds the rest."""
    if len(head) < 100:
        return Damage("truncated", f"{path} is cut short ({size} bytes, no whole header)")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    header_valid = head[24:28] == head[92:96]  # the page count is kept (SQLite ≥ 3.7)
    if _wal_frames(path):
        return None
    if page < 512 or size % page or (header_valid and pages * page > size):
        expected = f"; its header counts {pages * page:,}" if header_valid else ""
        return Damage("truncated", f"{path} is cut short ({size:,} bytes{expected})")
    return None


def _wal_frames(path: Path) -> bool:
    wal = Path(f"{path}-wal")
    try:
        return wal.stat().st_size > WAL_HEADER_BYTES
    except OSError:
        return False


@cache
def _expected(version: int) -> frozenset[tuple[str, str]]:
    """The (type, name) of every table, index and trigger a store at schema `version`
    has: the migrations up to it, applied to a database in memory."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        schema.version(conn)
        for number, _name, migrate in schema.MIGRATIONS:
            if number > version:
                break
            conn.execute("BEGIN")
            migrate(conn)
            conn.execute("COMMIT")
        return _objects(conn)
    finally:
        conn.close()


def _objects(conn: sqlite3.Connection) -> frozenset[tuple[str, str]]:
    rows = conn.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger')"
    )
    return frozenset((str(t), str(n)) for t, n in rows)


def missing_objects(conn: sqlite3.Connection) -> list[str]:
    """What the schema lacks against its recorded version ("table memories", …), or
    ["every table"] for a database with none at all. Raises sqlite3.Error as it is."""
    found = _objects(conn)
    if not found:
        return ["every table"]
    if ("table", "schema_migrations") not in found:
        return ["table schema_migrations"]
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    version = min(int(row[0] or 0), schema.LATEST)
    lost = sorted(_expected(version) - found, key=lambda o: (o[0] != "table", o[0], o[1]))
    return [f"{t} {n}" for t, n in lost]


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to `path`; on a read-only folder or mount, where SQLite
    cannot make the -shm file a WAL database needs, `immutable=1` (as `Database` opens
    a read-only home), unless a -wal with content lies beside it: then its error."""
    base = f"{path.resolve().as_uri()}?mode=ro"
    try:
        return _probe(base)
    except sqlite3.Error:
        wal = Path(f"{path}-wal")
        if not path.exists() or (wal.exists() and wal.stat().st_size > 0):
            raise
    return _probe(f"{base}&immutable=1")


def _probe(uri: str) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn


def check(path: Path, *, deep: bool, limit: int = 5) -> list[str]:
    """SQLite's check of the file at `path` on a read-only connection: ["ok"], or up to
    `limit` problems. `deep` runs `PRAGMA integrity_check` (every index against its
    table, every constraint); otherwise `quick_check` (the b-trees' structure only,
    several times faster). A file SQLite cannot read at all is one problem, its error."""
    pragma = "integrity_check" if deep else "quick_check"
    try:
        conn = _read_only(path)
        try:
            return [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}({int(limit)})")]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return [str(exc)]


def counts(path: Path) -> dict[str, int]:
    """Rows of the tables a backup is checked against, read on a read-only connection.
    StoreError names the file when they cannot be read."""
    try:
        conn = _read_only(path)
        try:
            return {
                t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in COUNTED
            }
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot count its rows ({exc}).") from None


def inspect(path: Path, *, deep: bool = False) -> Damage | None:
    """Everything wrong with the store at `path`, cheapest first: `probe`, the schema
    against its version, then SQLite's check (`deep`: the full integrity check)."""
    found = probe(path)
    if found is not None:
        return found
    try:
        conn = _read_only(path)
        try:
            missing = missing_objects(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Damage("integrity", f"{path} cannot be read by SQLite ({exc})")
    if missing:
        return Damage("tables_missing", f"{path} lacks {', '.join(missing[:5])}")
    try:
        problems = check(path, deep=deep)
    except (sqlite3.Error, StoreError, OSError) as exc:  # a check that cannot finish
        problems = [str(exc)]
    if problems != ["ok"]:
        what = "integrity check" if deep else "quick check"
        return Damage("integrity", f"{path} fails SQLite's {what}: {'; '.join(problems[:3])}")
    return None


def move_aside(path: Path, folder: Path, stamp: str) -> list[Path]:
    """Move the database at `path` (a file, or whatever stands there) and its WAL, shm
    and journal into `folder`, named `<name>-<stamp><suffix>`: kept, never deleted, and
    out of the way of the copy that replaces it. Returns where each went."""
    moved: list[Path] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for suffix in ("", *SIDE_FILES):
            source = Path(f"{path}{suffix}")
            if source.exists() or source.is_symlink():
                dest = folder / f"{path.name}-{stamp}{suffix}"
                os.replace(source, dest)
                moved.append(dest)
    except OSError as exc:
        raise StoreError(
            f"{path}: could not move it aside into {folder} ({exc.strerror or exc});"
            " nothing else was changed."
        ) from None
    return moved


def put_in_place(copy: Path, path: Path) -> None:
    """Rename the verified store at `copy` to `path` (nothing may stand there), after
    syncing it, so a crash leaves either no store or the whole copy."""
    try:
        fsync_path(copy)
        os.replace(copy, path)
        fsync_dir(path.parent)
    except OSError as exc:
        raise StoreError(
            f"{path}: could not put {copy} in place ({exc.strerror or exc})."
        ) from None


def copy_file(source: Path, dest: Path) -> None:
    """A byte copy of a self-contained store file (a backup: no WAL beside it)."""
    try:
        for suffix in ("", *SIDE_FILES):
            Path(f"{dest}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(source, dest)
    except OSError as exc:
        raise StoreError(f"{dest}: could not copy {source} ({exc.strerror or exc}).") from None
