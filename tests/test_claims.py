"""One memory, one claim; a change stated as an event; third persons (issue: change
understood without a model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.capture.extract import extract
from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs import transfer
from memoracle.lifecycle.claims import split_claims
from memoracle.lifecycle.slots import slots_of
from memoracle.types import Memory, Turn

ALEX = "I'm Alex, I work as an SRE at Datadog and I live in Berlin."


def _say(engine: Engine, clock: FixedClock, text: str, turn: str, days: int = 1) -> None:
    clock.advance(days=days)
    engine.capture([Turn("user", text, clock.now(), "s", turn)])


def _all(engine: Engine) -> list[Memory]:
    return engine.list_memories(status=None)


def _one(engine: Engine, part: str) -> Memory:
    found = [m for m in _all(engine) if part in m.text]
    assert len(found) == 1, [m.text for m in _all(engine)]
    return found[0]


# -- one memory, one claim ------------------------------------------------------------


def test_a_turn_of_several_claims_is_one_memory_per_claim_from_the_same_turn(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, ALEX, "1")
    work, home = _one(engine, "Datadog"), _one(engine, "Berlin")
    assert work.id != home.id
    assert "Berlin" not in work.text and "Datadog" not in home.text
    assert (home.subject, home.predicate) == ("user", "lives_in")
    assert engine.episodes_of(work) == engine.episodes_of(home)  # the same turn


def test_a_change_of_one_claim_replaces_only_that_claim(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, ALEX, "1")
    _say(engine, clock, "I moved to Munich last week.", "2", days=180)
    home, work = _one(engine, "Berlin"), _one(engine, "Datadog")
    munich = _one(engine, "Munich")
    assert home.status == "superseded" and home.superseded_by == munich.id
    assert work.status == "active"
    block = engine.recall("Where do I work?").text
    assert "Datadog" in block


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("Я живу в Москве и работаю в Яндексе.", ["Я живу в Москве.", "Работаю в Яндексе."]),
        (
            "J'habite à Lyon et je travaille chez Renault.",
            ["J'habite à Lyon.", "Je travaille chez Renault."],
        ),
        (
            "Vivo en Valencia y trabajo en Mercadona.",
            ["Vivo en Valencia.", "Trabajo en Mercadona."],
        ),
        # one claim, however many "and"s: never cut
        ("I like Simon and Garfunkel.", ["I like Simon and Garfunkel."]),
        ("I use vim and tmux.", ["I use vim and tmux."]),
        ("I live in Paris, near the Bastille.", ["I live in Paris, near the Bastille."]),
        # a denial with what replaced it is one change, not two claims
        (
            "I don't like green tea anymore, I prefer coffee now.",
            ["I don't like green tea anymore, I prefer coffee now."],
        ),
    ],
)
def test_claims_are_cut_where_each_piece_fills_its_own_slot(text: str, claims: list[str]) -> None:
    candidate = extract(text, role="user").candidates[0]
    assert [c.text for c in split_claims(candidate)] == claims


def test_export_and_import_keep_the_claims_apart(
    engine: Engine, clock: FixedClock, tmp_path: Path
) -> None:
    _say(engine, clock, ALEX, "1")
    path = tmp_path / "export.jsonl"
    transfer.export(engine, path)
    settings = load(tmp_path / "other", env={}, overrides={"embedding.model": "hash"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as other:
        transfer.import_(other, path)
        assert sorted(m.text for m in _all(other)) == sorted(m.text for m in _all(engine))
        assert len(_all(other)) == 2


# -- a change stated as an event -----------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("I live in Paris.", "I moved from Paris to Lyon last week.", "Lyon"),
        ("Я живу в Москве.", "Я переехал из Москвы в Казань.", "Казань"),
        ("J'habite à Paris.", "J'ai déménagé de Paris à Lyon.", "Lyon"),
        ("Vivo en Madrid.", "Me mudé de Madrid a Sevilla.", "Sevilla"),
    ],
)
def test_a_move_from_one_place_to_another_supersedes_the_old_home(
    engine: Engine, clock: FixedClock, old: str, new: str, value: str
) -> None:
    _say(engine, clock, old, "1")
    _say(engine, clock, new, "2", days=180)
    before = _one(engine, old[:10])
    assert before.status == "superseded"
    assert value in engine.get(f"m_{before.superseded_by}").text


def test_the_plainest_move_is_answered_with_the_new_home(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, "I live in Paris.", "1")
    _say(engine, clock, "I moved from Paris to Lyon last week.", "2", days=180)
    first = engine.recall("Where do I live?").text.splitlines()[0]
    assert "Lyon" in first


@pytest.mark.parametrize(
    "text", ["We moved from MySQL to Postgres 16.", "We moved from Jira to Linear."]
)
def test_a_move_between_tools_is_no_home(text: str) -> None:
    assert [s.attribute for s in slots_of(text, lang="en")][0].startswith("uses:")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My girlfriend is Emma.", "We broke up last month."),
        ("I work at Shopify.", "I handed in my notice today."),
        ("Моя девушка — Катя.", "Мы расстались."),
        ("Я работаю в Сбере.", "Меня уволили вчера."),
        ("Ma copine s'appelle Léa.", "On s'est séparés."),
        ("Je travaille chez Orange.", "J'ai démissionné."),
        ("Mi novio es Pablo.", "Cortamos."),
        ("Trabajo en Telefónica.", "Me despidieron el lunes."),
    ],
)
def test_an_ending_that_names_no_value_ends_the_old_one(
    engine: Engine, clock: FixedClock, old: str, new: str
) -> None:
    _say(engine, clock, old, "1")
    _say(engine, clock, new, "2", days=30)
    assert _one(engine, old[:10]).status == "superseded"


# -- what capture and get say --------------------------------------------------------


def test_capture_and_get_name_what_was_superseded_and_by_what(tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    run = CliRunner().invoke
    assert run(main, ["--home", home, "init"]).exit_code == 0
    run(
        main, ["--home", home, "--now", "2026-06-01T10:00", "capture", "--user", "I live in Paris."]
    )
    said = run(
        main,
        ["--home", home, "--now", "2026-12-01T10:00", "capture", "--user", "I moved to Lyon."],
    )
    assert "superseded m_1 by m_2" in said.output
    shown = run(main, ["--home", home, "get", "m_1"]).output
    assert "superseded by m_2: I moved to Lyon." in shown
    again = run(
        main,
        [
            "--home",
            home,
            "--now",
            "2026-12-02T10:00",
            "capture",
            "--json",
            "--user",
            "I live in Oslo.",
        ],
    )
    assert [m["id"] for m in json.loads(again.output)["superseded"]] == ["m_2"]


# -- other people, tools ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "subject"),
    [("Sarah Chen lives in Hamburg.", "Sarah Chen"), ("Marco is vegan.", "Marco")],
)
def test_a_statement_about_someone_named_is_kept_with_their_name(
    engine: Engine, clock: FixedClock, text: str, subject: str
) -> None:
    _say(engine, clock, text, "1")
    assert [(m.subject, m.text) for m in _all(engine)] == [(subject, text)]


def test_a_third_persons_move_reaches_the_graph_and_replaces_their_home(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "Sarah Chen lives in Hamburg.", "1")
    _say(engine, clock, "Sarah Chen moved to Vienna.", "2")
    assert _one(engine, "Hamburg").status == "superseded"
    relations = [(r.source, r.relation, r.target) for r in engine.graph_relations()]
    assert ("sarah chen", "lives_in", "vienna") in [
        (s.casefold(), r, t.casefold()) for s, r, t in relations
    ]


def test_a_tool_one_works_with_is_no_employer() -> None:
    found = extract("Trabajo con Terraform todos los días", role="user").candidates
    assert [(c.predicate, c.object) for c in found] == [("uses", "Terraform todos los días")]
    assert extract("Trabajo en Globant.", role="user").candidates[0].predicate == "works_at"


def test_a_tool_one_works_with_is_not_replaced_by_an_employer(
    use: Engine, clock: FixedClock
) -> None:
    _say(use, clock, "Trabajo con Terraform todos los días.", "1")
    _say(use, clock, "Trabajo en Globant.", "2", days=30)
    assert _one(use, "Terraform").status == "active"


# -- what was merged is what is shown ---------------------------------------------------


def test_a_memory_merged_from_two_turns_is_the_one_hit_for_them(
    use: Engine, clock: FixedClock
) -> None:
    _say(use, clock, "I'm allergic to peanuts.", "1")
    _say(use, clock, "I have an allergy to peanuts.", "2")
    (memory,) = _all(use)
    assert len(use.episodes_of(memory)) == 2  # merged: both turns behind one memory
    hits = use.search("peanuts").hits
    assert [(h.source, h.id) for h in hits] == [("memory", memory.id)]
    assert use.recall("peanuts").text.splitlines()[0].startswith(f"- [{memory.ref}")


def test_a_statement_naming_its_subject_is_shown_without_the_name_twice(tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    run = CliRunner().invoke
    assert run(main, ["--home", home, "init"]).exit_code == 0
    said = run(main, ["--home", home, "capture", "--user", "Sarah Chen lives in Hamburg."])
    recalled = run(main, ["--home", home, "recall", "Where does Sarah Chen live?"])
    found = run(main, ["--home", home, "search", "Hamburg"])
    for shown in (said.output, recalled.output, found.output):
        assert "Sarah Chen lives in Hamburg." in shown
        assert "Sarah Chen: Sarah Chen" not in shown


# -- bad input: a clear outcome, nothing lost ------------------------------------------

MIXED = "Vivo en Valencia, je travaille chez Renault, я люблю кофе and I use vim every day."
CITIES = ["Paris", "Lyon", "Berlin", "Madrid", "Oslo", "Rome", "Vienna", "Prague"]


def _hundred(i: int) -> str:
    return [f"I live in {CITIES[i % 8]}", f"I work at Company{i}", f"I use tool{i}"][i % 3]


def test_a_sentence_of_four_languages_is_one_memory_per_claim_each_in_its_language(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, MIXED, "1")
    found = {m.lang: m.text for m in _all(engine)}
    assert found == {
        "es": "Vivo en Valencia.",
        "fr": "Je travaille chez Renault.",
        "ru": "Я люблю кофе.",
        "en": "I use vim every day.",
    }
    assert (_one(engine, "Valencia").predicate, _one(engine, "Renault").predicate) == (
        "lives_in",
        "works_at",
    )
    (turn,) = {e.text for m in _all(engine) for e in engine.episodes_of(m)}
    assert turn == MIXED  # the turn itself, kept whole


def test_one_sentence_of_a_hundred_claims_is_kept_as_a_turn_and_said_why(
    engine: Engine, clock: FixedClock
) -> None:
    text = ", ".join(_hundred(i) for i in range(100)) + "."
    clock.advance(days=1)
    result = engine.capture([Turn("user", text, clock.now(), "s", "1")])
    assert not result.added and "too_long" in result.skipped
    (hit,) = engine.search("Company97").hits
    assert hit.text == text  # nothing lost: the turn is stored and found


def test_a_turn_of_a_hundred_sentences_keeps_every_claim(engine: Engine, clock: FixedClock) -> None:
    said = [_hundred(i) + "." for i in range(100)]
    clock.advance(days=1)
    engine.capture([Turn("user", " ".join(said), clock.now(), "s", "1")])
    every = engine.list_memories(status=None, limit=1000)  # live or superseded, never deleted
    assert {m.text for m in every} == set(said)
    homes = [m for m in every if m.predicate == "lives_in" and m.status == "active"]
    assert [m.text for m in homes] == [said[99]]  # the last home said is the one that holds


# -- a name across scripts --------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "query"),
    [
        ("Sarah Chen lives in Hamburg.", "Гамбург"),
        ("Sarah Chen lives in Hamburg.", "Гамбурге"),
        ("Мой брат живёт в Париже.", "Paris"),
        ("Anna moved to Berlin.", "Берлин"),
    ],
)
def test_a_name_is_found_in_the_other_script(
    engine: Engine, clock: FixedClock, said: str, query: str
) -> None:
    _say(engine, clock, said, "1")
    _say(engine, clock, "Marco is vegan.", "2")
    hits = engine.search(query).hits
    assert hits and hits[0].text.endswith(said)


def test_after_a_move_where_one_works_is_answered_with_the_job_kept(
    use: Engine, clock: FixedClock
) -> None:
    _say(use, clock, ALEX, "1")
    _say(use, clock, "I moved to Munich last week.", "2", days=180)
    assert (_one(use, "Datadog").status, _one(use, "Berlin").status) == ("active", "superseded")
    first = use.recall("Where do I work?").text.splitlines()[0]  # the move is fresh
    assert "Datadog" in first


def test_the_users_own_attribute_and_it_as_a_subject_are_one_claim(engine: Engine) -> None:
    from memoracle.engine.near import same_subject

    assert same_subject("user", "dog", "user's dog", None)
    assert not same_subject("user", "lives_in", "user's sister", None)
    engine.remember("My dog is called Toby.")
    engine.remember("Toby is my dog.")
    toby = [m for m in engine.list_memories(status=None, limit=10) if "Toby" in m.text]
    assert len(toby) == 1  # said again in other words: the same memory, bumped


@pytest.mark.parametrize(
    ("said", "claims"),
    [
        (
            "I work at Procter and Gamble and I live in Cincinnati.",
            ["I work at Procter and Gamble.", "I live in Cincinnati."],
        ),
        (
            "I live in Bosnia and Herzegovina, and I work at BH Telecom.",
            ["I live in Bosnia and Herzegovina.", "I work at BH Telecom."],
        ),
    ],
)
def test_a_claim_keeps_its_words_as_said(said: str, claims: list[str]) -> None:
    from memoracle.lifecycle.claims import split_claims

    (candidate,) = extract(said, role="user").candidates
    assert [c.text for c in split_claims(candidate)] == claims
