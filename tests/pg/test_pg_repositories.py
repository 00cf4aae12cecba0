"""The repositories on both backends: each test runs on the SQLite `Store` and on the
PostgreSQL `PgStore` (the `backend` fixture), with the same calls and the same answers;
on SQLite alone where PostgreSQL's packages are missing. The memories repository's tests
live here only (once tests/store/test_memories.py, now merged in), with the visibility
rule checked for every context against `types.sees`, as tests/test_scopes.py does."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memoracle.clock import FixedClock
from memoracle.errors import StoreError
from memoracle.storage_types import LexicalQuery, Term, View
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn, sees

AGENTS = (None, "a", "b")
USERS = (None, "alice", "bob")
CHATS = (None, "c1", "c2")
SCOPES = [Scope(*p) for p in itertools.product(AGENTS, USERS, CHATS, ("private", "shared"))]
MARMALADE = LexicalQuery((Term("marmalad"),))  # the stem, as a search asks it
LIVE_WORD = LexicalQuery((Term("live"),))


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


def _turn(store: Any, clock: FixedClock, text: str, key: str, scope: Scope | None = None) -> int:
    with store.transaction():
        found = store.episodes.insert(
            Turn("user", text, turn_id=key),
            at=clock.now(),
            now=clock.now(),
            scope=scope or Scope(),
        )
    assert found is not None
    return int(found)


def test_insert_get_roundtrip_with_provenance(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        episode = store.episodes.insert(
            Turn("user", "I live in Lyon", turn_id="k1"),
            at=clock.now(),
            now=clock.now(),
            scope=Scope(),
        )
        new = _new("I live in Lyon", clock, subject="user", details={"dates": ["2026-05"]})
        mid = store.memories.insert(new, now=clock.now())
        store.memories.add_provenance(mid, now=clock.now(), episode_id=episode)
        store.memories.add_provenance(mid, now=clock.now(), episode_id=episode)  # ignored
        store.memories.add_provenance(mid, now=clock.now(), origin="MEMORY.md:3")
    m = store.memories.get(mid)
    assert m is not None
    assert (m.text, m.kind, m.status, m.subject) == ("I live in Lyon", "fact", "active", "user")
    assert m.episode_ids == (episode,)
    assert m.origins == ("MEMORY.md:3",)
    assert m.observed_at == clock.now() and m.observed_at.utcoffset() == timedelta(0)
    assert m.details == {"dates": ["2026-05"]} and m.pinned is False
    assert store.memories.has_origin(mid, "MEMORY.md:3")
    assert [e.text for e in store.episodes.get_many([episode, 999])] == ["I live in Lyon"]
    assert store.memories.get_many([999, mid, mid])[0].id == mid


def test_fts_is_synced_and_normalised(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        a = store.memories.insert(_new("Мы купили ёлку", clock), now=clock.now())
        b = store.memories.insert(_new("Le café est fermé", clock), now=clock.now())
        c = store.memories.insert(_new("Port ８０８０ is open", clock), now=clock.now())
    assert store.memories.match("елку") == [a]  # ё folded to е on both sides
    assert store.memories.match("ЁЛКУ") == [a]
    assert store.memories.match("cafe ferme") == [b]  # diacritics removed
    assert store.memories.match("8080") == [c]  # NFKC full-width digits
    with store.transaction():
        store.memories.set_status(a, "forgotten", now=clock.now())
    assert store.memories.match("елку") == []


def test_match_and_pages_read_only_what_the_view_may_see(backend: Any, clock: FixedClock) -> None:
    """The visibility rule is in the query: Bob's memory, the better BM25 match, never
    takes the one place `limit=1` leaves, and a page holds only Alice's rows."""
    store = backend
    alice, bob = Scope(user="alice"), Scope(user="bob")
    with store.transaction():
        bobs = store.memories.insert(
            _new("staging staging server", clock, scope=bob), now=clock.now()
        )
        hers = store.memories.insert(
            _new("The staging server in the basement runs Debian", clock, scope=alice),
            now=clock.now(),
        )
    assert store.memories.match("staging server", limit=1) == [bobs]
    assert store.memories.match("staging server", view=View(alice), limit=1) == [hers]
    assert store.memories.match("staging server", view=View(bob)) == [bobs]
    assert [m.id for p in store.memories.pages("active", view=View(alice)) for m in p] == [hers]
    assert [m.id for p in store.memories.pages("active") for m in p] == [bobs, hers]
    assert store.memories.counts(View(alice)) == {("active", "fact"): 1}


