"""What every reader shares: the warning and progress callbacks and the size limit.

Readers never raise for one bad line or one oversized turn: they report it through
`OnWarning` and carry on. `OnProgress(done, total)` lets the CLI draw a bar; readers call
it in bytes (rows for SQLite), throttled, and always end with ``done == total``.
"""

from __future__ import annotations

from collections.abc import Callable

from memoracle.types import IngestWarning

OnWarning = Callable[[IngestWarning], None]
OnProgress = Callable[[int, int], None]

#: Default ceiling on the UTF-8 size of one turn's (or one note's) text. Larger turns are
#: reported and skipped: they are pasted logs or dumps, not something to remember.
MAX_TEXT_BYTES = 1_000_000

#: A JSON line may hold much more than its text (escapes, thinking, tool payloads), so a
#: line is read whole only up to this multiple of ``max_text_bytes``.
LINE_FACTOR = 4


def no_progress(done: int, total: int) -> None:
    """The progress callback used when the caller gives none."""


def too_big(text: str, max_text_bytes: int) -> int | None:
    """The UTF-8 size of `text` when it is above `max_text_bytes`, else None."""
    if len(text) * 4 <= max_text_bytes:
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > max_text_bytes else None


def mb(size: int) -> str:
    """A byte count for a message: ``'10.5 MB'``."""
    return f"{size / 1_000_000:.1f} MB"


class Throttle:
    """Calls `on_progress` at most once per `step` units, plus the final call."""

    def __init__(self, on_progress: OnProgress, total: int, step: int) -> None:
        self._on_progress = on_progress
        self._total = total
        self._step = max(1, step)
        self._last = -self._step

    def __call__(self, done: int) -> None:
        if done - self._last >= self._step:
            self._last = done
            self._on_progress(min(done, self._total), self._total)

    def finish(self) -> None:
        self._on_progress(self._total, self._total)
