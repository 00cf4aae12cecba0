"""The pure parts of the model path: the PII scrub by class, and the reply parsed,
repaired and validated."""

from __future__ import annotations

import pytest

from memoracle.config import LlmSettings
from memoracle.llm import ModelOutputInvalid
from memoracle.llm.pii import PII_CLASSES, scrub_pii
from memoracle.llm.reply import parse_reply

ALL = PII_CLASSES


def test_the_settings_offer_exactly_the_classes_the_scrub_knows() -> None:
    import dataclasses

    scrub = next(f for f in dataclasses.fields(LlmSettings) if f.name == "scrub")
    assert scrub.metadata["allowed"].choices == PII_CLASSES
    assert "name" not in LlmSettings().scrub  # optional: off by default


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("mail jane.doe+x@mail.example.co.uk now", "mail [EMAIL] now"),
        ("call +44 20 7946 0958 or 0044 20 7946 0958", "call [PHONE] or [PHONE]"),
        ("ring (415) 555-2671, or 415.555.2671", "ring [PHONE], or [PHONE]"),
        ("card 4111-1111-1111-1111 ok", "card [CARD] ok"),
        ("IBAN GB82 WEST 1234 5698 7654 32.", "IBAN [IBAN]."),
        ("at 10 Downing Street today", "at [ADDRESS] today"),
        ("au 12 rue de la Paix, Paris", "au [ADDRESS], Paris"),
        ("en la calle Mayor 3", "en la [ADDRESS]"),
        ("in der Hauptstraße 5 wohnen", "in der [ADDRESS] wohnen"),
        ("живу на ул. Ленина, д. 5", "живу на [ADDRESS]"),
        ("My name is Anna Berg.", "My name is [NAME]."),
        ("I met Dr. Watson", "I met Dr. [NAME]"),
    ],
)
def test_each_class_is_replaced_by_its_placeholder(text: str, scrubbed: str) -> None:
    assert scrub_pii(text, ALL)[0] == scrubbed


@pytest.mark.parametrize(
    "text",
    [
        "released 2.14.3 on 2023-05-08 at 10:30, build 20230508",
        "from 2019-2021, 3 items for 12.50 EUR, PR #48213",
        "card 4111 1111 1111 1112 fails Luhn",
        "IBAN GB82WEST12345698765433 fails mod-97",
        "The street was quiet; we walked 3 miles down the road",
        "email me later, the phone is broken",
    ],
)
def test_numbers_and_words_that_are_not_pii_stay(text: str) -> None:
    assert scrub_pii(text, ALL)[0] == text


def test_only_the_classes_asked_for_are_scrubbed() -> None:
    text = "My name is Anna Berg, anna@example.org, +33 6 12 34 56 78"
    assert scrub_pii(text, ["email"])[0] == "My name is Anna Berg, [EMAIL], +33 6 12 34 56 78"
    assert scrub_pii(text, [])[0] == text
    with pytest.raises(ValueError, match="ssn"):
        scrub_pii(text, ["ssn"])


SCHEMA = {
    "type": "object",
    "properties": {"facts": {"type": "array", "maxItems": 2, "items": {"type": "string"}}},
    "required": ["facts"],
}


@pytest.mark.parametrize(
    "reply",
    [
        '{"facts": ["a"]}',
        'Sure:\n```json\n{"facts": ["a"]}\n```',
        'The answer is {"facts": ["a"]} as asked.',
        '{"facts": ["a",],}',
        "{'facts': ['a']}",
        '{"facts": ["a"',  # cut at max_tokens
    ],
)
def test_replies_are_repaired_into_the_same_value(reply: str) -> None:
    assert parse_reply(reply, SCHEMA) == {"facts": ["a"]}


def test_an_escaped_quote_inside_a_cut_string_is_kept() -> None:
    assert parse_reply('{"facts": ["say \\"hi', SCHEMA) == {"facts": ['say "hi']}


def test_strings_are_cleaned_before_validation() -> None:
    got = parse_reply('{"facts": ["secret"]}', SCHEMA, lambda s: s.replace("secret", "[X]"))
    assert got == {"facts": ["[X]"]}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("I cannot help with that.", "not JSON"),
        ('{"facts": "a"}', "schema: at facts: 'a' is not of type 'array'"),
        ('{"facts": ["a", "b", "c"]}', "schema: at facts: "),
        ('{"fact": []}', "schema: at (root): 'facts' is a required property"),
    ],
)
def test_what_cannot_be_made_valid_is_refused_with_the_reason(reply: str, reason: str) -> None:
    with pytest.raises(ModelOutputInvalid) as caught:
        parse_reply(reply, SCHEMA)
    assert caught.value.reason.startswith(reason)
    assert caught.value.raw == reply
