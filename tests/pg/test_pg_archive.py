"""The cold tier on both backends (the `backend` fixture): each test runs on SQLite and
on PostgreSQL alike, and on SQLite wherever PostgreSQL's packages are missing (the ones
about SQLite's own FTS5 index and migrations are tests/store/test_archive.py's)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from memoracle.clock import FixedClock
from memoracle.errors import InvalidInput, NotFound
from memoracle.storage_types import View, every_word
from memoracle.store import Store as SqliteStore
from memoracle.text import content_hash
from memoracle.types import Memory, NewMemory, Scope, Turn

Store = Any  # either backend's store


def _new(text: str, clock: FixedClock, **kw: object) -> NewMemory:
    base = NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def _add(store: Store, clock: FixedClock, text: str, **kw: object) -> int:
    with store.transaction():
        return store.memories.insert(_new(text, clock, **kw), now=clock.now())


def _get(store: Store, memory_id: int) -> Memory:
    memory = store.memories.get(memory_id)
    assert memory is not None
    return memory


def _status_changed_at(store: Store, memory_id: int) -> object:
    """The memory's `status_changed_at` as the backend holds it: no value carries it."""
    mark = "?" if isinstance(store, SqliteStore) else "%s"
    sql = f"SELECT status_changed_at FROM memories WHERE id = {mark}"
    return store._db.execute(sql, (memory_id,)).fetchone()[0]


def _lexical(store: Store, query: str, view: View | None = None) -> list[int]:
    words = every_word(query)
    assert words is not None
    return [i for i, _ in store.index.lexical_memories(words, view or View(), limit=10)]


def test_archived_memories_leave_search_guardrails_and_fresh(
    backend: Store, clock: FixedClock
) -> None:
    store = backend
    fact = _add(store, clock, "The staging server is in Frankfurt")
    rule = _add(store, clock, "Never deploy the staging server on Friday", kind="guardrail")
    view = View()
    assert set(_lexical(store, "staging server", view)) == {fact, rule}
    assert store.index.guardrails(view) == [rule]
    assert store.index.fresh(view, since=clock.now() - timedelta(days=1), limit=10) == [fact]
    hashes = [_get(store, fact).content_hash, _get(store, rule).content_hash]

    clock.advance(days=1)
    with store.transaction():
        moved = store.archive.move(
            [(fact, "below_threshold", 0.02), (rule, "manual", None)], now=clock.now(), actor="t"
        )
    assert moved == 2
    assert _lexical(store, "staging server", view) == []
    assert store.memories.match("staging server") == []
    assert store.memories.match("staging server", statuses=("archived",)) == []  # not in FTS
    assert store.index.guardrails(view) == []
    assert store.index.fresh(view, since=clock.now() - timedelta(days=2), limit=10) == []
    assert store.index.memories_with_hashes(hashes, view) == []
    assert store.memories.find_duplicate(hashes[0], None, Scope()) is None
    assert [m.id for m in store.memories.select(status="archived")] == [rule, fact]
    assert _get(store, fact).status == "archived"  # the id still resolves

    with store.transaction():
        store.archive.restore(fact, now=clock.now(), actor="t")
        store.archive.restore(rule, now=clock.now(), actor="t")
    assert set(_lexical(store, "staging server", view)) == {fact, rule}
    assert store.index.guardrails(view) == [rule]


