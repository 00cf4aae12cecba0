"""The axes' ticks: round numbers for values (`nice_ticks`), days, weeks or months for
dates (`date_ticks`), and their labels.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, time, timedelta

_DAY = timedelta(days=1)


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
