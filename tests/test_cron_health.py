"""Cron health (docs/schedule.md#cron-health): every scheduled job — memoracle's and the
host's OpenClaw cron jobs — with its last run, duration, exit and next run, the late and
failing ones flagged, in `health` (health.json's `cron`) and HOME/reports/CRON-HEALTH.md."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.ingest import openclaw_cron
from memoracle.jobs import cron, health, nightly
from memoracle.openclaw import workspace as openclaw_workspace

# OpenClaw 2026.9's table, as its state database creates it (the columns we read, and more).
CRON_JOBS = """CREATE TABLE cron_jobs (
  store_key TEXT NOT NULL, job_id TEXT NOT NULL, declaration_key TEXT, owner_agent_id TEXT,
  name TEXT NOT NULL, description TEXT, enabled INTEGER NOT NULL, agent_id TEXT,
  payload_kind TEXT NOT NULL, job_json TEXT NOT NULL, state_json TEXT NOT NULL DEFAULT '{}',
  runtime_updated_at_ms INTEGER, schedule_identity TEXT, sort_order INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL, PRIMARY KEY (store_key, job_id)) STRICT"""


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _by_name(jobs: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(j["name"]): j for j in jobs}


@pytest.fixture(autouse=True)
def _no_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """OpenClaw's state folder: an empty one of the test's, never the developer's."""
    folder = tmp_path / "openclaw-state"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(folder))
    return folder


def test_memoracle_jobs_last_run_duration_exit_and_next_run(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(datetime(2026, 11, 2, 3, 0, tzinfo=UTC))
    fresh = _by_name(health.check(engine).fields["cron"])  # type: ignore[arg-type]
    assert set(fresh) == {"nightly", "health", "probe"}
    assert fresh["nightly"]["last_run"] is None and fresh["nightly"]["note"] == "never ran"
    assert not any(j["late"] or j["failing"] for j in fresh.values())
    engine.remember("We deploy on Tuesdays.", kind="decision")
    nightly.run_nightly(engine)  # its health step writes health.json and a history line
    report = health.check(engine)
    jobs = _by_name(report.fields["cron"])  # type: ignore[arg-type]
    assert jobs["nightly"]["exit"] == 0 and jobs["nightly"]["seconds"] is not None
    assert jobs["nightly"]["last_run"] == "2026-11-02T03:00:00+00:00"
    assert jobs["nightly"]["next_run"] == "2026-11-03T03:00:00+00:00"
    assert jobs["health"]["last_run"] == "2026-11-02T03:00:00+00:00"
    assert jobs["probe"]["next_run"] == "2026-11-02T03:40:00+00:00"  # a Monday
    assert report.status == "healthy"
    clock.advance(days=1, hours=3)  # missed a night and a health check
    report = health.check(engine)
    jobs = _by_name(report.fields["cron"])  # type: ignore[arg-type]
    assert jobs["nightly"]["late"] and jobs["health"]["late"] and not jobs["probe"]["late"]
    codes = [w.code for w in report.warnings]
    assert codes == ["cron_job_late"]  # health's; a late night has nightly_missing (48 h)
    assert "health is late" in report.warnings[0].message


def test_a_night_is_failing_only_when_a_step_failed(engine: Engine, clock: FixedClock) -> None:
    """A night still running, killed, or caught mid-way in a backup (a store restored
    from it) is not failing; a step recorded "failed" after the last clean night is."""
    clock.set(datetime(2026, 11, 2, 3, 0, tzinfo=UTC))
    engine.remember("We deploy on Tuesdays.", kind="decision")
    nightly.run_nightly(engine)
    clock.advance(days=1)
    engine._store.runs.start("nightly:queue", now=clock.now())  # began, never ended
    jobs = _by_name(health.check(engine).fields["cron"])  # type: ignore[arg-type]
    assert not jobs["nightly"]["failing"] and jobs["nightly"]["exit"] == 0
    run = engine._store.runs.start("nightly:render", now=clock.now())
    engine._store.runs.finish(run, now=clock.now(), status="failed", counts={}, error="x")
    report = health.check(engine)
    jobs = _by_name(report.fields["cron"])  # type: ignore[arg-type]
    assert jobs["nightly"]["failing"] and jobs["nightly"]["exit"] == 1
    assert "cron_job_failing" in [w.code for w in report.warnings]


def test_a_failed_run_of_the_daemon_is_flagged(engine: Engine, clock: FixedClock) -> None:
    clock.set(datetime(2026, 11, 2, 4, 0, tzinfo=UTC))
    lines = [
        {"at": "2026-11-02T03:40:10+00:00", "event": "run", "job": "probe", "seconds": 4.5,
         "status": "failed", "error": "StoreError: disk full"},
        "not json at all",
    ]  # fmt: skip
    (engine.settings.home / "daemon.log").write_text(
        "".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines)
    )
    report = health.check(engine)
    probe = _by_name(report.fields["cron"])["probe"]  # type: ignore[arg-type]
    assert probe["failing"] and probe["exit"] == 2 and probe["seconds"] == 4.5
    assert "disk full" in str(probe["note"])
    assert [w.code for w in report.warnings] == ["cron_job_failing"]


