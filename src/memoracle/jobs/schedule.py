"""When memoracle's jobs run: the crontab lines or systemd units that run them, and the
daemon that runs them itself, in one process, for containers.

Owns the jobs (`JOBS`: the nightly run, the health check, the weekly canary probe, each
at its `schedule.*` cron expression in `workspace.timezone`), their rendering as cron
lines (marked with the HOME they belong to, so installing twice or removing touches only
memoracle's own lines) and as systemd service and timer units, the user's crontab
(read and written through the `crontab` program), and `Daemon`: the next run of each
job, and running those due. What a job does is the caller's (`run_job`); the process
around the daemon — signals, its lock, its log — is `run_daemon`'s.
"""

from __future__ import annotations

import json
import logging
import shlex
import shutil
import subprocess
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from croniter import croniter

from memoracle.config import Settings
from memoracle.errors import InvalidInput, WorkspaceError
from memoracle.files import pid_lock
from memoracle.workspace import DAEMON_LOCK

__all__ = [
    "JOBS",
    "Daemon",
    "Job",
    "cron_lines",
    "install_crontab",
    "remove_crontab",
    "run_daemon",
    "systemd_units",
]

log = logging.getLogger(__name__)

DAEMON_LOG = "daemon.log"  # one JSON line per run, under HOME


@dataclass(frozen=True)
class Job:
    name: str  # nightly | health | probe
    args: tuple[str, ...]  # the memoracle command line that runs it

    def cron(self, settings: Settings) -> str:
        expression = str(getattr(settings.schedule, self.name))
        if not croniter.is_valid(expression):
            raise InvalidInput(
                f"schedule.{self.name} = {expression!r} is not a cron expression"
                " (five fields: minute hour day month weekday, e.g. '0 3 * * *')."
            )
        return expression


JOBS: tuple[Job, ...] = (
    Job("nightly", ("nightly",)),
    Job("health", ("health",)),
    Job("probe", ("health", "--probe")),
)


def _command(settings: Settings, job: Job, executable: str) -> str:
    return shlex.join([executable, "--home", str(settings.home), *job.args])


def _marker(settings: Settings) -> str:
    return f"# memoracle:{settings.home}"


def cron_lines(settings: Settings, *, executable: str = "memoracle") -> list[str]:
    """The crontab lines of the jobs, each ending with the marker of this HOME. The
    times are in `workspace.timezone` (CRON_TZ, which cronie and systemd-cron honour;
    elsewhere cron reads them in the system's time zone)."""
    lines = [f"CRON_TZ={settings.workspace.timezone}  {_marker(settings)}"]
    for job in JOBS:
        lines.append(
            f"{job.cron(settings)} {_command(settings, job, executable)}"
            f" >>{shlex.quote(str(settings.home / 'cron.log'))} 2>&1  {_marker(settings)}"
        )
    return lines


def systemd_units(settings: Settings, *, executable: str = "memoracle") -> dict[str, str]:
    """User units (file name → text): a oneshot service and a timer for each job. A cron
    expression systemd's OnCalendar cannot say plainly is refused with the reason."""
    units: dict[str, str] = {}
    for job in JOBS:
        name = f"memoracle-{job.name}"
        units[f"{name}.service"] = (
            f"[Unit]\nDescription=memoracle {job.name} ({settings.home})\n\n"
            f"[Service]\nType=oneshot\nExecStart={_command(settings, job, executable)}\n"
        )
        calendar = _on_calendar(job.cron(settings), settings.workspace.timezone, job.name)
        units[f"{name}.timer"] = (
            f"[Unit]\nDescription=memoracle {job.name} on schedule\n\n"
            f"[Timer]\nOnCalendar={calendar}\nPersistent=true\n\n"
            "[Install]\nWantedBy=timers.target\n"
        )
    return units


_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")


def _on_calendar(expression: str, zone: str, name: str) -> str:
    """`M H * * *` or `M H * * D[,D…]` as an OnCalendar value; anything else refused."""
    minute, hour, day, month, weekday = expression.split()
    plain = minute.isdigit() and hour.isdigit() and day == "*" and month == "*"
    days = weekday.split(",") if weekday != "*" else []
    if not plain or not all(d.isdigit() and int(d) <= 7 for d in days):
        raise InvalidInput(
            f"schedule.{name} = {expression!r} has no plain systemd OnCalendar form here;"
            " use `memoracle schedule print --cron` or `memoracle daemon`."
        )
    on = ",".join(_DAYS[int(d) % 7] for d in days)
    return f"{on + ' ' if on else ''}*-*-* {int(hour):02d}:{int(minute):02d}:00 {zone}"


# -- the user's crontab ---------------------------------------------------------------


