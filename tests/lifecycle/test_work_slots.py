"""Informal words for a new employer, title and project state, in English, Russian,
French and Spanish (language/rules/slots/*.toml), and a project's state replacing the
old one through the engine (`settle.STANDING`)."""

from __future__ import annotations

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.lifecycle.slots import slots_of
from memoracle.types import Turn

# (language, sentence, attribute, value as the rule reads it)
READ: list[tuple[str, str, str, str]] = [
    ("en", "Started at Shopify last week, loving it.", "works_at", "Shopify"),
    ("en", "Just joined Goldman Sachs.", "works_at", "Goldman Sachs"),
    ("en", "New gig at Spotify, starting Monday.", "works_at", "Spotify"),
    ("fr", "J'ai rejoint Ubisoft le mois dernier.", "works_at", "Ubisoft"),
    ("en", "I'm now head of data.", "job_title", "head of data"),
    ("en", "I just became tech lead.", "job_title", "tech lead"),
    ("en", "They made me design director.", "job_title", "design director"),
    ("ru", "Теперь я руководитель отдела.", "job_title", "руководитель отдела"),
    ("en", "Project Atlas is on hold.", "project_status:atlas", "on hold"),
    ("en", "We shipped Orion last night.", "project_status:orion", "shipped"),
    ("en", "We put the Nova project on ice.", "project_status:nova", "on ice"),
    ("ru", "Проект Альфа заморожен.", "project_status:альф", "заморожен"),
    ("ru", "Мы запустили Вегу.", "project_status:вег", "запустили"),
    ("fr", "Le projet Hermès est en pause.", "project_status:hermes", "en pause"),
    ("fr", "On a livré le projet Pégase.", "project_status:pegase", "livré"),
    ("es", "El proyecto Faro está cancelado.", "project_status:faro", "cancelado"),
    ("es", "Lanzamos el proyecto Luna.", "project_status:luna", "lanzamos"),
]


@pytest.mark.parametrize(("lang", "text", "attribute", "said"), READ)
def test_informal_words_fill_the_slot(lang: str, text: str, attribute: str, said: str) -> None:
    found = [(s.attribute, s.said.lower()) for s in slots_of(text, lang=lang)]
    assert (attribute, said.lower()) in found, found


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "I started at dawn."),  # no capitalised name: no employer
        ("en", "I became a father last year."),  # no title word: no job title
        ("en", "It is live."),  # no project named
        ("fr", "J'ai rejoint mes amis au café."),
    ],
)
def test_what_names_no_employer_title_or_project_fills_nothing(lang: str, text: str) -> None:
    attributes = {s.attribute.partition(":")[0] for s in slots_of(text, lang=lang)}
    assert not attributes & {"works_at", "job_title", "project_status"}


def _say(engine: Engine, clock: FixedClock, text: str, turn: str) -> None:
    clock.advance(days=1)
    engine.capture([Turn("user", text, clock.now(), "s", turn)])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Project Atlas is in beta.", "Project Atlas is on hold."),
        ("Проект Альфа в разработке.", "Проект Альфа заморожен."),
        ("Le projet Hermès est en cours.", "Le projet Hermès est en pause."),
        ("El proyecto Faro está en desarrollo.", "El proyecto Faro está cancelado."),
    ],
)
def test_a_project_state_replaces_the_old_one(
    engine: Engine, clock: FixedClock, old: str, new: str
) -> None:
    _say(engine, clock, old, "1")
    first = engine.list_memories()
    assert [m.text for m in first] == [old]
    _say(engine, clock, new, "2")
    assert [m.text for m in engine.list_memories()] == [new]
    assert engine.get(first[0].ref).status == "superseded"


def test_another_project_state_leaves_the_first_alone(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, "Project Atlas is in beta.", "1")
    _say(engine, clock, "Project Orion is on hold.", "2")
    assert len(engine.list_memories()) == 2
