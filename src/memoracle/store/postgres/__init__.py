"""The PostgreSQL store (issue 32; docs/fleet.md): the same repositories as the SQLite
`Store`, over one psycopg 3 connection, with full-text search in PostgreSQL's own
text-search configurations and vectors in pgvector.

`PgStore.open(url, now=…, folder=HOME)` connects (a clear `StoreError` for a wrong URL
or password, an unreachable server, a database without the `vector` extension; the
password is never shown), applies the migrations (`schema`) and exposes `memories`,
`episodes`, `audit`, `runs`, `held`, `archive`, `graph`, `browse`, `index` and `scrub`;
writes happen inside `transaction()`. It is a whole `StoreBackend` (mypy proves it, at
the end of this file): the engine opens it when `storage.url` names a server
(`engine.backend`), and recall searches its vectors in the database (`vector_index`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memoracle.config import safe_url
from memoracle.errors import StoreError
from memoracle.store.db import db_time
from memoracle.store.postgres import schema
from memoracle.store.postgres.archive import PgArchive
from memoracle.store.postgres.browse import PgBrowse
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.episodes import PgEpisodes
from memoracle.store.postgres.graph import PgGraph
from memoracle.store.postgres.held import PgHeld
from memoracle.store.postgres.index import PgIndex
from memoracle.store.postgres.logs import PgAudit, PgRuns
from memoracle.store.postgres.maintenance import PgMaintenance
from memoracle.store.postgres.memories import PgMemories
from memoracle.store.postgres.policies import grant_agent
from memoracle.store.postgres.scrub import PgScrub
from memoracle.store.postgres.transfer import PgTransfer
from memoracle.store.postgres.vectors import PgVectorIndex
from memoracle.types import Scope

__all__ = ["PgStore", "grant_agent", "safe_url"]


def _connect(url: str) -> PgDatabase:
    """One more connection to the database at `url`, pgvector's types registered."""
    db = PgDatabase(url)
    try:
        db.adapt_vectors()  # on this connection and on any that replaces it
    except BaseException:
        db.close()
        raise
    return db


class PgStore:
    def __init__(
        self, db: PgDatabase, version: int, *, url: str = "", folder: Path | None = None
    ) -> None:
        self._db = db
        self._url = url  # with its password: for the connections `vector_index` opens
        self._folder = folder
        self._vector_indexes: list[PgVectorIndex] = []
        self.url = self.location = db.url  # the password masked
        self.readonly = False  # a server refuses what a role may not write itself
        self.schema_version = version
        self.memories = PgMemories(db)
        self.episodes = PgEpisodes(db)
        self.audit = PgAudit(db)
        self.runs = PgRuns(db)
        self.index = PgIndex(db)
        self.held = PgHeld(db)
        self.archive = PgArchive(db, self.memories, self.audit)
        self.graph = PgGraph(db)
        self.browse = PgBrowse(db)  # the web page's reads
        self.scrub = PgScrub(db)  # memoracle redact
        self.transfer = PgTransfer(db)  # its rows as export records (memoracle migrate)
        self.maintenance = PgMaintenance(db)  # backup, check, vacuum, the jobs' lock, …

    @classmethod
    def open(cls, url: str, *, now: datetime, folder: Path | None = None) -> PgStore:
        """Connect to the database at `url` and migrate it to the latest schema.
        `folder`: where the files kept beside the store live (the engine's HOME)."""
        db = PgDatabase(url)
        try:
            version = schema.apply(db, now=db_time(now) or "")
            db.adapt_vectors()
        except BaseException:
            db.close()
            raise
        return cls(db, version, url=url, folder=folder)

    @property
    def folder(self) -> Path:
        """Where the files kept beside the store live (forgotten.txt): HOME."""
        if self._folder is None:
            raise StoreError(f"{self.location} was opened without a folder for its files.")
        return self._folder

    def vector_index(self, model_id: str, dim: int) -> PgVectorIndex:
        """Recall's index of `model_id`'s vectors: pgvector's, in the database."""
        index = PgVectorIndex(lambda: _connect(self._url), model_id, dim)
        self._vector_indexes.append(index)
        return index

    @contextmanager
    def transaction(self, scopes: Iterable[Scope] | None = None) -> Iterator[None]:
        with self._db.transaction(scopes):
            yield

    def grant_agent(self, role: str, *, agent: str, user: str | None = None) -> None:
        """Let database `role` read and write `agent`'s rows only (`policies`)."""
        grant_agent(self._db, role, agent=agent, user=user)

    def close(self) -> None:
        for index in self._vector_indexes:
            index.close()
        self._db.close()


if TYPE_CHECKING:  # mypy proves each ported repository satisfies its protocol
    from memoracle.store import protocols

    def _satisfies(store: PgStore) -> None:
        _memories: protocols.MemoryRepository = store.memories
        _episodes: protocols.EpisodeRepository = store.episodes
        _audit: protocols.AuditRepository = store.audit
        _runs: protocols.RunRepository = store.runs
        _held: protocols.HeldRepository = store.held
        _archive: protocols.ArchiveRepository = store.archive
        _graph: protocols.GraphRepository = store.graph
        _browse: protocols.BrowseRepository = store.browse
        _index: protocols.SearchIndex = store.index
        _scrub: protocols.ScrubRepository = store.scrub
        _backend: protocols.StoreBackend = store
