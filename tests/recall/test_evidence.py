"""Session and speaker evidence: turns of the session where the query's hits gather,
and turns said by the person the query names, rank higher."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoracle.engine import Engine
from memoracle.recall import hybrid
from memoracle.recall.evidence import (
    boost_by_session,
    boost_speakers,
    named_speakers,
    session_scores,
)
from memoracle.types import Turn

AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


def test_a_session_counts_its_best_few_turns() -> None:
    ranked = {"a1": 0.5, "a2": 0.4, "a3": 0.3, "a4": 0.2, "b1": 0.9}
    session_of = {"a1": "A", "a2": "A", "a3": "A", "a4": "A", "b1": "B"}
    assert session_scores(ranked, session_of) == pytest.approx({"A": 1.2, "B": 0.9})


def test_a_turn_of_the_best_session_overtakes_a_lone_better_match() -> None:
    ranked = {"lone": 0.30, "kin": 0.25, "other": 0.2, "memory": 0.1}
    session_of = {"lone": "B", "kin": "A", "other": "A"}
    boosted = boost_by_session(ranked, session_of, 1.0)
    assert boosted["kin"] > boosted["lone"]  # A: 0.45, B: 0.30
    assert boosted["memory"] == 0.1  # no session: unchanged
    assert boost_by_session(ranked, session_of, 0.0) == ranked


def test_named_speakers_match_the_first_name_or_the_whole_name() -> None:
    speakers = {1: "Caroline", 2: "Melanie Smith", 3: "Bob"}
    assert named_speakers({"what", "did", "caroline", "say"}, speakers) == {"Caroline"}
    assert named_speakers({"melanie"}, speakers) == {"Melanie Smith"}
    assert named_speakers({"nobody"}, speakers) == set()
    assert boost_speakers({1: 1.0, 3: 1.0}, speakers, {"bob"}, 2.0) == {1: 1.0, 3: 2.0}


@pytest.fixture
def chat(engine: Engine) -> Engine:
    engine.capture(
        [
            Turn("user", "Caroline, research!", AT, "s1", "D1:1", speaker="Melanie"),
            Turn(
                "user",
                "This week I did a lot of research on adoption agencies near the city.",
                AT,
                "s1",
                "D1:2",
                speaker="Caroline",
            ),
        ]
    )
    return engine


def test_what_the_named_person_said_comes_first(chat: Engine) -> None:
    hits = chat.search("What did Caroline research?", k=5).hits
    assert hits and hits[0].turn_ids == ("D1:2",)


def test_without_the_speaker_boost_the_greeting_wins(
    chat: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hybrid, "SPEAKER_FACTOR", 1.0)
    hits = chat.search("What did Caroline research?", k=5).hits
    assert hits and hits[0].turn_ids == ("D1:1",)
