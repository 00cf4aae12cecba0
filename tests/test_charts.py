"""Trend charts: the history read back (bad lines named and skipped), the gap rule, the
ticks, and the SVG files, parsed as XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoracle.engine import Engine
from memoracle.errors import WorkspaceError
from memoracle.jobs import charts, health

SVG = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)
TITLES = {
    "activation.svg": "Average activation",
    "memories.svg": "Memories by status",
    "rates.svg": "Duplicate and disputed rates",
    "nightly.svg": "Nightly run duration",
}


def _report(
    at: datetime,
    active: int = 10,
    *,
    disputed: int = 0,
    activation: float | None = 0.5,
    seconds: float = 2.0,
    run_at: datetime | None = None,
    **extra: object,
) -> str:
    """One history line, shaped as health.write writes it."""
    body = {
        "status": "healthy",
        "checked_at": at.isoformat(),
        "memories": {
            "total": active + disputed,
            "active": active,
            "superseded": 0,
            "disputed": disputed,
            "archived": 0,
            "forgotten": 0,
            "max_facts": 10000,
            "percent_of_max": 0.1,
        },
        "average_activation": activation,
        "last_nightly": {"at": (run_at or at).isoformat(), "seconds": seconds, "status": "ok"},
        "warnings": [],
        **extra,
    }
    return json.dumps(body)


def _history(tmp_path: Path, lines: list[str]) -> charts.History:
    path = tmp_path / "health-history.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return charts.read_history(path)


def _days(n: int, skip: range = range(0)) -> list[datetime]:
    return [T0 + timedelta(days=d) for d in range(n) if d not in skip]


def _svg(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    assert root.get("viewBox") == f"0 0 {charts.WIDTH} {charts.HEIGHT}"
    return root


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


# -- reading ---------------------------------------------------------------------------


def test_a_missing_file_is_an_empty_history(tmp_path: Path) -> None:
    history = charts.read_history(tmp_path / "nothing.jsonl")
    assert history == charts.History()


def test_bad_lines_are_skipped_and_named_with_their_line_number(tmp_path: Path) -> None:
    path = tmp_path / "health-history.jsonl"
    lines = [
        _report(T0 + timedelta(days=1)).encode(),
        b"not json",
        b"[1, 2]",
        b'{"status": "healthy", "memories": null}',
        _report(T0).replace('"active": 10', '"active": "ten"').encode(),
        b'{"checked_at": "yesterday", "memories": null}',
        _report(T0).replace('"average_activation": 0.5', '"average_activation": NaN').encode(),
        b"",
        b"\xff\xfe",
        _report(T0).encode(),
        _report(T0)[:40].encode(),  # a crash mid-append leaves half a line
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    history = charts.read_history(path)
    assert [e.checked_at for e in history.entries] == [T0, T0 + timedelta(days=1)]  # sorted
    assert [p.line for p in history.problems] == [2, 3, 4, 5, 6, 7, 9, 11]
    reasons = [p.reason for p in history.problems]
    assert reasons[0].startswith("not JSON")
    assert reasons[1] == "not a JSON object"
    assert "'checked_at'" in reasons[2]
    assert "'memories.active' is not a count: 'ten'" in reasons[3]
    assert "not an ISO date-time: 'yesterday'" in reasons[4]
    assert "'average_activation' is not a number" in reasons[5]
    assert reasons[6].startswith("not UTF-8")
    assert str(history.problems[0]) == f"{path}, line 2: {reasons[0]}; skipped."


def test_a_failed_measurement_is_none_not_a_problem(tmp_path: Path) -> None:
    line = json.loads(_report(T0, activation=None))
    line["memories"] = None
    line["last_nightly"] = None
    history = _history(tmp_path, [json.dumps(line)])
    (entry,) = history.entries
    assert history.problems == ()
    assert entry.active is None and entry.average_activation is None
    assert entry.nightly_at is None and entry.disputed_rate is None


def test_an_unreadable_file_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    history = charts.read_history(tmp_path)  # a folder
    assert history.entries == ()
    (problem,) = history.problems
    assert problem.line is None and "cannot read it" in str(problem)


def test_a_real_health_report_reads_back(engine: Engine) -> None:
    engine.remember("The NAS sits in the hall closet.", kind="fact")
    health.write(engine, health.check(engine))
    history = charts.read_history(engine.settings.home / health.HISTORY_FILE)
    assert history.problems == ()
    (entry,) = history.entries
    assert entry.active == 1 and entry.max_facts == engine.settings.lifecycle.max_facts


# -- gaps ------------------------------------------------------------------------------


def test_a_ten_day_gap_in_daily_checks_is_kept() -> None:
    times = _days(90, skip=range(40, 50))
    assert charts.find_gaps(times) == [(T0 + timedelta(days=39), T0 + timedelta(days=50))]


def test_one_missed_night_is_a_gap() -> None:
    times = _days(10, skip=range(5, 6))
    assert charts.find_gaps(times) == [(T0 + timedelta(days=4), T0 + timedelta(days=6))]


def test_extra_checks_in_a_day_do_not_make_the_nights_gaps() -> None:
    # nightly at 03:00 and a manual check at 15:00: the median interval is 12 hours,
    # but a day between checks is no gap (GAP_FLOOR)
    times = sorted(_days(10) + [t + timedelta(hours=12) for t in _days(10, skip=range(3, 4))])
    assert charts.find_gaps(times) == []


@pytest.mark.parametrize("n", [0, 1, 2])
def test_too_few_points_have_no_gaps(n: int) -> None:
    assert charts.find_gaps([T0 + timedelta(days=30 * d) for d in range(n)]) == []


# -- ticks -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lo", "hi", "integer", "ticks"),
    [
        (0.0, 1.0, False, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
        (0.0, 2870.0, True, [0.0, 1000.0, 2000.0, 3000.0]),
        (0.0, 37.5, False, [0.0, 10.0, 20.0, 30.0, 40.0]),
        (0.0, 2.4, False, [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]),
        (0.0, 3.0, True, [0.0, 1.0, 2.0, 3.0]),
        (0.0, 0.0, False, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    ],
)
def test_nice_ticks(lo: float, hi: float, integer: bool, ticks: list[float]) -> None:
    assert charts.nice_ticks(lo, hi, integer=integer) == ticks


@pytest.mark.parametrize(
    ("value", "step", "label"),
    [(0.2, 0.2, "0.2"), (1.0, 0.2, "1.0"), (1500.0, 500.0, "1,500"), (-0.0, 1.0, "0")],
)
def test_tick_labels(value: float, step: float, label: str) -> None:
    assert charts.tick_label(value, step) == label


def test_date_ticks_thin_to_a_calendar_step() -> None:
    ninety = charts.date_ticks(T0, T0 + timedelta(days=90), most=7)
    assert 4 <= len(ninety) <= 7
    assert all(t.weekday() == 0 and t.hour == 0 for t in ninety)  # every other Monday
    assert {b - a for a, b in zip(ninety, ninety[1:], strict=False)} == {timedelta(days=14)}
    years = charts.date_ticks(T0, T0 + timedelta(days=730), most=7)
    assert [f"{t:%Y-%m-%d}" for t in years][:2] == ["2026-07-01", "2027-01-01"]


# -- charts ----------------------------------------------------------------------------


def test_an_empty_history_draws_no_data_charts(tmp_path: Path) -> None:
    paths = charts.write_charts(charts.History(), tmp_path / "charts")
    assert [p.name for p in paths] == list(TITLES)
    for path in paths:
        root = _svg(path)
        assert root.findtext(f"{SVG}title") == TITLES[path.name]
        texts = _texts(root)
        assert TITLES[path.name] in texts and "No data yet" in texts


def test_ninety_days_with_a_gap(tmp_path: Path) -> None:
    days = _days(90, skip=range(40, 50))
    history = _history(tmp_path, [_report(t, 100 + i, disputed=i % 5) for i, t in enumerate(days)])
    paths = charts.write_charts(history, tmp_path / "charts")
    for path in paths:
        root = _svg(path)
        assert root.findtext(f"{SVG}title") == TITLES[path.name]
        assert "No data yet" not in _texts(root)
    activation = _svg(tmp_path / "charts" / "activation.svg")
    assert len(list(activation.iter(f"{SVG}polyline"))) == 2  # broken at the gap
    assert "no checks" in _texts(activation)
    assert "2026-01-19" in _texts(activation)  # a Monday, every other one
    rates = _texts(_svg(tmp_path / "charts" / "rates.svg"))
    assert "duplicate rate (no data)" in rates and "disputed rate" in rates


def test_a_single_point_shows_as_a_marker(tmp_path: Path) -> None:
    charts.write_charts(_history(tmp_path, [_report(T0)]), tmp_path)
    for name in ("activation.svg", "nightly.svg"):
        root = _svg(tmp_path / name)
        assert len(list(root.iter(f"{SVG}circle"))) == 1
        assert list(root.iter(f"{SVG}polyline")) == []
        assert "1 check, 2026-01-01" in _texts(root) or "1 run, 2026-01-01" in _texts(root)


def test_two_points_are_joined_with_markers(tmp_path: Path) -> None:
    charts.write_charts(_history(tmp_path, [_report(t) for t in _days(2)]), tmp_path)
    root = _svg(tmp_path / "activation.svg")
    assert len(list(root.iter(f"{SVG}polyline"))) == 1
    assert len(list(root.iter(f"{SVG}circle"))) == 2


def test_the_nightly_warning_line_and_one_point_per_run(tmp_path: Path) -> None:
    run = T0 - timedelta(hours=1)
    lines = [_report(T0 + timedelta(hours=h), seconds=500.0, run_at=run) for h in (0, 6)]
    charts.write_charts(_history(tmp_path, lines), tmp_path)
    texts = _texts(_svg(tmp_path / "nightly.svg"))
    assert "warning at 600 s" in texts
    assert any(t.startswith("1 run,") for t in texts)  # two checks saw the same run


def test_a_warning_far_above_the_data_is_named_not_drawn(tmp_path: Path) -> None:
    charts.write_charts(_history(tmp_path, [_report(t, seconds=2.4) for t in _days(3)]), tmp_path)
    nightly = _texts(_svg(tmp_path / "nightly.svg"))
    assert "warning at 600 s: off the scale ↑" in nightly
    memories = _texts(_svg(tmp_path / "memories.svg"))
    assert "max_facts 10,000, off the scale" in memories


def test_the_duplicate_rate_is_drawn_when_reported(tmp_path: Path) -> None:
    lines = [_report(t, disputed=1, duplicate_rate=0.03) for t in _days(3)]
    charts.write_charts(_history(tmp_path, lines), tmp_path)
    texts = _texts(_svg(tmp_path / "rates.svg"))
    assert "duplicate rate" in texts and "duplicate rate (no data)" not in texts


def test_skipped_lines_are_counted_on_the_chart(tmp_path: Path) -> None:
    charts.write_charts(_history(tmp_path, ["{", _report(T0)]), tmp_path)
    assert "1 check, 2026-01-01; 1 unreadable line skipped" in _texts(
        _svg(tmp_path / "memories.svg")
    )


def test_writes_leave_no_temp_files_and_replace_old_charts(tmp_path: Path) -> None:
    folder = tmp_path / "charts"
    charts.write_charts(charts.History(), folder)
    charts.write_charts(_history(tmp_path, [_report(T0)]), folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted(TITLES)
    assert "No data yet" not in _texts(_svg(folder / "activation.svg"))


def test_an_unwritable_folder_is_a_workspace_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(WorkspaceError, match="activation.svg: cannot write it"):
        charts.write_charts(charts.History(), blocker)
