"""Paraphrase merge by meaning at capture (`engine/near.same_meaning`): the same
statement in other words or another language is merged into the live memory, never two
different values. The real multilingual model: the hash one knows no meaning."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.lifecycle.conflicts import same_value
from memoracle.lifecycle.scripts import latin, names_agree, same_name
from memoracle.types import Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _say(engine: Engine, text: str, turn: str) -> None:
    engine.capture([Turn("user", text, AT, "s", turn)])


def _active(engine: Engine) -> list[str]:
    return sorted(m.text for m in engine.list_memories())


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("Я живу в Париже.", "I live in Paris."),
        ("Je travaille chez Airbus.", "I work at Airbus."),
        ("I'm allergic to peanuts.", "I have an allergy to peanuts."),
    ],
)
def test_the_same_statement_in_other_words_is_merged(use: Engine, first: str, again: str) -> None:
    _say(use, first, "1")
    _say(use, again, "2")
    assert _active(use) == [first.rstrip(".")] or _active(use) == [first]
    kept = use.list_memories()[0]
    assert len(kept.episode_ids) == 2  # the second turn is in its provenance
    merges = [e for e in use.history(kept.id) if e.action == "merge"]
    assert merges and merges[0].detail["text"].startswith(again.rstrip("."))


@pytest.mark.parametrize(
    ("first", "other"),
    [
        ("The team offsite is on March 3.", "The team offsite is on March 5."),
        ("My brother Tom lives in Berlin.", "My brother Sam lives in Berlin."),
        ("I live in Moscow.", "I live in Berlin."),
        ("I have lived in Lyon.", "I have lived in Lyon since 2021."),  # all of it and more
    ],
)
def test_different_values_are_never_merged(use: Engine, first: str, other: str) -> None:
    _say(use, first, "1")
    _say(use, other, "2")
    texts = " ".join(m.text for m in use.list_memories(status=None))
    assert first.split()[-1].rstrip(".") in texts and other.split()[-1].rstrip(".") in texts
    assert not [e for e in use._store.audit.entries() if e.action == "merge"]


def test_hash_vectors_merge_nothing_across_languages(engine: Engine) -> None:
    # The default test engine: hash vectors, words only, no meaning across languages.
    _say(engine, "Je travaille chez Airbus.", "1")
    _say(engine, "I work at Airbus.", "2")
    assert not [e for e in engine._store.audit.entries() if e.action == "merge"]


def test_names_across_scripts() -> None:
    assert latin("Париже") == "parizhe"
    assert same_name("Берлин", "Berlin") and not same_name("Москве", "Berlin")
    assert names_agree("Я живу в Париже.", "I live in Paris.")
    assert not names_agree("Я живу в Москве.", "I live in Berlin.")
    assert not names_agree("I live in Paris.", "I live in Paris.")  # one script: not here
    assert same_value("lives_in", "париж", "paris")
    assert not same_value("lives_in", "москв", "berlin")


def test_each_store_keeps_its_own_embedded_vectors(
    use: Engine, tmp_path: Path, clock: FixedClock
) -> None:
    """The vectors `same_meaning` embedded are the open store's (`EngineState.embedded`):
    a second store in the same process starts with none and fills its own."""
    _say(use, "Я живу в Париже.", "1")
    _say(use, "I live in Paris.", "2")
    first = dict(use.embedded)
    assert first  # the texts compared were embedded and kept
    settings = load(tmp_path / "other-home", env={}, overrides={"embedding.model": "use"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as other:
        assert other.embedded == {}
        _say(other, "Je travaille chez Airbus.", "1")
        _say(other, "I work at Airbus.", "2")
        assert other.embedded and other.embedded is not use.embedded
        assert set(other.embedded).isdisjoint(first)
    assert use.embedded == first  # the other store's work left this one alone