def test_match_treats_query_syntax_as_words(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        a = store.memories.insert(_new("use NOT OR AND near", clock), now=clock.now())
    assert store.memories.match('NOT "OR" (AND*') == [a]
    assert store.memories.match("   ") == []


def test_duplicate_lookup_respects_subject_scope_and_expiry(
    backend: Any, clock: FixedClock
) -> None:
    store = backend
    soon = clock.now() + timedelta(hours=1)
    with store.transaction():
        a = store.memories.insert(_new("I love it", clock, subject="Caroline"), now=clock.now())
        b = store.memories.insert(_new("short lived", clock, expires_at=soon), now=clock.now())
    h = content_hash("i love it!")
    assert store.memories.find_duplicate(h, "Caroline", Scope()) == a
    assert store.memories.find_duplicate(h, "Melanie", Scope()) is None
    assert store.memories.find_duplicate(h, "Caroline", Scope(agent="x")) is None
    later = soon + timedelta(seconds=1)
    assert store.memories.find_duplicate(content_hash("short lived"), None, Scope()) == b
    assert (
        store.memories.find_duplicate(content_hash("short lived"), None, Scope(), now=later) is None
    )
    assert [m.id for m in store.memories.expired(later)] == [b]


def test_bump_touch_and_confirm_cap_at_one(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        a = store.memories.insert(_new("x y z", clock, activation=0.9), now=clock.now())
        store.memories.bump(a, now=clock.now(), boost=0.3)
        store.memories.confirm(a, step=0.5)
    m = store.memories.get(a)
    assert m is not None and m.activation == 1.0 and m.access_count == 1 and m.confidence == 1.0
    with store.transaction():
        store.memories.recalled({a: 0.25}, now=clock.now())
        store.memories.touch([a], now=clock.now(), boost=0.5)
    m = store.memories.get(a)
    assert m is not None and m.activation == 0.75 and m.access_count == 2


def test_episode_key_is_unique(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        ids = [
            store.episodes.insert(
                Turn("user", "hi", turn_id="k"), at=clock.now(), now=clock.now(), scope=scope
            )
            for scope in (
                Scope(),
                Scope(),
                Scope(user="bob"),
                Scope(chat="tg:1", visibility="shared"),
            )
        ]
    assert ids[0] is not None and ids[1] is None
    assert ids[2] is not None and ids[3] is not None
    assert store.episodes.count() == 3
    assert store.episodes.has_turn(Turn("user", "hi", turn_id="k"), Scope(user="bob"))


def test_a_slot_lists_only_live_memories_whatever_changed_their_status(
    backend: Any, clock: FixedClock
) -> None:
    store = backend
    with store.transaction():
        ids = [store.memories.insert(_new(f"I live in {c}", clock), now=clock.now()) for c in "ABC"]
        for memory_id, city in zip(ids, "abc", strict=True):
            store.memories.set_slot(
                memory_id, "user", "lives_in", city, hedged=False, negated=False
            )
    assert [r[0] for r in store.memories.in_slot("user", "lives_in", Scope(), exclude=0)] == ids
    with store.transaction():
        store.memories.supersede(ids[0], ids[2], now=clock.now())
        store.memories.set_status(ids[1], "forgotten", now=clock.now())
    assert [r[0] for r in store.memories.in_slot("user", "lives_in", Scope(), exclude=0)] == ids[2:]
    with store.transaction():
        store.memories.set_status(ids[1], "active", now=clock.now())  # brought back
        store.memories.set_slot(ids[0], "user", "lives_in", "a", hedged=False, negated=False)
    found = store.memories.in_slot("user", "lives_in", Scope(), exclude=ids[2])
    assert [r[0] for r in found] == [ids[1]]  # a superseded memory's new slot row is not live
    assert store.memories.replaced_by([ids[2]]) == [ids[0]]
    assert store.memories.slot_values([ids[1]]) == {ids[1]: {("user", "lives_in"): "b"}}


def test_a_superseded_memory_ends_when_its_successor_was_said_or_earlier(
    backend: Any, clock: FixedClock
) -> None:
    store = backend
    said = datetime(2026, 5, 8, 12, tzinfo=UTC)
    summer = (datetime(2026, 6, 1, tzinfo=UTC), datetime(2026, 9, 1, tzinfo=UTC))
    until = datetime(2020, 1, 1, tzinfo=UTC)
    with store.transaction():
        plan = store.memories.insert(  # "Italy this summer", said before the summer
            _new(
                "Italy this summer", clock, kind="event", valid_from=summer[0], valid_to=summer[1]
            ),
            now=clock.now(),
        )
        ended = store.memories.insert(_new("Paris until 2020", clock, valid_to=until), now=said)
        open_ = store.memories.insert(_new("I live in Oslo", clock), now=said)
        new = store.memories.insert(_new("Greece instead", clock, observed_at=said), now=said)
        for old in (plan, ended, open_):
            store.memories.supersede(old, new, now=said)
    ends = [store.memories.get(i) for i in (plan, ended, open_)]
    assert [m.valid_to for m in ends if m is not None] == [said, until, said]


@pytest.mark.parametrize("own", [Scope(), Scope("a", "alice")], ids=["no-owner", "owner-a-alice"])
def test_the_rule_in_sql_agrees_with_the_rule_in_python_for_every_context(
    backend: Any, clock: FixedClock, own: Scope
) -> None:
    """Every requester of 54 scopes, over a memory and a turn in each of them: the rows
    the store's SQL lets through are exactly those `types.sees` lets through."""
    store = backend
    with store.transaction():
        for n, scope in enumerate(SCOPES):
            store.memories.insert(_new(f"note {n}", clock, scope=scope), now=clock.now())
            store.episodes.insert(
                Turn("user", f"turn {n}", turn_id=str(n)),
                at=clock.now(),
                now=clock.now(),
                scope=scope,
            )
    memories = [m for page in store.memories.pages("active") for m in page]
    episodes = store.episodes.get_many(range(1, len(SCOPES) + 1))
    assert len(memories) == len(episodes) == len(SCOPES)
    for requester in SCOPES:
        view = View(requester, own=own)
        by_sql = {m.id for page in store.memories.pages("active", view=view) for m in page}
        assert by_sql == {m.id for m in memories if sees(requester, m.scope, own)}, requester
        by_sql = {e.id for page in store.episodes.pages(view) for e in page}
        assert by_sql == {e.id for e in episodes if sees(requester, e.scope, own)}, requester
        assert by_sql  # every context sees something


def test_lexical_search_keeps_to_the_rule_forgets_and_holds(
    backend: Any, clock: FixedClock
) -> None:
    """Best match first; another user's rows never come back; a turn a forgotten memory
    came from, and a held turn, leave search."""
    store = backend
    alice, bob = Scope(user="alice"), Scope(user="bob")
    with store.transaction():
        best = store.memories.insert(
            _new("marmalade marmalade in Lisbon", clock, scope=alice), now=clock.now()
        )
        other = store.memories.insert(
            _new("marmalade kept in the cellar", clock, scope=alice), now=clock.now()
        )
        store.memories.insert(_new("marmalade of Bob", clock, scope=bob), now=clock.now())
    found = store.index.lexical_memories(MARMALADE, View(alice), limit=10)
    assert [i for i, _ in found] == [best, other]
    assert found[0][1] < found[1][1]  # lower is better, as FTS5's BM25
    both = LexicalQuery((Term("marmalad"), Term("lisbon")))
    assert store.index.lexical_memories(both, View(alice), limit=10)[0][0] == best
    prefix = LexicalQuery((Term("marmal", prefix=True),))
    assert [i for i, _ in store.index.lexical_memories(prefix, View(bob), limit=10)] != []
    assert store.index.match_count("memories", MARMALADE, cap=10) == 3
    assert store.index.matches("memories", LexicalQuery((Term("lisbon"),)), best)
    kept = _turn(store, clock, "the marmalade is in Lisbon", "t1", alice)
    gone = _turn(store, clock, "my marmalade recipe", "t2", alice)
    with store.transaction():
        forgotten = store.memories.insert(_new("recipe", clock, scope=alice), now=clock.now())
        store.memories.add_provenance(forgotten, now=clock.now(), episode_id=gone)
    turns = store.index.lexical_episodes(MARMALADE, View(alice), limit=10)
    assert sorted(i for i, _ in turns) == [kept, gone]
    with store.transaction():
        store.memories.set_status(forgotten, "forgotten", now=clock.now())
    assert [i for i, _ in store.index.lexical_episodes(MARMALADE, View(alice), limit=10)] == [kept]
    assert store.index.lexical_episodes(MARMALADE, View(bob), limit=10) == []
    assert store.index.visible_episodes([kept, gone], View(alice)) == [kept]


def test_a_search_as_of_a_past_time_sees_what_was_active_then(
    backend: Any, clock: FixedClock
) -> None:
    store = backend
    then = clock.now()
    with store.transaction():
        old = store.memories.insert(_new("I live in Oslo", clock), now=then)
    clock.advance(days=2)
    with store.transaction():
        new = store.memories.insert(_new("I live in Bergen", clock), now=clock.now())
        store.memories.supersede(old, new, now=clock.now())
    now_view, past = View(), View(as_of=then + timedelta(days=1))
    assert [i for i, _ in store.index.lexical_memories(LIVE_WORD, now_view, limit=5)] == [new]
    assert [i for i, _ in store.index.lexical_memories(LIVE_WORD, past, limit=5)] == [old]
    hashes = [content_hash("I live in Oslo"), content_hash("I live in Bergen")]
    assert store.index.memories_with_hashes(hashes, past) == [(old, hashes[0])]


def test_the_audit_log_is_append_only(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        store.audit.append(at=clock.now(), actor="cli", action="forget-ask", memory_id=7)
        store.audit.append(at=clock.now(), actor="cli", action="add", memory_id=8, detail={"k": 1})
        store.audit.append(at=clock.now(), actor="cli", action="forget-ask", memory_id=8)
    assert [(e.action, e.memory_id) for e in store.audit.entries(memory_id=8)] == [
        ("forget-ask", 8),
        ("add", 8),
    ]
    assert store.audit.entries(memory_id=8)[1].detail == {"k": 1}
    assert [e.memory_id for e in store.audit.open_asks("forget-ask", ["forget"])] == [7, 8]
    assert store.audit.count() == 3
    for statement in ("UPDATE audit SET actor = 'x'", "DELETE FROM audit"):
        with pytest.raises(StoreError, match="append-only"):
            with store.transaction():
                store._db.execute(statement)
    assert store.audit.count() == 3


def test_runs_record_start_end_and_counts(backend: Any, clock: FixedClock) -> None:
    store = backend
    with store.transaction():
        run = store.runs.start("nightly", now=clock.now())
    assert store.runs.last("nightly") == (
        clock.now().isoformat(timespec="microseconds"),
        None,
        "running",
    )
    clock.advance(minutes=3)
    with store.transaction():
        store.runs.finish(run, now=clock.now(), status="failed", counts={"added": 2}, error="x")
    latest = store.runs.latest("nightly")
    assert latest is not None and latest.counts == {"added": 2} and latest.status == "failed"
    assert latest.finished_at == clock.now()
    assert store.runs.failed_since("night", clock.now() - timedelta(hours=1))
    assert not store.runs.failed_since("ingest", clock.now() - timedelta(hours=1))
    assert store.runs.latest("nightly", status="ok") is None


def test_a_failed_transaction_keeps_nothing(backend: Any, clock: FixedClock) -> None:
    store = backend
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.memories.insert(_new("half written", clock), now=clock.now())
            raise RuntimeError("the server went away")
    assert store.memories.max_id() == 0 and store.memories.match("half written") == []
