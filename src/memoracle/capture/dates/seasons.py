"""Which months a named month or season means when no year is said: the direction a
sentence gives it (behind, ahead, strictly ahead) turned into a calendar span.

Pure calendar arithmetic over dates; the words that give the direction are the
grammar's (`resolve`).
"""

from __future__ import annotations

from datetime import date

from memoracle.capture.dates.words import SEASON_MONTHS, SEASONS

BEHIND, AHEAD, STRICTLY_AHEAD = -1, 1, 2


def month_year(today: date, month: int, direction: int) -> int:
    """The year of a bare `month`: behind, the latest one that has begun (this month
    included); ahead, the first that has not ended (this month included); strictly ahead,
    the first after this month ("before March" said in March is next March)."""
    if direction == BEHIND:
        return today.year if month <= today.month else today.year - 1
    if direction == STRICTLY_AHEAD:
        return today.year if month > today.month else today.year + 1
    return today.year if month >= today.month else today.year + 1


def day_year(today: date, month: int, day: int, direction: int) -> int:
    """The year of a day and month said without one ("May 8"): behind, the latest on or
    before today; ahead, the first on or after today (strictly: after)."""
    said, now = (month, day), (today.month, today.day)
    if direction == BEHIND:
        return today.year if said <= now else today.year - 1
    if direction == STRICTLY_AHEAD:
        return today.year if said > now else today.year + 1
    return today.year if said >= now else today.year + 1


def _occurrences(season: str, today: date) -> list[tuple[date, date]]:
    first = SEASONS[season]
    spans = []
    for year in range(today.year - 2, today.year + 3):
        if not date.min.year <= year < date.max.year:
            continue
        start = date(year, first, 1)
        index = year * 12 + first - 1 + SEASON_MONTHS
        spans.append((start, date(index // 12, index % 12 + 1, 1)))
    return spans


def season_span(today: date, season: str, offset: int | None, direction: int) -> tuple[date, date]:
    """[start, end) of `season` as said on `today`.

    `offset` from a modifier: -1 ("last summer") the latest that has ended, +1 ("next
    summer") the first that begins after today, 0 ("this winter") the one under way, or
    else the one `direction` gives; -2/+2 one further. Without a modifier: behind, the
    latest that has begun; ahead, the first that has not ended (the one under way
    included); strictly ahead, the first that begins after today. Raises ValueError at
    the calendar's ends (a year past 9999)."""
    spans = _occurrences(season, today)
    if offset is not None and offset < 0:
        ended = [s for s in spans if s[1] <= today]
        return _pick(ended, len(ended) + offset)
    if offset is not None and offset > 0:
        later = [s for s in spans if s[0] > today]
        return _pick(later, offset - 1)
    under_way = [s for s in spans if s[0] <= today < s[1]]
    if offset == 0 and under_way:
        return under_way[0]
    if direction == BEHIND:
        begun = [s for s in spans if s[0] <= today]
        return _pick(begun, len(begun) - 1)
    if direction == STRICTLY_AHEAD:
        return _pick([s for s in spans if s[0] > today], 0)
    return _pick([s for s in spans if s[1] > today], 0)


def _pick(spans: list[tuple[date, date]], index: int) -> tuple[date, date]:
    if not 0 <= index < len(spans):
        raise ValueError("no such season within the calendar")
    return spans[index]