def test_restore_gives_the_memory_back_exactly(backend: Store, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        episode = store.episodes.insert(
            Turn("user", "I think the gym opens at 7", turn_id="k1"),
            at=clock.now(),
            now=clock.now(),
            scope=Scope(),
        )
        mid = store.memories.insert(
            _new(
                "The gym opens at 7",
                clock,
                subject="gym",
                activation=0.04,
                importance=0.7,
                details={"hedged": True},
                scope=Scope(agent="main", user="ana"),
            ),
            now=clock.now(),
        )
        store.memories.add_provenance(mid, now=clock.now(), episode_id=episode)
        store.memories.add_provenance(mid, now=clock.now(), origin="MEMORY.md:12")
        store.memories.bump(mid, now=clock.now(), boost=0.01)
    clock.advance(days=2)
    with store.transaction():
        store.memories.set_status(mid, "disputed", now=clock.now())
    disputed_at = _status_changed_at(store, mid)
    before = _get(store, mid)
    assert before.status == "disputed" and before.episode_ids == (episode,)

    clock.advance(days=40)
    with store.transaction():
        store.archive.move([(mid, "below_threshold", 0.03)], now=clock.now(), actor="nightly")
    archived = _get(store, mid)
    assert archived.status == "archived"
    assert replace(archived, status="disputed") == before  # nothing else changed

    clock.advance(days=3)
    restored = store.archive.restore(mid, now=clock.now(), actor="cli")
    assert restored == before
    assert _status_changed_at(store, mid) == disputed_at
    assert store.archive.get(mid) is None and store.archive.count() == 0


def test_archive_row_holds_a_snapshot_for_the_jsonl(backend: Store, clock: FixedClock) -> None:
    store = backend
    a = _add(store, clock, "Alpha fact")
    b = _add(store, clock, "Beta fact")
    with store.transaction():
        store.memories.add_provenance(a, now=clock.now(), origin="notes.md:1")
        store.archive.move([(a, "over_max_facts", 0.2)], now=clock.now(), actor="t")
    since = clock.now()
    clock.advance(hours=1)
    with store.transaction():
        store.archive.move([(b, "expired", None)], now=clock.now(), actor="t")

    got = store.archive.get(a)
    assert got is not None
    assert (got.reason, got.score, got.prior_status, got.ref) == (
        "over_max_facts",
        0.2,
        "active",
        f"m_{a}",
    )
    assert got.record["text"] == "Alpha fact" and got.record["status"] == "active"
    assert got.record["provenance"] == [
        {"episode_id": None, "origin": "notes.md:1", "added_at": got.record["created_at"]}
    ]
    first = store.archive.in_order(limit=1)
    assert [r.memory_id for r in first] == [a]  # oldest archived first
    assert [r.memory_id for r in store.archive.in_order(after=first[0])] == [b]
    assert (store.archive.position(a), store.archive.position(b)) == (1, 2)
    assert store.archive.position(b + 100) is None
    assert store.archive.count() == 2
    assert [r.memory_id for r in store.archive.records_since(since)] == [a, b]
    assert [r.memory_id for r in store.archive.records_since(clock.now())] == [b]
    expired = store.archive.get(b)
    assert expired is not None and (expired.reason, expired.score) == ("expired", None)


def test_archive_and_restore_are_audited(backend: Store, clock: FixedClock) -> None:
    store = backend
    mid = _add(store, clock, "Audited fact")
    with store.transaction():
        store.archive.move([(mid, "below_threshold", 0.01)], now=clock.now(), actor="nightly")
    store.archive.restore(mid, now=clock.now(), actor="cli")
    restore, archive = store.audit.entries(memory_id=mid)
    assert (archive.action, archive.actor) == ("archive", "nightly")
    assert archive.detail == {"reason": "below_threshold", "from": "active", "score": 0.01}
    assert (restore.action, restore.actor, restore.detail["to"]) == ("restore", "cli", "active")


def test_already_archived_is_skipped(backend: Store, clock: FixedClock) -> None:
    store = backend
    mid = _add(store, clock, "Twice archived")
    with store.transaction():
        assert store.archive.move([(mid, "manual", None)], now=clock.now(), actor="t") == 1
        assert store.archive.move([(mid, "manual", None)], now=clock.now(), actor="t") == 0
    assert [e.action for e in store.audit.entries(memory_id=mid)] == ["archive"]


def test_unknown_ids_and_reasons_change_nothing(backend: Store, clock: FixedClock) -> None:
    store = backend
    mid = _add(store, clock, "A real memory")
    with pytest.raises(NotFound, match="m_999"), store.transaction():
        store.archive.move(
            [(mid, "manual", None), (999, "manual", None)], now=clock.now(), actor="t"
        )
    with pytest.raises(InvalidInput, match="Unknown archive reason 'bored'"):
        store.archive.move([(mid, "bored", None)], now=clock.now(), actor="t")
    assert _get(store, mid).status == "active" and store.archive.count() == 0
    assert store.audit.count() == 0

    with pytest.raises(NotFound, match="m_999"):
        store.archive.restore(999, now=clock.now(), actor="t")
    with pytest.raises(InvalidInput, match=f"'m_{mid}' is active, not archived"):
        store.archive.restore(mid, now=clock.now(), actor="t")


def test_move_joins_the_callers_transaction(backend: Store, clock: FixedClock) -> None:
    store = backend
    mid = _add(store, clock, "Rolled back")
    with pytest.raises(RuntimeError), store.transaction():
        store.archive.move([(mid, "manual", None)], now=clock.now(), actor="t")
        raise RuntimeError("the caller failed after archiving")
    assert _get(store, mid).status == "active" and store.archive.count() == 0
    assert store.memories.match("rolled back") == [mid]


def test_archiving_a_superseded_memory_keeps_when_it_stopped_being_live(
    backend: Store, clock: FixedClock
) -> None:
    store = backend
    old = _add(store, clock, "The office is in Lyon")
    clock.advance(days=10)
    with store.transaction():
        store.memories.set_status(old, "superseded", now=clock.now())
    superseded_at = clock.now()
    clock.advance(days=100)
    with store.transaction():
        store.archive.move([(old, "superseded_retention", None)], now=clock.now(), actor="t")
    # Between superseding and archiving it was not active: as_of must not say it was.
    view = View(as_of=superseded_at + timedelta(days=1))
    assert store.index.fresh(view, since=superseded_at - timedelta(days=30), limit=5) == []
    store.archive.restore(old, now=clock.now(), actor="t")
    assert _get(store, old).status == "superseded"
