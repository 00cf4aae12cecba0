"""Cron health (docs/schedule.md#cron-health): a digest of every scheduled job — memoracle's
own (nightly, health, probe, each at its `schedule.*` expression) and, when OpenClaw's
cron store is readable, the host's own OpenClaw cron jobs — with its last run, duration,
exit, next run, and the jobs that are late or failing flagged.

Where each run is recorded: a nightly run in the runs table (`nightly`, with its
milliseconds, when it ended without a problem; each step as `nightly:STEP`, "failed" when it
ended with a problem), a health check or probe as a line of HOME/health-history.jsonl (a
probe's has `canary`), and any run of `memoracle daemon` in HOME/daemon.log (its seconds and
status). A job is late when its last run is older than its last scheduled time less
`LATE_GRACE`; one that never ran is said so, not flagged (nothing says it was ever
scheduled). `digest` only reads; `health.check` shows it (health.json's `cron`) and `write`
makes HOME/reports/CRON-HEALTH.md of it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from croniter import croniter

from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.files import write_atomically
from memoracle.ingest import openclaw_cron

CRON_HEALTH_FILE = Path("reports") / "CRON-HEALTH.md"  # under HOME
LATE_GRACE = timedelta(hours=2)  # a run this much after its time is not late yet
_HISTORY_TAIL = 1 << 20  # bytes of health-history.jsonl and daemon.log read from the end
Warn = Callable[[str, str], None]


@dataclass(frozen=True)
class CronJob:
    """One scheduled job in the digest."""

    name: str
    source: str  # "memoracle" | "openclaw"
    schedule: str
    last_run: datetime | None
    seconds: float | None
    exit: int | None  # 0 ok; memoracle's jobs: their exit status; OpenClaw's: 1 error
    next_run: datetime | None
    late: bool
    failing: bool
    note: str = ""

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "source": self.source,
            "schedule": self.schedule,
            "last_run": None if self.last_run is None else self.last_run.isoformat(),
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "exit": self.exit,
            "next_run": None if self.next_run is None else self.next_run.isoformat(),
            "late": self.late,
            "failing": self.failing,
            "note": self.note,
        }


def _tail_lines(path: Path) -> list[bytes]:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - _HISTORY_TAIL))
            return f.read().splitlines()
    except OSError:
        return []


def _json_lines(path: Path) -> list[dict[str, Any]]:
    found = []
    for line in _tail_lines(path):
        try:
            body = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a damaged or cut line: passed over
        if isinstance(body, dict):
            found.append(body)
    return found


def _time(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


@dataclass
class _Last:
    at: datetime | None = None
    seconds: float | None = None
    exit: int | None = None
    note: str = ""

    def take(self, at: datetime | None, seconds: float | None, exit: int | None, note: str) -> None:
        if at is not None and (self.at is None or at >= self.at):
            self.at, self.seconds, self.exit, self.note = at, seconds, exit, note


_STATUS_EXIT = {"healthy": 0, "warning": 1, "failing": 2}


def _last_runs(engine: Engine) -> dict[str, _Last]:
    """Each memoracle job's last run, from every place runs are recorded."""
    settings = engine.settings
    last = {name: _Last() for name in job_names(settings)}
    ok = engine.last_run("nightly", status="ok")
    if ok is not None and "nightly" in last:
        ms = ok.counts.get("milliseconds")
        last["nightly"].take(ok.finished_at, None if ms is None else ms / 1000, 0, "")
    began = engine.last_run("nightly:queue")
    if began is not None and "nightly" in last and (ok is None or began.started_at > ok.started_at):
        done = ok is not None and ok.finished_at is not None and ok.finished_at >= began.started_at
        # A step that ended "failed" says so; a run still going, killed, or caught in a
        # backup mid-night (a store restored from it) is not a failure, and a night
        # that never ends shows as nightly_missing.
        if not done and engine.run_failed_since("nightly:", began.started_at):
            note = "its last run ended with a problem (see `memoracle nightly` or health)"
            last["nightly"].take(began.started_at, None, 1, note)
    for body in _json_lines(settings.home / "health-history.jsonl"):
        name = "probe" if body.get("canary") is not None else "health"
        if name in last:
            last[name].take(
                _time(body.get("checked_at")),
                None,
                _STATUS_EXIT.get(str(body.get("status")), None),
                "",
            )
    for body in _json_lines(settings.home / "daemon.log"):
        name = str(body.get("job"))
        if body.get("event") == "run" and name in last:
            failed = body.get("status") != "ok"
            seconds = body.get("seconds")
            last[name].take(
                _time(body.get("at")),
                float(seconds) if isinstance(seconds, int | float) else None,
                2 if failed else last[name].exit or 0,
                str(body.get("error", ""))[:200] if failed else "",
            )
    return last


def job_names(settings: Settings) -> list[str]:
    """memoracle's scheduled jobs, as `schedule.*` names them (the same as schedule.JOBS)."""
    return [f.name for f in fields(settings.schedule)]


def _times(expression: str, zone: ZoneInfo, now: datetime) -> tuple[datetime, datetime] | None:
    if not croniter.is_valid(expression):
        return None
    local = now.astimezone(zone)
    before: datetime = croniter(expression, local).get_prev(datetime)
    after: datetime = croniter(expression, local).get_next(datetime)
    return before, after


