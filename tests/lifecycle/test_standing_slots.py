"""Partner and appointment slots (language/rules/slots/*.toml), what a plain statement
of one stores (`settle.STANDING`), and the benchmark's silent-conflict count."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.jobs.bench.lifecycle_set import silent_conflicts
from memoracle.lifecycle.slots import slots_of
from memoracle.types import Turn

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "attribute", "value", "negated"),
    [
        ("My girlfriend is Emma.", "partner", "emma", False),
        ("Emma and I broke up.", "partner", "emma", True),
        ("Моя жена — Анна.", "partner", "анн", False),
        ("Мы с Анной развелись.", "partner", "анн", True),
        ("Ma copine s'appelle Léa.", "partner", "lea", False),
        ("Je ne suis plus avec Léa.", "partner", "lea", True),
        ("Mi novio ahora es Pablo.", "partner", "pablo", False),
        ("I have a dog named Rex.", "pet", "rex", False),
        ("Rex passed away last week.", "pet", "rex", True),
        ("Барсик умер.", "pet", "барсик", True),
        ("Tengo un perro llamado Toby.", "pet", "toby", False),
        ("My dentist appointment is on Monday.", "due:dentist appointment", "monday", False),
        (
            "The dentist appointment was pushed to Friday.",
            "due:dentist appointment",
            "friday",
            False,
        ),
        ("Встречу с клиентом перенесли на пятницу.", "due:встреч клиент", "friday", False),
        ("La réunion d'équipe est mardi.", "due:reunion equipe", "tuesday", False),
        (
            "La cita con el médico se cambió al miércoles.",
            "due:cita con medico",
            "wednesday",
            False,
        ),
    ],
)
def test_partner_and_appointment_slots(
    text: str, attribute: str, value: str, negated: bool
) -> None:
    found = [(s.attribute, s.value, s.negated) for s in slots_of(text)]
    assert (attribute, value, negated) in found


def test_nothing_but_appointments_has_a_day() -> None:
    assert slots_of("My cat is on the sofa.") == ()


def _say(engine: Engine, clock: FixedClock, text: str, turn: str) -> None:
    clock.advance(days=1)
    engine.capture([Turn("user", text, clock.now(), "s", turn)])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("La réunion d'équipe est mardi.", "La réunion est reportée à jeudi."),
        ("La cita con el médico es el lunes.", "La cita con el médico se cambió al miércoles."),
        ("Встреча с клиентом в среду.", "Встречу с клиентом перенесли на пятницу."),
        ("Mi novio se llama Diego.", "Mi novio ahora es Pablo."),
    ],
)
def test_a_new_day_or_partner_replaces_the_old_one(
    engine: Engine, clock: FixedClock, old: str, new: str
) -> None:
    clock.set(AT)
    _say(engine, clock, old, "1")
    first = engine.list_memories()
    assert [m.text for m in first] == [old]  # stored though the capture rules keep nothing
    _say(engine, clock, new, "2")
    assert [m.text for m in engine.list_memories()] == [new]
    assert engine.get(first[0].ref).status == "superseded"


def test_a_pet_that_died_is_no_longer_had_and_two_pets_coexist(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(AT)
    _say(engine, clock, "I have a dog named Rex.", "1")
    _say(engine, clock, "I have a cat named Tom.", "2")
    assert len(engine.list_memories()) == 2  # several pets at once
    _say(engine, clock, "Rex passed away last week.", "3")
    assert "I have a dog named Rex." not in [m.text for m in engine.list_memories()]
    assert "I have a cat named Tom." in [m.text for m in engine.list_memories()]


def test_two_appointments_stay_two(engine: Engine, clock: FixedClock) -> None:
    clock.set(AT)
    _say(engine, clock, "My dentist appointment is on Monday.", "1")
    _say(engine, clock, "My haircut appointment is on Friday.", "2")
    assert len(engine.list_memories()) == 2


def test_silent_conflicts_are_counted(engine: Engine, clock: FixedClock) -> None:
    clock.set(AT)
    _say(engine, clock, "I live in Paris.", "1")
    _say(engine, clock, "I live in Lyon.", "2")
    assert silent_conflicts(engine.list_memories(status=None)) == []  # superseded: settled
    both = engine.list_memories(status=None)
    engine._store.memories.set_status(both[-1].id, "active", now=clock.now())  # undo it
    assert silent_conflicts(engine.list_memories(status=None)) == ["lives_in: lyon / paris"]


CITIES = (
    "Paris Lyon Berlin Madrid Rome Vienna Prague Oslo Lisbon Dublin"
    " Athens Warsaw Zurich Munich Milan Porto Seville Krakow Geneva Turin"
).split()


def test_a_burst_of_changes_leaves_the_last_and_every_step_in_the_audit(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(AT)
    for n, city in enumerate(CITIES):
        clock.advance(seconds=3)  # twenty changes in a minute
        engine.capture([Turn("user", f"I live in {city}.", clock.now(), "s", str(n))])
    assert [m.text for m in engine.list_memories()] == ["I live in Turin."]
    every = engine.list_memories(status=None, limit=100)
    assert len(every) == 20 and sum(m.status == "superseded" for m in every) == 19
    supersedes = [e for e in engine._store.audit.entries(limit=1000) if e.action == "supersede"]
    assert len(supersedes) == 19  # each step can be undone from the audit
