"""How long to wait before trying a model again: the server's Retry-After when it gave
one (seconds, or an HTTP date), else exponential backoff from `base` seconds. Pure."""

from __future__ import annotations

import email.utils
from datetime import datetime

from memoracle.clock import as_utc

TRANSIENT = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds a Retry-After header asks for, or None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, (as_utc(when) - as_utc(now)).total_seconds())


def backoff(attempt: int, base: float, asked: float | None) -> float:
    """The wait before try `attempt + 1` (attempt 0 is the first failure)."""
    return asked if asked is not None else base * 2**attempt
