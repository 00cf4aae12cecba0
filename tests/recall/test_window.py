"""Questions about a time only ("What did I do yesterday?", in four languages) are
answered by the time-window stage with what is dated in that window, in search and in
recall, instead of "no match"; a question with a subject of its own is searched."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.recall.window import time_only
from memoracle.types import Scope, Turn

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)  # a Monday


def _say(engine: Engine, clock: FixedClock, text: str, at: datetime, turn: str) -> None:
    clock.set(at)
    engine.capture([Turn("user", text, at, turn, "s1")])


@pytest.fixture
def week(engine: Engine, clock: FixedClock) -> Engine:
    _say(
        engine,
        clock,
        "Went climbing with Marta at Arkose.",
        datetime(2026, 12, 6, 18, tzinfo=UTC),
        "1",
    )
    _say(engine, clock, "I bought a new bike today.", datetime(2026, 12, 1, 9, tzinfo=UTC), "2")
    _say(engine, clock, "The weather is nice.", datetime(2026, 12, 6, 9, tzinfo=UTC), "3")
    _say(engine, clock, "I adopted a cat named Miso.", datetime(2026, 11, 2, 9, tzinfo=UTC), "4")
    clock.set(NOW)
    return engine


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("What did I do yesterday?", {"Arkose", "weather"}),
        ("qu'est-ce que j'ai fait la semaine dernière ?", {"Arkose", "weather", "bike"}),
        ("¿qué hice el domingo?", {"Arkose", "weather"}),
        ("что я делал на прошлой неделе?", {"Arkose", "weather", "bike"}),
        ("What happened last month?", {"Miso"}),
    ],
)
def test_a_time_only_question_returns_that_window(
    week: Engine, question: str, words: set[str]
) -> None:
    outcome = week.search(question)
    assert outcome.mode == "window" and outcome.no_match is None
    said = " ".join(h.text for h in outcome.hits)
    assert all(w in said for w in words), said
    others = {"Arkose", "weather", "bike", "Miso"} - words
    assert not any(w in said for w in others), said


def test_memories_lead_and_a_memory_stands_for_its_turn(week: Engine) -> None:
    hits = week.search("What did I do yesterday?").hits
    assert [h.source for h in hits] == ["memory", "episode"]
    assert "Arkose" in hits[0].text and "weather" in hits[1].text


def test_recall_answers_a_time_only_question(week: Engine) -> None:
    block = week.recall("What did I do yesterday?")
    text = "\n".join(line.text for line in block.lines)
    assert "Arkose" in text and "Miso" not in text


def test_the_window_keeps_to_what_the_scope_may_see(week: Engine, clock: FixedClock) -> None:
    at = datetime(2026, 12, 6, 20, tzinfo=UTC)
    clock.set(at)
    week.capture([Turn("user", "I ran the Oslo 10k.", at, "9", "s2")], scope=Scope(user="bob"))
    clock.set(NOW)
    said = " ".join(h.text for h in week.search("What did I do yesterday?").hits)
    assert "Oslo" not in said
    bob = " ".join(
        h.text for h in week.search("What did I do yesterday?", scope=Scope(user="bob")).hits
    )
    assert "Oslo" in bob


def test_a_question_with_its_own_subject_is_searched(week: Engine) -> None:
    outcome = week.search("Where did I go climbing yesterday?")
    assert outcome.mode != "window"
    assert any("Arkose" in h.text for h in outcome.hits)


@pytest.mark.parametrize(
    ("query", "only"),
    [
        ("What did I do yesterday?", True),
        ("what was I up to last week", True),
        ("Что было вчера?", True),
        ("What did I eat yesterday?", False),
        ("climbing yesterday", False),
        ("What did I do?", False),  # no time named
    ],
)
def test_time_only(query: str, only: bool) -> None:
    from memoracle.capture.dates import find_dates

    spans = [d.span for d in find_dates(query, NOW, "ru" if "Что" in query else "en")]
    assert time_only(query, spans) is only
