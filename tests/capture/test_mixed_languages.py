"""A turn mixing languages: each sentence is read by its own language's rules, so the
English sentence of a Russian, French or Spanish turn is captured (with lang "en"), and
a single-language turn reads as before."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoracle.capture.extract import extract
from memoracle.capture.lang import detect_language, sentence_language
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

AT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
BERLIN = "I moved to Berlin in March."


@pytest.mark.parametrize(
    ("turn", "other", "other_lang"),
    [
        (f"Мой ник — Lexa. {BERLIN}", "Мой ник — Lexa.", "ru"),
        (f"J'habite à Lyon avec ma sœur. {BERLIN}", "J'habite à Lyon avec ma sœur.", "fr"),
        (f"{BERLIN} Je travaille chez Airbus depuis 2020.", "Je travaille", "fr"),
        (f"Vivo en Madrid con mi hermana. {BERLIN}", "Vivo en Madrid con mi hermana.", "es"),
    ],
)
def test_each_sentence_is_captured_in_its_own_language(
    engine: Engine, turn: str, other: str, other_lang: str
) -> None:
    result = engine.capture([Turn("user", turn, AT)])
    berlin = [m for m in result.added if "Berlin" in m.text]
    assert [(m.text, m.lang) for m in berlin] == [(BERLIN, "en")]
    assert berlin[0].valid_from == datetime(2023, 3, 1, tzinfo=UTC)  # "in March", English
    assert [m.lang for m in result.added if m.text.startswith(other)] == [other_lang]


def test_a_sentence_outside_the_configured_languages_is_skipped_alone(
    tmp_path: Path, clock: FixedClock
) -> None:
    overrides = {"embedding.model": "hash", "capture.languages": ["en"]}
    settings = load(tmp_path / "home", env={}, overrides=overrides)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        result = engine.capture([Turn("user", f"Мой ник — Lexa. {BERLIN}", AT)])
    assert [(m.text, m.lang) for m in result.added] == [(BERLIN, "en")]
    assert result.skipped == ("language:ru",)


def test_a_sentence_mixing_scripts_goes_by_its_dominant_words() -> None:
    assert detect_language("Deploy упал, посмотри логи") == "ru"
    assert detect_language("Я использую React и TypeScript на работе") == "ru"
    assert detect_language("I said привет to him yesterday") == "en"
    assert detect_language("My nickname is Лёха") == "en"
    found = extract(f"Мой ник — Lexa. My nickname at work is Лёха. {BERLIN}", role="user")
    assert [c.lang for c in found.candidates] == ["ru", "en", "en"]
    assert found.lang == "en"  # the turn as a whole: more English words than Russian


def test_a_sentence_without_evidence_keeps_the_turns_language() -> None:
    assert sentence_language("Biscotte, 3 ans.", "fr") == "fr"
    assert sentence_language("Python 3.12!", "ru") == "ru"
    # A tie with the turn's language keeps it ("on" is English and French).
    assert sentence_language("On verra.", "fr") == "fr"
    assert sentence_language("I moved on.", "fr") == "en"


def test_a_remember_tail_reads_the_sentence_before_in_its_language() -> None:
    found = extract("Мой ник — Lexa. Remember that.", role="user")
    (candidate,) = found.candidates
    assert (candidate.text, candidate.lang) == ("Мой ник — Lexa.", "ru")
    assert candidate.action == "remember"
    skipped = extract("Мой ник — Lexa. Remember that.", role="user", languages=("en",))
    assert skipped.candidates == () and skipped.skipped == ("language:ru",)


def test_a_forced_language_reads_every_sentence() -> None:
    found = extract(f"Мой ник — Lexa. {BERLIN}", role="user", lang="ru")
    assert {c.lang for c in found.candidates} == {"ru"}
    assert not any("Berlin" in c.text for c in found.candidates)


@pytest.mark.parametrize(
    "text",
    [
        "Я живу в Москве. Работаю в Яндексе. Завтра иду к врачу.",
        "J'habite à Lyon. On va au cinéma ce soir. Mon chat s'appelle Biscotte.",
        "Vivo en Madrid. Mañana tengo cita con el médico. Me encanta el café.",
        "I live in Paris. The deploy failed again. Remind me to call Anna tomorrow.",
    ],
)
def test_single_language_turns_read_as_one(text: str) -> None:
    whole = extract(text, role="user")
    forced = extract(text, role="user", lang=whole.lang)
    assert whole == forced
    assert {c.lang for c in whole.candidates} == {whole.lang}
