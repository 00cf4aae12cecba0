"""The store: the only place that writes SQL.

`Store.open(path)` connects, applies migrations and exposes the repositories: one per
table or group of tables (`store.memories`, `store.episodes`, `store.audit`,
`store.runs`, `store.archive`, `store.graph`, `store.held`), `store.index` (search SQL,
the visibility rule as SQL, vectors), and three that read or rewrite across tables:
`store.scrub` (every column of stored text, for `memoracle redact`), `store.browse`
(the web page's filtered, paged reads) and `store.transfer` (the rows as export
records, for `memoracle export`/`import`). Writes happen inside `store.transaction()`.

`store.maintenance` (`maintenance.SqliteMaintenance`) keeps the file: a verified backup,
the integrity check, the space a compaction gives back and the compaction, a scratch
copy, the size on disk, whether anyone wrote since.
What the engine and search may ask of a store, whatever the backend, is
`protocols.StoreBackend`; `Store` is the SQLite one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from memoracle.errors import StoreDamaged
from memoracle.store import safety, schema
from memoracle.store.archive import Archive
from memoracle.store.audit import Audit
from memoracle.store.backup import prune_backups
from memoracle.store.browse import Browse
from memoracle.store.db import Database, db_time, require_fts5, writable
from memoracle.store.episodes import Episodes
from memoracle.store.graph import Graph
from memoracle.store.held import Held
from memoracle.store.index import Index
from memoracle.store.maintenance import SqliteMaintenance
from memoracle.store.memories import Memories
from memoracle.store.runs import Runs
from memoracle.store.scrub import Scrub
from memoracle.store.transfer import Transfer
from memoracle.types import Scope

# SQLite's answers for a file that is not a whole database (SQLITE_CORRUPT, SQLITE_NOTADB).
DAMAGED_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)

__all__ = [
    "Store",
    "prune_backups",
    "require_fts5",
    "writable",
]


class Store:
    def __init__(self, db: Database, version: int) -> None:
        self._db = db
        self.path = db.path
        self.location = str(db.path)  # for messages
        self.folder = db.path.parent  # the files kept beside it (HOME, a scratch folder)
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
        self.maintenance = SqliteMaintenance(db.path, db)  # backup, check, compact, …
        self.transfer = Transfer(db, schema_version=version)  # export and import rows

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
    def transaction(self, scopes: Iterable[Scope] | None = None) -> Iterator[None]:
        """`scopes` asks for nothing here: SQLite runs one write at a time."""
        with self._db.transaction():
            yield

    def vector_index(self, model_id: str, dim: int) -> None:
        """None: search keeps the vectors in its process (`recall.vectors`)."""
        return None

    def close(self) -> None:
        self._db.close()
