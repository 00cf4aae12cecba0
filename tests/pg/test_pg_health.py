"""`health` and `doctor` on a PostgreSQL store report the server: its URL with the
password masked, its version, pgvector's, the schema version, the HNSW and GIN indexes
(and any not valid), the size and dead rows; the store's check on the server; the
newest backup of HOME/backups (JSON lines) read through. Until `Engine.open` reaches a
server from the settings, the engine is built over a `PgStore` directly."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pgharness import MISSING, SKIP_REASON

from memoracle import reports
from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.jobs import doctor, health

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)

if not MISSING:
    from memoracle.store.postgres import PgStore


@pytest.fixture
def pg_engine(pg_store_url: str, settings: Settings, clock: FixedClock) -> Iterator[Engine]:
    settings.home.mkdir(parents=True, exist_ok=True)
    store = PgStore.open(pg_store_url, now=clock.now())
    engine = Engine(settings, store, clock)  # type: ignore[arg-type]
    yield engine
    store.close()


def _server(engine: Engine) -> Any:
    return engine._store  # the PgStore, for a hand edit


def test_health_reports_the_server_with_its_password_masked(
    pg_engine: Engine, pg_store_url: str
) -> None:
    report = health.check(pg_engine)
    database = report.fields["database"]
    assert isinstance(database, dict)
    assert str(database["url"]).count("***") == 1
    assert str(database["server_version"]).startswith("16") and database["vector_version"]
    assert database["schema_version"] == database["schema_latest"]
    assert {"memories_tsv", "episodes_tsv"} <= set(database["gin_indexes"])
    assert database["integrity"] == "ok" and database["invalid_indexes"] == []
    assert "path" not in database and database["bytes"] > 0
    codes = {w.code for w in report.warnings}
    assert not codes & {"server_check_failed", "index_invalid", "database_damaged"}
    body = json.dumps(report.to_json())
    assert pg_engine._store._db.url in body  # type: ignore[attr-defined]
    password = psycopg.conninfo.conninfo_to_dict(pg_store_url)["password"]
    assert password and str(password) not in body


def test_a_failed_check_and_an_invalid_index_are_warnings_doctor_explains(
    pg_engine: Engine,
) -> None:
    server = _server(pg_engine)
    with server.transaction():
        server._db.execute("SET LOCAL session_replication_role = replica")
        server._db.execute(
            "INSERT INTO provenance (memory_id, origin, added_at) VALUES (4242, 'x', now())"
        )
    server._db.execute("CREATE INDEX half_built ON runs (kind)")
    server._db.execute(
        "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'half_built'::regclass"
    )
    try:
        result = doctor.run_open(pg_engine)
    finally:
        server._db.execute("DROP INDEX half_built")
    by_code = {f.warning.code: f for f in result.findings}
    assert by_code["server_check_failed"].warning.severity == "failing"
    assert "1 provenance rows of a memory that is not there" in (
        by_code["server_check_failed"].warning.message
    )
    assert "half_built" in by_code["index_invalid"].warning.message
    assert "REINDEX" in by_code["index_invalid"].advice.fix
    assert result.report.status == "failing"
    line = doctor.describe(result.report.fields["database"])
    assert line is not None and "not valid: half_built" in line and "***" in line
    body = reports.doctor_report(
        result.report.status, result.findings, result.report.fields["database"]
    )
    assert body["database"]["invalid_indexes"] == ["half_built"]
    assert {f["code"] for f in body["findings"]} >= {"server_check_failed", "index_invalid"}


def test_doctor_reads_the_newest_server_backup_through(
    pg_engine: Engine, clock: FixedClock
) -> None:
    pg_engine.remember("The Lyon office opens at nine.")
    assert doctor.run_open(pg_engine).report.fields["backup"] is None
    info = pg_engine.backup()  # HOME/backups, the server's rows as JSON lines
    assert info.path.name.endswith(".pg.jsonl.gz") and info.counts["memories"] == 1
    result = doctor.run_open(pg_engine)
    backup = result.report.fields["backup"]
    assert isinstance(backup, dict) and backup["integrity"] == "ok"
    assert backup["path"] == str(info.path) and backup["counts"]["memories"] == 1
    with gzip.open(info.path, "rt", encoding="utf-8") as f:
        lines = f.readlines()
    with gzip.open(info.path, "wt", encoding="utf-8") as f:
        f.writelines(lines[:-2])  # cut short: a row and the counts gone
    result = doctor.run_open(pg_engine)
    damaged = [f for f in result.findings if f.warning.code == "backup_damaged"]
    assert damaged and "cut short" in damaged[0].warning.message


def test_an_sqlite_file_has_no_server_line(engine: Engine) -> None:
    report = health.check(engine)
    assert doctor.describe(report.fields["database"]) is None
