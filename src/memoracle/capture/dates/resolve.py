"""From a match to a date range: the resolvers of every rule (relative days, shifts,
weekdays with their tense, periods, parts of day, clock times, absolute and numeric
dates) and the calendar arithmetic they share.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Literal

from memoracle.capture.dates.seasons import (
    AHEAD,
    BEHIND,
    STRICTLY_AHEAD,
    day_year,
    month_year,
    season_span,
)
from memoracle.capture.dates.words import _SENTENCE_END, PART_HOURS, TimeWords, _key, _lower
from memoracle.types import Granularity

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
    month_day: int | None = None  # a day of the month said alone ("the 17th")


@dataclass(frozen=True)
class _Context:
    text: str
    folded: str
    anchor: datetime
    today: date
    tz: tzinfo | None
    day_first: bool
    ahead: bool = False  # said of a task or a plan: a bare month, season or weekday is ahead
    behind: bool = False  # a question asked of memory: one said with no tense is behind


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


def _next_day_of_month(today: date, day: int) -> date | None:
    """The first date on or after `today` whose day of the month is `day`, skipping the
    months that have no such day ("the 31st" said on 5 April is 31 May)."""
    if not 1 <= day <= 31:
        return None
    year, month = today.year, today.month
    if day < today.day:
        year, month = _add_months(year, month, 1)
    for _ in range(12):
        if year > date.max.year:
            return None
        found = _valid_date(year, month, day)
        if found is not None:
            return found
        year, month = _add_months(year, month, 1)
    return None


def _next_weekday_of_month(today: date, day: int, weekday: int) -> date | None:
    """The first date on or after `today` that is both the `day` of its month and a
    `weekday` ("Friday the 13th"); None if there is none within 28 months."""
    found = _next_day_of_month(today, day)
    for _ in range(28):
        if found is None or found.weekday() == weekday:
            return found
        found = _next_day_of_month(found + timedelta(days=1), day)
    return None


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


def _named(text: str, at: int, sentence: int) -> bool:
    """Whether the word at `at` is capitalised inside its sentence: a name."""
    opening = not text[sentence:at].strip(" \t\"'«“¿¡([-–—")
    return text[at].isupper() and not opening


def _nearest_year(today: date, month: int, day: int) -> int:
    """The year that puts `day` of `month` nearest to `today` (said with no tense)."""
    found = [
        (abs((d - today).days), d.year)
        for year in (today.year - 1, today.year, today.year + 1)
        if (d := _valid_date(year, month, day)) is not None
    ]
    return min(found)[1] if found else today.year


def _midnight(day: date, tz: tzinfo | None) -> datetime:
    return datetime.combine(day, time(), tz)


class _Resolvers:
    """The resolvers of `_Grammar`'s rules: a match and its context in, a date range
    out. (`_Grammar` builds the rules and finds the matches; these read the words.)"""

    words: TimeWords
    _habitual: re.Pattern[str]
    _change: re.Pattern[str]
    _not_day: re.Pattern[str]
    _cues: re.Pattern[str]

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
        number = int(m["d"])
        if m["y"]:
            year = int(m["y"])
        else:  # "May 8": the next or the last one as the sentence says, else the nearest
            cue = (
                AHEAD if ctx.ahead or self._planned(m, ctx) else self._cue(ctx, m.start(), m.end())
            )
            year = day_year(ctx.today, month, number, cue) if cue else ctx.today.year
            if not cue and _valid_date(year, month, number) is not None:
                year = _nearest_year(ctx.today, month, number)
        day = _valid_date(year, month, number)
        return None if day is None else self._day(m, rule, day, ctx, absolute=True)

    def _day_of_month(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        if self.words.day_of_month.ordinal and not (m["ord"] or m["tail"]):
            return None  # "the 17" is a number, "the 17th" a day
        if self._not_day.search(ctx.folded, max(0, m.start() - 24), m.start()):
            return None  # "in the 17th", "vivo en el 17"
        number = int(m["d"])
        day = _next_day_of_month(ctx.today, number)
        if day is None:
            return None
        return replace(self._day(m, rule, day, ctx), month_day=number)

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
        if offset is None:
            year = month_year(ctx.today, month, self._direction(m, ctx))
        else:
            year = _month_near(ctx.today, month, offset)
        return self._month_range(m.span("body"), rule, year, month, ctx)

    def _season(self, m: re.Match[str], ctx: _Context, rule: str) -> _Atom | None:
        word = _key(m["sea"])
        if not (m["ctx"] or m["prep"] or m["modb"] or m["moda"] or word in self.words.season_alone):
            return None  # "summer is my favourite" names no time
        offset = self._offset(m)
        direction = AHEAD if offset is not None else self._direction(m, ctx)
        try:
            first, end = season_span(ctx.today, self.words.seasons[word], offset, direction)
        except ValueError:
            return None
        start, stop = _midnight(first, ctx.tz), _midnight(end, ctx.tz)
        return _Atom(m.span("body"), rule, "range", start, stop, "season")

    def _direction(self, m: re.Match[str], ctx: _Context) -> int:
        """Where a month, season or day said without its year lies: a context word
        decides ("before March": strictly ahead; "since March": behind), then what is
        said (a task or a plan: ahead), then the tense around it (`_tense`)."""
        context = _key(m["ctx"]) if "ctx" in m.re.groupindex and m["ctx"] else None
        if context in self.words.ahead_context:
            return STRICTLY_AHEAD
        if context in self.words.behind_context:
            return BEHIND
        if ctx.ahead or self._planned(m, ctx):
            return AHEAD
        return BEHIND if self._tense(ctx, m.start(), m.end()) < 0 else AHEAD

    def _planned(self, m: re.Match[str], ctx: _Context) -> bool:
        """A change of date or a plan right before the match ("moved to", "c'est le",
        "est en mai"): ahead, whatever the tense elsewhere in the sentence."""
        return self._change.search(ctx.folded, max(0, m.start() - 80), m.start()) is not None

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
        # "moved to Thursday", "is on Thursday": ahead, whatever the tense around it.
        changed = self._change.search(ctx.folded, max(0, m.start("wd") - 80), m.start("wd"))
        direction = 1 if changed or ctx.ahead else self._tense(ctx, m.start(), m.end())
        day = _weekday_near(ctx.today, weekday, direction)
        return self._day(m, rule, day, ctx, weekday_only=True)

    def _tense(self, ctx: _Context, start: int, end: int) -> int:
        """-1 if the cue nearest to text[start:end] in its sentence is past, +1 if it is
        future; with no cue, -1 for a question asked of memory (`behind`), else +1."""
        cue = self._cue(ctx, start, end)
        return cue if cue else (-1 if ctx.behind else 1)

    def _cue(self, ctx: _Context, start: int, end: int) -> int:
        """-1 if the cue nearest to text[start:end] in its sentence is past, +1 if it is
        future, 0 if the sentence has none. The
        weekday phrase is blanked first, so no cue takes it in ("ai vu jeudi" would read
        as one passé composé ending in "-i" and hide "ai vu")."""
        text = _lower(ctx.text).replace("’", "'")
        text = text[:start] + " " * (end - start) + text[end:]
        low = 0
        for stop in _SENTENCE_END.finditer(text, 0, start):
            low = stop.end()
        after = _SENTENCE_END.search(text, end)
        high = after.start() if after else len(text)
        best: tuple[int, int] | None = None
        for cue in self._cues.finditer(text, low, high):
            kind = cue.lastgroup
            if kind in ("past", "future") and (
                cue[0] in self.words.not_cues or _named(ctx.text, cue.start(), low)
            ):
                continue  # "Байкал" ends like a past verb, but a name is no tense
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
        if best is None:
            return 0
        return -1 if best[1] == 1 else 1

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
