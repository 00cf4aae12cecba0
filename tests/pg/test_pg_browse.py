"""The web page's reads on both backends (the `backend` fixture): every page of every
filter is what reading every memory the viewer may see and filtering in Python gives."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memoracle.clock import FixedClock
from memoracle.storage_types import Filter, View
from memoracle.text import content_hash
from memoracle.types import KINDS, Memory, NewMemory, Scope, sees

START = datetime(2025, 1, 1, tzinfo=UTC)
SUBJECTS = ("Anna", "anna", "Bob", None)
FILTERS = [
    Filter(),
    Filter(kind="fact"),
    Filter(status=None),
    Filter(status="forgotten"),
    Filter(subject="ANNA"),
    Filter(since=START + timedelta(hours=2), until=START + timedelta(hours=5)),
    Filter(text="guitar"),
    Filter(text="guitar lease", status=None),
]


def _store(store: Any, clock: FixedClock) -> list[Memory]:
    rng = random.Random(3)
    with store.transaction():
        for i in range(120):
            at = START + timedelta(minutes=5 * rng.randint(0, 100))  # ties on purpose
            said = f"Memory {i} about the {rng.choice(['lease', 'guitar', 'guitar lease'])}."
            new = NewMemory(
                KINDS[i % len(KINDS)], said, "episodic", "capture", at, content_hash(said),
                scope=Scope(user="bob") if i % 7 == 3 else Scope(),
                subject=SUBJECTS[i % len(SUBJECTS)],
            )  # fmt: skip
            memory_id = store.memories.insert(new, now=at)
            if i % 9 == 0:
                store.memories.set_status(memory_id, "forgotten", now=at)
    return [m for page in store.memories.pages("active") for m in page] + [
        m for status in ("forgotten",) for page in store.memories.pages(status) for m in page
    ]


def _fits(m: Memory, wanted: Filter) -> bool:
    words = set(m.text.lower().rstrip(".").split())
    return (
        (not wanted.kind or m.kind == wanted.kind)
        and (not wanted.status or m.status == wanted.status)
        and (not wanted.subject or (m.subject or "").lower() == wanted.subject.lower())
        and (wanted.since is None or m.observed_at >= wanted.since)
        and (wanted.until is None or m.observed_at < wanted.until)
        and (not wanted.text or set(wanted.text.split()) <= words)
    )


@pytest.mark.parametrize("viewer", [Scope(), Scope(user="bob")], ids=["owner", "bob"])
def test_every_page_of_every_filter_is_the_filtered_whole(
    backend: Any, clock: FixedClock, viewer: Scope
) -> None:
    store = backend
    everything = _store(store, clock)
    view = View(viewer)
    for wanted in FILTERS:
        expected = sorted(
            (m for m in everything if sees(viewer, m.scope) and _fits(m, wanted)),
            key=lambda m: (m.observed_at, m.id),
            reverse=True,
        )
        got = [
            i
            for start in range(0, 130, 10)
            for i in store.browse.page(view, wanted, limit=10, offset=start)
        ]
        assert got == [m.id for m in expected], wanted
    subjects = dict(store.browse.subjects(view))
    assert set(subjects) <= {"Anna", "anna", "Bob"}
    first = everything[0].id
    with store.transaction():
        store.browse.set_pinned(first, True)
    pinned = store.memories.get(first)
    assert pinned is not None and pinned.pinned