def digest(engine: Engine, now: datetime, *, host: Path | None) -> list[CronJob]:
    """Every scheduled job with its last run, duration, exit, next run, late and failing.
    `host`: OpenClaw's state folder to read its cron jobs from (None: not read)."""
    settings = engine.settings
    zone = ZoneInfo(settings.workspace.timezone)
    jobs = []
    for name, last in _last_runs(engine).items():
        expression = str(getattr(settings.schedule, name))
        times = _times(expression, zone, now)
        late = times is not None and last.at is not None and last.at < times[0] - LATE_GRACE
        note = last.note or ("never ran" if last.at is None else "")
        jobs.append(
            CronJob(
                name,
                "memoracle",
                expression,
                last.at,
                last.seconds,
                last.exit,
                None if times is None else times[1],
                late,
                bool(last.exit == 2 or (name == "nightly" and last.exit)),
                note,
            )
        )
    return jobs + (host_jobs(host, now) if host is not None else [])


def host_jobs(folder: Path, now: datetime) -> list[CronJob]:
    """OpenClaw's own cron jobs (`ingest.openclaw_cron`): failing when its last run
    erred, late when enabled and its next run is `LATE_GRACE` past."""
    found = openclaw_cron.read_host_cron(folder)
    jobs = []
    if found.problem:
        jobs.append(
            CronJob(
                "openclaw cron store",
                "openclaw",
                "",
                None,
                None,
                None,
                None,
                False,
                False,
                found.problem,
            )
        )
    for j in found.jobs:
        failing = j.enabled and (j.last_status == "error" or j.errors > 0)
        late = j.enabled and j.next_run is not None and j.next_run < now - LATE_GRACE
        notes = [
            "disabled" if not j.enabled else "",
            f"{j.errors} error(s) in a row" if j.errors else "",
            j.last_error or "",
            "agentTurn without timeoutSeconds" if j.agent_turn_without_timeout else "",
        ]
        exit_ = None if j.last_status is None else int(j.last_status == "error")
        jobs.append(
            CronJob(
                j.name,
                "openclaw",
                j.schedule,
                j.last_run,
                j.seconds,
                exit_,
                j.next_run,
                late,
                failing,
                "; ".join(n for n in notes if n),
            )
        )
    return jobs


def check(engine: Engine, now: datetime, warn: Warn) -> list[dict[str, object]]:
    """health.json's `cron`: the digest as JSON, a warning for each late or failing job
    (`cron_job_late`, `cron_job_failing`). OpenClaw's store is read from its state folder
    when it is there."""
    folder = openclaw_cron.state_dir()
    jobs = digest(engine, now, host=folder if folder.is_dir() else None)
    for job in jobs:
        where = "" if job.source == "memoracle" else " (OpenClaw)"
        if job.failing:
            warn(
                "cron_job_failing",
                f"The scheduled job {job.name}{where} is failing"
                f" (exit {job.exit}{'; ' + job.note if job.note else ''}). Run it by hand"
                " to see why; `memoracle schedule status` shows how it is scheduled.",
            )
        elif job.late and (job.name, job.source) != ("nightly", "memoracle"):
            # a late nightly run has its own warning, nightly_missing (after 48 hours)
            warn(
                "cron_job_late",
                f"The scheduled job {job.name}{where} is late: its last run"
                f" was {_when(job.last_run)}, before its last time. Is its cron line or the"
                " daemon still installed (`memoracle schedule install`)?",
            )
    return [job.to_json() for job in jobs]


def _when(at: datetime | None) -> str:
    return "never" if at is None else f"{at:%Y-%m-%d %H:%M}"


def markdown(jobs: list[dict[str, object]], checked_at: datetime) -> str:
    """CRON-HEALTH.md's text: one line a job, the late and failing ones first."""
    flagged = [j for j in jobs if j["failing"] or j["late"]]
    lines = [
        "# Cron health",
        "",
        f"_Written by memoracle's health check of {checked_at:%Y-%m-%d %H:%M %Z}: every"
        f" scheduled job, {len(flagged)} late or failing._",
        "",
        "| job | source | schedule | last run | duration | exit | next run | flag | note |",
        "| --- | --- | --- | --- | ---: | ---: | --- | --- | --- |",
    ]
    for j in sorted(jobs, key=lambda j: (not j["failing"], not j["late"], str(j["name"]))):
        flag = "FAILING" if j["failing"] else "LATE" if j["late"] else "ok"
        seconds = "" if j["seconds"] is None else f"{j['seconds']} s"
        cells = [
            j["name"],
            j["source"],
            j["schedule"],
            _short(j["last_run"]),
            seconds,
            "" if j["exit"] is None else j["exit"],
            _short(j["next_run"]),
            flag,
            j["note"],
        ]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _short(value: object) -> str:
    return "never" if value is None else str(value)[:16].replace("T", " ")


def write(home: Path, jobs: object, checked_at: datetime) -> Path | None:
    """HOME/reports/CRON-HEALTH.md from health.json's `cron` (nothing when it is missing)."""
    if not isinstance(jobs, list):
        return None
    path = home / CRON_HEALTH_FILE
    write_atomically(path, markdown(jobs, checked_at))
    return path
