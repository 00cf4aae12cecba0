from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from memoracle.clock import FixedClock
from memoracle.storage_types import View
from memoracle.store import Store
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn


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


def test_insert_get_roundtrip_with_provenance(store: Store, clock: FixedClock) -> None:
    with store.transaction():
        episode = store.episodes.insert(
            Turn("user", "I live in Lyon", turn_id="k1"),
            at=clock.now(),
            now=clock.now(),
            scope=Scope(),
        )
        mid = store.memories.insert(_new("I live in Lyon", clock, subject="user"), now=clock.now())
        store.memories.add_provenance(mid, now=clock.now(), episode_id=episode)
        store.memories.add_provenance(mid, now=clock.now(), episode_id=episode)  # ignored
        store.memories.add_provenance(mid, now=clock.now(), origin="MEMORY.md:3")
    m = store.memories.get(mid)
    assert m is not None
    assert (m.text, m.kind, m.status, m.subject) == ("I live in Lyon", "fact", "active", "user")
    assert m.episode_ids == (episode,)
    assert m.origins == ("MEMORY.md:3",)
    assert m.observed_at == clock.now()


def test_fts_is_synced_and_normalised(store: Store, clock: FixedClock) -> None:
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


def test_match_and_pages_read_only_what_the_view_may_see(store: Store, clock: FixedClock) -> None:
    """The visibility rule is in the query: Bob's memory, the better BM25 match, never
    takes the one place `limit=1` leaves, and a page holds only Alice's rows."""
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


def test_match_treats_query_syntax_as_words(store: Store, clock: FixedClock) -> None:
    with store.transaction():
        a = store.memories.insert(_new("use NOT OR AND near", clock), now=clock.now())
    assert store.memories.match('NOT "OR" (AND*') == [a]
    assert store.memories.match("   ") == []


def test_duplicate_lookup_respects_subject_and_scope(store: Store, clock: FixedClock) -> None:
    with store.transaction():
        a = store.memories.insert(_new("I love it", clock, subject="Caroline"), now=clock.now())
    h = content_hash("i love it!")
    assert store.memories.find_duplicate(h, "Caroline", Scope()) == a
    assert store.memories.find_duplicate(h, "Melanie", Scope()) is None
    assert store.memories.find_duplicate(h, "Caroline", Scope(agent="x")) is None


def test_bump_caps_activation(store: Store, clock: FixedClock) -> None:
    with store.transaction():
        a = store.memories.insert(_new("x y z", clock, activation=0.9), now=clock.now())
        store.memories.bump(a, now=clock.now(), boost=0.3)
    m = store.memories.get(a)
    assert m is not None and m.activation == 1.0 and m.access_count == 1


def test_episode_key_is_unique(store: Store, clock: FixedClock) -> None:
    with store.transaction():
        first = store.episodes.insert(
            Turn("user", "hi", turn_id="k"), at=clock.now(), now=clock.now(), scope=Scope()
        )
        again = store.episodes.insert(
            Turn("user", "hi", turn_id="k"), at=clock.now(), now=clock.now(), scope=Scope()
        )
        # Another user whose transport numbers messages alike keeps their own turn.
        bob = store.episodes.insert(
            Turn("user", "hi", turn_id="k"),
            at=clock.now(),
            now=clock.now(),
            scope=Scope(user="bob"),
        )
        in_a_group = store.episodes.insert(
            Turn("user", "hi", turn_id="k"),
            at=clock.now(),
            now=clock.now(),
            scope=Scope(chat="tg:1", visibility="shared"),
        )
    assert first is not None and again is None
    assert bob is not None and in_a_group is not None
    assert store.episodes.count() == 3


def test_a_slot_lists_only_live_memories_whatever_changed_their_status(
    store: Store, clock: FixedClock
) -> None:
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


def test_a_superseded_memory_ends_when_its_successor_was_said_or_earlier(
    store: Store, clock: FixedClock
) -> None:
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