def _host_db(folder: Path, now: datetime) -> Path:
    path = folder / openclaw_cron.STATE_DB
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.execute(CRON_JOBS)
    cron_9 = {"schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "UTC"}}
    limited = {"kind": "agentTurn", "timeoutSeconds": 300}
    rows = [
        ("a", "Morning brief", 1, {**cron_9, "payload": limited},
         {"lastRunAtMs": _ms(now - timedelta(hours=19)), "lastRunStatus": "ok",
          "lastDurationMs": 44_000, "nextRunAtMs": _ms(now + timedelta(hours=5))}),
        ("b", "Inbox sweep", 1, {"schedule": {"kind": "every", "everyMs": 1_800_000},
                                 "payload": {"kind": "agentTurn"}},
         {"lastRunAtMs": _ms(now - timedelta(minutes=10)), "lastStatus": "error",
          "consecutiveErrors": 3, "lastError": "model quota", "nextRunAtMs": _ms(now)}),
        ("c", "Weekly audit", 1, {**cron_9, "payload": {"kind": "systemEvent"}},
         {"nextRunAtMs": _ms(now - timedelta(days=2))}),
        ("d", "Old job", 0, {**cron_9}, {"nextRunAtMs": _ms(now - timedelta(days=9))}),
    ]  # fmt: skip
    for key, name, enabled, job, state in rows:
        con.execute(
            "INSERT INTO cron_jobs (store_key, job_id, name, enabled, payload_kind, job_json,"
            " state_json, updated_at) VALUES ('default', ?, ?, ?, 'agentTurn', ?, ?, 0)",
            (key, name, enabled, json.dumps(job), json.dumps(state)),
        )
    con.execute(
        "INSERT INTO cron_jobs (store_key, job_id, name, enabled, payload_kind, job_json,"
        " state_json, updated_at) VALUES ('default', 'e', 'Broken', 1, 'x', '{not json', '[]', 0)"
    )
    con.commit()
    con.close()
    return path


def test_the_hosts_openclaw_cron_jobs_are_read_from_its_state_database(
    engine: Engine, clock: FixedClock, _no_host: Path
) -> None:
    now = clock.now()
    path = _host_db(_no_host, now)
    before = path.read_bytes()
    report = health.check(engine)
    jobs = _by_name(report.fields["cron"])  # type: ignore[arg-type]
    brief = jobs["Morning brief"]
    assert brief["source"] == "openclaw" and brief["exit"] == 0 and brief["seconds"] == 44.0
    assert brief["schedule"] == "cron 0 9 * * * (UTC)" and not brief["late"]
    sweep = jobs["Inbox sweep"]
    assert sweep["failing"] and sweep["exit"] == 1 and sweep["schedule"] == "every 30 min"
    assert "3 error(s) in a row" in str(sweep["note"]) and "model quota" in str(sweep["note"])
    assert "agentTurn without timeoutSeconds" in str(sweep["note"])
    assert jobs["Weekly audit"]["late"] and not jobs["Old job"]["late"]  # disabled
    assert jobs["Broken"]["schedule"] == "?"  # a damaged row: read as far as it goes
    codes = sorted(w.code for w in report.warnings)
    assert codes == ["cron_job_failing", "cron_job_late"]
    assert path.read_bytes() == before  # read from a copy, never written
    written = health.write(engine, report)
    text = (engine.settings.home / cron.CRON_HEALTH_FILE).read_text()
    assert written.exists() and text.startswith("# Cron health")
    assert "2 late or failing" in text
    assert text.index("Inbox sweep") < text.index("Weekly audit") < text.index("Morning brief")


def test_the_legacy_jobs_file_and_a_damaged_store_are_read_tolerantly(
    engine: Engine, _no_host: Path
) -> None:
    legacy = _no_host / openclaw_cron.LEGACY_JOBS
    legacy.parent.mkdir(parents=True)
    legacy.write_text(json.dumps({"version": 1, "jobs": [
        {"id": "x", "name": "Old brief", "enabled": True,
         "schedule": {"kind": "cron", "expr": "0 8 * * *"}, "state": {"lastStatus": "ok"}},
        "junk",
    ]}))  # fmt: skip
    jobs = _by_name(health.check(engine).fields["cron"])  # type: ignore[arg-type]
    assert jobs["Old brief"]["exit"] == 0 and jobs["Old brief"]["schedule"] == "cron 0 8 * * *"
    damaged = _no_host / openclaw_cron.STATE_DB
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(b"not a database" * 100)
    report = health.check(engine)
    jobs = _by_name(report.fields["cron"])  # type: ignore[arg-type]
    assert "cannot read its cron jobs" in str(jobs["openclaw cron store"]["note"])
    assert report.status == "healthy"  # what OpenClaw keeps is no fault of memoracle's


def test_the_state_folder_is_found_as_openclaw_finds_it(tmp_path: Path) -> None:
    for env in ({}, {"OPENCLAW_HOME": str(tmp_path)}, {"OPENCLAW_STATE_DIR": str(tmp_path / "s")}):
        assert openclaw_cron.state_dir(env) == openclaw_workspace.state_dir(env)


def test_health_json_and_the_file_show_the_digest(engine: Engine) -> None:
    home = str(engine.settings.home)
    result = CliRunner().invoke(main, ["--home", home, "health", "--json"])
    body = json.loads(result.output)
    assert [j["name"] for j in body["cron"]] == ["nightly", "health", "probe"]
    assert (engine.settings.home / cron.CRON_HEALTH_FILE).exists()
