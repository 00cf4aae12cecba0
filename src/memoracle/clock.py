"""The only module that reads the system clock.

Everything that ages or stamps takes a `Clock`. `FixedClock` replays a transcript from
2023 as if it were then (`--now`, `MEMORACLE_NOW`) and lets tests move time explicitly.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Current time, timezone-aware, UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that stands still until told to move."""

    def __init__(self, at: datetime) -> None:
        self._at = as_utc(at)

    def now(self) -> datetime:
        return self._at

    def advance(self, **delta: float) -> None:
        self._at += timedelta(**delta)

    def set(self, at: datetime) -> None:
        self._at = as_utc(at)


def as_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


FIRST_YEAR, LAST_YEAR = 1900, 9000  # what a time given at a door may say


def parse_instant(text: str) -> datetime:
    """Parse an ISO-8601 time ('2023-05-08', '2023-05-08T13:56', '...Z', '...+02:00').

    Without an offset the result is naive: a wall-clock time the caller places in the
    workspace timezone.

    Raises ValueError with the offending text; callers at the doors turn it into
    InvalidInput naming the flag or field.
    """
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"not an ISO-8601 date or time: {text!r}") from None
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        # Dates are shifted by days, months and time zones: at the calendar's ends that
        # overflows, and no conversation happens there.
        raise ValueError(f"{text!r} is out of range: years {FIRST_YEAR} to {LAST_YEAR} only")
    return value


_DURATION = re.compile(r"(\d{1,9})\s*([mhdw])", re.IGNORECASE)
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_duration(text: str) -> timedelta:
    """Parse a time to live: a number and a unit, m (minutes), h, d or w ('7d', '90m',
    '1w2d'). Raises ValueError naming the text when it is not one, or is zero."""
    raw = text.strip()
    parts = _DURATION.findall(raw)
    if not raw or "".join(n + u for n, u in parts).lower() != re.sub(r"\s", "", raw).lower():
        raise ValueError(f"not a duration: {text!r} (a number and a unit: 90m, 12h, 7d, 2w)")
    try:
        total = sum((timedelta(**{_UNITS[u.lower()]: int(n)}) for n, u in parts), timedelta())
    except OverflowError:
        raise ValueError(f"{text!r} is too long a duration") from None
    if total <= timedelta(0):
        raise ValueError(f"{text!r} is no time at all: give a positive duration")
    return total


def parse_until(text: str) -> date | datetime:
    """Parse an end: a date ('2026-12-11': to the end of that day) or a time
    (`parse_instant`: naive without an offset). Raises ValueError naming the text."""
    raw = text.strip()
    if _DAY.fullmatch(raw):
        try:
            day = date.fromisoformat(raw)
        except ValueError:
            raise ValueError(f"not a date: {text!r}") from None
        if not FIRST_YEAR <= day.year <= LAST_YEAR:
            raise ValueError(f"{text!r} is out of range: years {FIRST_YEAR} to {LAST_YEAR} only")
        return day
    return parse_instant(raw)


def format_until(at: datetime, zone: tzinfo) -> str:
    """`at` as `parse_until` reads it back, in `zone`: a date when it is a midnight there
    (the day before it: kept to the end of that day), else the wall-clock time."""
    local = at.astimezone(zone)
    if local.time() == time():
        return (local.date() - timedelta(days=1)).isoformat()
    exact = local.second or local.microsecond
    return local.replace(tzinfo=None).isoformat(timespec="seconds" if exact else "minutes")
