"""The four charts `write_charts` draws from the history: average activation, memories
by status, the duplicate and disputed rates, and the nightly run's duration.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from memoracle.config import HealthSettings
from memoracle.files import write_atomically
from memoracle.jobs.charts.history import History, find_gaps
from memoracle.jobs.charts.svg import (
    _BLACK,
    _BLUE,
    _GREEN,
    _ORANGE,
    _VERMILION,
    _Chart,
    _Points,
    _Series,
    _svg,
)


def write_charts(
    history: History, folder: Path, *, health: HealthSettings | None = None
) -> list[Path]:
    """Draw `history` as activation.svg, memories.svg, rates.svg and nightly.svg in
    `folder` (made if missing), each replaced atomically; returns their paths. The
    warning bands and lines are `health`'s thresholds (default: the config's defaults).
    A file that cannot be written is a WorkspaceError naming it."""
    paths = []
    for name, drawn in draw(history, health=health).items():
        path = folder / f"{name}.svg"
        write_atomically(path, drawn)
        paths.append(path)
    return paths


def draw(history: History, *, health: HealthSettings | None = None) -> dict[str, str]:
    """The four charts as SVG text by name (activation, memories, rates, nightly), as
    `write_charts` writes them: for a page that serves them without files."""
    return {name: _svg(c) for name, c in _charts(history, health or HealthSettings()).items()}


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
