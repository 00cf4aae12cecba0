"""The web page's reads on a bigger store: the memories page, its subjects and the graph
page do work bounded by what they show, not by the size of the store (bench/ui_speed.py
times them at 100,000 memories), and the memories page's fast path gives exactly the
answer of reading every memory, whatever the filter, page or viewer.

Work is counted in SQLite's virtual machine steps (`set_progress_handler`), which do not
depend on the machine or its load."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine, browse
from memoracle.engine.scope import can_see, view_for
from memoracle.store import browse as store_browse
from memoracle.store.index import scope_clause
from memoracle.text import content_hash
from memoracle.types import KINDS, Memory, NewMemory, Scope

SIZE = 6000
START = datetime(2025, 1, 1, tzinfo=UTC)
SUBJECTS = ("Anna", "anna", "Bob", "Mio", None, None)
STEP = 100  # the progress handler is called every STEP steps


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """SIZE memories, one every 5 minutes: kinds and subjects in turn, one in fifty
    forgotten, one in seven another person's (bob's); no graph."""
    home = tmp_path_factory.mktemp("scale") / "home"
    settings = load(home, env={}, overrides={"embedding.model": "hash"})
    clock = FixedClock(START)
    Engine.init(settings, clock=clock)
    rng = random.Random(5)
    with Engine.open(settings, clock=clock) as e, e._store.transaction():
        for i in range(SIZE):
            at = START + timedelta(minutes=5 * rng.randint(0, SIZE))  # ties on purpose
            said = f"Memory number {i} about the {rng.choice(['lease', 'guitar', 'router'])}."
            scope = Scope(user="bob") if i % 7 == 3 else Scope()
            new = NewMemory(
                KINDS[i % len(KINDS)], said, "episodic", "capture", at, content_hash(said),
                scope=scope, subject=SUBJECTS[i % len(SUBJECTS)],
            )  # fmt: skip
            memory_id = e._store.memories.insert(new, now=at)
            if i % 50 == 0:
                e._store.memories.set_status(memory_id, "forgotten", now=at)
    clock.set(START + timedelta(minutes=5 * SIZE + 60))
    with Engine.open(settings, clock=clock) as e:
        yield e


def _steps(engine: Engine, work: Callable[[], Any]) -> int:
    """How many SQLite steps `work` took (to the nearest STEP)."""
    count = itertools.count()
    conn = engine._store.browse._db.conn
    conn.set_progress_handler(lambda: next(count) and 0, STEP)
    try:
        work()
    finally:
        conn.set_progress_handler(None, STEP)
    return next(count) * STEP


def _read_everything(engine: Engine) -> int:
    """The steps of looking at every memory once, as any plan that sorts them all must
    (the visibility rule and the status of each): what a page must stay far below."""
    visible, params = scope_clause(view_for(engine.settings, None), "m")
    return _steps(
        engine,
        lambda: engine._store.browse._db.execute(
            f"SELECT count(*) FROM memories m WHERE {visible} AND m.status = 'active'", params
        ).fetchone(),
    )


def test_the_newest_page_reads_only_its_rows(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its rows and at most NEWEST_WALK index entries (20,000 of 100,000 in the
    benchmark; 600 of 6,000 here): not every memory, as a sort of all of them would."""
    monkeypatch.setattr(store_browse, "NEWEST_WALK", 600, raising=False)
    everything = _read_everything(engine)
    assert everything > 10_000
    for wanted, page in (
        (browse.Filter(), 1),
        (browse.Filter(), 3),
        (browse.Filter(kind="fact"), 1),
        (browse.Filter(status=None), 1),
        (browse.Filter(since=START + timedelta(days=3), until=START + timedelta(days=4)), 1),
    ):
        steps = _steps(engine, lambda w=wanted, p=page: browse.memories_page(engine, w, page=p))
        assert steps < everything / 4, (wanted, page, steps, everything)
    # a word a third of them hold: its matches listed once by FTS5, not each one's row
    # read and all of them sorted (two thirds of reading every memory, before)
    steps = _steps(engine, lambda: browse.memories_page(engine, browse.Filter(text="lease")))
    assert steps < everything / 3, (steps, everything)


def test_a_subjects_spellings_are_found_without_reading_every_subject(engine: Engine) -> None:
    """The subject filter looks the subject up under each of its stored spellings
    ("Anna", "anna"): found by one seek per distinct subject of that first letter, not
    by a walk of every memory's subject (30 ms at 100k memories, most of the page)."""
    everything = _read_everything(engine)
    spellings = engine._store.browse._spellings
    assert sorted(spellings("ANNA")) == ["Anna", "anna"] and spellings("nobody") == []
    assert _steps(engine, lambda: spellings("ANNA")) < everything / 20


