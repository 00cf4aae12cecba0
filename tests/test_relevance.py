"""Relevance first: a hit stays only when it touches the query (a shared word, the graph,
the time the query names, or a cosine at the per-hit floor `search.hit_floor`, or as one
piece of evidence with, or the turn beside, one that does); the recall block's fresh slot
takes only the fresh items the message touches. The cases a new user met over a small
store (issue 31), with the real model, then the rule itself over hits made by hand."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.recall.hybrid import TimeWindow
from memoracle.recall.relevance import touching
from memoracle.types import Episode, Hit, Memory, Scores

WEEK_AGO = [
    "My dog is called Rex.",
    "I'm allergic to peanuts.",
    "My sister Claire lives in Lyon.",
    "We visited the Louvre in Paris last spring.",
    "I prefer green tea in the morning.",
]
TODAY = [
    "I charged my laptop at the café this morning.",
    "We decided to use Postgres for the database.",
]


@pytest.fixture
def small(use: Engine, clock: FixedClock) -> Engine:
    """A new user's store: five things said a week ago, two today (fresh)."""
    now = clock.now()
    clock.set(now - timedelta(days=7))
    for text in WEEK_AGO:
        use.remember(text)
    clock.set(now)
    for text in TODAY:
        use.remember(text)
    return use


def _touches(hit: Hit, floor: float) -> bool:
    return hit.scores.lexical_rank is not None or (hit.scores.similarity or -1.0) >= floor


def test_fresh_unrelated_items_do_not_lead_the_block(small: Engine) -> None:
    block = small.recall("what is my dog called?")
    assert block.lines[0].text.endswith("My dog is called Rex.")
    shown = block.text
    assert "laptop" not in shown and "Postgres" not in shown  # fresh, but about nothing asked
    assert not [line for line in block.lines if line.slot == "fresh"]


def test_with_the_floor_off_the_fresh_slot_takes_every_fresh_item(
    small: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`search.hit_floor = -1` turns the whole rule off, the fresh slot's half included."""
    off = dataclasses.replace(small.settings.search, hit_floor=-1.0)
    monkeypatch.setattr(small, "settings", dataclasses.replace(small.settings, search=off))
    fresh = [line.text for line in small.recall("what is my dog called?").lines]
    assert any("laptop" in text for text in fresh), fresh


def test_a_fresh_item_the_message_touches_is_in_the_fresh_slot(small: Engine) -> None:
    block = small.recall("where did I charge my laptop?")
    fresh = [line for line in block.lines if line.slot == "fresh"]
    assert [line.text.split("] ", 1)[1] for line in fresh] == [TODAY[0]]
    assert "Postgres" not in block.text


def test_fresh_items_in_the_time_the_message_names_are_recalled(small: Engine) -> None:
    block = small.recall("what did I do today?")
    assert "laptop" in block.text and "Postgres" in block.text
    assert "Rex" not in block.text  # said a week ago: outside the time asked about


def test_search_returns_no_hit_that_does_not_touch_the_query(small: Engine) -> None:
    floor = small.settings.search.hit_floor
    claire = small.search("Claire", k=5).hits
    assert [h.text for h in claire] == ["My sister Claire lives in Lyon."]
    louvre = small.search("Louvre").hits
    assert [h.text for h in louvre] == ["We visited the Louvre in Paris last spring."]
    assert all(_touches(h, floor) for h in (*claire, *louvre))


def test_meaning_above_the_floor_still_finds_what_shares_no_word(small: Engine) -> None:
    hits = small.search("which city is my sibling based in").hits
    assert hits and hits[0].text == "My sister Claire lives in Lyon."
    assert hits[0].scores.lexical_rank is None  # found by meaning alone


def test_explain_says_the_per_hit_floor_dropped_it(small: Engine) -> None:
    peanuts = small.search("peanuts").hits[0].ref
    reasons = small.explain(peanuts, query="Louvre").reasons
    dropped = [r for r in reasons if r.startswith("dropped by the per-hit floor")]
    assert len(dropped) == 1 and "search.hit_floor = 0.15" in dropped[0]
    assert "cosine 0.0" in dropped[0]  # its cosine is shown


def test_the_floor_off_lets_the_noise_back(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "h"), "--set", "embedding.model=use"]
    assert runner.invoke(main, [*home, "init"]).exit_code == 0
    for text in WEEK_AGO:
        assert runner.invoke(main, [*home, "remember", text]).exit_code == 0
    on = runner.invoke(main, [*home, "search", "Louvre"]).output
    off = runner.invoke(main, [*home, "--set", "search.hit_floor=-1", "search", "Louvre"]).output
    assert "Louvre" in on and "peanuts" not in on
    assert "peanuts" in off


