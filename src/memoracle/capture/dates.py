"""Time expressions in a text -> absolute date ranges, anchored at the turn's time.

Owns the grammar of dates for capture: relative days ("yesterday", "позавчера"), shifts
("3 days ago", "dans deux semaines"), weekdays ("last Friday", "el viernes"), periods
("next week", "в прошлом месяце"), parts of day ("tonight", "ce soir"), clock times
("tomorrow at 5") and absolute dates ("2023-05-08", "8 мая 2023", "8/5/23"). The words
are data, one file per language in `language/rules/timewords/<lang>.toml`; this module holds the
grammar they share and the numeric forms that need no words. Which memory a date belongs
to is the pipeline's business; storing it is the store's.

Choices callers can rely on (relative to the anchor, in the anchor's timezone):

- Weeks start on Monday; "this/last/next week" is the whole week.
- "N days/weeks ago", "in N days/weeks" give one day (a week is 7 days: people say "in
  two weeks" for a date). "N months/years" give that calendar month/year, "N hours" that
  clock hour. "a couple of" is 2; "a few", "several", "quelques", "несколько", "unos" are
  3 (a point estimate; the matched text shows the vagueness).
- "this Friday" is the Friday of this week. "next/last Friday" is, for the words listed
  in [modifiers].calendar_week (en "next", "last"; ru "следующую", "прошлую"), the
  Friday of next/last week: "next Tuesday" said on a Monday is eight days away. Other
  modifiers (en "this coming", fr "vendredi prochain", es "el próximo viernes") give the
  first Friday after / the latest before today.
- A bare "Friday" / "on Friday" follows the tense cue nearest to it in its sentence
  ([tense] in the data: "was", "-ed", Russian "-л/-ла/-ли", French passé composé, Spanish
  preterite; "will", "going", "-rá"...): past gives the latest Friday before today,
  anything else (no cue included) the first one after today. Today's own weekday is
  never meant: people call it "today".
- "in May" / "в мае" / "en mai" with no year is May of the anchor's year, and so is
  "May 8". "last May" is the most recent May before this month, "next May" the first May
  after it. A bare year needs a preposition or a year word ("in 2021", "2021 год").
- Parts of day: morning 06-12, afternoon 12-18, evening 18-24, night 18-06 (next day).
  "tonight" said before 06:00 is the night under way.
- A bare hour 1-7 (no am/pm, no part of day, no leading zero) is in the afternoon:
  "tomorrow at 5" is 17:00 ([time].bare_pm_hours). A time spans one hour, or one minute
  when minutes are given. A time with no day ("at 5pm", "a las 5") is on the anchor's
  day; "at 5" alone is no time at all.
- Numeric dates: `day_first` decides 8/5/2023, an impossible reading (13/05) swaps, and
  two-digit years are 20yy. Day and month without a year ("8/5", "08.05") are never
  dates: they are scores, ratios and versions too often.
- Words that are also ordinary words (en "May", "March", "Sat") count only capitalised;
  month and weekday short forms need a day number, a year or a modifier.
- Mentions never overlap and the longest match wins; adjacent pieces join ("tomorrow
  morning", "Friday at 5pm", "вчера вечером", "mañana por la mañana") and the rule name
  joins theirs with "+".
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from functools import cache, lru_cache
from typing import Literal

from memoracle.errors import InvalidInput
from memoracle.language.kit import PerLanguage, packaged, read_folder
from memoracle.types import DateMention, Granularity

__all__ = ["TimeWords", "find_dates", "parse_timewords", "timewords_from"]

FALLBACK_LANG = "en"
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
UNITS = ("hour", "day", "week", "month", "year")
PERIOD_UNITS = ("week", "month", "year")
PARTS = ("morning", "afternoon", "evening", "night")
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


# --- vocabulary ---------------------------------------------------------------------------


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


class _Reader:
    """Typed access to one table of a time words file; every complaint names file and key."""

    def __init__(self, name: str, table: Mapping[str, object], path: str = "") -> None:
        self.name = name
        self.raw = table
        self._path = path
        self._seen: set[str] = set()

    def where(self, key: str) -> str:
        return f"{self._path}.{key}" if self._path else key

    def error(self, key: str, problem: str) -> InvalidInput:
        return InvalidInput(
            f"Malformed time words file {self.name}: '{self.where(key)}' {problem}. "
            "Fix the file; en.toml shows the expected shape."
        )

    def get(self, key: str) -> object:
        self._seen.add(key)
        if key not in self.raw:
            raise self.error(key, "is missing")
        return self.raw[key]

    def table(self, key: str) -> _Reader:
        value = self.get(key)
        if not isinstance(value, dict):
            raise self.error(key, "must be a table")
        return _Reader(self.name, value, self.where(key))

    def text(self, key: str) -> str:
        value = self.get(key)
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, "must be a non-empty string")
        return value

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if not isinstance(value, bool):
            raise self.error(key, "must be true or false")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise self.error(key, "must be a list of non-empty strings")
        return tuple(value)

    def words(self, key: str) -> tuple[str, ...]:
        return tuple(_key(w) for w in self.strings(key))

    def affixes(self, key: str) -> tuple[str, ...]:
        return tuple(_fold(w) for w in self.strings(key))

    def patterns(self, key: str) -> tuple[str, ...]:
        found = self.strings(key)
        for pattern in found:
            try:
                re.compile(pattern)
            except re.error as e:
                raise self.error(key, f"holds a bad regular expression {pattern!r} ({e})") from None
        return found

    def integer(self, key: str, low: int, high: int) -> int:
        value = self.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.error(key, f"must be a whole number from {low} to {high}")
        return value

    def int_table(self, key: str, low: int, high: int) -> dict[str, int]:
        table = self.table(key)
        out = {_key(k): table.integer(k, low, high) for k in table.raw}
        table.close()
        return out

    def choice_table(self, key: str, choices: tuple[str, ...]) -> dict[str, str]:
        table = self.table(key)
        out: dict[str, str] = {}
        for k in table.raw:
            value = table.get(k)
            if value not in choices:
                raise table.error(k, f"must be one of {', '.join(choices)}")
            out[_key(k)] = str(value)
        table.close()
        return out

    def close(self) -> None:
        unknown = sorted(set(self.raw) - self._seen)
        if unknown:
            raise self.error(unknown[0], "is not a known key (a typo?)")


def _named_forms(
    reader: _Reader, key: str, names: tuple[str, ...], base: int, *, complete: bool
) -> dict[str, int]:
    """Canonical name -> list of forms, as form -> number (months from 1, weekdays from 0)."""
    table = reader.table(key)
    out: dict[str, int] = {}
    for number, name in enumerate(names, start=base):
        if name not in table.raw and not complete:
            continue
        forms = table.words(name)
        if complete and not forms:
            raise table.error(name, "must list at least one word")
        out.update((form, number) for form in forms)
    table.close()
    return out


def parse_timewords(source: str, name: str) -> TimeWords:
    """Validate the text of one time words file. Raises InvalidInput naming file and key."""
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInput(f"Malformed time words file {name}: not valid TOML ({e}).") from None
    return timewords_from(data, name)


def timewords_from(data: Mapping[str, object], name: str) -> TimeWords:
    """Validate one time words file's data. Raises InvalidInput naming file and key."""
    top = _Reader(name, data)

    preps = top.table("prepositions")
    prepositions, context = preps.words("in_span"), preps.words("context")
    preps.close()

    units = top.table("units")
    unit_forms: dict[str, str] = {}
    for unit in UNITS:
        if unit in units.raw or unit != "hour":
            forms = units.words(unit)
            if not forms:
                raise units.error(unit, "must list at least one word")
            unit_forms.update((form, unit) for form in forms)
    units.close()

    shift = top.table("shift")
    approx = shift.words("approx")
    past_before, past_after = shift.words("past_before"), shift.words("past_after")
    future_before, future_after = shift.words("future_before"), shift.words("future_after")
    bare_unit, not_followed_by = shift.flag("bare_unit"), shift.patterns("not_followed_by")
    shift.close()

    modifiers = top.table("modifiers")
    before, after = modifiers.int_table("before", -9, 9), modifiers.int_table("after", -9, 9)
    calendar_week = frozenset(modifiers.words("calendar_week"))
    for word in calendar_week:
        if word not in before and word not in after:
            raise modifiers.error("calendar_week", f"names {word!r}, which is not a modifier")
    modifiers.close()

    phrases = top.table("period_phrases")
    period_phrases: dict[str, tuple[str, int]] = {}
    for phrase in phrases.raw:
        entry = phrases.table(phrase)
        unit = entry.text("unit")
        if unit not in PERIOD_UNITS:
            raise entry.error("unit", f"must be one of {', '.join(PERIOD_UNITS)}")
        period_phrases[_key(phrase)] = (unit, entry.integer("offset", -9, 9))
        entry.close()
    phrases.close()

    dates = top.table("dates")
    ordinals, year_suffixes = dates.affixes("ordinals"), dates.affixes("year_suffixes")
    day_month, month_year = dates.words("day_month_joiners"), dates.words("month_year_joiners")
    month_before_day = dates.flag("month_before_day")
    dates.close()

    parts = top.table("parts_of_day")
    this_part = parts.words("this")
    part_words = {form: part for part in PARTS for form in parts.words(part)}
    part_table = parts.table("phrases")
    part_phrases: dict[str, tuple[int, str]] = {}
    for phrase in part_table.raw:
        entry = part_table.table(phrase)
        part = entry.text("part")
        if part not in PARTS:
            raise entry.error("part", f"must be one of {', '.join(PARTS)}")
        part_phrases[_key(phrase)] = (entry.integer("day", -9, 9), part)
        entry.close()
    part_table.close()
    parts.close()

    clock = top.table("time")
    markers = clock.choice_table("markers", PARTS)
    standalone = clock.words("standalone_markers")
    for marker in standalone:
        if marker not in markers:
            raise clock.error("standalone_markers", f"names {marker!r}, which is not a marker")
    pm_value = clock.get("bare_pm_hours")
    pm_hours: tuple[int, int] | None = None
    if pm_value != []:
        if (
            not isinstance(pm_value, list)
            or len(pm_value) != 2
            or not all(isinstance(h, int) and not isinstance(h, bool) for h in pm_value)
            or not 1 <= pm_value[0] <= pm_value[1] <= 11
        ):
            raise clock.error("bare_pm_hours", "must be [] or [first, last] hours within 1-11")
        pm_hours = (pm_value[0], pm_value[1])
    prefixes, strong_prefixes = clock.words("prefixes"), clock.words("strong_prefixes")
    hour_words, time_words = clock.words("hour_words"), clock.int_table("words", 0, 23)
    clock.close()

    tense = top.table("tense")
    past_words = tuple(w.lower() for w in tense.strings("past_words"))
    future_words = tuple(w.lower() for w in tense.strings("future_words"))
    past_patterns, future_patterns = (
        tense.patterns("past_patterns"),
        tense.patterns("future_patterns"),
    )
    not_cues = frozenset(w.lower() for w in tense.strings("not_cues"))
    tense.close()

    words = TimeWords(
        lang=top.text("lang"),
        capitalised_only=frozenset(top.words("capitalised_only")),
        habitual_before=top.words("habitual_before"),
        determiners=top.words("determiners"),
        prepositions=prepositions,
        context_prepositions=context,
        months=_named_forms(top, "months", MONTHS, 1, complete=True),
        month_abbreviations=_named_forms(top, "month_abbreviations", MONTHS, 1, complete=False),
        weekdays=_named_forms(top, "weekdays", WEEKDAYS, 0, complete=True),
        weekday_abbreviations=_named_forms(
            top, "weekday_abbreviations", WEEKDAYS, 0, complete=False
        ),
        relative_days=top.int_table("relative_days", -9, 9),
        numbers=top.int_table("numbers", 1, 999),
        units=unit_forms,
        approx=approx,
        past_before=past_before,
        past_after=past_after,
        future_before=future_before,
        future_after=future_after,
        bare_unit=bare_unit,
        not_followed_by=not_followed_by,
        modifiers_before=before,
        modifiers_after=after,
        calendar_week=calendar_week,
        period_phrases=period_phrases,
        ordinals=ordinals,
        day_month_joiners=day_month,
        month_year_joiners=month_year,
        year_suffixes=year_suffixes,
        month_before_day=month_before_day,
        this_part=this_part,
        part_words=part_words,
        part_phrases=part_phrases,
        time_prefixes=prefixes,
        strong_time_prefixes=strong_prefixes,
        hour_words=hour_words,
        time_markers=markers,
        standalone_markers=frozenset(standalone),
        time_words=time_words,
        bare_pm_hours=pm_hours,
        past_words=past_words,
        future_words=future_words,
        past_patterns=past_patterns,
        future_patterns=future_patterns,
        not_cues=not_cues,
    )
    top.close()
    return words


