"""One language's grammar of dates: the rules built from its time words, the matches
found in a text, and adjacent pieces joined ("tomorrow morning", "Friday at 5pm").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memoracle.capture.dates.resolve import (
    _Atom,
    _Context,
    _midnight,
    _next_weekday_of_month,
    _Resolver,
    _Resolvers,
    _Rule,
)
from memoracle.capture.dates.words import (
    _DIGIT,
    _JOIN,
    _WORD,
    PERIOD_UNITS,
    TimeWords,
    _affix_alt,
    _alt,
    _fold,
    _phrase_re,
    _plain_alt,
)
from memoracle.language import compiled
from memoracle.types import DateMention

_Spec = tuple[str, str, tuple[str, ...], _Resolver]  # rule name, pattern, needs, resolver


@dataclass(frozen=True)
class _Pieces:
    """The regex fragments one language's rules share, built once from its words."""

    b: str  # word start
    n: str  # number start: not inside 1.5, 10:30, 8/5
    prep: str
    ctxp: str
    det: str
    modb: str
    moda: str
    months_all: str
    ordinal: str
    year_tail: str
    end_num: str


class _Grammar(_Resolvers):
    """The compiled rules of one language: patterns built once from its TimeWords."""

    def __init__(self, words: TimeWords) -> None:
        self.words = w = words
        p = _Pieces(
            b=r"(?<!\w)",
            n=r"(?<![\w.,:/-])",
            prep=_alt(w.prepositions),
            ctxp=_alt(w.context_prepositions),
            det=self._determiners(w.determiners),
            modb=_alt(w.modifiers_before),
            moda=_alt(w.modifiers_after),
            months_all=_alt([*w.months, *w.month_abbreviations]),
            ordinal=rf"(?:{_affix_alt(w.ordinals)})?",
            year_tail=rf"(?:\s*{_affix_alt(w.year_suffixes)})?",
            end_num=r"(?![\w:]|[.,]\d)",
        )
        specs = [
            *self._absolute_specs(p),
            *self._relative_specs(p),
            *self._calendar_specs(p),
            *self._clock_specs(p),
        ]
        self.rules = tuple(
            _Rule(name, compiled.regex(pattern), frozenset(needs), resolve)
            for name, pattern, needs, resolve in specs
        )
        self.triggers = self._triggers()
        self._compile_context(p)
        self._cues = self._cue_pattern()

    def _absolute_specs(self, p: _Pieces) -> list[_Spec]:
        """Dates written out: ISO, numeric, "8 May 2023", "May 8", "the 17th"."""
        w, lang, b, n = self.words, self.words.lang, p.b, p.n
        specs: list[_Spec] = [
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
                rf"{b}(?:{p.prep}\s+)?{p.det}{n}(?P<d>\d{{1,2}}){p.ordinal}"
                rf"(?:\s+{_alt(w.day_month_joiners)})?\s+(?P<mon>{p.months_all})(?:\.(?=\s*\d))?"
                rf"(?:,?\s+(?:{_alt(w.month_year_joiners)}\s+)?(?P<y>\d{{4}})(?!\d){p.year_tail})?"
                r"(?!\w)",
                ("digit", "month"),
                self._text_date,
            ),
        ]
        if w.month_before_day:
            specs.append(
                (
                    f"{lang}.date",
                    rf"{b}(?:{p.prep}\s+)?(?P<mon>{p.months_all})\.?\s+{p.det}{n}(?P<d>\d{{1,2}})"
                    rf"{p.ordinal}(?!\w)(?:,?\s+(?P<y>\d{{4}})(?!\d))?{p.end_num}",
                    ("digit", "month"),
                    self._text_date,
                )
            )
        specs.append(
            (
                f"{lang}.day_of_month",
                self._day_alone(w, b, n, _affix_alt(w.ordinals)),
                ("digit",),
                self._day_of_month,
            )
        )
        specs.append(
            (
                f"{lang}.month_year",
                rf"{b}(?:{p.prep}\s+)?{p.det}(?P<mon>{p.months_all})\.?,?\s+"
                rf"(?:{_alt(w.month_year_joiners)}\s+)?(?P<y>\d{{4}})(?!\d){p.year_tail}(?!\w)",
                ("digit", "month"),
                self._month_year,
            )
        )
        return specs

    def _relative_specs(self, p: _Pieces) -> list[_Spec]:
        """Times said from today: periods, weekdays, relative days, shifts."""
        w, lang, b = self.words, self.words.lang, p.b
        weekdays = _alt([*w.weekdays, *w.weekday_abbreviations])
        units = _alt(w.units)
        period_units = _alt(k for k, u in w.units.items() if u in PERIOD_UNITS)
        qty = rf"(?:(?<![\d.,])\d{{1,3}}|{_alt(w.numbers)})"
        q = rf"(?:(?P<q>{qty})\s+)?" if w.bare_unit else rf"(?P<q>{qty})\s+"
        approx = rf"(?:{_alt(w.approx)}\s+)?"
        blocked = rf"(?!\s+(?:{'|'.join(w.not_followed_by)}))" if w.not_followed_by else ""
        return [
            (
                f"{lang}.relative_period",
                rf"{b}(?:{p.prep}\s+)?{p.det}(?:(?P<modb>{p.modb})\s+)?(?P<u>{period_units})"
                rf"(?:(?:\s+|-)(?P<moda>{p.moda}))?(?!\w)",
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
                rf"{b}(?:(?P<prep>{p.prep})\s+)?{p.det}(?:(?P<modb>{p.modb})\s+)?"
                rf"(?P<wd>{weekdays})(?!\w)(?:(?:\s+|-)(?P<moda>{p.moda})(?!\w))?",
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
        ]

    def _calendar_specs(self, p: _Pieces) -> list[_Spec]:
        """A month, a season or a year named without the rest of a date."""
        w, lang, b, n = self.words, self.words.lang, p.b, p.n
        season_preps = _alt([*w.prepositions, *w.season_prepositions])
        return [
            (
                f"{lang}.month",
                rf"{b}(?:(?P<ctx>{p.ctxp})\s+)?(?P<body>(?:(?P<prep>{p.prep})\s+)?{p.det}"
                rf"(?:(?P<modb>{p.modb})\s+)?(?P<mon>{_alt(w.months)})"
                rf"(?:(?:\s+|-)(?P<moda>{p.moda}))?)(?!\w)",
                ("month",),
                self._month,
            ),
            (
                f"{lang}.season",
                rf"{b}(?:(?P<ctx>{p.ctxp})\s+)?(?P<body>(?:(?P<prep>{season_preps})\s+)?{p.det}"
                rf"(?:(?P<modb>{p.modb})\s+)?(?P<sea>{_alt(w.seasons)})"
                rf"(?:(?:\s+|-)(?P<moda>{p.moda}))?)(?!\w)",
                ("season",),
                self._season,
            ),
            (
                f"{lang}.year",
                rf"{b}(?:(?P<ctx>{p.ctxp})\s+)?(?P<body>(?:(?P<prep>{p.prep})\s+)?"
                rf"{n}(?P<y>(?:1[89]|2[01])\d\d)(?:\s*(?P<ysuf>{_affix_alt(w.year_suffixes)}))?)"
                r"(?![\w/-]|[.,:]\d)",
                ("digit",),
                self._year,
            ),
        ]

    def _clock_specs(self, p: _Pieces) -> list[_Spec]:
        """Parts of day and clock times."""
        w, lang, b, n = self.words, self.words.lang, p.b, p.n
        part_words = _alt(w.part_words)
        time_prefixes = _alt([*w.strong_time_prefixes, *w.time_prefixes])
        return [
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
                rf"(?:\s*(?P<mk>{_alt(w.time_markers)}))?{p.end_num}",
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

    def _compile_context(self, p: _Pieces) -> None:
        """What the words before a match say of it: a habit ("every Friday"), a change
        of date or a plan (ahead), or a word that makes a number no day."""
        w = self.words
        self._habitual = compiled.regex(rf"(?<!\w){_alt(w.habitual_before)}\s+$")
        # A change of date before a bare weekday, with its link after up to three words
        # ("moved the call to"), or a plan, directly or through a preposition ("is on").
        moves, plans = _alt(w.change_moves), _alt(w.change_plans)
        links = _alt(w.change_links)
        self._change = compiled.regex(
            rf"(?<!\w)(?:{moves}(?:\s+[\w'’]+){{0,3}}\s+{links}|{plans}(?:\s+{p.prep})?)"
            rf"(?:\s+{_alt(w.determiners)})?\s+$"
        )
        self._not_day = compiled.regex(rf"(?<!\w){_alt(w.day_of_month.not_after)}\s+$")

    def _cue_pattern(self) -> re.Pattern[str]:
        """One pass finds every tense cue; explicit words come before the patterns so
        that a listed word ("planned": future) is never re-read by a pattern ("-ed")."""
        w = self.words
        patterns = {
            "future_word": _plain_alt(w.future_words),
            "past_word": _plain_alt(w.past_words),
            "future": "|".join(f"(?:{p})" for p in w.future_patterns) or "(?!)",
            "past": "|".join(f"(?:{p})" for p in w.past_patterns) or "(?!)",
        }
        body = "|".join(f"(?P<{name}>{p})" for name, p in patterns.items())
        return compiled.regex(rf"(?<!\w)(?:{body})(?!\w)")

    @staticmethod
    def _day_alone(w: TimeWords, b: str, n: str, ordinals: str) -> str:
        """A day of the month without its month: "on the 17th", "le 17", "17-го числа".

        What may come next is checked here, so that "the 17th floor", "el 17%" or
        "le 17.5" never match: the end of the text or line, punctuation (not a unit or a
        decimal point), an emoji, or a listed follower (with the [time] prefixes and
        markers and the parts of day).
        """
        dom = w.day_of_month
        lead = rf"(?P<lead>{_alt(dom.lead)})\s+" if dom.lead else ""
        follow = _alt(
            [
                *dom.followers,
                *w.time_prefixes,
                *w.strong_time_prefixes,
                *w.time_markers,
                *w.part_words,
                *w.part_phrases,
            ]
        )
        return (
            rf"{b}{lead}{n}(?P<d>\d{{1,2}})(?P<ord>{ordinals})?"
            rf"(?:\s+(?P<tail>{_alt(dom.tail)}))?(?![\w-])"
            rf"(?=\s*(?:$|\n|[.,:;](?!\d)|[^\w\s.,:;%$€£¥°/+-]|[-–—]\s)|\s+{follow}(?!\w))"
        )

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
            "season": w.seasons,
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

    def find(
        self,
        text: str,
        anchor: datetime,
        day_first: bool,
        ahead: bool = False,
        behind: bool = False,
    ) -> list[DateMention]:
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
        ctx = _Context(text, folded, anchor, anchor.date(), anchor.tzinfo, day_first, ahead, behind)
        found: list[tuple[_Atom, int]] = []
        for priority, rule in enumerate(self.rules):
            if not rule.needs <= present:
                continue
            for match in rule.pattern.finditer(folded):
                try:
                    atom = rule.resolve(match, ctx, rule.name)
                except OverflowError:  # past the calendar's end (year 9999): no date
                    continue
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
                try:
                    joined = self._combine(current, atoms[j], ctx)
                except OverflowError:
                    joined = None
                if joined is None:
                    break
                current, j = joined, j + 1
            if current is not None and current.kind == "time" and current.strong:
                try:
                    current = self._clock(ctx.today, current, None, current.span, current.rule, ctx)
                except OverflowError:
                    current = None
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
            if a.weekday_only and b.month_day is not None:  # "Friday the 13th"
                day = _next_weekday_of_month(ctx.today, b.month_day, a.day.weekday())
                if day is None:
                    return None
                start, end = _midnight(day, ctx.tz), _midnight(day + timedelta(days=1), ctx.tz)
                return _Atom(span, rule, "range", start, end, "day", day)
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