def test_subjects_and_the_graph_read_a_bounded_part(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subjects offered: counted among the newest SUBJECTS_SAMPLE (2,000 of 100,000
    in the benchmark; 300 here). The graph: its links, not every memory (none here);
    the graph page's counts: among the newest GRAPH_SAMPLE (5,000; 300 here)."""
    monkeypatch.setattr(store_browse, "SUBJECTS_SAMPLE", 300, raising=False)
    everything = _read_everything(engine)
    assert _steps(engine, lambda: browse.subjects(engine)) < everything / 4
    assert _steps(engine, lambda: engine.graph_entities(limit=300)) < everything / 20
    assert _steps(engine, lambda: engine.graph_relations(limit=300)) < everything / 20
    monkeypatch.setattr(store_browse, "GRAPH_SAMPLE", 300, raising=False)
    assert _steps(engine, lambda: browse.entities(engine)) < everything / 4
    assert _steps(engine, lambda: browse.relations(engine)) < everything / 4


def _everything_in_order(engine: Engine, viewer: Scope | None) -> list[Memory]:
    rows = engine._store.browse._db.execute("SELECT id FROM memories").fetchall()
    found = engine.memories_by_id([int(r[0]) for r in rows])
    seen = [m for m in found if can_see(engine.settings, viewer, m.scope)]
    return sorted(seen, key=lambda m: (m.observed_at, m.id), reverse=True)


def _fits(m: Memory, wanted: browse.Filter) -> bool:
    return (
        (not wanted.kind or m.kind == wanted.kind)
        and (not wanted.status or m.status == wanted.status)
        and (not wanted.subject or (m.subject or "").lower() == wanted.subject.lower())
        and (wanted.since is None or m.observed_at >= wanted.since)
        and (wanted.until is None or m.observed_at < wanted.until)
        and (not wanted.text or set(wanted.text.lower().split()) <= _words(m.text))
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


FILTERS = [
    browse.Filter(),
    browse.Filter(status=None),
    browse.Filter(kind="guardrail"),
    browse.Filter(status="forgotten"),  # rare: more than the walk reads, then a sort
    browse.Filter(kind="decision", status="forgotten"),
    browse.Filter(subject="ANNA"),  # both spellings stored
    browse.Filter(subject="nobody"),
    browse.Filter(since=START + timedelta(days=2), until=START + timedelta(days=6)),
    browse.Filter(status="forgotten", since=START + timedelta(days=1)),
    browse.Filter(kind="fact", until=START + timedelta(days=2)),
    browse.Filter(text="lease"),  # a third of them: the walk fills a page
    browse.Filter(text="lease", kind="task", since=START + timedelta(days=3)),
    browse.Filter(text="Memory number 1234"),  # one memory: more than the walk reads
    browse.Filter(text="guitar router"),  # none
    browse.Filter(text="guitar", status="forgotten"),
    browse.Filter(text="router", subject="anna"),
]


@pytest.mark.parametrize("walk", [SIZE * 2, 40, 7])
@pytest.mark.parametrize("viewer", [None, Scope(user="bob")])
def test_each_page_is_what_reading_every_memory_gives(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, walk: int, viewer: Scope | None
) -> None:
    monkeypatch.setattr(store_browse, "NEWEST_WALK", walk, raising=False)
    every = _everything_in_order(engine, viewer)
    for wanted in FILTERS:
        expected = [m.id for m in every if _fits(m, wanted)]
        for page, size in ((1, 50), (2, 50), (7, 20), (400, 10)):
            shown = browse.memories_page(engine, wanted, page=page, size=size, scope=viewer)
            ids = [m.id for m, _ in shown.items]
            assert ids == expected[(page - 1) * size : page * size], (wanted, page, walk)
            assert shown.more == (len(expected) > page * size)


def test_forget_by_description_reads_only_what_it_lists(engine: Engine) -> None:
    """The review page's "forget by description" is a dry run listing 50 at most: it
    reads those, not the thousands of memories the words fit."""
    fits = len(engine.forget_matching("lease", dry_run=True, limit=SIZE))
    assert fits > 1000
    listed = engine.forget_matching("lease", dry_run=True, limit=50)
    assert [m.id for m in listed] == [
        m.id for m in engine.forget_matching("lease", dry_run=True, limit=SIZE)[:50]
    ]
    few = _steps(engine, lambda: engine.forget_matching("lease", dry_run=True, limit=50))
    every = _steps(engine, lambda: engine.forget_matching("lease", dry_run=True, limit=SIZE))
    assert few < every / 2, (few, every)  # the FTS match of all of them remains


def test_forget_by_description_reads_fewer_rows_than_it_matches(engine: Engine) -> None:
    """Its dry run asks for one more than it lists, in FTS5's own BM25 order (`rank`),
    so it stops reading memories at the 51st: below ranking every match by reading each
    one's row, which listing 50 of them did before."""
    visible, params = scope_clause(view_for(engine.settings, None), "m")
    every_row = _steps(
        engine,
        lambda: engine._store.browse._db.execute(
            "SELECT m.id FROM memories_fts f JOIN memories m ON m.id = f.rowid"
            f" WHERE memories_fts MATCH 'leas' AND {visible}"
            " AND m.status IN ('active', 'disputed') ORDER BY bm25(memories_fts)",
            params,
        ).fetchall(),
    )
    listed = _steps(engine, lambda: engine.forget_matching("lease", dry_run=True, limit=50))
    assert listed < every_row * 0.85, (listed, every_row)


def test_matches_in_rank_order_are_those_in_bm25_order(engine: Engine) -> None:
    """`rank` is FTS5's BM25: `match` lists the best by `bm25()` (ties in any order),
    whatever the limit and the viewer, and only what the viewer sees."""
    for viewer in (None, Scope(user="bob")):
        view = view_for(engine.settings, viewer)
        visible, params = scope_clause(view, "m")
        rows = engine._store.browse._db.execute(
            "SELECT m.id, bm25(memories_fts) FROM memories_fts f JOIN memories m"
            f" ON m.id = f.rowid WHERE memories_fts MATCH 'guitar' AND {visible}"
            " AND m.status IN ('active', 'disputed')",
            params,
        ).fetchall()
        score = {int(i): float(s) for i, s in rows}
        assert len(score) > 200
        for limit in (1, 51, 10_000):
            found = engine._store.memories.match("guitar", view=view, limit=limit)
            assert set(found) <= set(score)
            assert [score[i] for i in found] == sorted(score.values())[:limit], (viewer, limit)
