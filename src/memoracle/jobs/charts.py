"""Trend charts of the health history: health-history.jsonl read back and drawn as SVG.

Owns reading the history (`read_history`: tolerant, a line that is not a health report
is skipped and named with its line number in `History.problems`, a missing file is an
empty history), the rule for gaps (`find_gaps`: checks much further apart than usual are
not joined by a line, so missed days show as missed), the axes' ticks (`nice_ticks`,
`date_ticks`) and the four charts `write_charts` draws: average activation, memories by
status, the duplicate and disputed rates, and the nightly run's duration. The SVG is
written by hand, with no plotting library, so that a core install draws it offline.

What the numbers mean and their warning thresholds are `health`'s and the config's;
when to draw and where (`memoracle health --output-dir`) is the caller's.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from pathlib import Path
from xml.sax.saxutils import escape

from memoracle.config import HealthSettings
from memoracle.files import write_atomically

__all__ = [
    "GAP_FACTOR",
    "GAP_FLOOR",
    "Entry",
    "History",
    "Problem",
    "date_ticks",
    "find_gaps",
    "nice_ticks",
    "read_history",
    "tick_label",
    "write_charts",
]

# Two neighbouring points are not joined when they are more than GAP_FACTOR times the
# median interval apart (a nightly schedule that missed one night is 2x) and more than
# GAP_FLOOR apart (so that extra manual checks, which shrink the median, do not make an
# ordinary day between two nightly checks look like a gap).
GAP_FACTOR = 1.5
GAP_FLOOR = timedelta(hours=36)
MARKERS_UP_TO = 30  # a series with this many points or fewer has a marker at each
LIMIT_SHARE = 0.25  # a limit (max_facts, 600 s) joins the scale once the data reach this share

WIDTH, HEIGHT = 720, 300
_TOP, _BOTTOM, _RIGHT = 54, 48, 44  # margins around the plot; the left one fits the labels
_FONT = 12
_DAY = timedelta(days=1)

# Okabe-Ito: told apart by readers with any common colour-vision deficiency.
_BLUE, _ORANGE, _GREEN, _VERMILION, _BLACK = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#000"
_WARN_TEXT = "#8F3F00"  # vermilion darkened for text on white
_GREY = "#555"


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


def write_charts(
    history: History, folder: Path, *, health: HealthSettings | None = None
) -> list[Path]:
    """Draw `history` as activation.svg, memories.svg, rates.svg and nightly.svg in
    `folder` (made if missing), each replaced atomically; returns their paths. The
    warning bands and lines are `health`'s thresholds (default: the config's defaults).
    A file that cannot be written is a WorkspaceError naming it."""
    paths = []
    for name, chart in _charts(history, health or HealthSettings()).items():
        path = folder / f"{name}.svg"
        write_atomically(path, _svg(chart))
        paths.append(path)
    return paths


# -- ticks -----------------------------------------------------------------------------


def nice_ticks(lo: float, hi: float, *, count: int = 5, integer: bool = False) -> list[float]:
    """Ticks covering [lo, hi] in about `count` steps of 1, 2 or 5 times a power of ten
    (0, 0.2, 0.4 ...; 0, 500, 1000 ...); whole steps only when `integer`."""
    if hi <= lo:
        hi = lo + 1
    rough = (hi - lo) / count
    power = 10.0 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough * (1 - 1e-9))
    if integer:
        step = max(step, 1.0)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_label(value: float, step: float) -> str:
    """`value` with as many decimals as `step` needs, thousands separated: "0.2", "1,500"."""
    decimals = max(0, math.ceil(-math.log10(step) - 1e-9))
    return f"{round(value, decimals) + 0.0:,.{decimals}f}"  # + 0.0: no "-0"


_DAY_STEPS = (1, 2, 7, 14)
_MONTH_STEPS = (1, 2, 3, 6, 12, 24, 60, 120)


def date_ticks(lo: datetime, hi: datetime, most: int) -> list[datetime]:
    """UTC midnights in [lo, hi], at most `most` of them, on a calendar step: every day,
    every other day, Mondays, every other Monday, the first of every 1, 2, 3, 6 ... months."""
    first = lo.date() if lo.time() == time() else lo.date() + _DAY
    days = [first + timedelta(days=i) for i in range((hi.date() - first).days + 1)]
    choices = [[d for d in days if _on_day_step(d, step)] for step in _DAY_STEPS]
    choices += [
        [d for d in days if d.day == 1 and (d.year * 12 + d.month - 1) % step == 0]
        for step in _MONTH_STEPS
    ]
    chosen = next((c for c in choices if len(c) <= most), choices[-1])
    return [datetime.combine(d, time(), UTC) for d in chosen]


def _on_day_step(day: date, step: int) -> bool:
    if step < 7:
        return day.toordinal() % step == 0
    return day.weekday() == 0 and (day.toordinal() // 7) % (step // 7) == 0


# -- reading ---------------------------------------------------------------------------


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


# -- the charts ------------------------------------------------------------------------

_Points = tuple[tuple[datetime, float | None], ...]


@dataclass(frozen=True)
class _Series:
    label: str
    colour: str
    marker: str  # "circle" or a key of _SHAPES
    points: _Points
    limit: bool = False  # dashed; on the scale only once the data reach LIMIT_SHARE of it


@dataclass(frozen=True)
class _Chart:
    title: str
    y_label: str
    noun: str  # what a point is: "check", "run"
    series: tuple[_Series, ...]
    gaps: list[tuple[datetime, datetime]]
    empty: str  # the hint under "No data yet"
    skipped: int = 0  # history lines that could not be read
    y_range: tuple[float, float] | None = None  # fixed; else from 0 to the data
    integer: bool = False  # counts: whole ticks
    bands: tuple[tuple[float, float, str], ...] = ()  # warning bands, shaded
    rules: tuple[tuple[float, str], ...] = ()  # warning lines, dashed


def _charts(history: History, health: HealthSettings) -> dict[str, _Chart]:
    entries, gaps, skipped = history.entries, history.gaps, len(history.problems)
    none_yet = (
        "No health check could be read: see the skipped lines."
        if skipped
        else "No health check recorded yet: `memoracle health` records one."
    )

    def points(value: Iterable[float | None]) -> _Points:
        return tuple(zip((e.checked_at for e in entries), value, strict=True))

    def percent(values: Iterable[float | None]) -> _Points:
        return points(None if v is None else 100 * v for v in values)

    low, high = health.activation_low, health.activation_high
    counts = [
        ("active", _BLUE, "circle", [e.active for e in entries]),
        ("archived", _ORANGE, "square", [e.archived for e in entries]),
        ("disputed", _VERMILION, "triangle", [e.disputed for e in entries]),
        ("superseded", _GREEN, "diamond", [e.superseded for e in entries]),
        ("max_facts", _BLACK, "circle", [e.max_facts for e in entries]),
    ]
    runs: dict[datetime, float | None] = {}
    for e in entries:  # one point per run, however many checks saw it
        if e.nightly_at is not None:
            runs[e.nightly_at] = e.nightly_seconds
    run_points = tuple(sorted(runs.items()))
    limit = health.nightly_warn_seconds
    return {
        "activation": _Chart(
            title="Average activation",
            y_label="average activation",
            noun="check",
            series=(
                _Series(
                    "average activation",
                    _BLUE,
                    "circle",
                    points(e.average_activation for e in entries),
                ),
            ),
            gaps=gaps,
            empty="No active memories to average yet." if entries else none_yet,
            skipped=skipped,
            y_range=(0.0, 1.0),
            bands=(
                (0.0, low, f"under {low:g}: memories fading"),
                (high, 1.0, f"over {high:g}: memories barely fade"),
            ),
        ),
        "memories": _Chart(
            title="Memories by status",
            y_label="memories",
            noun="check",
            series=tuple(
                _Series(label, colour, marker, points(values), limit=label == "max_facts")
                for label, colour, marker, values in counts
            ),
            gaps=gaps,
            empty="No check could count the memories." if entries else none_yet,
            skipped=skipped,
            integer=True,
        ),
        "rates": _Chart(
            title="Duplicate and disputed rates",
            y_label="% of active memories",
            noun="check",
            series=(
                _Series(
                    "duplicate rate", _BLUE, "circle", percent(e.duplicate_rate for e in entries)
                ),
                _Series(
                    "disputed rate",
                    _VERMILION,
                    "triangle",
                    percent(e.disputed_rate for e in entries),
                ),
            ),
            gaps=gaps,
            empty="No rate recorded yet: no active memories." if entries else none_yet,
            skipped=skipped,
        ),
        "nightly": _Chart(
            title="Nightly run duration",
            y_label="seconds",
            noun="run",
            series=(_Series("nightly run", _BLUE, "circle", run_points),),
            gaps=find_gaps([at for at, _ in run_points]),
            empty="No nightly run recorded yet: `memoracle nightly` runs one."
            if entries
            else none_yet,
            skipped=skipped,
            rules=((limit, f"warning at {limit:g} s"),),
        ),
    }


# -- drawing ---------------------------------------------------------------------------

# Marker outlines around (0, 0) besides the circle: one shape a series, so that the
# series are told apart without their colours too.
_SHAPES = {
    "square": ((-3.2, -3.2), (3.2, -3.2), (3.2, 3.2), (-3.2, 3.2)),
    "triangle": ((0.0, -4.4), (4.0, 2.8), (-4.0, 2.8)),
    "diamond": ((0.0, -4.6), (4.6, 0.0), (0.0, 4.6), (-4.6, 0.0)),
}
_DASHED = 'stroke-dasharray="6 4" stroke-width="1.5"'
_HALO = 'paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"'


@dataclass(frozen=True)
class _Frame:
    """The plot's box in pixels and the data range it shows."""

    left: float
    right: float
    top: float
    bottom: float
    x0: datetime
    x1: datetime
    y0: float
    y1: float

    def x(self, t: datetime) -> float:
        return self.left + (t - self.x0) / (self.x1 - self.x0) * (self.right - self.left)

    def y(self, v: float) -> float:
        return self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.bottom - self.top)


