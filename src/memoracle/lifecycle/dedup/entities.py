"""The values two memories must agree on before they can be one — numbers, amounts,
versions, dates, ids, URLs, e-mails, phone numbers — found in a text (`_extract`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from memoracle.capture.dates import find_dates
from memoracle.capture.lang import detect_language
from memoracle.text import for_hash
from memoracle.types import DateMention

# Dates resolve against a fixed anchor: a date written with a year is that date, one
# without ("May 3") is compared by month and day, and relative ones ("yesterday", "next
# week") only with each other, since the day they were said is not in the text.
_ANCHOR = datetime(1904, 7, 1, 12, tzinfo=UTC)  # a leap year, so "Feb 29" resolves


_ABSOLUTE_RULES = ("abs.iso", "abs.ymd", "abs.numeric", ".month_year", ".year")


_CALENDAR_RULES = (".date", ".month")


_YEAR = re.compile(r"\d{4}")


_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class _Entity:
    kind: str
    text: str  # as written, for the reason
    at: int  # where it starts in the text
    key: str = ""
    parts: tuple[int, ...] = ()  # version numbers
    start: datetime | None = None  # dates: [start, end)
    end: datetime | None = None
    dated: str = ""  # dates: "absolute", "yearless" or "relative"


_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'«»)\]]+", re.IGNORECASE)


_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


_UUID = re.compile(
    r"(?<![\w-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\w-])",
    re.IGNORECASE,
)


# Codes like ABC-123, build a-5, COVID-19: letters, a hyphen, digits (any case).
_TICKET = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]{0,9}-\d{1,7}(?![\w-])")


_ISSUE = re.compile(r"(?<![\w&#])#\d{1,7}(?!\w)")


_HEX = re.compile(
    r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![\w-])", re.IGNORECASE
)


_NUM = r"\d{1,3}(?:[ \u00a0\u202f,.]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"


_SYMBOLS = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₽": "rub", "₹": "inr"}


_CURRENCY_WORDS = {
    "usd": "usd", "dollar": "usd", "dollars": "usd", "доллар": "usd", "доллара": "usd",
    "долларов": "usd", "dolar": "usd", "dolares": "usd", "dólar": "usd", "dólares": "usd",
    "eur": "eur", "euro": "eur", "euros": "eur", "евро": "eur",
    "gbp": "gbp", "pound": "gbp", "pounds": "gbp", "libra": "gbp", "libras": "gbp",
    "rub": "rub", "руб": "rub", "рубль": "rub", "рубля": "rub", "рублей": "rub",
    "ruble": "rub", "rubles": "rub", "rouble": "rub", "roubles": "rub",
    "chf": "chf", "jpy": "jpy", "cad": "cad", "aud": "aud", "inr": "inr",
}  # fmt: skip


_SYMBOL_RE = "[" + re.escape("".join(_SYMBOLS)) + "]"


_WORD_RE = "|".join(sorted(map(re.escape, _CURRENCY_WORDS), key=len, reverse=True))


_AMOUNT = re.compile(
    rf"(?<![\w.,])(?:(?P<s1>{_SYMBOL_RE})\s?(?P<n1>{_NUM})"
    rf"|(?P<n2>{_NUM})\s?(?:(?P<s2>{_SYMBOL_RE})|(?P<w2>{_WORD_RE})\.?(?!\w))"
    rf"|(?P<w1>usd|eur|gbp|rub|chf|jpy|cad|aud|inr)\s?(?P<n3>{_NUM}))(?![\d])",
    re.IGNORECASE,
)


_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().\-]{6,20}\d(?!\w)")


_DIGIT_GROUP = re.compile(r"\d+")


_ANY_DIGIT = re.compile(r"\d")


_LONG_ID = re.compile(r"(?<![\w-])-?\d{10,}(?!\w)")


_VERSION = re.compile(
    r"(?<![\w.])(?:v(?P<a>\d+(?:\.\d+)*)|(?P<b>\d+(?:\.\d+)+))"
    r"(?P<suffix>-[0-9a-z]+(?:\.[0-9a-z]+)*)?(?!\w|\.\d)",
    re.IGNORECASE,
)


_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?!\w)")


_LIST_MARK = re.compile(r"^[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+", re.MULTILINE)


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _decimal(raw: str) -> str:
    """'1 200,50' / '1,200.50' / '1.200' -> '1200.5' / '1200.5' / '1200'."""
    s = re.sub(r"[ \u00a0\u202f]", "", raw)
    if "," in s and "." in s:
        cut = max(s.rfind(","), s.rfind("."))
        s = re.sub(r"[,.]", "", s[:cut]) + "." + s[cut + 1 :]
    elif "," in s or "." in s:
        sep = "," if "," in s else "."
        parts = s.split(sep)
        # One separator before exactly two digits or fewer is a decimal point.
        s = "".join(parts) if len(parts) > 2 or len(parts[-1]) == 3 else ".".join(parts)
    try:
        return format(Decimal(s).normalize(), "f")
    except InvalidOperation:
        return s


def _mask(text: str, span: tuple[int, int]) -> str:
    start, end = span
    return text[:start] + " " * (end - start) + text[end:]


def _version_parts(number: str) -> tuple[int, ...]:
    parts = [int(p) for p in number.split(".")]
    while len(parts) > 1 and parts[-1] == 0:  # "2.3.0" is "2.3"
        parts.pop()
    return tuple(parts)


def _dated(rule: str, written: str, start: datetime) -> str:
    rules = rule.split("+")
    if any(r.startswith("abs.") or r.endswith(_ABSOLUTE_RULES) for r in rules):
        return "absolute"
    if any(r.endswith(_CALENDAR_RULES) for r in rules):
        return "absolute" if str(start.year) in _YEAR.findall(written) else "yearless"
    return "relative"


def _date_entity(mention: DateMention) -> _Entity:
    """A date, keyed without its year so "May 3" and "2024-05-03" share a word (the
    entity check still tells 2023 from 2024); a relative date by its words."""
    start, length = mention.start, mention.end - mention.start
    dated = _dated(mention.rule, mention.text, start)
    if dated == "relative":
        key = for_hash(mention.text)
    elif length <= _DAY:  # a time of day too: the entity check tells 15:00 from 16:00
        key = f"{start:%m-%d}"
    elif start.day == 1 and 28 <= length.days <= 31:
        key = f"{start:%m}"
    elif start.month == start.day == 1 and length.days in (365, 366):
        key = f"{start:%Y}"
    else:
        key = f"{start:%Y-%m-%d}+{length.days}"
    return _Entity(
        "date", mention.text, mention.span[0], key, start=start, end=mention.end, dated=dated
    )


def _extract(text: str) -> tuple[list[_Entity], str]:
    """Entities of `text`, and the text with each of them blanked out.

    Each found piece is blanked before the next kind looks, so a date's digits are not
    also a number and a URL's path is not a date.
    """
    found: list[_Entity] = []
    masked = text

    def take(pattern: re.Pattern[str], make: Callable[[re.Match[str]], _Entity | None]) -> None:
        nonlocal masked
        for m in list(pattern.finditer(masked)):
            entity = make(m)
            if entity is not None:
                found.append(entity)
                masked = _mask(masked, m.span())

    def url(m: re.Match[str]) -> _Entity:
        raw = m[0].rstrip(".,;:!?")
        key = re.sub(r"^(?:https?://)?(?:www\.)?", "", raw.casefold()).rstrip("/")
        return _Entity("url", raw, m.start(), key)

    if "://" in text or "www." in text.lower():
        take(_URL, url)
    if "@" in text:
        take(_EMAIL, lambda m: _Entity("email", m[0], m.start(), m[0].casefold()))
    for mention in find_dates(masked, _ANCHOR, detect_language(masked)):
        found.append(_date_entity(mention))
        masked = _mask(masked, mention.span)
    if not _ANY_DIGIT.search(masked):
        return found, masked
    take(_UUID, lambda m: _Entity("id", m[0], m.start(), m[0].lower()))
    take(_TICKET, lambda m: _Entity("id", m[0], m.start(), m[0].upper()))
    take(_ISSUE, lambda m: _Entity("id", m[0], m.start(), m[0]))
    take(_HEX, lambda m: _Entity("id", m[0], m.start(), m[0].lower()))

    def amount(m: re.Match[str]) -> _Entity:
        symbol = m["s1"] or m["s2"]
        currency = _SYMBOLS[symbol] if symbol else _CURRENCY_WORDS[(m["w1"] or m["w2"]).lower()]
        value = _decimal(m["n1"] or m["n2"] or m["n3"])
        return _Entity("amount", m[0], m.start(), f"{currency}:{value}")

    take(_AMOUNT, amount)

    def phone(m: re.Match[str]) -> _Entity | None:
        raw = m[0]
        digits = "".join(_DIGIT_GROUP.findall(raw))
        if raw.startswith("+"):
            ok = 8 <= len(digits) <= 15
        else:  # without "+", grouped like a phone number: "06 12 34 56 78", "(555) 123-4567"
            ok = 9 <= len(digits) <= 15 and len(_DIGIT_GROUP.findall(raw)) >= 3
        # The last nine digits: "+33 6 12 34 56 78" is "06 12 34 56 78".
        return _Entity("phone", raw, m.start(), digits[-9:]) if ok else None

    take(_PHONE, phone)
    take(_LONG_ID, lambda m: _Entity("id", m[0], m.start(), m[0]))

    def version(m: re.Match[str]) -> _Entity:
        parts = _version_parts(m["a"] or m["b"])
        suffix = (m["suffix"] or "").lower()
        return _Entity("version", m[0], m.start(), ".".join(map(str, parts)) + suffix, parts)

    take(_VERSION, version)
    take(_NUMBER, lambda m: _Entity("number", m[0], m.start(), _decimal(m[0])))
    return found, masked