# -- the rule, over hits made by hand --------------------------------------------------

AT = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def _scores(
    lexical: int | None = None, similarity: float | None = None, near: float = 0.0
) -> Scores:
    return Scores(
        lexical,
        1 if similarity is not None else None,
        similarity,
        0.01,
        1.0,
        1.0,
        0.01,
        neighbours=near,
    )


def _turn(i: int, session: str = "s1", at: datetime = AT, **signals: float | int | None) -> Hit:
    episode = Episode(i, "user", f"turn {i}", at, at, session_id=session)
    return Hit("episode", i, episode.text, at, _scores(**signals), episode=episode)  # type: ignore[arg-type]


def _memory(i: int, turns: tuple[int, ...], **signals: float | int | None) -> Hit:
    memory = Memory(
        i, "fact", f"memory {i}", "semantic", "active", AT, AT, AT, 1.0, 0.5, 0, 1.0, False,
        "rule", f"h{i}", episode_ids=turns,
    )  # fmt: skip
    return Hit("memory", i, memory.text, AT, _scores(**signals), memory=memory)  # type: ignore[arg-type]


def _kept(hits: list[Hit], **kw: object) -> list[str]:
    return [h.ref for h in touching(hits, 0.15, **kw)]  # type: ignore[arg-type]


def test_a_hit_touches_by_word_or_by_meaning_above_the_floor() -> None:
    hits = [_turn(1, lexical=3), _turn(5, similarity=0.2), _turn(9, similarity=0.1), _turn(12)]
    assert _kept(hits) == ["e_1", "e_5"]
    assert [h.ref for h in touching(hits, -1)] == ["e_1", "e_5", "e_9", "e_12"]  # off


def test_the_graph_and_the_named_time_touch() -> None:
    hits = [_memory(1, (), similarity=0.01), _turn(2, at=AT - timedelta(days=40), similarity=0.01)]
    assert _kept(hits) == []
    assert _kept(hits, graph={1}) == ["m_1"]
    window = TimeWindow(AT - timedelta(days=45), AT - timedelta(days=30))
    assert _kept(hits, window=window) == ["e_2"]


def test_a_memory_and_its_turn_are_one_piece_of_evidence() -> None:
    # a memory found by meaning below the floor, whose turn shares a word: both stay
    hits = [_memory(1, (7,), similarity=0.05), _turn(7, lexical=1), _memory(2, (8,)), _turn(8)]
    assert _kept(hits) == ["m_1", "e_7"]
    assert _kept([_memory(3, (9,), lexical=2), _turn(9, similarity=0.02)]) == ["m_3", "e_9"]


def test_a_turn_beside_one_that_touches_stays_when_it_gained_from_it() -> None:
    hits = [
        _turn(10, lexical=1),
        _turn(11, near=0.004),  # the answer beside the question: kept
        _turn(12, near=0.0),  # beside nothing it gained from
        _turn(9, session="s0", near=0.004),  # the id before, but another session
        _turn(30, similarity=0.05),
        _turn(31, near=0.004),  # beside a turn that does not touch
    ]
    assert _kept(hits) == ["e_10", "e_11"]
