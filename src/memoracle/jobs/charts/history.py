"""The health history read back (`read_history`: tolerant, a line that is not a health
report is skipped and named with its line number in `History.problems`, a missing
file is an empty history) and the rule for gaps (`find_gaps`: checks much further
apart than usual are not joined by a line, so missed days show as missed).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

# Two neighbouring points are not joined when they are more than GAP_FACTOR times the
# median interval apart (a nightly schedule that missed one night is 2x) and more than
# GAP_FLOOR apart (so that extra manual checks, which shrink the median, do not make an
# ordinary day between two nightly checks look like a gap).
GAP_FACTOR = 1.5


GAP_FLOOR = timedelta(hours=36)


@dataclass(frozen=True)
class Entry:
    """One line of the history: what one health check measured. None: not measured
    (the check failed, or the report predates the field)."""

    checked_at: datetime  # UTC
    active: int | None
    archived: int | None
    disputed: int | None
    superseded: int | None
    max_facts: int | None
    average_activation: float | None
    duplicate_rate: float | None  # a fraction, 0-1
    nightly_at: datetime | None  # the last nightly run at the time of the check
    nightly_seconds: float | None

    @property
    def disputed_rate(self) -> float | None:
        """Disputed memories as a fraction of the active ones (None without active ones)."""
        if self.disputed is None or not self.active:
            return None
        return self.disputed / self.active


@dataclass(frozen=True)
class Problem:
    """A line of the history that was skipped, and why. `line` is None when the file as
    a whole could not be read."""

    path: Path
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}" if self.line is None else f"{self.path}, line {self.line}"
        return f"{where}: {self.reason}; skipped."


@dataclass(frozen=True)
class History:
    """The health checks read back, oldest first, and the lines that were skipped."""

    entries: tuple[Entry, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def gaps(self) -> list[tuple[datetime, datetime]]:
        """The stretches without checks (see `find_gaps`)."""
        return find_gaps([e.checked_at for e in self.entries])


def read_history(path: Path) -> History:
    """The health history in `path` (HOME/health-history.jsonl), sorted by `checked_at`.
    Never raises: a missing file is an empty history; a line that is not a health report
    (not JSON, no `checked_at` or `memories`, a field of the wrong type) is skipped and
    named in `problems`, as is a file that cannot be read. Blank lines are ignored."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return History()
    except OSError as exc:
        return History(problems=(Problem(path, None, f"cannot read it ({exc.strerror or exc})"),))
    entries: list[Entry] = []
    problems: list[Problem] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            entries.append(_entry(raw))
        except _Skip as exc:
            problems.append(Problem(path, number, str(exc)))
    entries.sort(key=lambda e: e.checked_at)
    return History(tuple(entries), tuple(problems))


def find_gaps(times: Sequence[datetime]) -> list[tuple[datetime, datetime]]:
    """The neighbours in `times` (sorted) too far apart to join with a line: more than
    GAP_FACTOR times the median interval and more than GAP_FLOOR. With one interval
    there is nothing to compare it with, so no gap."""
    steps = [(b - a).total_seconds() for a, b in pairwise(times)]
    if len(steps) < 2:
        return []
    limit = max(GAP_FACTOR * statistics.median(steps), GAP_FLOOR.total_seconds())
    return [(a, b) for a, b in pairwise(times) if (b - a).total_seconds() > limit]


class _Skip(Exception):
    """A history line that is not a health report; the message says why."""


def _entry(raw: bytes) -> Entry:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Skip(f"not UTF-8 text (byte {exc.start + 1})") from None
    try:
        body = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Skip(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise _Skip("not JSON (nested too deeply)") from None
    if not isinstance(body, dict):
        raise _Skip("not a JSON object")
    for key in ("checked_at", "memories"):
        if key not in body:
            raise _Skip(f"no {key!r} field, not a health report")
    memories = _object(body["memories"], "memories")
    counts: dict[str, int | None] = dict.fromkeys(("active", "archived", "disputed", "superseded"))
    if memories is not None:
        counts = {key: _count(memories.get(key), f"memories.{key}") for key in counts}
    max_facts = None if memories is None else memories.get("max_facts")
    nightly = _object(body.get("last_nightly"), "last_nightly")
    duplicate_rate = _number(body.get("duplicate_rate"), "duplicate_rate")
    if duplicate_rate is not None and not 0 <= duplicate_rate <= 1:
        raise _Skip(f"'duplicate_rate' is not a fraction from 0 to 1: {duplicate_rate!r}")
    return Entry(
        checked_at=_moment(body["checked_at"], "checked_at"),
        **counts,
        max_facts=None if max_facts is None else _count(max_facts, "memories.max_facts"),
        average_activation=_number(body.get("average_activation"), "average_activation"),
        duplicate_rate=duplicate_rate,
        nightly_at=None if nightly is None else _moment(nightly.get("at"), "last_nightly.at"),
        nightly_seconds=None
        if nightly is None
        else _number(nightly.get("seconds"), "last_nightly.seconds"),
    )


def _object(value: object, name: str) -> Mapping[str, object] | None:
    if value is None or isinstance(value, dict):
        return value
    raise _Skip(f"{name!r} is not an object: {_shown(value)}")


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Skip(f"{name!r} is not a count: {_shown(value)}")
    return value


def _number(value: object, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _Skip(f"{name!r} is not a number: {_shown(value)}")
    return float(value)


def _moment(value: object, name: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None:
        raise _Skip(f"{name!r} is not an ISO date-time: {_shown(value)}")
    # health writes UTC with an offset; a time without one is taken as UTC too
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _shown(value: object) -> str:
    text = "missing" if value is None else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
