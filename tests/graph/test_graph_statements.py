"""The graph reads the statements capture stores ("Noor (User's sister) lives in
Seattle", "Caroline: I work at Acme") in every language, and the people, places,
organisations and devices of chat ("first day at Fernwood Labs", "we went to Paris",
"my new iPhone")."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.graph.extract import extract
from memoracle.graph.ontology import load_ontology
from memoracle.types import Turn

AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


def _read(text: str, speaker: str | None = None) -> tuple[set[tuple[str, str]], set[str]]:
    found = extract(text, speaker=speaker, ontology=load_ontology())
    entities = {(e.key, e.type) for e in found.entities}
    relations = {f"{r.source} {r.relation} {r.target}" for r in found.relations}
    return entities, relations


@pytest.mark.parametrize(
    ("statement", "speaker", "person", "relation", "place"),
    [
        ("Noor (User's sister) lives in Seattle", None, "noor", "noor family_of user", "seattle"),
        (
            "Noor (Caroline's sister) lives in Seattle",
            "Caroline",
            "noor",
            "noor family_of caroline",
            "seattle",
        ),
        (
            "Claire (sœur de l'utilisateur) habite à Lyon",
            None,
            "claire",
            "claire family_of user",
            "lyon",
        ),
        ("Claire (sœur de Marc) habite à Lyon", "Marc", "claire", "claire family_of marc", "lyon"),
        (
            "Lucía (hermana del usuario) vive en Madrid",
            None,
            "lucia",
            "lucia family_of user",
            "madrid",
        ),
        ("Анна (сестра пользователя) живёт в Москве", None, "анн", "анн family_of user", "москв"),
        ("Анна (сестра Ivan) живёт в Москве", "Ivan", "анн", "анн family_of ivan", "москв"),
    ],
)
def test_a_statements_person_keeps_relation_and_place(
    statement: str, speaker: str | None, person: str, relation: str, place: str
) -> None:
    entities, relations = _read(statement, speaker)
    assert {(person, "Person"), (place, "Location")} <= entities
    assert relation in relations
    assert f"{person} lives_in {place}" in relations


@pytest.mark.parametrize(
    ("statement", "speaker", "relation"),
    [
        ("Caroline: I work at Acme.", "Caroline", "caroline works_at acme"),
        ("L'utilisateur travaille chez Airbus", None, "user works_at airbus"),
        ("Jon: first day at Fernwood Labs done!", "Jon", "jon works_at fernwood labs"),
        ("Caroline just got a new iPhone 15", "Caroline", "caroline uses iphone"),
    ],
)
def test_a_statements_subject_is_the_speaker(
    statement: str, speaker: str | None, relation: str
) -> None:
    assert relation in _read(statement, speaker)[1]


@pytest.mark.parametrize(
    ("said", "entity"),
    [
        ("We went to Paris last summer!", ("paris", "Location")),
        ("Just got back from Tokyo, what a trip.", ("tokyo", "Location")),
        ("I'm originally from Sweden.", ("sweden", "Location")),
        ("I've been volunteering at Helping Hands lately.", ("helping hands", "Organization")),
        ("I got a new job at Door Dash.", ("door dash", "Organization")),
        ("Hey Mel! How are you?", ("mel", "Person")),
        ("I hung out with Jolene and Sam yesterday.", ("jolene", "Person")),
        ("I bought a Kindle last week.", ("kindle", "Device")),
        ("Nous sommes allés à Lisbonne cet été.", ("lisbonne", "Location")),
        ("Premier jour chez Dassault Systèmes !", ("dassault systemes", "Organization")),
        ("Fuimos a Granada el verano pasado.", ("granada", "Location")),
        ("Primer día en Telefónica.", ("telefonica", "Organization")),
        ("Мы поехали в Казань летом.", ("казан", "Location")),
        ("Первый день в Яндексе!", ("яндекс", "Organization")),
    ],
)
def test_chat_names_places_organisations_people_and_devices(
    said: str, entity: tuple[str, str]
) -> None:
    assert entity in _read(said)[0]


@pytest.mark.parametrize(
    "said", ["Thankfully it went well.", "Yeah, that was fun.", "Wow, that's great."]
)
def test_an_opening_word_is_no_person(said: str) -> None:
    assert _read(said)[0] == set()


def test_aliases_make_one_entity_with_its_mentions(tmp_path: Path) -> None:
    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})
    clock = FixedClock(AT)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.capture([Turn("user", "My wife Anna works at Siemens.", AT, "s", "1")])
        engine.capture([Turn("user", "I had dinner with Anna yesterday.", AT, "s", "2")])
        people = {e.key: e for e in engine.graph_entities(type_="Person")}
        assert people["anna"].memories == 2
        assert {e.key for e in engine.graph_entities(type_="Organization")} == {"siemens"}
        relations = {(r.source, r.relation, r.target) for r in engine.graph_relations()}
        assert {("anna", "family_of", "user"), ("anna", "works_at", "siemens")} <= relations
