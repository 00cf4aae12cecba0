"""The only module that reads the system clock.

Everything that ages or stamps takes a `Clock`. `FixedClock` replays a transcript from
2023 as if it were then (`--now`, `MEMORACLE_NOW`) and lets tests move time explicitly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
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
