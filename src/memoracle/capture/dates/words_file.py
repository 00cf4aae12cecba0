"""A time words file read and checked (`parse_timewords`, `timewords_from`): the
file's tables in order, each by its own function, every complaint naming file and key.
What the words are, and the folding the grammar builds on, is `words`'.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping

from memoracle.capture.dates.words import (
    PARTS,
    PERIOD_UNITS,
    SEASONS,
    UNITS,
    WEEKDAYS,
    DayOfMonth,
    TimeWords,
    _fold,
    _key,
)
from memoracle.errors import InvalidInput
from memoracle.text import MONTHS


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


def _context_sides(preps: _Reader, context: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    """[prepositions].ahead and .behind: context words that set the direction of a bare
    month or season whatever the tense; each must be one of `context`."""
    sides = []
    for key in ("ahead", "behind"):
        words = frozenset(preps.words(key))
        for word in sorted(words - set(context)):
            raise preps.error(key, f"names {word!r}, which is not in 'context'")
        sides.append(words)
    return tuple(sides)


def _seasons(top: _Reader) -> tuple[dict[str, str], tuple[str, ...], frozenset[str]]:
    """[seasons]: the forms of each season, the prepositions a season takes besides
    [prepositions].in_span, and the forms that are a time alone."""
    table = top.table("seasons")
    forms: dict[str, str] = {}
    for season in SEASONS:
        words = table.words(season)
        if not words:
            raise table.error(season, "must list at least one word")
        forms.update((form, season) for form in words)
    alone = frozenset(table.words("alone"))
    for word in sorted(alone - set(forms)):
        raise table.error("alone", f"names {word!r}, which is not a season's form")
    preps = table.words("prepositions")
    table.close()
    return forms, preps, alone


def parse_timewords(source: str, name: str) -> TimeWords:
    """Validate the text of one time words file. Raises InvalidInput naming file and key."""
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as e:
        raise InvalidInput(f"Malformed time words file {name}: not valid TOML ({e}).") from None
    return timewords_from(data, name)


def timewords_from(data: Mapping[str, object], name: str) -> TimeWords:
    """Validate one time words file's data. Raises InvalidInput naming file and key.
    The file's tables are read in order, each by its own function."""
    top = _Reader(name, data)
    prepositions, context, ahead, behind = _prepositions(top)
    seasons, season_preps, season_alone = _seasons(top)
    unit_forms = _units(top)
    approx, past_before, past_after, future_before, future_after, bare_unit, not_followed_by = (
        _shift(top)
    )
    before, after, calendar_week = _modifiers(top)
    period_phrases = _period_phrases(top)
    ordinals, year_suffixes, day_month, month_year, month_before_day = _dates(top)
    day_of_month = _day_of_month(top)
    this_part, part_words, part_phrases = _parts_of_day(top)
    markers, standalone, pm_hours, prefixes, strong_prefixes, hour_words, time_words = _time(top)
    change_moves, change_plans, change_links = _change(top)
    past_words, future_words, past_patterns, future_patterns, not_cues = _tense(top)
    words = TimeWords(
        lang=top.text("lang"),
        capitalised_only=frozenset(top.words("capitalised_only")),
        habitual_before=top.words("habitual_before"),
        determiners=top.words("determiners"),
        prepositions=prepositions,
        context_prepositions=context,
        ahead_context=ahead,
        behind_context=behind,
        seasons=seasons,
        season_prepositions=season_preps,
        season_alone=season_alone,
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
        day_of_month=day_of_month,
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
        change_moves=change_moves,
        change_plans=change_plans,
        change_links=change_links,
    )
    top.close()
    return words


Words = tuple[str, ...]


def _prepositions(top: _Reader) -> tuple[Words, Words, frozenset[str], frozenset[str]]:
    """[prepositions]: those of a span ("in May"), the context words, and which of
    these set the direction ahead or behind (`_context_sides`)."""
    preps = top.table("prepositions")
    prepositions, context = preps.words("in_span"), preps.words("context")
    ahead, behind = _context_sides(preps, context)
    preps.close()
    return prepositions, context, ahead, behind


def _units(top: _Reader) -> dict[str, str]:
    """[units]: form -> unit; every unit but the hour must list its words."""
    units = top.table("units")
    unit_forms: dict[str, str] = {}
    for unit in UNITS:
        if unit in units.raw or unit != "hour":
            forms = units.words(unit)
            if not forms:
                raise units.error(unit, "must list at least one word")
            unit_forms.update((form, unit) for form in forms)
    units.close()
    return unit_forms


def _shift(top: _Reader) -> tuple[Words, Words, Words, Words, Words, bool, tuple[str, ...]]:
    """[shift]: the words around an amount of time ("3 days ago", "in 2 weeks"): approx,
    past_before, past_after, future_before, future_after, bare_unit, not_followed_by."""
    shift = top.table("shift")
    approx = shift.words("approx")
    past_before, past_after = shift.words("past_before"), shift.words("past_after")
    future_before, future_after = shift.words("future_before"), shift.words("future_after")
    bare_unit, not_followed_by = shift.flag("bare_unit"), shift.patterns("not_followed_by")
    shift.close()
    return approx, past_before, past_after, future_before, future_after, bare_unit, not_followed_by


