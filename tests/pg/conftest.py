"""Fixtures over a real PostgreSQL server (pgharness.py): one server for the session,
a fresh database for each test, and `backend`, a store of either kind, so one test runs
on SQLite and on PostgreSQL alike.

`on_postgres` puts every engine a test opens on that server, so the behaviour suite
written for SQLite runs unchanged on PostgreSQL (test_on_pg_*.py), and `any_engine`
gives an engine of each kind, opened through `storage.url`.

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
from memoracle.config import load
from memoracle.engine import Engine
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
    url = pg_server.url(pg_migrated)
    empty_database(url)
    return url


def empty_database(url: str) -> None:
    """Every row of the database at `url` gone, its identities restarted and its vector
    indexes dropped: as new, its migrations kept. TRUNCATE, not DELETE: a session of
    behaviour tests would leave thousands of dead row versions, which the server's
    state reports (`dead_rows_high`) as a real store's."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("SET LOCAL session_replication_role = replica")  # triggers, keys: off
        tables = [
            str(t)
            for (t,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                " AND tablename != 'schema_version'"
            ).fetchall()
        ]
        conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY")
        for (sequence,) in conn.execute(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
        ).fetchall():
            conn.execute(f"ALTER SEQUENCE {sequence} RESTART")
        for (name,) in conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'"
        ).fetchall():
            conn.execute(f"DROP INDEX {name}")


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


@pytest.fixture
def on_postgres(pg_store_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every engine the test opens or initialises is on the session's PostgreSQL
    database (emptied first), whatever its settings say: the one switch
    (`engine.backend.url`) replaced, so a behaviour test written for SQLite runs
    unchanged on PostgreSQL (tests/pg/test_on_pg_*.py)."""
    from memoracle.engine import backend

    monkeypatch.setattr(backend, "url", lambda settings: pg_store_url)
    return pg_store_url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
def any_engine(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock
) -> Iterator[Engine]:
    """An engine of each kind, opened through `storage.url` as a user would: the SQLite
    file, then the session's PostgreSQL database (emptied first)."""
    overrides = {"embedding.model": "hash"}
    if request.param == "postgres":
        overrides["storage.url"] = request.getfixturevalue("pg_store_url")
    settings = load(tmp_path / "home", env={}, overrides=overrides)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        yield engine
