"""Timestamps as they appear in transcript files, turned into aware datetimes.

Owns ISO-8601 strings (``Z`` or an offset; one without is returned naive: a wall-clock
time the capture layer reads in ``workspace.timezone``) and epoch numbers
(seconds, or milliseconds when large, as pi writes ``message.timestamp``). Envelope times
(``[Thu 2026-05-14 10:02 GMT+2]``) are `envelope.py`'s business.
"""

from __future__ import annotations

from datetime import UTC, datetime

# Epoch values above this are milliseconds (1e11 s is the year 5138).
_MS_THRESHOLD = 100_000_000_000


def parse_when(value: object) -> datetime | None:
    """A datetime from an ISO-8601 string (naive when it has no offset) or an epoch number
    (aware, UTC), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) > _MS_THRESHOLD else float(value)
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if text.isdigit():
            return parse_when(int(text))
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed
    return None
