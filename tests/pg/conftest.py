"""Fixtures over a real PostgreSQL server (pgharness.py): one server for the session,
a fresh database for each test, and `backend`, a store of either kind, so one test runs
on SQLite and on PostgreSQL alike.

Tests that need the server are marked `pg`; they skip, saying why, only where psycopg,
pgvector or pgserver is not installed (`make test` and CI install them with the dev
extra, so there they run)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pgharness import MISSING, SKIP_REASON, PgServer

from memoracle.clock import FixedClock
from memoracle.store import Store

_names = itertools.count(1)
T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    if MISSING:
        pytest.skip(SKIP_REASON)
    server = PgServer.start()
    try:
        yield server
    finally:
        server.stop()


def _database(server: PgServer, template: str = "template1") -> Iterator[str]:
    import psycopg

    name = f"t{next(_names)}"
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    yield server.url(name)
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server (dropped afterwards)."""
    yield from _database(pg_server)


@pytest.fixture(scope="session")
def pg_migrated(pg_server: PgServer) -> str:
    """The name of a database migrated once for the session, the template of
    `pg_store_url`'s tests."""
    import psycopg

    from memoracle.store.postgres import PgStore

    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute("CREATE DATABASE migrated")
    PgStore.open(pg_server.url("migrated"), now=T0).close()
    return "migrated"


@pytest.fixture
def pg_store_url(pg_server: PgServer, pg_migrated: str) -> str:
    """The URL of the session's migrated database, emptied of rows first (every row
    deleted, identities restarted, the vector indexes dropped), where a new database
    would take 0.5 s to copy and 1 s to migrate."""
    import psycopg

    url = pg_server.url(pg_migrated)
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")  # triggers, keys: off
        for (table,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            " AND tablename != 'schema_version'"
        ).fetchall():
            conn.execute(f"DELETE FROM {table}")
        for (sequence,) in conn.execute(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
        ).fetchall():
            conn.execute(f"ALTER SEQUENCE {sequence} RESTART")
        for (name,) in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'"
        ).fetchall():
            conn.execute(f"DROP INDEX {name}")
    return url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
def backend(request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock) -> Iterator[object]:
    """A store of each kind: the SQLite `Store`, then the PostgreSQL `PgStore`."""
    if request.param == "sqlite":
        store = Store.open(tmp_path / "store.db", now=clock.now())
    else:
        url = request.getfixturevalue("pg_store_url")  # skips, saying why, without psycopg
        from memoracle.store.postgres import PgStore

        store = PgStore.open(url, now=clock.now())  # type: ignore[assignment]
    yield store
    store.close()
