"""The upkeep of the PostgreSQL store (`PgStore.maintenance`), phrased as the SQLite
store's (`store.maintenance`) by what the jobs need, answered the server's way:

- `change_marker`: from the server's own MVCC snapshot, no table and no trigger (below);
- `backup`: the store's export (`PgTransfer`'s records, vectors included) from one
  snapshot into a gzip file, read back and checked against the snapshot's row counts;
  `memoracle import` restores it. It is a copy of what memoracle stores, not a backup
  of the server (docs/fleet.md#backups);
- `check`: the consistency a server cannot see for itself (indexes left invalid by a
  failed build, rows pointing at rows that are gone, slots out of step with their
  memory, the schema's tables and the `vector` extension there). Pages damaged on disk
  are the server's to detect (data checksums, `amcheck`), not this;
- `reclaimable` and `compact`: dead row versions, and a plain `VACUUM (ANALYZE)` of
  memoracle's tables (never `VACUUM FULL`, which would lock every host out);
- `scratch_copy`: refused (a `StoreError` saying why): a shared database has no private
  copy to dry-run a job on;
- `size`: the bytes of memoracle's tables with their indexes and TOAST;
- `exclusive(name)`: a session-level advisory lock, so one host at a time runs a job
  such as the nightly (released at the end of the block, or by the server when the
  session ends: a killed process or a lost host leaves no lock behind);
- `state`: what health and doctor show of the server (URL masked, versions, indexes,
  size, dead rows).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from psycopg import sql
from psycopg.pq import TransactionStatus

from memoracle.errors import StoreError, WorkspaceError
from memoracle.files import replacing
from memoracle.storage_types import BackupInfo, Damage, FreeSpace, StoreState
from memoracle.store.postgres import schema
from memoracle.store.postgres.connection import PgDatabase, vector_state
from memoracle.store.postgres.transfer import PgTransfer
from memoracle.store.server_backup import server_backup_name, verify
from memoracle.store.transfer import SECTIONS, export_header

__all__ = ["PgMaintenance", "job_lock_key"]

COMPRESS_LEVEL = 6  # gzip level 9 took 1.5 times as long for 5% less (5,000 memories)
DEAD_SHARE_WARN = 0.2  # dead row versions, of all, from which health suggests a VACUUM
SERVER = "postgresql"  # the backend, as `StoreState` names it

# memoracle's tables (with each one's key), the ones `check` and `compact` look at.
TABLES: dict[str, str] = {
    "schema_version": "version",
    "episodes": "id",
    "memories": "id",
    "provenance": "id",
    "audit": "id",
    "runs": "id",
    "vectors": "content_hash, model_id",
    "vector_indexes": "model_id, dim",
    "slots": "memory_id, subject, attribute",
    "archive": "memory_id",
    "entities": "id",
    "entity_aliases": "entity_id, alias",
    "entity_memories": "entity_id, memory_id",
    "relations": "id",
    "relation_memories": "relation_id, memory_id",
    "graph_read": "memory_id",
    "held": "id",
    "agent_roles": "role_name",
}

# Rows that must point at a row that exists (a foreign key holds it while triggers are
# on; a restore or a hand edit with them off can break it), and slots whose `live`
# must follow their memory's status (a trigger keeps it).
CONSISTENCY: tuple[tuple[str, str], ...] = (
    (
        "provenance rows of a memory that is not there",
        "SELECT count(*) FROM provenance p"
        " WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = p.memory_id)",
    ),
    (
        "provenance rows of a turn that is not there",
        "SELECT count(*) FROM provenance p WHERE p.episode_id IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.id = p.episode_id)",
    ),
    (
        "memories superseded by a memory that is not there",
        "SELECT count(*) FROM memories m WHERE m.superseded_by IS NOT NULL"
        " AND NOT EXISTS (SELECT 1 FROM memories n WHERE n.id = m.superseded_by)",
    ),
    (
        "slots of a memory that is not there",
        "SELECT count(*) FROM slots s"
        " WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = s.memory_id)",
    ),
    (
        "slots whose 'live' is out of step with their memory's status",
        "SELECT count(*) FROM slots s JOIN memories m ON m.id = s.memory_id"
        " WHERE s.live IS DISTINCT FROM (m.status IN ('active', 'disputed'))",
    ),
    (
        "archive rows of a memory that is not there",
        "SELECT count(*) FROM archive a"
        " WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = a.memory_id)",
    ),
    (
        "graph links to a memory that is not there",
        "SELECT (SELECT count(*) FROM entity_memories x"
        "  WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = x.memory_id))"
        " + (SELECT count(*) FROM relation_memories x"
        "  WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = x.memory_id))",
    ),
    (
        "vector indexes recorded that do not exist",
        "SELECT count(*) FROM vector_indexes v WHERE to_regclass(v.index_name) IS NULL",
    ),
)


def job_lock_key(name: str) -> int:
    """The advisory lock key of job `name` ("memoracle-job:" + name folded into a
    signed bigint): the same on every host, apart from the writer's and migrations'."""
    digest = hashlib.blake2b(f"memoracle-job:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class PgMaintenance:
    """The maintenance of the PostgreSQL store over its open connection `db`."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self._held: set[str] = set()  # the jobs this store holds the lock of

    # -- a reader's cache ----------------------------------------------------------

    def change_marker(self) -> tuple[int, int]:
        """(transactions ended on the server, rows this connection changed in the
        transaction it has open): it changes whenever anyone's write could be seen.

        The first number is read from the server's MVCC snapshot, the thing that decides
        what a query sees: `xmax` (the next transaction id) minus the transactions still
        in progress. It goes up by one when any transaction that wrote (any host's, any
        database's on that server) commits or rolls back, and never goes down, so a
        reader holding a value never sees it again after a change; a transaction that
        only starts leaves it as it is. It may move for writes memoracle does not see
        (another database on the server): a reader then reads again for nothing. No
        table, trigger or lock is involved, so writers pay nothing for it.

        The second number counts this connection's own inserts, updates and deletes
        while it has a transaction open (0 outside one): its uncommitted writes, which no
        snapshot number shows. It is read from `pg_stat_xact_user_tables`, which also
        holds the rows of its earlier transactions not yet handed to the server's
        statistics: inside one transaction it only grows. (Idle, one query of a tenth of a
        millisecond on the server beside a round trip.)"""
        row = self._db.execute(
            "SELECT pg_snapshot_xmax(s)::text::bigint - (SELECT count(*) FROM pg_snapshot_xip(s))"
            " FROM pg_current_snapshot() AS s"
        ).fetchone()
        assert row is not None
        own = 0
        if self._db.conn.info.transaction_status != TransactionStatus.IDLE:
            # (a millisecond's query: asked only inside a transaction)
            mine = self._db.execute(
                "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)"
                " FROM pg_stat_xact_user_tables"
            ).fetchone()
            own = int(mine[0]) if mine else 0
        return int(row[0]), own

    # -- backups -------------------------------------------------------------------

    def backup(self, folder: Path, *, now: datetime) -> BackupInfo:
        """The store's export from one snapshot, gzipped, in
        `folder/memoracle-…Z.pg.jsonl.gz` (named for `now`): `memoracle export
        --vectors`'s lines (a header with the counts, then one record a line), which
        `memoracle import` restores into an empty store. Written under a temporary name,
        read back and checked against the snapshot's counts, synced, then renamed: a
        file that exists passed. Other hosts keep writing meanwhile (a read-only
        snapshot takes no lock a writer waits on)."""
        started = time.perf_counter()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{folder}: could not create the backup folder ({exc.strerror or exc})."
            ) from None
        dest = _free(folder, now)
        partial = dest.with_name(dest.name + ".partial")
        try:
            with replacing(dest, temp=partial, durable=True):
                counts = self._write_rows(partial, now)
                problems = verify(partial, counts).problems
                if problems:
                    raise StoreError(
                        f"{dest}: the backup failed verification ({'; '.join(problems[:3])});"
                        " the copy was removed and the database left as it was."
                    )
            size = dest.stat().st_size
        except OSError as exc:
            raise StoreError(
                f"{dest}: the backup could not be written ({exc.strerror or exc})."
                " Check that the folder is writable and has space."
            ) from None
        return BackupInfo(dest, size, counts, round(time.perf_counter() - started, 3))

    def _write_rows(self, path: Path, now: datetime) -> dict[str, int]:
        """The store's export (`memoracle export --vectors`'s lines, the records of
        `PgTransfer`) from one snapshot, gzipped, each section's records counted against
        the snapshot's rows; the header also names the server (password masked)."""
        rows = PgTransfer(self._db)
        model: dict[str, object] = {"id": None, "dim": None}  # no engine, no model here
        with (
            rows.snapshot(),
            gzip.open(path, "wt", encoding="utf-8", compresslevel=COMPRESS_LEVEL) as out,
        ):
            head = export_header(rows, vectors=True, exported_at=now, embedding_model=model)
            out.write(json.dumps({**head, "server": self._db.url}, ensure_ascii=False) + "\n")
            counts: dict[str, int] = head["counts"]
            for section in SECTIONS:
                written = 0
                for record in rows.records(section.type):
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    written += 1
                if written != counts[section.table]:
                    raise StoreError(
                        f"{self._db.url}: {section.table} gave {written} rows of"
                        f" {counts[section.table]}."
                    )
        return counts

    # -- checks and space ----------------------------------------------------------

    def check(self, limit: int = 5) -> list[str]:
        """["ok"], or up to `limit` problems: the `vector` extension missing, a table
        of the schema missing, and rows that point at nothing or are out of step
        (`CONSISTENCY`). Read-only; one snapshot. (An index left not valid by a build
        that failed is no damage, the planner passes it over: `state` reports it.)"""
        problems: list[str] = []
        with self._db.snapshot():
            if vector_state(self._db)[0] is None:
                problems.append("the 'vector' extension (pgvector) is not installed")
            missing = sorted(set(TABLES) - self._tables())
            if missing:
                problems.append(f"tables missing: {', '.join(missing)}")
            if not missing:
                for what, query in CONSISTENCY:
                    row = self._db.execute(query).fetchone()
                    if row and row[0]:
                        problems.append(f"{row[0]} {what}")
        return problems[: max(1, limit)] or ["ok"]

    def _tables(self) -> set[str]:
        rows = self._db.execute(
            "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p')"
            " AND relnamespace = current_schema()::regnamespace"
        ).fetchall()
        return {str(r[0]) for r in rows}

    def _invalid_indexes(self) -> list[str]:
        rows = self._db.execute(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE c.relnamespace = current_schema()::regnamespace"
            " AND NOT (i.indisvalid AND i.indisready) ORDER BY c.relname"
        ).fetchall()
        return [str(r[0]) for r in rows]

    def reclaimable(self) -> FreeSpace:
        """memoracle's tables in pages (with indexes and TOAST), and the pages their
        dead row versions take (each table's heap pages times its share of dead rows,
        from the server's statistics, which lag commits by up to a second or so):
        what a VACUUM makes reusable."""
        row = self._db.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0),"
            " coalesce(sum(ceil(pg_relation_size(c.oid)::float8"
            "   / current_setting('block_size')::int * s.n_dead_tup"
            "   / greatest(s.n_live_tup + s.n_dead_tup, 1))), 0),"
            " current_setting('block_size')::int"
            " FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid"
            " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
        ).fetchone()
        assert row is not None
        page = int(row[2])
        return FreeSpace(int(row[0]) // page, int(row[1]), page)

    def compact(self) -> int:
        """`VACUUM (ANALYZE)` each of memoracle's tables: dead row versions made
        reusable, the planner's statistics brought up to date, and empty pages at a
        table's end given back. Returns the bytes the tables shrank by (often 0: a plain
        VACUUM keeps the space for new rows). It takes no lock that stops readers or
        writers, so other hosts work on meanwhile; `VACUUM FULL`, which would, is never
        run. Call it outside a transaction."""
        before = self.size()
        for table in sorted(self._tables() & set(TABLES)):
            self._db.execute(sql.SQL("VACUUM (ANALYZE) {}").format(sql.Identifier(table)))
        return max(0, before - self.size())

    def scratch_copy(self, dest: Path) -> None:
        """Refused: a dry run works on a private copy of the store, and a database that
        several hosts share has none to give (a copy would be another database made
        from it, which PostgreSQL allows only while no one is connected to it)."""
        raise StoreError(
            f"{self._db.url}: a dry run works on a private copy of the store, and a shared"
            " PostgreSQL database has none to give; `nightly --dry-run` is SQLite-only."
            " Run one step at a time instead (`memoracle nightly --only STEP`): every step"
            " is audited, and the night takes a verified backup before a bulk change."
        )

    def size(self) -> int:
        """The bytes memoracle's tables take on the server, indexes and TOAST included."""
        row = self._db.execute(
            "SELECT coalesce(sum(pg_total_relation_size(oid)), 0) FROM pg_class"
            " WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'"
        ).fetchone()
        return int(row[0]) if row else 0

    # -- one holder at a time ------------------------------------------------------

    @contextmanager
    def exclusive(self, name: str, *, who: str) -> Iterator[None]:
        """Hold job `name`'s advisory lock (`pg_try_advisory_lock`, session-level) for
        the block: one holder among every host sharing the database. Another holder
        makes it a `WorkspaceError` naming it (`who`, e.g. "Another nightly run"); the
        lock goes at the block's end, or with the session (a killed process, a host
        that went away)."""
        key = job_lock_key(name)
        if name in self._held:
            raise WorkspaceError(f"{who} is working on {self._db.url} from this process.")
        row = self._db.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if not (row and row[0]):
            raise WorkspaceError(
                f"{who} ({self._holder(key)}) is working on {self._db.url}; wait for it. Its"
                " lock goes when that run ends or its connection closes."
            )
        self._held.add(name)
        try:
            with self._db.pinned(f"the {name} job's lock"):  # not replaced if lost
                yield
        finally:
            self._held.discard(name)
            try:
                self._db.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except StoreError:
                pass  # the session is gone, and its lock with it

    def _holder(self, key: int) -> str:
        """Who holds advisory lock `key`, as the server knows them (its own process
        id, the client's address and when it connected; another role's session shows
        only its process id)."""
        row = self._db.execute(
            "SELECT l.pid, a.client_addr::text, a.application_name, a.backend_start"
            " FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND l.classid = ((%s::bigint >> 32) & 4294967295)::bigint::oid"
            " AND l.objid = (%s::bigint & 4294967295)::bigint::oid",
            (key, key),
        ).fetchone()
        if row is None:
            return "a session that just let go"
        pid, addr, app, since = row
        said = [f"server process {pid}"]
        if addr:
            said.append(f"from {addr}")
        if app:
            said.append(f"as {app}")
        if since is not None:
            said.append(f"connected since {since.isoformat(timespec='seconds')}")
        return ", ".join(said)

    # -- what health and doctor show -------------------------------------------------

    def state(self) -> StoreState:
        """The server as health.json's `database` shows it: the URL (password masked),
        the server's version, pgvector's (installed, and offered by the server), the
        schema version, the HNSW and GIN indexes (and any index not valid), memoracle's
        size, live and dead rows. Problems: an index not valid, dead rows past
        `DEAD_SHARE_WARN` (the extension and the tables are `check`'s)."""
        db = self._db
        server = db.execute("SHOW server_version").fetchone()
        installed, offered = vector_state(db)
        version = _schema_version(db)
        indexes = db.execute(
            "SELECT c.relname, am.amname, i.indisvalid AND i.indisready"
            " FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_am am ON am.oid = c.relam"
            " WHERE c.relnamespace = current_schema()::regnamespace"
            " AND am.amname IN ('hnsw', 'gin') ORDER BY c.relname"
        ).fetchall()
        invalid = self._invalid_indexes()
        rows = db.execute(
            "SELECT coalesce(sum(n_live_tup), 0), coalesce(sum(n_dead_tup), 0),"
            " max(greatest(last_vacuum, last_autovacuum))"
            " FROM pg_stat_user_tables WHERE schemaname = current_schema()"
        ).fetchone()
        live, dead, vacuumed = (int(rows[0]), int(rows[1]), rows[2]) if rows else (0, 0, None)
        share = round(dead / (live + dead), 4) if live + dead else 0.0
        fields: dict[str, object] = {
            "url": db.url,
            "bytes": self.size(),
            "server_version": str(server[0]) if server else None,
            "vector_version": installed,
            "vector_offered": offered,
            "schema_version": version,
            "schema_latest": schema.LATEST,
            "hnsw_indexes": [str(n) for n, am, _ in indexes if am == "hnsw"],
            "gin_indexes": [str(n) for n, am, _ in indexes if am == "gin"],
            "invalid_indexes": invalid,
            "live_rows": live,
            "dead_rows": dead,
            "dead_share": share,
            "last_vacuum": vacuumed.isoformat() if vacuumed is not None else None,
        }
        problems = self._problems(fields, invalid, share)
        return StoreState(db.url, fields, "memoracle's consistency check", problems, SERVER)

    def _problems(
        self, fields: dict[str, object], invalid: list[str], share: float
    ) -> tuple[Damage, ...]:
        url = self._db.url
        found: list[Damage] = []
        if invalid:
            found.append(
                Damage(
                    "index_invalid",
                    f"{url}: indexes not valid: {', '.join(invalid)}. Search cannot use"
                    " them. Run REINDEX INDEX CONCURRENTLY on each as the tables' owner.",
                )
            )
        if share >= DEAD_SHARE_WARN and int(str(fields["dead_rows"])) > 1000:
            found.append(
                Damage(
                    "dead_rows_high",
                    f"{url}: {share:.0%} of memoracle's row versions are dead (over"
                    f" {DEAD_SHARE_WARN:.0%}): autovacuum is behind. `memoracle nightly"
                    " --only vacuum` vacuums memoracle's tables; check autovacuum's settings.",
                )
            )
        return tuple(found)


def _schema_version(db: PgDatabase) -> int | None:
    """The schema version recorded (None: no `schema_version` table), read only."""
    if db.execute("SELECT to_regclass('schema_version')").fetchone() == (None,):
        return None
    row = db.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def _free(folder: Path, now: datetime) -> Path:
    n = 1
    while (folder / server_backup_name(now, n)).exists():
        n += 1
    return folder / server_backup_name(now, n)


if TYPE_CHECKING:  # mypy proves it answers every member of the protocol
    from memoracle.store.protocols import Maintenance

    def _satisfies(maintenance: PgMaintenance) -> None:
        _maintenance: Maintenance = maintenance
