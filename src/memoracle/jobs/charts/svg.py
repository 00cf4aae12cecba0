"""One chart as data (`_Chart`: series, limits, gaps) and its SVG, written by hand (no
plotting library, so a core install draws offline): frame, axes, legend, series with
their gaps, markers and text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time
from xml.sax.saxutils import escape

from memoracle.jobs.charts.ticks import _DAY, date_ticks, nice_ticks, tick_label

MARKERS_UP_TO = 30  # a series with this many points or fewer has a marker at each


LIMIT_SHARE = 0.25  # a limit (max_facts, 600 s) joins the scale once the data reach this share


WIDTH, HEIGHT = 720, 300


_TOP, _BOTTOM, _RIGHT = 54, 48, 44  # margins around the plot; the left one fits the labels


_FONT = 12


# Okabe-Ito: told apart by readers with any common colour-vision deficiency.
_BLUE, _ORANGE, _GREEN, _VERMILION, _BLACK = "#0072B2", "#E69F00", "#009E73", "#D55E00", "#000"


_WARN_TEXT = "#8F3F00"  # vermilion darkened for text on white


_GREY = "#555"


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
