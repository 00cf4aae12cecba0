"""Session and speaker evidence: turns of the session where the query's hits gather,
and turns said by the person the query names, rank higher."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memoracle.engine import Engine
from memoracle.recall import evidence, hybrid
from memoracle.recall.evidence import (
    boost_by_session,
    boost_speakers,
    named_speakers,
    neighbour_ids,
    session_scores,
    spread_to_neighbours,
)
from memoracle.types import Scope, Turn

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


def test_a_named_persons_turn_that_only_names_is_not_boosted() -> None:
    speakers = {1: "Caroline", 2: "Melanie"}
    about = {2}  # 2 shares a word with the query besides a name; 1 matched the name only
    boosted = boost_speakers({1: 1.0, 2: 1.0}, speakers, {"caroline", "melanie"}, 2.0, about)
    assert boosted == {1: 1.0, 2: 2.0}


def test_the_turns_beside_the_best_ones_gain_a_share_of_their_score() -> None:
    ranked = {("episode", 10): 1.0, ("episode", 20): 0.5, ("memory", 11): 0.4}
    session_of = {("episode", i): "A" for i in (9, 10, 11, 20)} | {("episode", 21): "B"}
    assert neighbour_ids(ranked) == [9, 11, 19, 21]  # memory ids are not turns
    spread = spread_to_neighbours(ranked, session_of, 0.2)
    assert spread[("episode", 9)] == pytest.approx(0.2)  # entered, beside the best
    assert spread[("episode", 11)] == pytest.approx(0.2)
    assert ("episode", 21) not in spread  # another session: not its neighbour
    assert ("episode", 19) not in spread  # unknown: not looked up, not added
    assert spread[("memory", 11)] == 0.4
    assert spread_to_neighbours(ranked, session_of, 0.0) == ranked


EXCHANGE = [
    ("Melanie", "Cool! What got you into that hobby of yours?"),
    ("Caroline", "My grandfather took me to the lake every summer and I loved it."),
    ("Melanie", "That sounds lovely. Our summer was busy with the kids."),
]


def _exchange(engine: Engine, scope: Scope | None = None) -> None:
    turns = [
        Turn("user", text, AT, "s1", f"D1:{n}", speaker=who)
        for n, (who, text) in enumerate(EXCHANGE, 1)
    ]
    engine.capture(turns, scope=scope)


def _found(engine: Engine, query: str, scope: Scope | None = None) -> list[tuple[str, ...]]:
    engine.searcher.embedder = None  # lexical only: the vectors of the hash model find all
    return [h.turn_ids for h in engine.search(query, k=10, scope=scope).hits]


def test_the_answer_beside_the_question_turn_is_found(engine: Engine) -> None:
    _exchange(engine)
    found = _found(engine, "How did she get into the hobby?")
    assert found[0] == ("D1:1",)
    assert ("D1:2",) in found  # shares no word with the query: found as D1:1's neighbour
    assert ("D1:3",) not in found  # beside the neighbour only


def test_without_neighbours_the_answer_is_not_found(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hybrid, "NEIGHBOUR_WEIGHT", 0.0)
    _exchange(engine)
    assert _found(engine, "How did she get into the hobby?") == [("D1:1",)]


def test_a_when_question_gets_no_neighbours(engine: Engine) -> None:
    _exchange(engine)
    assert _found(engine, "When did she get into the hobby?") == [("D1:1",)]


def test_a_neighbour_another_user_said_is_never_shown(engine: Engine) -> None:
    alice, bob = Scope(user="alice"), Scope(user="bob")
    engine.capture([Turn("user", EXCHANGE[0][1], AT, "s1", "D1:1", speaker="Melanie")], scope=alice)
    engine.capture([Turn("user", EXCHANGE[1][1], AT, "s1", "D1:2", speaker="Caroline")], scope=bob)
    assert _found(engine, "hobby", alice) == [("D1:1",)]  # bob's turn beside it: not shown
    assert _found(engine, "grandfather", bob) == [("D1:2",)]


def test_a_recalled_statement_names_its_speaker_once(engine: Engine) -> None:
    said = Turn("user", "I passed the adoption agency interviews last Friday!", AT, "s1", "D1:1")
    engine.capture([replace(said, speaker="Caroline")])
    block = engine.recall("adoption agency interviews")
    memory_lines = [line.text for line in block.lines if line.ref.startswith("m_")]
    assert memory_lines and all("Caroline: I passed" in line for line in memory_lines)
    assert "Caroline: Caroline:" not in block.text


def test_a_turn_that_matches_only_the_name_is_not_boosted(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.capture(
        [
            Turn("user", "Hey, so nice to see you again!", AT, "s1", "D1:1", speaker="Caroline"),
            Turn("user", "I read that research on adoption.", AT, "s1", "D1:2", speaker="Melanie"),
        ]
    )
    assert _found(engine, "What did Caroline research?")[0] == ("D1:2",)
    monkeypatch.setattr(evidence, "_shares_a_word", lambda *_: True)  # the rule undone
    assert _found(engine, "What did Caroline research?")[0] == ("D1:1",)
