"""The server going away (docs/fleet.md#many-writers): a connection the server ended
between calls is replaced, and what it cut is retried once when nothing of it was
written; a write cut in the middle fails with a clear `StoreError`, keeps nothing, and
the next call works again. No message shows the password."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from pgharness import MISSING, SKIP_REASON, PgServer

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.errors import StoreError
from memoracle.text import content_hash
from memoracle.types import NewMemory, Turn

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)

if not MISSING:
    from memoracle.engine import Engine
    from memoracle.store.postgres import PgStore


def _end_session(server: PgServer, store: PgStore) -> None:
    """Another connection ends `store`'s session, as a restart or an administrator would."""
    pid = store._db.conn.info.backend_pid
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(100):  # until the session is gone
            if not admin.execute(
                "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)
            ).fetchone():
                break
            time.sleep(0.02)


def _memory(text: str, clock: FixedClock) -> NewMemory:
    return NewMemory("fact", text, "semantic", "capture", clock.now(), content_hash(text))


def test_a_session_ended_between_calls_is_replaced_and_the_call_goes_through(
    pg_server: PgServer, pg_store_url: str, settings: Settings, clock: FixedClock
) -> None:
    """Between two captures the server ends the session: the next capture, a read and
    a write alike, runs on a new connection, once each."""
    engine = Engine(settings, PgStore.open(pg_store_url, now=clock.now()), clock)
    store = engine._store
    assert isinstance(store, PgStore)
    try:
        engine.capture([Turn("user", "I live in Oslo now.", clock.now(), "s", "1")])
        _end_session(pg_server, store)
        later = clock.now() + timedelta(minutes=1)
        engine.capture([Turn("user", "My sister Anna lives in Bergen.", later, "s", "2")])
        assert store._db.session == 2
        _end_session(pg_server, store)
        assert store.memories.max_id() >= 2  # a read, outside any transaction
        assert store._db.session == 3
        with psycopg.connect(pg_store_url) as conn:
            assert conn.execute("SELECT count(*) FROM episodes").fetchone() == (2,)
    finally:
        store.close()


def test_a_write_cut_in_the_middle_keeps_nothing_says_so_and_the_next_call_works(
    pg_server: PgServer, pg_store_url: str, clock: FixedClock
) -> None:
    store = PgStore.open(pg_store_url, now=clock.now())
    try:
        with pytest.raises(StoreError) as caught:
            with store.transaction():
                store.memories.insert(_memory("half written", clock), now=clock.now())
                _end_session(pg_server, store)
                store.memories.insert(_memory("half written, again", clock), now=clock.now())
        message = str(caught.value)
        assert "connection to the server was lost in the middle of a write" in message
        assert "kept none of it" in message and "The next call connects again" in message
        assert pg_server.password not in message and "***" in message
        assert store.memories.max_id() == 0  # nothing kept; and a read works again
        with store.transaction():  # so does a write
            store.memories.insert(_memory("whole", clock), now=clock.now())
        assert [m.text for m in store.memories.select(limit=10)] == ["whole"]
    finally:
        store.close()


def test_a_server_that_is_gone_is_a_clear_error_without_the_password(
    settings: Settings, clock: FixedClock
) -> None:
    """The server stops for good: each call tries a new connection and fails with a
    message that says why (refused) and what to check, naming the server without the
    password."""
    server = PgServer.start()
    try:
        engine = Engine(settings, PgStore.open(server.url(), now=clock.now()), clock)
        engine.capture([Turn("user", "I live in Oslo now.", clock.now(), "s", "1")])
    finally:
        server.stop()
    try:
        for _ in range(2):
            with pytest.raises(StoreError) as caught:
                engine.capture([Turn("user", "I moved to Bergen.", clock.now(), "s", "2")])
            message = str(caught.value)
            assert "could not connect" in message and "Connection refused" in message
            assert message.endswith("Is the server running, and are the host and port right?")
            assert server.password not in message and "***" in message
    finally:
        engine._store.close()


def test_a_job_whose_lock_went_with_its_session_stops_instead_of_reconnecting(
    pg_server: PgServer, pg_store_url: str, clock: FixedClock
) -> None:
    """The nightly's lock is the session's: when that session ends mid-run, the run's
    next call fails saying so (another host may have taken the lock), rather than going
    on without it on a new connection; after the run, calls reconnect as usual."""
    store = PgStore.open(pg_store_url, now=clock.now())
    try:
        with pytest.raises(StoreError, match="the nightly job's lock was lost"):
            with store.maintenance.exclusive("nightly", who="Another nightly run"):
                _end_session(pg_server, store)
                with store.transaction():
                    store.memories.insert(_memory("during the night", clock), now=clock.now())
        assert store.memories.max_id() == 0
    finally:
        store.close()
