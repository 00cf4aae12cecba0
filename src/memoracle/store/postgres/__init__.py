"""The PostgreSQL store (issue 32; docs/fleet.md): the same repositories as the SQLite
`Store`, over one psycopg 3 connection, with full-text search in PostgreSQL's own
text-search configurations and vectors in pgvector.

`PgStore.open(url, now=…)` connects (a clear `StoreError` for a wrong URL or password,
an unreachable server, a database without the `vector` extension; the password is
never shown), applies the migrations (`schema`) and exposes `memories`, `episodes`,
`audit`, `runs`, `held`, `archive`, `graph`, `browse` and `index`; writes happen inside
`transaction()`.
Not yet reachable from `Engine.open`: the engine still opens the SQLite `Store`
(docs/fleet.md says what remains).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

import psycopg
from pgvector.psycopg import register_vector

from memoracle.store.db import db_time
from memoracle.store.postgres import schema
from memoracle.store.postgres.archive import PgArchive
from memoracle.store.postgres.browse import PgBrowse
from memoracle.store.postgres.connection import PgDatabase, safe_url
from memoracle.store.postgres.episodes import PgEpisodes
from memoracle.store.postgres.graph import PgGraph
from memoracle.store.postgres.held import PgHeld
from memoracle.store.postgres.index import PgIndex
from memoracle.store.postgres.logs import PgAudit, PgRuns
from memoracle.store.postgres.maintenance import PgMaintenance
from memoracle.store.postgres.memories import PgMemories
from memoracle.store.postgres.policies import grant_agent
from memoracle.store.postgres.transfer import PgTransfer

__all__ = ["PgStore", "grant_agent", "safe_url"]


class PgStore:
    def __init__(self, db: PgDatabase, version: int) -> None:
        self._db = db
        self.url = db.url  # the password masked
        self.readonly = False
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
        self.transfer = PgTransfer(db)  # its rows as export records (memoracle migrate)
        self.maintenance = PgMaintenance(db)  # backup, check, vacuum, the jobs' lock, …

    @classmethod
    def open(cls, url: str, *, now: datetime) -> PgStore:
        """Connect to the database at `url` and migrate it to the latest schema."""
        db = PgDatabase(url)
        try:
            version = schema.apply(db, now=db_time(now) or "")
            try:
                register_vector(db.conn)
            except psycopg.Error as exc:
                raise db.error(exc) from None
        except BaseException:
            db.close()
            raise
        return cls(db, version)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._db.transaction():
            yield

    def grant_agent(self, role: str, *, agent: str, user: str | None = None) -> None:
        """Let database `role` read and write `agent`'s rows only (`policies`)."""
        grant_agent(self._db, role, agent=agent, user=user)

    def close(self) -> None:
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
