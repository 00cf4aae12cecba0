"""Many writers on one PostgreSQL database (docs/fleet.md#many-writers): writers of one
owner (agent, user, chat) queue, so nothing is stored twice and no turn is lost; writers
of different owners run at once; a whole-store write runs alone; the rows every owner
shares (the graph's entities) never deadlock two owners' writes."""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from pgharness import MISSING, SKIP_REASON

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.errors import StoreError
from memoracle.types import Scope, Turn

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)

if not MISSING:
    from memoracle.engine import Engine
    from memoracle.store.postgres import PgStore

TEXTS = [
    "I live in Oslo now.",
    "My sister Anna works at the clinic in Bergen.",
    "We decided to use PostgreSQL for the billing service.",
    "I prefer green tea over coffee in the morning.",
    "Remind me to call Marc about the lease on Friday.",
    "My dentist appointment is on March 3.",
]


def _run(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)


def test_writers_of_one_owner_store_each_memory_once_and_every_turn(
    pg_store_url: str, settings: Settings, clock: FixedClock
) -> None:
    """Six writers, each its own connection and engine, say the same texts at the same
    moment in two owners' names; half of each owner's writers say them in a shared
    context, half privately (one owner: a duplicate is looked for across both). Every
    turn is kept, and each text is one memory per owner."""
    owners = [Scope(agent="fleet", user="ann"), Scope(agent="fleet", user="bob")]
    writers = [
        (n, Scope(owner.agent, owner.user, visibility="shared" if n % 2 else "private"))
        for n in range(3)
        for owner in owners
    ]
    engines = [
        Engine(settings, PgStore.open(pg_store_url, now=clock.now()), clock) for _ in writers
    ]
    start = threading.Barrier(len(writers))
    failures: list[BaseException] = []

    def write(engine: Engine, n: int, scope: Scope) -> None:
        try:
            for i, text in enumerate(TEXTS):
                start.wait()  # every writer says text i at once
                at = clock.now() + timedelta(minutes=i)
                engine.capture(
                    [Turn("user", text, at, f"w{n}-{scope.visibility}", str(i))], scope=scope
                )
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)
            start.abort()

    _run(
        [
            threading.Thread(target=write, args=(e, n, s))
            for e, (n, s) in zip(engines, writers, strict=True)
        ]
    )
    try:
        assert not failures, failures
        counted: Counter[tuple[str | None, str]] = Counter()
        for memory in engines[0]._store.memories.select(limit=10_000):
            counted[(memory.scope.user, memory.text)] += 1
        assert counted, "the texts made no memory"
        assert set(counted.values()) == {1}, [k for k, v in counted.items() if v > 1]
        assert {user for user, _ in counted} == {"ann", "bob"}
        with psycopg.connect(pg_store_url) as conn:
            (turns,) = conn.execute("SELECT count(*) FROM episodes").fetchone()
        assert turns == len(writers) * len(TEXTS)
    finally:
        for engine in engines:
            engine._store.close()


def _waits(
    store: PgStore, scopes: list[Scope] | None, release: threading.Event
) -> threading.Thread:
    """A thread that opens a write in `scopes`' names (None: the whole store) and sets
    `done` once it holds its locks."""
    done = threading.Event()

    def run() -> None:
        with store.transaction(scopes):
            done.set()
            release.wait(10)

    thread = threading.Thread(target=run)
    thread.done = done  # type: ignore[attr-defined]
    thread.start()
    return thread


def test_writers_of_different_owners_run_at_once_and_a_whole_store_write_alone(
    pg_store_url: str, clock: FixedClock
) -> None:
    stores = [PgStore.open(pg_store_url, now=clock.now()) for _ in range(4)]
    hold, go = threading.Event(), threading.Event()
    try:
        first = _waits(stores[0], [Scope(agent="a", user="u")], hold)
        assert first.done.wait(5)  # type: ignore[attr-defined]
        other = _waits(stores[1], [Scope(agent="b", user="u")], go)
        same = _waits(stores[2], [Scope(agent="a", user="u", visibility="shared")], go)
        whole = _waits(stores[3], None, go)
        assert other.done.wait(5), "another owner's write waited for this one"  # type: ignore[attr-defined]
        time.sleep(0.3)
        assert not same.done.is_set(), "two writes of one owner ran at once"  # type: ignore[attr-defined]
        assert not whole.done.is_set(), "a whole-store write ran beside an owner's"  # type: ignore[attr-defined]
        go.set()
        hold.set()
        for thread in (first, other, same, whole):
            thread.join(10)
        assert same.done.is_set() and whole.done.is_set()  # type: ignore[attr-defined]
    finally:
        hold.set()
        go.set()
        for store in stores:
            store.close()


