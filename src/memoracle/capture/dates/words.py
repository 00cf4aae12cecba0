"""A language's time words as data (`TimeWords`; read and checked from its file by
`words_file`), and the folding and regex helpers the grammar builds on.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

FALLBACK_LANG = "en"


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


UNITS = ("hour", "day", "week", "month", "year")


PERIOD_UNITS = ("week", "month", "year")


PARTS = ("morning", "afternoon", "evening", "night")


# Each season's first month and length (northern hemisphere, meteorological): winter
# runs from December into the next year's February.
SEASONS: dict[str, int] = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}
SEASON_MONTHS = 3


# Start and end hour of each part of day; an end past 24 runs into the next day.
PART_HOURS: dict[str, tuple[int, int]] = {
    "morning": (6, 12),
    "afternoon": (12, 18),
    "evening": (18, 24),
    "night": (18, 30),
}


def _fold_table() -> dict[int, str]:
    # One character in, one out, so spans in the folded text are spans in the original.
    # "à" stays: in French "a" is a verb and "à" the time preposition.
    table = {
        ord(c): unicodedata.normalize("NFD", c)[0]
        for base in "áâäãåāéèêëēíìîïīóòôöõōúùûüūñçýÿ"
        for c in (base, base.upper())
        if len(c) == 1
    }
    table.update({ord("ё"): "е", ord("Ё"): "Е", ord("’"): "'", ord("‘"): "'", ord("ʼ"): "'"})
    return table


_FOLD = _fold_table()


_WORD = re.compile(r"\w+")


_DIGIT = re.compile(r"\d")


_JOIN = re.compile(r"[\s,]*")


_SENTENCE_END = re.compile(r"[.!?…\n]")


def _lower(text: str) -> str:
    """Lower case, one character per character, so that spans stay valid.

    Patterns are compiled without IGNORECASE on purpose: a case-blind alternation loses
    the regex engine's first-character fast path and costs several times more.
    """
    lowered = text.lower()
    if len(lowered) != len(text):  # "İ".lower() is two characters
        lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return lowered


def _fold(text: str) -> str:
    """Lower case without accents, one character per character."""
    lowered = _lower(text)
    return lowered if lowered.isascii() else lowered.translate(_FOLD)


def _key(text: str) -> str:
    """Lookup form of a word or phrase: folded, lower case, hyphens as spaces."""
    return " ".join(_fold(text).replace("-", " ").split())


def _phrase_re(key: str) -> str:
    return r"[\s-]+".join(re.escape(part) for part in key.split(" "))


def _alt(keys: Iterable[str]) -> str:
    """A regex alternation of phrases in `_key` form, longest first; never matches if empty."""
    unique = sorted(set(keys), key=lambda k: (-len(k), k))
    if not unique:
        return "(?!)"
    return "(?:" + "|".join(_phrase_re(k) for k in unique) + ")"


def _affix_alt(affixes: Iterable[str]) -> str:
    """Like `_alt` for affixes glued to a number ("8th", "8-го", "2023г."): taken as written."""
    unique = sorted(set(affixes), key=lambda a: (-len(a), a))
    if not unique:
        return "(?!)"
    return "(?:" + "|".join(re.escape(a).replace(r"\ ", r"\s+") for a in unique) + ")"


def _plain_alt(words: Iterable[str]) -> str:
    """Alternation over unfolded text (tense cues keep their accents: "llegué")."""
    unique = sorted(set(words), key=lambda w: (-len(w), w))
    if not unique:
        return "(?!)"
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in unique) + ")"


@dataclass(frozen=True)
class DayOfMonth:
    """How a day of the month is said without its month ("on the 17th", "le 17",
    "17-го"); see en.toml's [day_of_month]. Words are in lookup form."""

    lead: tuple[str, ...]
    not_after: tuple[str, ...]
    ordinal: bool
    tail: tuple[str, ...]
    followers: tuple[str, ...]


@dataclass(frozen=True)
class TimeWords:
    """One language's time vocabulary, validated. Keys of word tables are in lookup form
    (folded, lower case, hyphens as spaces); see en.toml for what each one means."""

    lang: str
    capitalised_only: frozenset[str]
    habitual_before: tuple[str, ...]
    determiners: tuple[str, ...]
    prepositions: tuple[str, ...]
    context_prepositions: tuple[str, ...]
    ahead_context: frozenset[str]  # "before March": strictly ahead, a deadline
    behind_context: frozenset[str]  # "since March": behind
    seasons: Mapping[str, str]  # form -> season name
    season_prepositions: tuple[str, ...]
    season_alone: frozenset[str]  # forms that are a time by themselves (ru "летом")
    months: Mapping[str, int]
    month_abbreviations: Mapping[str, int]
    weekdays: Mapping[str, int]
    weekday_abbreviations: Mapping[str, int]
    relative_days: Mapping[str, int]
    numbers: Mapping[str, int]
    units: Mapping[str, str]
    approx: tuple[str, ...]
    past_before: tuple[str, ...]
    past_after: tuple[str, ...]
    future_before: tuple[str, ...]
    future_after: tuple[str, ...]
    bare_unit: bool
    not_followed_by: tuple[str, ...]
    modifiers_before: Mapping[str, int]
    modifiers_after: Mapping[str, int]
    calendar_week: frozenset[str]
    period_phrases: Mapping[str, tuple[str, int]]
    ordinals: tuple[str, ...]
    day_month_joiners: tuple[str, ...]
    month_year_joiners: tuple[str, ...]
    year_suffixes: tuple[str, ...]
    month_before_day: bool
    day_of_month: DayOfMonth
    this_part: tuple[str, ...]
    part_words: Mapping[str, str]
    part_phrases: Mapping[str, tuple[int, str]]
    time_prefixes: tuple[str, ...]
    strong_time_prefixes: tuple[str, ...]
    hour_words: tuple[str, ...]
    time_markers: Mapping[str, str]
    standalone_markers: frozenset[str]
    time_words: Mapping[str, int]
    bare_pm_hours: tuple[int, int] | None
    past_words: tuple[str, ...]
    future_words: tuple[str, ...]
    past_patterns: tuple[str, ...]
    future_patterns: tuple[str, ...]
    not_cues: frozenset[str]
    change_moves: tuple[str, ...]  # a weekday after these is ahead ([change])
    change_plans: tuple[str, ...]
    change_links: tuple[str, ...]
