"""OpenClaw's own cron jobs, read tolerantly for the cron health digest (docs/schedule.md).

OpenClaw 2026.9 keeps its cron jobs in its shared state database,
`<state>/state/openclaw.sqlite`, table `cron_jobs`: one row a job with `name`,
`enabled`, `job_json` (the definition: `schedule` — `{"kind": "cron", "expr", "tz"}`,
`{"kind": "every", "everyMs"}` or `{"kind": "at", "at"}` — and `payload`, whose
`timeoutSeconds` an `agentTurn` job should set) and `state_json` (`lastRunAtMs`,
`lastRunStatus` or `lastStatus` — "ok", "error", "skipped" —, `lastDurationMs`,
`nextRunAtMs`, `consecutiveErrors`, `lastError`). Older releases kept the same jobs in
`<state>/cron/jobs.json` (`{"jobs": [{…, "state": {…}}]}`), which is read when there is
no database. The database is copied with SQLite's backup API and read from the copy
(`openclaw_sqlite.snapshot`), never written. A column, key or row it does not know is
passed over; what cannot be read at all is said in `problem`, never raised."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memoracle.errors import InvalidInput
from memoracle.ingest.openclaw_sqlite import remove_copy, snapshot

STATE_DB = Path("state") / "openclaw.sqlite"
LEGACY_JOBS = Path("cron") / "jobs.json"


@dataclass(frozen=True)
class HostJob:
    """One OpenClaw cron job as its store says it."""

    name: str
    enabled: bool
    schedule: str  # "cron 0 9 * * * (UTC)", "every 30m", "at …", or "?"
    last_run: datetime | None
    last_status: str | None  # ok | error | skipped | …
    seconds: float | None
    next_run: datetime | None
    errors: int  # consecutive errors
    last_error: str | None
    agent_turn_without_timeout: bool


@dataclass(frozen=True)
class HostCron:
    source: Path | None  # the file read, None when there is none
    jobs: tuple[HostJob, ...]
    problem: str | None = None


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """OpenClaw's state folder, as OpenClaw finds it: `OPENCLAW_STATE_DIR`, else
    `.openclaw` in `OPENCLAW_HOME` (OpenClaw's stand-in for the home folder), else
    `~/.openclaw`. The one place it is found (`openclaw.workspace` names it too)."""
    env = os.environ if env is None else env
    override = env.get("OPENCLAW_STATE_DIR", "").strip()
    if override:
        return Path(override).expanduser()
    home = env.get("OPENCLAW_HOME", "").strip()
    return (Path(home).expanduser() if home else Path.home()) / ".openclaw"


def read_host_cron(folder: Path) -> HostCron:
    """The cron jobs of the OpenClaw state folder `folder`: from its state database,
    else its legacy jobs.json; none (and no problem) when it has neither."""
    database, legacy = folder / STATE_DB, folder / LEGACY_JOBS
    if database.is_file():
        try:
            rows = _rows(database)
        except (InvalidInput, sqlite3.Error, OSError) as exc:
            return HostCron(database, (), f"{database}: cannot read its cron jobs ({exc})")
        return HostCron(database, tuple(_job(row) for row in rows))
    if legacy.is_file():
        try:
            body = json.loads(legacy.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return HostCron(legacy, (), f"{legacy}: not readable as JSON ({exc})")
        jobs = body.get("jobs") if isinstance(body, dict) else body
        rows = [j for j in jobs if isinstance(j, dict)] if isinstance(jobs, list) else []
        return HostCron(legacy, tuple(_job({**j, "state": j.get("state")}) for j in rows))
    return HostCron(None, ())


def _rows(database: Path) -> list[dict[str, Any]]:
    copy = snapshot(database)
    try:
        con = sqlite3.connect(copy)
        try:
            con.row_factory = sqlite3.Row
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            if "cron_jobs" not in tables:
                return []
            found = []
            for row in con.execute("SELECT * FROM cron_jobs"):
                item = dict(row)
                job = _loads(item.get("job_json"))
                found.append({**job, **item, "state": _loads(item.get("state_json"))})
            return found
        finally:
            con.close()
    finally:
        remove_copy(copy)


def _loads(text: object) -> dict[str, Any]:
    try:
        body = json.loads(text) if isinstance(text, str | bytes) else None
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _job(row: Mapping[str, Any]) -> HostJob:
    state = _dict(row.get("state"))
    payload = _dict(row.get("payload"))
    status = state.get("lastRunStatus") or state.get("lastStatus")
    duration = _number(state.get("lastDurationMs"))
    return HostJob(
        name=str(row.get("name") or row.get("job_id") or row.get("id") or "?"),
        enabled=bool(row.get("enabled", True)),
        schedule=_schedule(row.get("schedule")),
        last_run=_at(state.get("lastRunAtMs")),
        last_status=str(status) if status is not None else None,
        seconds=None if duration is None else duration / 1000,
        next_run=_at(state.get("nextRunAtMs")),
        errors=int(_number(state.get("consecutiveErrors")) or 0),
        last_error=str(state["lastError"])[:200] if state.get("lastError") else None,
        agent_turn_without_timeout=payload.get("kind") == "agentTurn"
        and not payload.get("timeoutSeconds"),
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _at(ms: object) -> datetime | None:
    number = _number(ms)
    if number is None:
        return None
    try:
        return datetime.fromtimestamp(number / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _schedule(schedule: object) -> str:
    if not isinstance(schedule, dict):
        return "?"
    kind = schedule.get("kind")
    if kind == "cron" or "expr" in schedule or "cron" in schedule:
        zone = schedule.get("tz") or schedule.get("timezone")
        expr = schedule.get("expr") or schedule.get("cron")
        return f"cron {expr}" + (f" ({zone})" if zone else "")
    if kind == "every":
        every = _number(schedule.get("everyMs"))
        return f"every {every / 60000:g} min" if every else "every ?"
    if kind == "at":
        return f"at {schedule.get('at')}"
    return str(kind or "?")
