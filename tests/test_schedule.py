"""Scheduling: crontab lines and systemd units, the user's crontab, the daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoracle import workspace
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, WorkspaceError
from memoracle.jobs import schedule


def test_cron_lines_name_each_job_and_this_home(settings: Settings) -> None:
    lines = schedule.cron_lines(settings, executable="/opt/bin/memoracle")
    marker = f"# memoracle:{settings.home}"
    assert lines[0] == f"CRON_TZ=UTC  {marker}"
    assert lines[1].startswith(f"0 3 * * * /opt/bin/memoracle --home {settings.home} nightly >>")
    assert " health --probe >>" in lines[3] and lines[3].startswith("40 3 * * 1 ")
    assert all(line.endswith(marker) for line in lines)


def test_a_bad_cron_expression_is_named(settings: Settings) -> None:
    bad = replace(settings, schedule=replace(settings.schedule, nightly="61 3 * * *"))
    with pytest.raises(InvalidInput, match=r"schedule.nightly = '61 3 \* \* \*'"):
        schedule.cron_lines(bad)


def test_systemd_units_say_the_same_times(settings: Settings) -> None:
    units = schedule.systemd_units(settings)
    assert set(units) == {
        f"memoracle-{job}.{kind}" for job in ("nightly", "health", "probe")
        for kind in ("service", "timer")
    }  # fmt: skip
    assert "OnCalendar=*-*-* 03:00:00 UTC" in units["memoracle-nightly.timer"]
    assert "OnCalendar=Mon *-*-* 03:40:00 UTC" in units["memoracle-probe.timer"]
    assert "ExecStart=memoracle --home" in units["memoracle-health.service"]
    every = replace(settings, schedule=replace(settings.schedule, health="*/5 * * * *"))
    with pytest.raises(InvalidInput, match="schedule.health"):
        schedule.systemd_units(every)


def test_install_and_remove_touch_only_this_homes_lines(settings: Settings, crontab: Path) -> None:
    table = crontab
    table.write_text("MAILTO=me\n5 * * * * backup.sh\n")

    installed = schedule.install_crontab(settings)
    schedule.install_crontab(settings)  # twice is once
    lines = table.read_text().splitlines()
    assert lines[:2] == ["MAILTO=me", "5 * * * * backup.sh"] and lines[2:] == installed
    assert schedule.remove_crontab(settings) == 4
    assert table.read_text().splitlines() == ["MAILTO=me", "5 * * * * backup.sh"]
    assert schedule.remove_crontab(settings) == 0


def test_without_crontab_nothing_is_installed_and_the_message_says_what_to_do(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(WorkspaceError, match="no crontab program.*memoracle daemon"):
        schedule.install_crontab(settings)


def test_the_daemon_runs_each_job_when_due_and_a_missed_night_once(settings: Settings) -> None:
    start = datetime(2026, 3, 2, 2, 0, tzinfo=UTC)  # a Monday
    daemon = schedule.Daemon(settings, start)
    assert daemon.next["nightly"] == datetime(2026, 3, 2, 3, 0, tzinfo=UTC)
    assert daemon.wait(start) == timedelta(hours=1)
    assert daemon.due(start) == []
    later = start + timedelta(days=3, hours=2)  # asleep for three nights
    assert [j.name for j in daemon.due(later)] == ["nightly", "health", "probe"]
    assert daemon.next["nightly"] == datetime(2026, 3, 6, 3, 0, tzinfo=UTC)
    assert daemon.due(later) == []


def test_run_daemon_logs_each_run_goes_on_after_a_failure_and_stops(settings: Settings) -> None:
    settings.home.mkdir(parents=True, exist_ok=True)
    clock = [datetime(2026, 3, 2, 2, 58, tzinfo=UTC)]  # each call a minute later
    ran: list[str] = []
    stop = threading.Event()

    def now() -> datetime:
        clock[0] += timedelta(minutes=1)
        return clock[0]

    def run_job(job: schedule.Job) -> dict[str, object]:
        ran.append(job.name)
        if job.name == "nightly":
            raise RuntimeError("disk full")
        stop.set()
        return {"health": "healthy"}

    lock = settings.home / workspace.DAEMON_LOCK
    lock.write_text(str(os.getpid()))  # a live daemon holds this HOME
    with pytest.raises(WorkspaceError, match="Another memoracle daemon"):
        schedule.run_daemon(settings, run_job, now=now, stop=stop)
    lock.unlink()
    settings = replace(settings, schedule=replace(settings.schedule, health="0 3 * * *"))
    schedule.run_daemon(settings, run_job, now=now, stop=stop)
    assert ran == ["nightly", "health"] and not lock.exists()
    events = [
        json.loads(line) for line in (settings.home / schedule.DAEMON_LOG).read_text().splitlines()
    ]
    assert [e["event"] for e in events] == ["started", "run", "run", "stopped"]
    assert events[1]["status"] == "failed" and "disk full" in events[1]["error"]
    assert events[2] == {**events[2], "job": "health", "status": "ok", "health": "healthy"}


def test_the_daemon_command_stops_cleanly_on_sigterm_and_refuses_a_second(
    settings: Settings,
) -> None:
    Engine.init(settings)
    command = [sys.executable, "-m", "memoracle.cli", "--home", str(settings.home), "daemon"]
    first = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    log = settings.home / schedule.DAEMON_LOG
    deadline = time.monotonic() + 30
    while not (log.exists() and "started" in log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert second.returncode == 1 and "Another memoracle daemon" in second.stderr
    first.send_signal(signal.SIGTERM)
    _, err = first.communicate(timeout=30)
    assert first.returncode == 0, err
    assert "stopped" in err and json.loads(log.read_text().splitlines()[-1])["event"] == "stopped"
