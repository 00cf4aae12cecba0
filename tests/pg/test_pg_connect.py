"""Connecting to PostgreSQL: clear errors that never show the password, the pgvector
extension named where it is missing, migrations applied once."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pgharness import MISSING, SKIP_REASON, PgServer, pginstall

from memoracle.clock import FixedClock
from memoracle.errors import StoreError

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)

if not MISSING:
    from memoracle.store.postgres import PgStore, safe_url
    from memoracle.store.postgres.schema import LATEST


def _open(url: str, clock: FixedClock) -> PgStore:
    return PgStore.open(url, now=clock.now())


def test_a_url_that_is_not_postgresql_is_refused(clock: FixedClock) -> None:
    with pytest.raises(StoreError, match="not a PostgreSQL URL"):
        _open("mysql://me:hunter2@localhost/db", clock)
    with pytest.raises(StoreError, match="not a PostgreSQL URL") as caught:
        _open("postgresql://me:hunter2@localhost:port/db", clock)
    assert "hunter2" not in str(caught.value)


def test_a_wrong_password_says_so_without_printing_it(
    pg_server: PgServer, clock: FixedClock
) -> None:
    url = pg_server.url(password="s3cret-wrong")
    with pytest.raises(StoreError) as caught:
        _open(url, clock)
    message = str(caught.value)
    assert "password authentication failed" in message
    assert "Check the user name and password" in message
    assert "s3cret-wrong" not in message and pg_server.password not in message
    assert f"postgres:***@127.0.0.1:{pg_server.port}/postgres" in message


def test_an_unreachable_server_and_a_missing_database(
    pg_server: PgServer, clock: FixedClock
) -> None:
    with pytest.raises(StoreError, match="Is the server running") as caught:
        _open(f"postgresql://postgres:pw-unseen@127.0.0.1:{_closed_port()}/x", clock)
    assert "pw-unseen" not in str(caught.value)
    with pytest.raises(StoreError, match="createdb"):
        _open(pg_server.url("no_such_database"), clock)


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when this returns


def test_safe_url_masks_only_the_password() -> None:
    assert safe_url("postgresql://u:p%40ss@h:5432/d?sslmode=require") == (
        "postgresql://u:***@h:5432/d?sslmode=require"
    )
    assert safe_url("postgresql://u@h/d") == "postgresql://u@h/d"


def test_migrations_run_once_and_a_newer_schema_is_refused(pg_url: str, clock: FixedClock) -> None:
    store = _open(pg_url, clock)
    assert store.schema_version == LATEST
    store.close()
    store = _open(pg_url, clock)  # again: nothing to apply
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()
        assert [v for v, _ in rows] == list(range(1, LATEST + 1))
        conn.execute("INSERT INTO schema_version VALUES (%s, 'future', now())", (LATEST + 1,))
    with pytest.raises(StoreError, match="newer than this memoracle knows"):
        _open(pg_url, clock)


def test_a_role_that_may_not_install_pgvector_is_told_what_to_ask(
    pg_server: PgServer, pg_url: str, clock: FixedClock
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("CREATE ROLE plain LOGIN PASSWORD 'plain-pw'")
        admin.execute("GRANT CREATE ON SCHEMA public TO plain")
    database = pg_url.rsplit("/", 1)[1]
    try:
        with pytest.raises(StoreError) as caught:
            _open(pg_server.url(database, user="plain", password="plain-pw"), clock)
        message = str(caught.value)
        assert "'vector' extension (pgvector)" in message
        assert "CREATE EXTENSION vector" in message
        assert "plain-pw" not in message
    finally:
        with psycopg.connect(pg_server.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {database} WITH (FORCE)")
            admin.execute("DROP ROLE plain")


@pytest.fixture
def server_without_pgvector() -> Iterator[PgServer]:
    """A server from the same PostgreSQL with pgvector's files left out of its share
    folder: `bin` copied (PostgreSQL finds share/ and lib/ beside its own binary),
    everything else linked."""
    real = pginstall()
    home = Path(tempfile.mkdtemp(prefix="memoracle-pgfake-"))
    os.chmod(home, 0o755)  # the server's user (as root: pgserver) runs from here
    fake = home / "site" / "pginstall"
    # The wheel's binaries find their libraries at $ORIGIN/../../../pgserver.libs.
    os.symlink(real.parent.parent / "pgserver.libs", home / "pgserver.libs")
    (fake / "bin").mkdir(parents=True)
    for name in ("initdb", "postgres", "pg_isready"):
        shutil.copy2(real / "bin" / name, fake / "bin" / name)
    os.symlink(real / "lib", fake / "lib")
    share = fake / "share" / "postgresql"
    (share / "extension").mkdir(parents=True)
    for entry in (real / "share" / "postgresql").iterdir():
        if entry.name != "extension":
            os.symlink(entry, share / entry.name)
    for entry in (real / "share" / "postgresql" / "extension").iterdir():
        if not entry.name.startswith("vector"):
            os.symlink(entry, share / "extension" / entry.name)
    try:
        server = PgServer.start(install=fake)
        try:
            yield server
        finally:
            server.stop()
    finally:
        shutil.rmtree(home)


@pytest.mark.slow
def test_a_server_without_pgvector_names_the_extension_and_how_to_install_it(
    server_without_pgvector: PgServer, clock: FixedClock
) -> None:
    with pytest.raises(StoreError) as caught:
        _open(server_without_pgvector.url(), clock)
    message = str(caught.value)
    assert "the server has no 'vector' extension (pgvector)" in message
    assert "CREATE EXTENSION vector" in message and "pgvector" in message
    assert server_without_pgvector.password not in message


def test_the_server_going_away_mid_write_keeps_nothing_half_written(
    pg_server: PgServer, pg_url: str, clock: FixedClock
) -> None:
    """The connection is cut inside a transaction (the server ends the session): the
    write fails as a `StoreError`, and nothing of it is stored."""
    from memoracle.text import content_hash
    from memoracle.types import NewMemory

    store = _open(pg_url, clock)
    new = NewMemory(
        kind="fact",
        text="half written",
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash("half written"),
    )
    pid = store._db.conn.info.backend_pid
    with pytest.raises(StoreError, match="terminating connection|server closed|connection"):
        with store.transaction():
            store.memories.insert(new, now=clock.now())
            with psycopg.connect(pg_server.url(), autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            store.memories.insert(new, now=clock.now())
    store.close()
    again = _open(pg_url, clock)
    try:
        assert again.memories.max_id() == 0
    finally:
        again.close()


def test_writers_queue_so_a_check_then_write_stays_atomic(
    pg_store_url: str, clock: FixedClock
) -> None:
    """Eight connections each look for a duplicate, wait, and store the memory when none
    was found: as on SQLite, writers take turns, so exactly one memory is stored."""
    import threading
    import time

    from memoracle.text import content_hash
    from memoracle.types import NewMemory, Scope

    new = NewMemory(
        kind="fact",
        text="I live in Oslo",
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash("I live in Oslo"),
    )
    stores = [_open(pg_store_url, clock) for _ in range(8)]
    start = threading.Barrier(len(stores))

    def write(store: PgStore) -> None:
        start.wait()
        with store.transaction():
            if store.memories.find_duplicate(new.content_hash, None, Scope()) is None:
                time.sleep(0.05)  # the gap another writer would slip into
                store.memories.insert(new, now=clock.now())

    threads = [threading.Thread(target=write, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert stores[0].memories.counts() == {("active", "fact"): 1}
    finally:
        for store in stores:
            store.close()
