"""A captured sentence becomes a statement a reader understands without the conversation:
third persons by name and relation, relative times resolved, a named speaker's subject,
in the sentence's own language (capture/statement.py, language/rules/statement/)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoracle.capture.pipeline import propose
from memoracle.capture.statement import StatementFileError, statement_rules
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


def _texts(text: str, speaker: str | None = None, role: str = "user") -> list[str]:
    found = propose(text, role=role, speaker=speaker, at=AT)
    return [p.candidate.text for p in found.proposals]


@pytest.mark.parametrize(
    ("said", "speaker", "statement"),
    [
        ("my sister Noor lives in Seattle", None, "Noor (User's sister) lives in Seattle"),
        ("My wife Anna works at Siemens", None, "Anna (User's wife) works at Siemens"),
        ("My wife Anna works at Siemens", "Caroline", "Anna (Caroline's wife) works at Siemens"),
        ("Anna, my wife, works at Siemens", None, "Anna (User's wife) works at Siemens"),
        ("Ma sœur Claire habite à Lyon", None, "Claire (sœur de l'utilisateur) habite à Lyon"),
        ("Ma sœur Claire habite à Lyon", "Marc", "Claire (sœur de Marc) habite à Lyon"),
        ("Mi hermana Lucía vive en Madrid", None, "Lucía (hermana del usuario) vive en Madrid"),
        ("Mi hermana Lucía vive en Madrid", "Ana", "Lucía (hermana de Ana) vive en Madrid"),
        ("Моя сестра Анна живёт в Москве", None, "Анна (сестра пользователя) живёт в Москве"),
        ("Моя сестра Анна живёт в Москве", "Ivan", "Анна (сестра Ivan) живёт в Москве"),
    ],
)
def test_a_third_person_is_named_with_the_relation(
    said: str, speaker: str | None, statement: str
) -> None:
    assert _texts(said, speaker) == [statement]


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        ("I went to the park with Anna yesterday", "I went to the park with Anna on 2023-05-07"),
        ("J'ai vu Claire hier au marché", "J'ai vu Claire le 2023-05-07 au marché"),
        ("Ayer vi a Lucía en el mercado", "El 2023-05-07 vi a Lucía en el mercado"),
        ("Вчера я видел Анну на рынке", "2023-05-07 я видел Анну на рынке"),
        ("I moved to Berlin two days ago", "I moved to Berlin on 2023-05-06"),
        ("I've lived in Lyon since last year", "I've lived in Lyon since 2022"),
    ],
)
def test_a_relative_time_is_resolved_into_the_text(said: str, statement: str) -> None:
    assert _texts(said) == [statement]


def test_an_absolute_time_and_a_recurring_one_stay_as_said() -> None:
    assert _texts("I moved to Berlin in 2021.") == ["I moved to Berlin in 2021."]
    assert _texts("Never deploy on Fridays.") == ["Never deploy on Fridays."]
    assert _texts("Ne jamais déployer le vendredi.") == ["Ne jamais déployer le vendredi."]
    # "le vendredi" is every Friday, "vendredi" the next one.
    assert _texts("Le vendredi je fais du sport.") == ["Le vendredi je fais du sport."]
    assert _texts("Vendredi je vais au cinéma avec Marc.") == [
        "Vendredi (2023-05-12) je vais au cinéma avec Marc."
    ]


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        # A weekday keeps its words, the date beside them (it was "moved to On
        # 2023-05-11": a weekday's capital read as the start of the sentence).
        ("The meeting moved to Thursday.", "The meeting moved to Thursday (2023-05-11)."),
        ("The meeting is on Tuesday at 10am.", "The meeting is on Tuesday at 10am (2023-05-09)."),
        (
            "J'ai rendez-vous chez le dentiste jeudi.",
            "J'ai rendez-vous chez le dentiste jeudi (2023-05-11).",
        ),
        (
            "Tengo cita con el dentista el jueves.",
            "Tengo cita con el dentista el jueves (2023-05-11).",
        ),
        ("У меня встреча с врачом в пятницу.", "У меня встреча с врачом в пятницу (2023-05-12)."),
        # Not a weekday, after "to": the date (and time) alone, not "to on 2023-05-09".
        (
            "The dentist moved my appointment to tomorrow.",
            "The dentist moved my appointment to 2023-05-09.",
        ),
        ("The call moved to Monday at 3pm.", "The call moved to Monday at 3pm (2023-05-15)."),
        ("I moved the call to tomorrow at 3pm.", "I moved the call to 2023-05-09 15:00."),
    ],
)
def test_a_weekday_keeps_its_words_and_a_date_joins_the_sentence(said: str, statement: str) -> None:
    assert _texts(said) == [statement]


@pytest.mark.parametrize(
    ("said", "speaker", "statements"),
    [
        ("got promoted yesterday", "Caroline", ["Caroline got promoted on 2023-05-07"]),
        (
            "first day at Fernwood Labs done! I'm a data engineer now",
            "Jon",
            ["Jon: first day at Fernwood Labs done!", "Jon: I'm a data engineer now"],
        ),
        ("J'ai adopté un chien hier", "Marc", ["Marc : J'ai adopté un chien le 2023-05-07"]),
        ("Ayer me mudé a Sevilla", "Ana", ["Ana: El 2023-05-07 me mudé a Sevilla"]),
        ("Я переехал в Берлин вчера", "Ivan", ["Ivan: Я переехал в Берлин 2023-05-07"]),
    ],
)
def test_a_named_speakers_statement_names_them(
    said: str, speaker: str, statements: list[str]
) -> None:
    assert _texts(said, speaker) == statements


def test_one_users_own_sentence_stays_as_said_and_an_assistants_gets_only_dates() -> None:
    # "I" in one user's store is the user: the lifecycle reads the sentence as said.
    assert _texts("I'm a data engineer now") == ["I'm a data engineer now"]
    assert _texts("got promoted yesterday") == ["got promoted on 2023-05-07"]
    said = _texts(
        "We shipped the release yesterday, and my colleague Ana fixed it.", role="assistant"
    )
    assert all("User" not in text and "Ana (" not in text for text in said)


def test_the_memory_keeps_its_turn_as_provenance(tmp_path: Path) -> None:
    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})
    clock = FixedClock(AT)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        said = "my sister Noor lives in Seattle"
        (memory,) = engine.capture([Turn("user", said, AT)]).added
        assert memory.text == "Noor (User's sister) lives in Seattle"
        assert [e.text for e in engine.episodes_of(memory)] == [said]


def test_every_language_has_its_statement_words() -> None:
    for code in ("en", "fr", "es", "ru"):
        rules = statement_rules(code)
        assert rules is not None and rules.user and rules.roles
    assert statement_rules("xx") is None
    assert issubclass(StatementFileError, Exception)


def test_forget_names_the_statement_it_means(tmp_path: Path) -> None:
    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})
    clock = FixedClock(AT)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.capture([Turn("user", "my sister Noor lives in Seattle", AT, "s", "1")])
        said = "Forget that my sister Noor lives in Seattle."
        forgot = engine.capture([Turn("user", said, AT, "s", "2")]).forgotten
        assert [m.text for m in forgot] == ["Noor (User's sister) lives in Seattle"]