# --- matching -----------------------------------------------------------------------------

_Kind = Literal["range", "part", "time"]


@dataclass(frozen=True)
class _Atom:
    """A piece of a mention. "range" is complete (start/end); "part" (a part of day) and
    "time" (a clock time) still need a day, except a strong time, which takes today's."""

    span: tuple[int, int]
    rule: str
    kind: _Kind
    start: datetime | None = None
    end: datetime | None = None
    granularity: Granularity = "day"
    day: date | None = None
    part: str | None = None
    hour: int = 0
    minute: int | None = None
    padded: bool = False  # "05:00": a 24-hour clock, so no afternoon guess
    strong: bool = False  # "at 5pm" stands alone; "at 5" needs a day next to it
    weekday_only: bool = False  # a bare "Monday": a date right after it ("Monday, May 8") wins
    absolute: bool = False  # written as a calendar date


@dataclass(frozen=True)
class _Context:
    text: str
    folded: str
    anchor: datetime
    today: date
    tz: tzinfo | None
    day_first: bool


# Turns one match into an atom, or None to reject it (a lower-case "may", "8/5/2099"...).
_Resolver = Callable[[re.Match[str], _Context, str], _Atom | None]


@dataclass(frozen=True)
class _Rule:
    name: str
    pattern: re.Pattern[str]
    needs: frozenset[str]
    resolve: _Resolver