def _modifiers(top: _Reader) -> tuple[dict[str, int], dict[str, int], frozenset[str]]:
    """[modifiers]: the offsets of the words before and after a unit ("next week",
    "the week after"), and those of them that mean a calendar week."""
    modifiers = top.table("modifiers")
    before, after = modifiers.int_table("before", -9, 9), modifiers.int_table("after", -9, 9)
    calendar_week = frozenset(modifiers.words("calendar_week"))
    for word in calendar_week:
        if word not in before and word not in after:
            raise modifiers.error("calendar_week", f"names {word!r}, which is not a modifier")
    modifiers.close()
    return before, after, calendar_week


def _period_phrases(top: _Reader) -> dict[str, tuple[str, int]]:
    """[period_phrases]: phrase -> (unit, offset)."""
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
    return period_phrases


def _dates(top: _Reader) -> tuple[tuple[str, ...], tuple[str, ...], Words, Words, bool]:
    """[dates]: ordinals, year_suffixes, the day-month and month-year joiners, and
    whether the month comes before the day."""
    dates = top.table("dates")
    ordinals, year_suffixes = dates.affixes("ordinals"), dates.affixes("year_suffixes")
    day_month, month_year = dates.words("day_month_joiners"), dates.words("month_year_joiners")
    month_before_day = dates.flag("month_before_day")
    dates.close()
    return ordinals, year_suffixes, day_month, month_year, month_before_day


def _day_of_month(top: _Reader) -> DayOfMonth:
    """[day_of_month]: a day of the month said alone."""
    alone = top.table("day_of_month")
    day_of_month = DayOfMonth(
        lead=alone.words("lead"),
        not_after=alone.words("not_after"),
        ordinal=alone.flag("ordinal"),
        tail=alone.words("tail"),
        followers=alone.words("followers"),
    )
    alone.close()
    return day_of_month


def _parts_of_day(top: _Reader) -> tuple[Words, dict[str, str], dict[str, tuple[int, str]]]:
    """[parts_of_day]: the words for "this", form -> part, and phrase -> (day, part)."""
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
    return this_part, part_words, part_phrases


def _time(
    top: _Reader,
) -> tuple[dict[str, str], Words, tuple[int, int] | None, Words, Words, Words, dict[str, int]]:
    """[time]: the clock's words: markers, standalone markers, the bare pm hours,
    prefixes, strong prefixes, hour words and number words."""
    clock = top.table("time")
    markers = clock.choice_table("markers", PARTS)
    standalone = clock.words("standalone_markers")
    for marker in standalone:
        if marker not in markers:
            raise clock.error("standalone_markers", f"names {marker!r}, which is not a marker")
    pm_hours = _bare_pm_hours(clock)
    prefixes, strong_prefixes = clock.words("prefixes"), clock.words("strong_prefixes")
    hour_words, time_words = clock.words("hour_words"), clock.int_table("words", 0, 23)
    clock.close()
    return markers, standalone, pm_hours, prefixes, strong_prefixes, hour_words, time_words


def _bare_pm_hours(clock: _Reader) -> tuple[int, int] | None:
    """[time].bare_pm_hours: [] or the first and last hour read as pm when said bare."""
    pm_value = clock.get("bare_pm_hours")
    if pm_value == []:
        return None
    if (
        not isinstance(pm_value, list)
        or len(pm_value) != 2
        or not all(isinstance(h, int) and not isinstance(h, bool) for h in pm_value)
        or not 1 <= pm_value[0] <= pm_value[1] <= 11
    ):
        raise clock.error("bare_pm_hours", "must be [] or [first, last] hours within 1-11")
    return (pm_value[0], pm_value[1])


def _change(top: _Reader) -> tuple[Words, Words, Words]:
    """[change]: the words of a change of plan: moves, plans, links."""
    change = top.table("change")
    change_moves, change_plans = change.words("moves"), change.words("plans")
    change_links = change.words("links")
    change.close()
    return change_moves, change_plans, change_links


def _tense(
    top: _Reader,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """[tense]: past and future words (lower-cased), past and future patterns, and the
    words that are no tense cue."""
    tense = top.table("tense")
    past_words = tuple(w.lower() for w in tense.strings("past_words"))
    future_words = tuple(w.lower() for w in tense.strings("future_words"))
    past_patterns, future_patterns = (
        tense.patterns("past_patterns"),
        tense.patterns("future_patterns"),
    )
    not_cues = frozenset(w.lower() for w in tense.strings("not_cues"))
    tense.close()
    return past_words, future_words, past_patterns, future_patterns, not_cues
