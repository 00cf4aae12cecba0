"""Fixtures over a real PostgreSQL server (pgharness.py): one server for the session,
a fresh database for each test, and `backend`, a store of either kind, so one test runs
on SQLite and on PostgreSQL alike.

Tests that need the server are marked `pg`; they skip, saying why, only where psycopg,
pgvector or pgserver is not installed (`make test` and CI install them with the dev
extra, so there they run)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgharness import MISSING, SKIP_REASON, PgServer

from memoracle.clock import FixedClock
from memoracle.store import Store

_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    if MISSING:
        pytest.skip(SKIP_REASON)
    server = PgServer.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """The URL of a new, empty database on the session's server (dropped afterwards)."""
    import psycopg

    name = f"t{next(_names)}"
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield pg_server.url(name)
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.pg)])
def backend(request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock) -> Iterator[object]:
    """A store of each kind: the SQLite `Store`, then the PostgreSQL `PgStore`."""
    if request.param == "sqlite":
        store = Store.open(tmp_path / "store.db", now=clock.now())
    else:
        from memoracle.store.postgres import PgStore

        url = request.getfixturevalue("pg_url")
        store = PgStore.open(url, now=clock.now())  # type: ignore[assignment]
    yield store
    store.close()