def _valid_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _weekday_near(today: date, weekday: int, offset: int, *, calendar: bool = False) -> date:
    """offset 0: that day of this week. calendar: that day of the week `offset` weeks
    away; otherwise -1 is the latest before today and +1 the first after today."""
    if offset == 0 or calendar:
        return today + timedelta(days=weekday - today.weekday() + 7 * offset)
    if offset < 0:
        back = (today.weekday() - weekday) % 7 or 7
        return today - timedelta(days=back + 7 * (-offset - 1))
    ahead = (weekday - today.weekday()) % 7 or 7
    return today + timedelta(days=ahead + 7 * (offset - 1))


def _month_near(today: date, month: int, offset: int) -> int:
    """Year of `month` when said with a modifier: "last May", "this May", "next May"."""
    if offset < 0:
        return (today.year if month < today.month else today.year - 1) + offset + 1
    if offset > 0:
        return (today.year if month > today.month else today.year + 1) + offset - 1
    return today.year


def _midnight(day: date, tz: tzinfo | None) -> datetime:
    return datetime.combine(day, time(), tz)


class _Grammar:
    """The compiled rules of one language: patterns built once from its TimeWords."""

    def __init__(self, words: TimeWords) -> None:
        self.words = w = words
        lang = w.lang
        b = r"(?<!\w)"  # word start
        n = r"(?<![\w.,:/-])"  # number start: not inside 1.5, 10:30, 8/5
        prep, ctxp = _alt(w.prepositions), _alt(w.context_prepositions)
        det = self._determiners(w.determiners)
        modb, moda = _alt(w.modifiers_before), _alt(w.modifiers_after)
        months_full = _alt(w.months)
        months_all = _alt([*w.months, *w.month_abbreviations])
        weekdays = _alt([*w.weekdays, *w.weekday_abbreviations])
        units = _alt(w.units)
        period_units = _alt(k for k, u in w.units.items() if u in PERIOD_UNITS)
        qty = rf"(?:(?<![\d.,])\d{{1,3}}|{_alt(w.numbers)})"
        q = rf"(?:(?P<q>{qty})\s+)?" if w.bare_unit else rf"(?P<q>{qty})\s+"
        approx = rf"(?:{_alt(w.approx)}\s+)?"
        ordinal = rf"(?:{_affix_alt(w.ordinals)})?"
        ysuf = _affix_alt(w.year_suffixes)
        blocked = rf"(?!\s+(?:{'|'.join(w.not_followed_by)}))" if w.not_followed_by else ""
        year_tail = rf"(?:\s*{ysuf})?"
        part_words = _alt(w.part_words)
        time_prefixes = _alt([*w.strong_time_prefixes, *w.time_prefixes])
        end_num = r"(?![\w:]|[.,]\d)"

        specs: list[tuple[str, str, tuple[str, ...], _Resolver]] = [
            (
                "abs.iso",
                rf"{n}(?P<y>\d{{4}})-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}})"
                r"(?:[t ](?P<H>\d{1,2}):(?P<M>\d{2})(?::\d{2}(?:\.\d+)?)?"
                r"(?P<tz>z|[+-]\d{2}:?\d{2})?)?(?![\w/-]|[.:]\d)",
                ("digit",),
                self._iso,
            ),
            (
                "abs.ymd",
                rf"{n}(?P<y>\d{{4}})(?P<sep>[./])(?P<m>\d{{1,2}})(?P=sep)(?P<d>\d{{1,2}})"
                r"(?![\w/-]|[.:,]\d)",
                ("digit",),
                self._ymd,
            ),
            (
                "abs.numeric",
                rf"{n}(?P<a>\d{{1,2}})(?P<sep>[./-])(?P<b>\d{{1,2}})(?P=sep)"
                r"(?P<y>\d{4}|\d{2})(?![\w/-]|[.:,]\d)",
                ("digit",),
                self._numeric,
            ),
            (
                f"{lang}.date",
                rf"{b}(?:{prep}\s+)?{det}{n}(?P<d>\d{{1,2}}){ordinal}"
                rf"(?:\s+{_alt(w.day_month_joiners)})?\s+(?P<mon>{months_all})(?:\.(?=\s*\d))?"
                rf"(?:,?\s+(?:{_alt(w.month_year_joiners)}\s+)?(?P<y>\d{{4}})(?!\d){year_tail})?"
                r"(?!\w)",
                ("digit", "month"),
                self._text_date,
            ),
        ]
        if w.month_before_day:
            specs.append(
                (
                    f"{lang}.date",
                    rf"{b}(?:{prep}\s+)?(?P<mon>{months_all})\.?\s+{det}{n}(?P<d>\d{{1,2}})"
                    rf"{ordinal}(?!\w)(?:,?\s+(?P<y>\d{{4}})(?!\d))?{end_num}",
                    ("digit", "month"),
                    self._text_date,
                )
            )
        specs += [
            (
                f"{lang}.month_year",
                rf"{b}(?:{prep}\s+)?{det}(?P<mon>{months_all})\.?,?\s+"
                rf"(?:{_alt(w.month_year_joiners)}\s+)?(?P<y>\d{{4}})(?!\d){year_tail}(?!\w)",
                ("digit", "month"),
                self._month_year,
            ),
            (
                f"{lang}.relative_period",
                rf"{b}(?:{prep}\s+)?{det}(?:(?P<modb>{modb})\s+)?(?P<u>{period_units})"
                rf"(?:(?:\s+|-)(?P<moda>{moda}))?(?!\w)",
                ("unit", "modifier"),
                self._period,
            ),
            (
                f"{lang}.period_phrase",
                rf"{b}(?P<pp>{_alt(w.period_phrases)})(?!\w)",
                ("period_phrase",),
                self._period_phrase,
            ),
            (
                f"{lang}.weekday",
                rf"{b}(?:(?P<prep>{prep})\s+)?{det}(?:(?P<modb>{modb})\s+)?"
                rf"(?P<wd>{weekdays})(?!\w)(?:(?:\s+|-)(?P<moda>{moda})(?!\w))?",
                ("weekday",),
                self._weekday,
            ),
            (
                f"{lang}.relative_day",
                rf"{b}(?P<rel>{_alt(w.relative_days)})(?!\w)",
                ("rel",),
                self._relative_day,
            ),
            (
                f"{lang}.n_units_ago",
                rf"{b}{_alt(w.past_before)}\s+{approx}{q}(?P<u>{units})(?!\w){blocked}",
                ("unit", "past_before"),
                self._ago,
            ),
            (
                f"{lang}.n_units_ago",
                rf"{b}{approx}{q}(?P<u>{units})\s+{_alt(w.past_after)}(?!\w)",
                ("unit", "past_after"),
                self._ago,
            ),
            (
                f"{lang}.in_n_units",
                rf"{b}{_alt(w.future_before)}\s+{approx}{q}(?P<u>{units})(?!\w){blocked}",
                ("unit", "future_before"),
                self._later,
            ),
            (
                f"{lang}.in_n_units",
                rf"{b}{approx}{q}(?P<u>{units})\s+{_alt(w.future_after)}(?!\w)",
                ("unit", "future_after"),
                self._later,
            ),
            (
                f"{lang}.month",
                rf"{b}(?:(?P<ctx>{ctxp})\s+)?(?P<body>(?:(?P<prep>{prep})\s+)?{det}"
                rf"(?:(?P<modb>{modb})\s+)?(?P<mon>{months_full})"
                rf"(?:(?:\s+|-)(?P<moda>{moda}))?)(?!\w)",
                ("month",),
                self._month,
            ),
            (
                f"{lang}.year",
                rf"{b}(?:(?P<ctx>{ctxp})\s+)?(?P<body>(?:(?P<prep>{prep})\s+)?"
                rf"{n}(?P<y>(?:1[89]|2[01])\d\d)(?:\s*(?P<ysuf>{ysuf}))?)"
                r"(?![\w/-]|[.,:]\d)",
                ("digit",),
                self._year,
            ),
            (
                f"{lang}.part_of_day",
                rf"{b}(?P<this>{_alt(w.this_part)})\s+(?P<pw>{part_words})(?!\w)",
                ("part", "this_part"),
                self._this_part,
            ),
            (
                f"{lang}.part_of_day",
                rf"{b}(?P<pp>{_alt(w.part_phrases)})(?!\w)",
                ("part_phrase",),
                self._part_phrase,
            ),
            (
                f"{lang}.time",
                rf"(?:{b}(?P<pre>{time_prefixes})\s+)?{n}(?P<h>\d{{1,2}})"
                rf"(?::(?P<mi>\d{{2}})|\s*(?P<hw>{_alt(w.hour_words)})(?:\s*(?P<mi2>\d{{2}}))?)?"
                rf"(?:\s*(?P<mk>{_alt(w.time_markers)}))?{end_num}",
                ("digit",),
                self._clock_time,
            ),
            (
                f"{lang}.time",
                rf"(?:{b}(?P<pre>{time_prefixes})\s+)?{b}(?P<tw>{_alt(w.time_words)})(?!\w)",
                ("timeword",),
                self._time_word,
            ),
            (
                f"{lang}.part_of_day",
                rf"{b}(?P<pw>{part_words})(?!\w)",
                ("part",),
                self._part_word,
            ),
        ]
        self.rules = tuple(
            _Rule(name, re.compile(pattern), frozenset(needs), resolve)
            for name, pattern, needs, resolve in specs
        )
        self.triggers = self._triggers()
        habit = _alt(w.habitual_before)
        self._habitual = re.compile(rf"(?<!\w){habit}\s+$")
        # One pass finds every cue; explicit words come before the patterns so that a
        # listed word ("planned": future) is never re-read by a pattern ("-ed": past).
        patterns = {
            "future_word": _plain_alt(w.future_words),
            "past_word": _plain_alt(w.past_words),
            "future": "|".join(f"(?:{p})" for p in w.future_patterns) or "(?!)",
            "past": "|".join(f"(?:{p})" for p in w.past_patterns) or "(?!)",
        }
        body = "|".join(f"(?P<{name}>{p})" for name, p in patterns.items())
        self._cues = re.compile(rf"(?<!\w)(?:{body})(?!\w)")

    @staticmethod
    def _determiners(determiners: tuple[str, ...]) -> str:
        if not determiners:
            return ""
        forms = [
            re.escape(d) + r"\s*" if d.endswith("'") else _phrase_re(d) + r"\s+"
            for d in sorted(determiners, key=len, reverse=True)
        ]
        return "(?:" + "|".join(forms) + ")?"

    def _triggers(self) -> dict[str, frozenset[str]]:
        """Word -> categories it can start. A rule runs only if all it needs are present;
        a phrase is keyed by its longest word, which any match of it must contain."""
        w = self.words
        groups: dict[str, Iterable[str]] = {
            "month": [*w.months, *w.month_abbreviations],
            "weekday": [*w.weekdays, *w.weekday_abbreviations],
            "rel": w.relative_days,
            "unit": w.units,
            "modifier": [*w.modifiers_before, *w.modifiers_after],
            "period_phrase": w.period_phrases,
            "past_before": w.past_before,
            "past_after": w.past_after,
            "future_before": w.future_before,
            "future_after": w.future_after,
            "part": w.part_words,
            "this_part": w.this_part,
            "part_phrase": w.part_phrases,
            "timeword": w.time_words,
        }
        found: dict[str, set[str]] = {}
        for category, phrases in groups.items():
            for phrase in phrases:
                tokens = _WORD.findall(phrase)
                if tokens:
                    found.setdefault(max(tokens, key=len), set()).add(category)
        return {token: frozenset(cats) for token, cats in found.items()}

    # --- the pass over one text -----------------------------------------------------------

    def find(self, text: str, anchor: datetime, day_first: bool) -> list[DateMention]:
        folded = _fold(text)
        present: set[str] = set()
        if _DIGIT.search(folded):
            present.add("digit")
        triggers = self.triggers
        for token in _WORD.findall(folded):
            cats = triggers.get(token)
            if cats is not None:
                present |= cats
        if not present:
            return []
        ctx = _Context(text, folded, anchor, anchor.date(), anchor.tzinfo, day_first)
        found: list[tuple[_Atom, int]] = []
        for priority, rule in enumerate(self.rules):
            if not rule.needs <= present:
                continue
            for match in rule.pattern.finditer(folded):
                atom = rule.resolve(match, ctx, rule.name)
                if atom is not None:
                    found.append((atom, priority))
        if not found:
            return []
        return self._join(_longest(found), ctx)

    def _join(self, atoms: list[_Atom], ctx: _Context) -> list[DateMention]:
        out: list[DateMention] = []
        i = 0
        while i < len(atoms):
            current: _Atom | None = atoms[i]
            j = i + 1
            while current is not None and j < len(atoms):
                if not _JOIN.fullmatch(ctx.folded, current.span[1], atoms[j].span[0]):
                    break
                joined = self._combine(current, atoms[j], ctx)
                if joined is None:
                    break
                current, j = joined, j + 1
            if current is not None and current.kind == "time" and current.strong:
                current = self._clock(ctx.today, current, None, current.span, current.rule, ctx)
            if current is not None and current.kind == "range":
                assert current.start is not None and current.end is not None
                s, e = current.span
                out.append(
                    DateMention(
                        ctx.text[s:e],
                        current.span,
                        current.start,
                        current.end,
                        current.granularity,
                        current.rule,
                    )
                )
            i = j
        return out

    def _combine(self, a: _Atom, b: _Atom, ctx: _Context) -> _Atom | None:
        span, rule = (a.span[0], b.span[1]), f"{a.rule}+{b.rule}"
        if a.kind == "range" and a.day is not None and a.granularity == "day":
            if b.kind == "part" and b.part is not None:
                return self._part_range(a.day, b.part, span, rule, ctx)
            if b.kind == "time":
                return self._clock(a.day, b, None, span, rule, ctx)
            if a.weekday_only and b.kind == "range" and b.absolute:
                return replace(b, span=span, rule=rule)
            return None
        if a.kind == "range" and a.day is not None and a.granularity == "part_of_day":
            return self._clock(a.day, b, a.part, span, rule, ctx) if b.kind == "time" else None
        if a.kind == "part" and a.part is not None and b.kind == "range" and b.day is not None:
            if b.granularity == "day":
                return self._part_range(b.day, a.part, span, rule, ctx)
            return None
        if a.kind == "time" and b.kind == "range" and b.day is not None:
            if b.granularity in ("day", "part_of_day"):
                return self._clock(b.day, a, b.part, span, rule, ctx)
        return None

    # --- building ranges ------------------------------------------------------------------

    @staticmethod
    def _day(
        m: re.Match[str],
        rule: str,
        day: date,
        ctx: _Context,
        *,
        weekday_only: bool = False,
        absolute: bool = False,
    ) -> _Atom:
        start, end = _midnight(day, ctx.tz), _midnight(day + timedelta(days=1), ctx.tz)
        return _Atom(
            m.span(),
            rule,
            "range",
            start,
            end,
            "day",
            day,
            weekday_only=weekday_only,
            absolute=absolute,
        )

    @staticmethod
    def _month_range(
        span: tuple[int, int], rule: str, year: int, month: int, ctx: _Context
    ) -> _Atom | None:
        try:
            first = date(year, month, 1)
            ny, nm = _add_months(year, month, 1)
            return _Atom(
                span,
                rule,
                "range",
                _midnight(first, ctx.tz),
                _midnight(date(ny, nm, 1), ctx.tz),
                "month",
            )
        except (ValueError, OverflowError):
            return None

    @staticmethod
    def _year_range(span: tuple[int, int], rule: str, year: int, ctx: _Context) -> _Atom | None:
        try:
            start, end = date(year, 1, 1), date(year + 1, 1, 1)
        except (ValueError, OverflowError):
            return None
        return _Atom(span, rule, "range", _midnight(start, ctx.tz), _midnight(end, ctx.tz), "year")

    @staticmethod
    def _part_range(day: date, part: str, span: tuple[int, int], rule: str, ctx: _Context) -> _Atom:
        low, high = PART_HOURS[part]
        start = datetime.combine(day, time(low), ctx.tz)
        end = datetime.combine(day + timedelta(days=high // 24), time(high % 24), ctx.tz)
        return _Atom(span, rule, "range", start, end, "part_of_day", day, part)

    def _clock(
        self,
        day: date,
        t: _Atom,
        context: str | None,
        span: tuple[int, int],
        rule: str,
        ctx: _Context,
    ) -> _Atom | None:
        """A clock time on `day`. Its own marker wins over the part of day around it."""
        hour, part = t.hour, t.part or context
        if part == "morning":
            hour = 0 if hour == 12 else hour
        elif part in ("afternoon", "evening"):
            hour = hour + 12 if hour < 12 else hour
        elif part == "night":
            if 6 <= hour < 12:
                hour += 12
            elif hour < 6 and t.part is None:
                day += timedelta(days=1)  # "tonight at 2" is after midnight
        elif not t.padded and self.words.bare_pm_hours is not None:
            low, high = self.words.bare_pm_hours
            hour = hour + 12 if low <= hour <= high else hour
        start = datetime.combine(day, time(hour, t.minute or 0), ctx.tz)
        length = timedelta(hours=1) if t.minute is None else timedelta(minutes=1)
        return _Atom(span, rule, "range", start, start + length, "time")

    # --- resolvers: one per rule, each returns None to reject a match ---------------------

    def _cased(self, m: re.Match[str], group: str, ctx: _Context) -> bool:
        if _key(m[group]) not in self.words.capitalised_only:
            return True
        return ctx.text[m.start(group)].isupper()

    def _month_of(self, m: re.Match[str], ctx: _Context) -> int | None:
        word = _key(m["mon"])
        month = self.words.months.get(word) or self.words.month_abbreviations.get(word)
        return month if month is not None and self._cased(m, "mon", ctx) else None

    def _offset(self, m: re.Match[str]) -> int | None:
        found = self._modifier(m)
        return None if found is None else found[0]

    def _modifier(self, m: re.Match[str]) -> tuple[int, str] | None:
        """The modifier's offset and word ("last" -> -1); if two, the one that moves."""
        w = self.words
        before = (w.modifiers_before[_key(m["modb"])], _key(m["modb"])) if m["modb"] else None
        after = (w.modifiers_after[_key(m["moda"])], _key(m["moda"])) if m["moda"] else None
        if before is not None and after is not None:
            return before if before[0] else after
        return before or after

    def _iso(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        day = _valid_date(int(m["y"]), int(m["m"]), int(m["d"]))
        if day is None:
            return None
        if m["H"] is None:
            return self._day(m, rule, day, ctx, absolute=True)
        hour, minute = int(m["H"]), int(m["M"])
        if hour > 23 or minute > 59:
            return None
        start = datetime.combine(day, time(hour, minute))
        if m["tz"] is not None and ctx.tz is not None:
            raw = m["tz"]
            offset = timedelta()
            if raw != "z":
                sign = -1 if raw[0] == "-" else 1
                digits = raw[1:].replace(":", "")
                offset = sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
            start = start.replace(tzinfo=timezone(offset)).astimezone(ctx.tz)
        else:
            start = start.replace(tzinfo=ctx.tz)
        return _Atom(
            m.span(), rule, "range", start, start + timedelta(minutes=1), "time", absolute=True
        )

    def _ymd(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        day = _valid_date(int(m["y"]), int(m["m"]), int(m["d"]))
        return None if day is None else self._day(m, rule, day, ctx, absolute=True)

    def _numeric(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        a, b, y = m["a"], m["b"], m["y"]
        if len(y) == 2:
            # "1.2.23" is a version and "8-5-23" a code more often than a date.
            if m["sep"] == "-" or (m["sep"] == "." and (len(a) < 2 or len(b) < 2)):
                return None
        year = int(y) + (2000 if len(y) == 2 else 0)
        first, second = (int(a), int(b)) if ctx.day_first else (int(b), int(a))
        day = _valid_date(year, second, first) or _valid_date(year, first, second)
        return None if day is None else self._day(m, rule, day, ctx, absolute=True)

    def _text_date(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        month = self._month_of(m, ctx)
        if month is None:
            return None
        year = int(m["y"]) if m["y"] else ctx.today.year
        day = _valid_date(year, month, int(m["d"]))
        return None if day is None else self._day(m, rule, day, ctx, absolute=True)

    def _month_year(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        month = self._month_of(m, ctx)
        if month is None:
            return None
        return self._month_range(m.span(), rule, int(m["y"]), month, ctx)

    def _month(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        if not (m["ctx"] or m["prep"] or m["modb"] or m["moda"]):
            return None
        month = self._month_of(m, ctx)
        if month is None:
            return None
        offset = self._offset(m)
        year = ctx.today.year if offset is None else _month_near(ctx.today, month, offset)
        return self._month_range(m.span("body"), rule, year, month, ctx)

    def _year(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        if not (m["ctx"] or m["prep"] or m["ysuf"]):
            return None
        return self._year_range(m.span("body"), rule, int(m["y"]), ctx)

    def _period(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        offset = self._offset(m)
        if offset is None:
            return None
        unit = self.words.units[_key(m["u"])]
        return self._shifted_period(
            m.span(), f"{self.words.lang}.relative_{unit}", unit, offset, ctx
        )

    def _period_phrase(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        unit, offset = self.words.period_phrases[_key(m["pp"])]
        return self._shifted_period(m.span(), rule, unit, offset, ctx)

    def _shifted_period(
        self, span: tuple[int, int], rule: str, unit: str, offset: int, ctx: _Context
    ) -> _Atom | None:
        today = ctx.today
        if unit == "week":
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
            start, end = _midnight(monday, ctx.tz), _midnight(monday + timedelta(weeks=1), ctx.tz)
            return _Atom(span, rule, "range", start, end, "week")
        if unit == "month":
            year, month = _add_months(today.year, today.month, offset)
            return self._month_range(span, rule, year, month, ctx)
        return self._year_range(span, rule, today.year + offset, ctx)

    def _weekday(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        word = _key(m["wd"])
        short = word not in self.words.weekdays
        weekday = self.words.weekday_abbreviations[word] if short else self.words.weekdays[word]
        if not self._cased(m, "wd", ctx):
            return None
        modifier = self._modifier(m)
        if modifier is not None:
            offset, word = modifier
            calendar = word in self.words.calendar_week
            day = _weekday_near(ctx.today, weekday, offset, calendar=calendar)
            return self._day(m, f"{self.words.lang}.relative_weekday", day, ctx)
        if short and not m["prep"]:
            return None
        if self._habitual.search(ctx.folded, max(0, m.start() - 24), m.start()):
            return None
        direction = self._tense(ctx, m.start(), m.end())
        day = _weekday_near(ctx.today, weekday, direction)
        return self._day(m, rule, day, ctx, weekday_only=True)

    def _tense(self, ctx: _Context, start: int, end: int) -> int:
        """-1 if the cue nearest to text[start:end] in its sentence is past, else +1."""
        text = _lower(ctx.text).replace("’", "'")
        low = 0
        for stop in _SENTENCE_END.finditer(text, 0, start):
            low = stop.end()
        after = _SENTENCE_END.search(text, end)
        high = after.start() if after else len(text)
        best: tuple[int, int] | None = None
        for cue in self._cues.finditer(text, low, high):
            kind = cue.lastgroup
            if kind in ("past", "future") and cue[0] in self.words.not_cues:
                continue
            if cue.end() <= start:
                distance = start - cue.end()
            elif cue.start() >= end:
                distance = cue.start() - end
            else:
                continue  # inside the weekday phrase itself
            # Past sorts after future, so on a tie the future wins.
            candidate = (distance, 1 if kind in ("past", "past_word") else 0)
            if best is None or candidate < best:
                best = candidate
        return -1 if best is not None and best[1] == 1 else 1

    def _relative_day(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        offset = self.words.relative_days[_key(m["rel"])]
        return self._day(m, rule, ctx.today + timedelta(days=offset), ctx)

    def _ago(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        return self._shift(m, ctx, rule, -1)

    def _later(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        return self._shift(m, ctx, rule, 1)

    def _shift(self, m: re.Match[str], ctx: _Context, rule: str, sign: int) -> _Atom | None:
        raw = m["q"]
        count = 1 if raw is None else int(raw) if raw.isdigit() else self.words.numbers[_key(raw)]
        if count == 0:
            return None
        unit, k = self.words.units[_key(m["u"])], sign * count
        try:
            if unit == "hour":
                at = (ctx.anchor + timedelta(hours=k)).replace(minute=0, second=0, microsecond=0)
                return _Atom(m.span(), rule, "range", at, at + timedelta(hours=1), "time")
            if unit in ("day", "week"):
                day = ctx.today + timedelta(days=k * (7 if unit == "week" else 1))
                return self._day(m, rule, day, ctx)
        except OverflowError:
            return None
        if unit == "month":
            year, month = _add_months(ctx.today.year, ctx.today.month, k)
            return self._month_range(m.span(), rule, year, month, ctx)
        return self._year_range(m.span(), rule, ctx.today.year + k, ctx)

    def _night_day(self, offset: int, part: str, ctx: _Context) -> date:
        day = ctx.today + timedelta(days=offset)
        if part == "night" and offset == 0 and ctx.anchor.hour < 6:
            day -= timedelta(days=1)  # "tonight" at 02:00 is the night under way
        return day

    def _this_part(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        part = self.words.part_words[_key(m["pw"])]
        return self._part_range(self._night_day(0, part, ctx), part, m.span(), rule, ctx)

    def _part_phrase(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        offset, part = self.words.part_phrases[_key(m["pp"])]
        return self._part_range(self._night_day(offset, part, ctx), part, m.span(), rule, ctx)

    def _part_word(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        return _Atom(m.span(), rule, "part", part=self.words.part_words[_key(m["pw"])])

    def _clock_time(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        pre, marker = m["pre"], m["mk"]
        minutes, hour_word = m["mi"] or m["mi2"], m["hw"]
        if pre is None and minutes is None and hour_word is None and marker is None:
            return None  # a bare number
        hour, minute = int(m["h"]), None if minutes is None else int(minutes)
        part = self.words.time_markers[_key(marker)] if marker else None
        if hour > 23 or (minute is not None and minute > 59) or (part and hour > 12):
            return None
        w = self.words
        strong = (
            (pre is not None and _key(pre) in w.strong_time_prefixes)
            or (pre is not None and bool(minutes or hour_word or marker))
            or (pre is None and marker is not None and _key(marker) in w.standalone_markers)
        )
        padded = len(m["h"]) == 2 and m["h"].startswith("0")
        return _Atom(
            m.span(),
            rule,
            "time",
            part=part,
            hour=hour,
            minute=minute,
            padded=padded,
            strong=strong,
        )

    def _time_word(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        hour = self.words.time_words[_key(m["tw"])]
        return _Atom(m.span(), rule, "time", hour=hour, padded=True, strong=m["pre"] is not None)


def _longest(found: list[tuple[_Atom, int]]) -> list[_Atom]:
    """Non-overlapping atoms, longest first, then by rule order; returned in text order."""
    found.sort(key=lambda f: (f[0].span[0] - f[0].span[1], f[1], f[0].span[0]))
    taken: list[_Atom] = []
    for atom, _ in found:
        s, e = atom.span
        if all(e <= t.span[0] or s >= t.span[1] for t in taken):
            taken.append(atom)
    taken.sort(key=lambda a: a.span[0])
    return taken


@cache
def _grammars() -> PerLanguage[_Grammar]:
    # Package data never changes while running: read once, each language compiled once.
    files, _ = read_folder(
        packaged("timewords"),
        label="language/rules/timewords",
        error=InvalidInput,
        what="time words",
        code_at=("lang",),
    )
    return PerLanguage(files, lambda f: _Grammar(timewords_from(f.data, f.source)))


@lru_cache(maxsize=64)
def _language(lang: str) -> str:
    code = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]
    return code if code in _grammars().codes else FALLBACK_LANG


def _grammar(lang: str) -> _Grammar:
    grammar = _grammars().get(lang)
    assert grammar is not None, lang  # `_language` only names languages that have a file
    return grammar


def find_dates(
    text: str, anchor: datetime, lang: str, *, day_first: bool = True
) -> list[DateMention]:
    """Time expressions in `text`, resolved against `anchor` (the turn's time), in text order.

    `lang` picks the vocabulary ("en", "ru", "fr", "es"; "en-GB" is "en"); an unknown one
    falls back to English, and numeric forms work in every language. `day_first` reads
    8/5/2023 as 8 May (False: 5 August). Results are in the anchor's timezone; `end` is
    exclusive. See the module docstring for how ambiguous expressions are read.
    """
    return _grammar(_language(lang)).find(text, anchor, day_first)