def test_two_owners_naming_the_same_entities_in_opposite_orders_do_not_deadlock(
    pg_store_url: str, clock: FixedClock
) -> None:
    """The graph's entities are every owner's: one write inserts "oslo" then "bergen",
    another "bergen" then "oslo", at the same time. Both are stored."""
    stores = [PgStore.open(pg_store_url, now=clock.now()) for _ in range(2)]
    first_named = threading.Event()
    failures: list[BaseException] = []

    def one(store: PgStore, owner: str, keys: list[str], *, lead: bool) -> None:
        try:
            with store.transaction([Scope(agent=owner)]):
                if not lead:
                    first_named.wait(5)
                store.graph.entity(keys[0], keys[0].title(), "place", now=clock.now())
                if lead:
                    first_named.set()
                    time.sleep(0.5)  # the other write names its first entity meanwhile
                store.graph.entity(keys[1], keys[1].title(), "place", now=clock.now())
        except BaseException as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    _run(
        [
            threading.Thread(
                target=one, args=(stores[0], "a", ["oslo", "bergen"]), kwargs={"lead": True}
            ),
            threading.Thread(
                target=one, args=(stores[1], "b", ["bergen", "oslo"]), kwargs={"lead": False}
            ),
        ]
    )
    try:
        assert not failures, failures
        assert stores[0].graph.counts()["entities"] == 2
    finally:
        for store in stores:
            store.close()


def test_a_whole_store_write_inside_an_owners_write_is_refused(
    pg_store_url: str, clock: FixedClock
) -> None:
    store = PgStore.open(pg_store_url, now=clock.now())
    try:
        with pytest.raises(StoreError, match="inside a write confined to some owners"):
            with store.transaction([Scope(agent="a")]):
                with store.transaction():
                    pass
        with store.transaction([Scope(agent="a")]):  # the same owner's: joins
            with store.transaction([Scope(agent="a")]):
                pass
        with store.transaction():  # anything joins a whole-store write
            with store.transaction([Scope(agent="b")]):
                pass
    finally:
        store.close()


def test_a_readers_search_and_recall_wait_for_no_other_owners_write(
    pg_store_url: str, tmp_path: Path, clock: FixedClock
) -> None:
    """A reader's search first stores the vectors of texts new since its last one (every
    owner's rows), and its recall records the use of what it recalled (those memories'
    owners' rows): neither may queue behind another owner's capture (the load test's
    readers waited seconds behind the writers while both took the whole store)."""
    settings = load(
        tmp_path / "home",
        env={},
        overrides={"storage.url": pg_store_url, "embedding.model": "hash"},
    )
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as writer, Engine.open(settings, clock=clock) as reader:
        writer.capture([Turn("user", TEXTS[0], clock.now())])  # a text with no vector yet
        holder = PgStore.open(pg_store_url, now=clock.now())
        hold = threading.Event()
        try:
            owner = _waits(holder, [Scope(agent="someone", user="else")], hold)
            assert owner.done.wait(5)  # type: ignore[attr-defined]
            found: list[object] = []
            search = threading.Thread(target=lambda: found.append(reader.search("Oslo")))
            search.start()
            search.join(5)
            assert not search.is_alive(), "the search waited for another owner's write"
            recall = threading.Thread(target=lambda: found.append(reader.recall("Oslo")))
            recall.start()
            recall.join(5)
            assert not recall.is_alive(), "the recall waited for another owner's write"
            assert len(found) == 2 and "Oslo" in found[1].text  # type: ignore[attr-defined]
        finally:
            hold.set()
            owner.join(10)
            holder.close()