def _crontab() -> str:
    found = shutil.which("crontab")
    if found is None:
        raise WorkspaceError(
            "There is no crontab program on this machine, so your crontab was not changed. Run"
            " `memoracle daemon` under your service manager, or install the units of"
            " `memoracle schedule print --systemd`."
        )
    return found


def _read_crontab(program: str) -> list[str]:
    done = subprocess.run([program, "-l"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        if "no crontab" in done.stderr.lower():
            return []
        raise WorkspaceError(f"`crontab -l` failed: {done.stderr.strip() or done.returncode}")
    return done.stdout.splitlines()


def _write_crontab(program: str, lines: list[str]) -> None:
    text = "".join(line + "\n" for line in lines)
    done = subprocess.run([program, "-"], input=text, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WorkspaceError(f"`crontab -` refused the new table: {done.stderr.strip()}")


def install_crontab(settings: Settings, *, executable: str = "memoracle") -> list[str]:
    """Put this HOME's lines in the user's crontab, replacing the ones it had; other
    lines are kept as they are. Returns the lines installed."""
    program = _crontab()
    ours = cron_lines(settings, executable=executable)
    kept = [line for line in _read_crontab(program) if not line.endswith(_marker(settings))]
    _write_crontab(program, [*kept, *ours])
    return ours


def remove_crontab(settings: Settings) -> int:
    """Take this HOME's lines out of the user's crontab; returns how many went."""
    program = _crontab()
    lines = _read_crontab(program)
    kept = [line for line in lines if not line.endswith(_marker(settings))]
    if len(kept) != len(lines):
        _write_crontab(program, kept)
    return len(lines) - len(kept)


# -- the daemon -----------------------------------------------------------------------


class Daemon:
    """The jobs' next runs, from the cron expressions in the workspace's time zone."""

    def __init__(self, settings: Settings, now: datetime) -> None:
        self.settings = settings
        self.zone = ZoneInfo(settings.workspace.timezone)
        self.next: dict[str, datetime] = {job.name: self._after(job, now) for job in JOBS}

    def _after(self, job: Job, when: datetime) -> datetime:
        run: datetime = croniter(job.cron(self.settings), when.astimezone(self.zone)).get_next(
            datetime
        )
        return run

    def due(self, now: datetime) -> list[Job]:
        """The jobs due at `now`, in `JOBS` order; each is moved to its next run (a run
        missed while the machine slept happens once, not once per missed time)."""
        due = [job for job in JOBS if self.next[job.name] <= now]
        for job in due:
            self.next[job.name] = self._after(job, now)
        return due

    def wait(self, now: datetime) -> timedelta:
        return max(timedelta(0), min(self.next.values()) - now)


def run_daemon(
    settings: Settings,
    run_job: Callable[[Job], dict[str, object]],
    *,
    now: Callable[[], datetime],
    stop: threading.Event,
) -> None:
    """Run the jobs on their schedule until `stop` is set (the door sets it on SIGTERM
    and SIGINT; a job under way finishes first). One daemon per HOME (HOME/daemon.lock);
    each run is logged, one JSON line in HOME/daemon.log, and a job that fails is
    logged and the daemon goes on."""
    with _daemon_lock(settings.home):
        daemon = Daemon(settings, now())
        _log_line(settings, now(), {"event": "started", "next": _next(daemon)})
        while not stop.is_set():
            for job in daemon.due(now()):
                started = now()
                try:
                    result: dict[str, object] = {"status": "ok", **run_job(job)}
                except Exception as exc:  # one job failing never stops the others
                    log.exception("memoracle %s failed", job.name)
                    result = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
                seconds = (now() - started).total_seconds()
                _log_line(
                    settings, now(), {"event": "run", "job": job.name, "seconds": seconds, **result}
                )
                if stop.is_set():
                    break
            stop.wait(min(daemon.wait(now()).total_seconds(), 60.0))
        _log_line(settings, now(), {"event": "stopped"})


def _next(daemon: Daemon) -> dict[str, str]:
    return {name: at.isoformat() for name, at in daemon.next.items()}


def _log_line(settings: Settings, at: datetime, body: dict[str, object]) -> None:
    line = json.dumps({"at": at.isoformat(), **body}, default=str)
    log.info("daemon: %s", line)
    with open(settings.home / DAEMON_LOG, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _daemon_lock(home: Path) -> AbstractContextManager[None]:
    """HOME/daemon.lock: a second daemon on the same HOME is refused while the first
    one lives; a lock left by a dead process is taken over."""
    return pid_lock(
        home / DAEMON_LOCK,
        busy=lambda pid: (
            f"Another memoracle daemon (pid {pid}) already runs for {home};"
            f" stop it first (kill -TERM {pid}). Nothing was started."
        ),
    )