def _svg(chart: _Chart) -> str:
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Verdana, sans-serif" '
        f'font-size="{_FONT}">',
        f"<title>{escape(chart.title)}</title>",
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
        _text(12, 24, chart.title, size=16, extra='font-weight="bold"'),
        _text(WIDTH - 12, 24, _subtitle(chart), size=11, fill=_GREY, anchor="end"),
    ]
    if any(v is not None for s in chart.series if not s.limit for _, v in s.points):
        parts += _plot(chart)
    else:
        left, right = 60.0, WIDTH - _RIGHT
        middle, centre = (_TOP + HEIGHT - _BOTTOM) / 2, (left + right) / 2
        parts += [
            f'<rect x="{left}" y="{_TOP}" width="{right - left}" height="{HEIGHT - _BOTTOM - _TOP}"'
            ' fill="#f7f7f7" stroke="#ccc"/>',
            _text(centre, middle - 4, "No data yet", size=18, fill=_GREY, anchor="middle"),
            _text(centre, middle + 20, chart.empty, fill=_GREY, anchor="middle"),
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _plot(chart: _Chart) -> list[str]:
    """The axes, bands, lines and legend of a chart with data."""
    ticks, off_scale = _scale(chart)
    step = ticks[1] - ticks[0]
    y_labels = [tick_label(t, step) for t in ticks]
    times = sorted({t for s in chart.series for t, _ in s.points})
    first, last = times[0], times[-1]
    pad = (last - first) * 0.02  # keeps the first and last markers off the frame
    x0, x1 = _midnight(first - pad), _midnight(last + pad) + _DAY
    if x1 - x0 < 3 * _DAY:  # a day or two of checks: show the days around them too
        x0, x1 = x0 - _DAY, x1 + _DAY
    left = 34 + max(_width(label) for label in y_labels)
    f = _Frame(left, WIDTH - _RIGHT, _TOP, HEIGHT - _BOTTOM, x0, x1, ticks[0], ticks[-1])
    parts: list[str] = []
    labels: list[str] = []  # the warnings' words, drawn last: over the lines, not under
    for lo, hi, label in chart.bands:
        y_lo, y_hi = f.y(lo), f.y(hi)
        parts.append(_rect(f.left, y_hi, f.right - f.left, y_lo - y_hi, _VERMILION, 0.1))
        labels.append(_label(f.right - 6, (y_lo + y_hi) / 2 + 4, label))
    for value, label in zip(ticks, y_labels, strict=True):
        y = f.y(value)
        parts.append(_line(f.left, y, f.right, y, "#ddd"))
        parts.append(_text(f.left - 8, y + 4, label, anchor="end"))
    parts += _x_axis(f)
    for a, b in chart.gaps:  # over the grid: a broken line reads as "no checks"
        xa, xb = f.x(a), f.x(b)
        parts.append(_rect(xa, f.top, xb - xa, f.bottom - f.top, "#efefef", 1))
        note = f"no {chart.noun}s"
        if xb - xa > _width(note, 11) + 6:
            parts.append(
                _text((xa + xb) / 2, f.top + 14, note, size=11, fill=_GREY, anchor="middle")
            )
    middle = (f.top + f.bottom) / 2
    parts += [
        _line(f.left, f.top, f.left, f.bottom, "#333"),
        _line(f.left, f.bottom, f.right, f.bottom, "#333"),
        _text((f.left + f.right) / 2, HEIGHT - 8, "date (UTC)", fill=_GREY, anchor="middle"),
        _text(
            16,
            middle,
            chart.y_label,
            fill=_GREY,
            anchor="middle",
            extra=f'transform="rotate(-90 16 {middle:.1f})"',
        ),
    ]
    for value, label in chart.rules:
        if label not in off_scale:
            y = f.y(value)
            parts.append(_line(f.left, y, f.right, y, _VERMILION, _DASHED))
            labels.append(_label(f.right - 6, y - 5 if y - f.top > 16 else y + 15, label))
    for s in chart.series:
        if s.label not in off_scale:
            parts += _draw_series(s, chart.gaps, f)
    return parts + labels + _legend(chart, off_scale)


def _subtitle(chart: _Chart) -> str:
    """How many points over which days, and how many lines were skipped."""
    times = sorted({t for s in chart.series for t, _ in s.points})
    words = []
    if times:
        n, first, last = len(times), times[0], times[-1]
        days = f"{first:%Y-%m-%d}" + (f" to {last:%Y-%m-%d}" if last.date() != first.date() else "")
        words.append(f"{n:,} {chart.noun}{'s' if n != 1 else ''}, {days}")
    if chart.skipped:
        words.append(f"{chart.skipped} unreadable line{'s' if chart.skipped != 1 else ''} skipped")
    return "; ".join(words)


def _x_axis(f: _Frame) -> list[str]:
    """Date ticks; when each day has room for its name, the name sits in the day's
    middle, between ticks at midnight, so a point is read as on that day."""
    days = (f.x1 - f.x0) // _DAY
    room = _width("2000-01-01") + 18
    if (f.right - f.left) / days >= room:
        ticks = [f.x0 + i * _DAY for i in range(days + 1)]
        labels = [(t + _DAY / 2, t) for t in ticks[:-1]]
    else:
        ticks = date_ticks(f.x0, f.x1, int((f.right - f.left) / room) + 1)
        labels = [(t, t) for t in ticks]
    parts = []
    for tick in ticks:
        x = f.x(tick)
        parts.append(_line(x, f.top, x, f.bottom, "#eee"))
        parts.append(_line(x, f.bottom, x, f.bottom + 5, "#333"))
    for at, day in labels:
        parts.append(_text(f.x(at), f.bottom + 19, f"{day:%Y-%m-%d}", anchor="middle"))
    return parts


def _scale(chart: _Chart) -> tuple[list[float], set[str]]:
    """The y ticks, and the limits left off them: a limit (max_facts, a warning line)
    far above the data would flatten them, so it is named above the plot instead."""
    top = max(v for s in chart.series if not s.limit for _, v in s.points if v is not None)
    limits = {s.label: _peak(s) for s in chart.series if s.limit}
    limits.update((label, value) for value, label in chart.rules)
    off = {label for label, v in limits.items() if v is None or top < LIMIT_SHARE * v}
    top = max([top] + [v for label, v in limits.items() if v is not None and label not in off])
    if chart.y_range:
        return nice_ticks(*chart.y_range), off
    if chart.integer:
        top = max(top, 5.0)  # a few memories: 0 to 5 reads better than 0 and 1 alone
    return nice_ticks(0.0, top, integer=chart.integer), off


def _legend(chart: _Chart, off_scale: set[str]) -> list[str]:
    """The series' names under the title (when there are several), and the limits that
    are off the scale."""
    parts = []
    x = 12.0
    for s in chart.series if len(chart.series) > 1 else ():
        peak = _peak(s)
        label = s.label
        if peak is None:
            label += " (no data)"
        elif s.label in off_scale:
            label += f" {tick_label(peak, 1)}, off the scale"
        parts += _legend_sample(s, x, 38)
        parts.append(_text(x + 26, 42, label))
        x += 26 + _width(label) + 16
    notes = [f"{label}: off the scale ↑" for _, label in chart.rules if label in off_scale]
    if notes:
        parts.append(_label(WIDTH - _RIGHT, 42, "; ".join(notes)))
    return parts


def _draw_series(s: _Series, gaps: Sequence[tuple[datetime, datetime]], f: _Frame) -> list[str]:
    segments = _segments(s.points, gaps)
    all_markers = sum(len(seg) for seg in segments) <= MARKERS_UP_TO
    style = _DASHED if s.limit else 'stroke-width="2"'
    parts = []
    for seg in segments:
        xy = [(f.x(t), f.y(v)) for t, v in seg]
        if len(xy) > 1:
            points = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
            parts.append(
                f'<polyline points="{points}" fill="none" stroke="{s.colour}" {style} '
                'stroke-linejoin="round" stroke-linecap="round"/>'
            )
        if (all_markers and not s.limit) or len(xy) == 1:
            parts += [_marker(s.marker, x, y, s.colour) for x, y in xy]
    return parts


def _segments(
    points: _Points, gaps: Sequence[tuple[datetime, datetime]]
) -> list[list[tuple[datetime, float]]]:
    """The runs of `points` to join with a line: broken where a value is missing and
    across each gap."""
    segments: list[list[tuple[datetime, float]]] = []
    current: list[tuple[datetime, float]] = []
    for t, v in points:
        if current and (v is None or any(current[-1][0] <= a and b <= t for a, b in gaps)):
            segments.append(current)
            current = []
        if v is not None:
            current.append((t, v))
    if current:
        segments.append(current)
    return segments


def _legend_sample(s: _Series, x: float, y: float) -> list[str]:
    style = _DASHED if s.limit else 'stroke-width="2"'
    sample = [_line(x, y, x + 22, y, s.colour, style)]
    return sample if s.limit else [*sample, _marker(s.marker, x + 11, y, s.colour)]


def _peak(s: _Series) -> float | None:
    return max((v for _, v in s.points if v is not None), default=None)


def _label(x: float, y: float, text: str) -> str:
    """A warning's words, right-aligned at (x, y), with a white halo over the lines."""
    return _text(x, y, text, size=11, fill=_WARN_TEXT, anchor="end", extra=_HALO)


def _midnight(t: datetime) -> datetime:
    return datetime.combine(t.date(), time(), UTC)


def _width(text: str, size: float = _FONT) -> float:
    """About how wide `text` is in DejaVu Sans: an estimate on the wide side, for layout."""
    return len(text) * size * 0.62


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: float = _FONT,
    fill: str = "#222",
    anchor: str = "start",
    extra: str = "",
) -> str:
    attributes = f'x="{x:.1f}" y="{y:.1f}" fill="{fill}" text-anchor="{anchor}"'
    if size != _FONT:
        attributes += f' font-size="{size:g}"'
    if extra:
        attributes += f" {extra}"
    return f"<text {attributes}>{escape(text)}</text>"


def _line(x1: float, y1: float, x2: float, y2: float, colour: str, extra: str = "") -> str:
    attributes = f'x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}"'
    if extra:
        attributes += f" {extra}"
    return f"<line {attributes}/>"


def _rect(x: float, y: float, width: float, height: float, colour: str, opacity: float) -> str:
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" '
        f'fill="{colour}" fill-opacity="{opacity:g}"/>'
    )


def _marker(shape: str, x: float, y: float, colour: str) -> str:
    paint = f'fill="{colour}" stroke="#fff" stroke-width="1"'
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.8" {paint}/>'
    corners = " ".join(f"{x + dx:.1f},{y + dy:.1f}" for dx, dy in _SHAPES[shape])
    return f'<polygon points="{corners}" {paint}/>'
