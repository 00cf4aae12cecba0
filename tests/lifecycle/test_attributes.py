"""Attributes by meaning (`lifecycle.attributes`, `engine/settle.by_attribute`): a
statement no slot rule reads still fills the attribute it is about, with the name it
holds, and supersedes the older value; unsure readings dispute instead; a visit, a
second subject or the same value supersede nothing. The real model: the hash one knows
no meaning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.lifecycle.attributes import OTHER, prototypes, prototypes_from, values_in
from memoracle.lifecycle.slots import SlotFileError, load_slots
from memoracle.types import Memory, Scope, Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _say(engine: Engine, *texts: str, scope: Scope | None = None) -> None:
    for n, text in enumerate(texts):
        at = AT + timedelta(days=n)
        engine.capture([Turn("user", text, at, "s", str(n))], scope=scope)


def _status(engine: Engine, word: str, scope: Scope | None = None) -> list[str]:
    found: list[Memory] = [
        m for m in engine.list_memories(status=None, limit=100, scope=scope) if word in m.text
    ]
    assert found, f"no memory holds {word!r}"
    return [m.status for m in found]


def test_values_are_the_names_inside_a_sentence() -> None:
    assert values_in("ok we're out!! got the keys to the new place in Sheffield") == ["Sheffield"]
    assert values_in("Switched to a MacBook Air M3 last week") == ["MacBook Air M3"]
    assert values_in("Теперь я в Билайне, а Катя в Озоне") == ["Билайне", "Катя", "Озоне"]
    assert values_in("Long day. Tomorrow at 10 again") == []  # sentence openers, a time
    assert values_in("Started at Nvidia on Monday", lang="en") == ["Nvidia"]  # a date


def test_prototypes_are_data_in_every_language() -> None:
    table = prototypes()
    assert OTHER in table
    for attribute in ("lives_in", "works_at", "job_title", "partner", "pet", "diet"):
        assert len(table[attribute]) >= 12, attribute  # four languages, three or more each
    book = load_slots()  # the slot loader accepts the [prototypes] tables
    assert book is not None


def test_a_bad_prototype_entry_names_its_file() -> None:
    with pytest.raises(SlotFileError, match=r"xx\.toml.*\[prototypes\] lives_in"):
        prototypes_from([({"lives_in": ["ok", 3]}, "xx.toml")])
    with pytest.raises(SlotFileError, match="must be a table"):
        prototypes_from([(["lives_in"], "xx.toml")])  # type: ignore[list-item]


def test_a_move_said_in_passing_supersedes_the_old_home(use: Engine) -> None:
    _say(
        use,
        "I live in Leeds.",
        "ok we're officially out!! got the keys to the new place in Sheffield yesterday",
    )
    assert _status(use, "Leeds") == ["superseded"]
    assert _status(use, "Sheffield") == ["active"]
    new = next(m for m in use.list_memories() if "Sheffield" in m.text)
    reads = [e for e in use.history(new.id) if e.action == "read"]
    assert reads and reads[0].detail["attribute"] == "lives_in"
    assert reads[0].detail["value"] == "sheffield" and reads[0].detail["unsure"] is None


def test_a_new_employer_in_other_words_supersedes_the_old(use: Engine) -> None:
    _say(
        use,
        "I work at Wayfair.",
        "first week at Zalando done-ish. onboarding is soooo much better than my old place",
    )
    assert _status(use, "Wayfair") == ["superseded"]
    assert _status(use, "Zalando") == ["active"]


def test_a_reading_close_to_another_attribute_disputes(use: Engine) -> None:
    """ "I'm at Nvidia now" is about as near a job title as an employer: the old
    employer is disputed, not replaced."""
    _say(use, "I'm working at Intel.", "I'm at Nvidia now.")
    assert _status(use, "Intel") == ["disputed"]
    assert _status(use, "Nvidia") == ["active"]


def test_a_visit_or_a_second_language_supersedes_nothing(use: Engine) -> None:
    _say(use, "I live in Porto.", "greetings from Lisbon, the pastel de nata hype is real.")
    assert _status(use, "Porto") == ["active"]
    _say(use, "I speak French.", "I speak Spanish.", scope=Scope(user="b"))
    assert _status(use, "French", Scope(user="b")) == ["active"]


def test_the_same_value_or_another_owner_supersedes_nothing(use: Engine) -> None:
    _say(use, "I'm at Nvidia now.", scope=Scope(user="a"))
    _say(use, "I'm at Intel now.", scope=Scope(user="b"))
    _say(use, "I work at Nvidia.", scope=Scope(user="a"))
    assert set(_status(use, "Nvidia", Scope(user="a"))) == {"active"}
    assert _status(use, "Intel", Scope(user="b")) == ["active"]


def test_an_unsure_reading_disputes_instead_of_replacing(use: Engine) -> None:
    """No name for the value ("I stopped eating meat"): the older diet is disputed, for
    a person to settle (`memoracle pending`), and the new statement stays."""
    _say(use, "I'm vegan.", "I stopped eating meat and dairy, fish only now.")
    assert _status(use, "vegan") == ["disputed"]
    assert _status(use, "fish") == ["active"]
    new = next(m for m in use.list_memories() if "fish" in m.text)
    reads = [e for e in use.history(new.id) if e.action == "read"]
    assert reads[0].detail["attribute"] == "diet" and reads[0].detail["unsure"]


def test_a_question_about_an_attribute_is_led_by_its_current_value(
    use: Engine, clock: FixedClock
) -> None:
    _say(use, "I live in Leeds.", "ok we're out!! got the keys to the new place in Sheffield")
    clock.set(AT + timedelta(days=5))
    use.capture(
        [Turn("user", "greetings from Lisbon, the pastel de nata hype is real", clock.now())]
    )
    clock.set(AT + timedelta(days=5, hours=1))
    for question in ("Where do I live?", "¿Dónde vivo?", "Où est-ce que j'habite ?"):
        lines = use.recall(question, budget=400).lines
        assert lines[0].slot == "answer" and "Sheffield" in lines[0].text, question
        assert not any("Leeds" in line.text for line in lines if line.slot == "answer")
    # Not about an attribute: no answer line (the home is not put first).
    lines = use.recall("What should I eat in Portugal?", budget=400).lines
    assert not any(line.slot == "answer" for line in lines)


def test_the_answer_is_only_ever_the_askers_own(use: Engine, clock: FixedClock) -> None:
    alice, bob = Scope(user="alice"), Scope(user="bob")
    _say(use, "I live in Oslo.", scope=bob)
    clock.set(AT + timedelta(days=1))
    _say(use, "I live in Porto.", scope=alice)
    for asker, mine, theirs in ((alice, "Porto", "Oslo"), (bob, "Oslo", "Porto")):
        lines = use.recall("Where do I live?", budget=400, scope=asker).lines
        assert lines[0].slot == "answer" and mine in lines[0].text
        assert not any(theirs in line.text for line in lines)


def test_in_a_group_the_answer_is_not_another_members(use: Engine, clock: FixedClock) -> None:
    alice = Scope(user="alice", chat="team", visibility="shared")
    bob = Scope(user="bob", chat="team", visibility="shared")
    _say(use, "I live in Oslo.", scope=alice)
    lines = use.recall("Where do I live?", budget=400, scope=bob).lines
    assert not any(line.slot == "answer" for line in lines)
    lines = use.recall("Where do I live?", budget=400, scope=alice).lines
    assert lines and lines[0].slot == "answer" and "Oslo" in lines[0].text
