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

The parts: `history` (reading it, gaps), `ticks`, `svg` (one chart as data and
SVG), `charts` (the four charts).
"""

from memoracle.jobs.charts.charts import draw, write_charts
from memoracle.jobs.charts.history import (
    GAP_FACTOR,
    GAP_FLOOR,
    Entry,
    History,
    Problem,
    find_gaps,
    read_history,
)
from memoracle.jobs.charts.svg import HEIGHT, WIDTH
from memoracle.jobs.charts.ticks import date_ticks, nice_ticks, tick_label

__all__ = [
    "Entry",
    "GAP_FACTOR",
    "GAP_FLOOR",
    "HEIGHT",
    "History",
    "Problem",
    "WIDTH",
    "date_ticks",
    "draw",
    "find_gaps",
    "nice_ticks",
    "read_history",
    "tick_label",
    "write_charts",
]
