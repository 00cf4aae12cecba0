"""Personal data out of a text before it leaves the process: each match of a class
`llm.scrub` names is replaced by a typed placeholder ("[EMAIL]", "[PHONE]", …), so the
model still sees that something of that kind was there.

Classes: `email`; `phone` (7 to 15 digits with a leading + or 00, or grouped by spaces,
dots, dashes or brackets, never a date or a time); `card` (13 to 19 digits passing the
Luhn check); `iban` (passing its mod-97 check); `address` (a house number beside a
street word of English, French, Spanish, German, Italian or Russian, or a street word
followed by a number); `name` (off by default: a name a cue introduces, "my name is …",
"Mr …", "Name: …" — names nothing introduces stay; see docs/llm.md). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from memoracle.capture.redact.formats import _iban, luhn

PII_CLASSES = ("email", "phone", "card", "iban", "address", "name")

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
_IBAN = re.compile(r"(?<!\w)[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?!\w)")
_PHONE = re.compile(r"(?<![\w+])(?:\+|00)?\(?\d[\d \t().-]{5,}\d(?!\w)")
_DATE_OR_TIME = re.compile(
    r"\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4}|\d{1,2}:\d{2}|"
    r"\d{4}\s*[-–]\s*\d{4}"
)
_STREET = (
    r"street|st\.?|avenue|ave\.?|road|rd\.?|boulevard|blvd\.?|lane|ln\.?|drive|dr\.?|way|"
    r"court|ct\.?|place|pl\.?|square|sq\.?|terrace|crescent|highway|hwy\.?"
)
_ADDRESS = re.compile(
    # 221B Baker Street / 12, Elm Road
    rf"(?<!\w)\d{{1,5}}[A-Za-z]?,?\s+(?:[A-Z][\w'’.-]*\s+){{1,4}}(?i:{_STREET})(?!\w)"
    # 12 rue de la Paix / 3 calle Mayor / calle Mayor 3 / via Roma 10
    r"|(?<!\w)(?:\d{1,5}(?:\s*bis)?,?\s+)?(?i:rue|avenue|boulevard|bd|place|chemin|calle|"
    r"avenida|plaza|paseo|via|viale|piazza)\s+(?:(?i:de|del|de la|des|du|la|le|di|della)\s+)?"
    r"[A-ZÀ-Ý][\w'’-]*(?:\s+[A-ZÀ-Ý][\w'’-]*){0,3}(?:,?\s+\d{1,5}[a-z]?)?"
    # Hauptstraße 5 / Am Wiesenweg 12
    r"|(?<!\w)[A-ZÄÖÜ][\wäöüß-]*(?:straße|strasse|str\.|weg|platz|gasse|allee|ring)\s+\d{1,5}[a-z]?"
    # ул. Ленина, д. 5 / улица Ленина 5 / проспект Мира 10
    r"|(?<!\w)(?i:ул\.|улица|пр\.|проспект|пер\.|переулок|бульвар|шоссе|наб\.|набережная)\s*"
    r"[А-ЯЁ][\wё-]*(?:\s+[А-ЯЁ][\wё-]*)?(?:,?\s*(?:д\.|дом)?\s*\d{1,4}[а-я]?)?"
)
_NAME_WORD = r"[A-ZÀ-ÝА-ЯЁ][a-zà-ÿа-яё'’-]+"
_NAME = re.compile(
    rf"(?:(?i:my name is|i am called|call me|name:|je m'appelle|me llamo|меня зовут)\s+"
    rf"|(?:Mr|Mrs|Ms|Miss|Dr|Prof|Herr|Frau|Mme|Mlle|Sr|Sra)\.?\s+)"
    rf"({_NAME_WORD}(?:\s+{_NAME_WORD})?)"
)

Finder = Callable[[str], Iterable[tuple[int, int]]]


def _spans(pattern: re.Pattern[str], check: Callable[[str], bool] | None = None) -> Finder:
    def find(text: str) -> Iterable[tuple[int, int]]:
        for match in pattern.finditer(text):
            if check is None or check(match.group()):
                yield match.span()

    return find


def _is_card(text: str) -> bool:
    return luhn(re.sub(r"[ -]", "", text))


def _is_phone(text: str) -> bool:
    digits = sum(c.isdigit() for c in text)
    if not 7 <= digits <= 15 or _DATE_OR_TIME.fullmatch(text.strip()):
        return False
    grouped = re.search(r"\d[ \t().-]+\d", text) is not None
    return text.startswith(("+", "00")) or grouped or digits >= 10


def _names(text: str) -> Iterable[tuple[int, int]]:
    for match in _NAME.finditer(text):
        yield match.span(1)


FINDERS: dict[str, Finder] = {
    "email": _spans(_EMAIL),
    "iban": _spans(_IBAN, _iban),
    "card": _spans(_CARD, _is_card),
    "address": _spans(_ADDRESS),
    "phone": _spans(_PHONE, _is_phone),
    "name": _names,
}


def scrub_pii(text: str, classes: Iterable[str]) -> tuple[str, dict[str, int]]:
    """`text` with each match of `classes` replaced by "[CLASS]", and how many of each
    were replaced. Classes are tried in a fixed order (e-mail, IBAN and card before
    phone, whose digits they contain); a span overlapping one already taken is left."""
    wanted = set(classes)
    unknown = wanted - set(PII_CLASSES)
    if unknown:
        raise ValueError(f"unknown PII classes {sorted(unknown)}; known: {PII_CLASSES}")
    taken: list[tuple[int, int, str]] = []
    for kind, find in FINDERS.items():
        if kind not in wanted:
            continue
        for start, end in find(text):
            if all(end <= s or start >= e for s, e, _ in taken):
                taken.append((start, end, kind))
    counts: dict[str, int] = {}
    for start, end, kind in sorted(taken, reverse=True):
        text = f"{text[:start]}[{kind.upper()}]{text[end:]}"
        counts[kind] = counts.get(kind, 0) + 1
    return text, counts
