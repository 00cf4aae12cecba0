"""detect_language: words in a script, marker words, endings and letters; "en" by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoracle.capture.lang import detect_language

GOLD = Path(__file__).parent / "data" / "capture_gold.jsonl"


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Let's use Postgres 16 for the billing service.", "en"),
        ("Hey Mel! I went to a support group yesterday.", "en"),
        ("Вчера я ходила на концерт.", "ru"),
        ("ok, запомни это", "ru"),  # Cyrillic words, no English evidence
        ("Deploy упал, посмотри логи", "ru"),
        ("Je suis allée au marché ce matin.", "fr"),
        ("J'ai adopté un chat, il s'appelle Biscotte.", "fr"),
        ("Ça marche, merci !", "fr"),
        ("Fui a la playa con mis hijos.", "es"),
        ("¿Qué tal el fin de semana?", "es"),
        ("Decidimos dejar de usar Jenkins.", "es"),
        ("Me encanta la comida tailandesa.", "es"),
    ],
)
def test_detects(text: str, lang: str) -> None:
    assert detect_language(text) == lang


@pytest.mark.parametrize("text", ["", "   ", "12:30", "👍🎉", "v2.3.1 -> v2.4.0", "ok"])
def test_no_evidence_defaults_to_english(text: str) -> None:
    assert detect_language(text) == "en"


def test_names_and_loanwords_do_not_flip_english() -> None:
    assert detect_language("We had dinner at Café Olé with José.") == "en"
    assert detect_language("My favorite movie is Amélie.") == "en"


def test_only_a_prefix_is_read() -> None:
    text = "I went hiking with my sister and we loved it. " * 60 + "Привет"
    assert detect_language(text) == "en"


def test_gold_sentences() -> None:
    with GOLD.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    wrong = [row["text"] for row in rows if detect_language(row["text"]) != row["lang"]]
    # Misses are one-word turns with no evidence ("ok"), which default to English.
    assert len(wrong) / len(rows) < 0.01, wrong
