"""`memoracle migrate`: a store that lived (every kind of row) moved from SQLite to a
real PostgreSQL server and back to a new SQLite file, nothing lost; a dry run writes
nothing; a wrong password, a filled destination and a failure midway are refused and
leave the destination as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, StoreError
from memoracle.jobs import migrate
from memoracle.store import Store
from test_transfer import _fill, _say, _settings

pytestmark = pytest.mark.pg


@pytest.fixture
def filled(engine: Engine, clock: FixedClock) -> Engine:
    _fill(engine, clock)
    return engine


def _pg_counts(url: str) -> dict[str, int]:
    from memoracle.store.postgres.transfer import probe

    return probe(url).counts


def _records(rows: Any) -> dict[str, list[dict[str, Any]]]:
    from memoracle.store.transfer import SECTIONS

    with rows.snapshot():
        return {s.type: list(rows.records(s.type)) for s in SECTIONS}


def test_a_store_goes_to_postgresql_and_back_with_nothing_lost(
    filled: Engine, pg_url: str, tmp_path: Path, clock: FixedClock
) -> None:
    from memoracle.capture.redact import redact
    from memoracle.store.postgres import PgStore

    # A memory whose text, written after the turn was redacted ("this month" resolved),
    # the redaction would now change: a migration copies it as it is.
    _say(filled, "Unfortunately, I also lost my job at Door Dash this month.", "90", speaker="Gina")
    dated = next(m.text for m in filled.list_memories(status=None, limit=100) if "Door" in m.text)
    assert redact(dated).text != dated

    there = migrate.migrate(filled, migrate.parse_target(pg_url))
    assert there.verified and there.destination_state == "new"
    assert set(there.counts) >= {"memories", "episodes", "provenance", "audit", "runs"}
    assert all(there.counts[t] > 0 for t in ("memories", "episodes", "provenance", "audit",
                                              "runs", "vectors", "slots", "archive",
                                              "entities", "relations", "held"))  # fmt: skip
    assert _pg_counts(pg_url) == there.counts

    back = tmp_path / "back.db"
    pg = PgStore.open(pg_url, now=clock.now())
    try:
        # The same records, field for field, on both backends.
        assert _records(pg.transfer) == _records(filled.transfer_rows())
        returned = migrate.migrate(pg, migrate.parse_target(str(back)))
        # Ids kept, and the identities moved past them: a new row gets a new id.
        with pg.transaction():
            pg.audit.append(at=clock.now(), actor="test", action="note")
        newest = pg.audit.entries(limit=1)[0]
        assert newest.id == there.counts["audit"] + 1
    finally:
        pg.close()
    assert returned.destination_state == "new"
    assert returned.counts == there.counts
    assert returned.source_hash == there.source_hash == returned.destination_hash

    home = tmp_path / "home-back"
    settings = _settings(home)
    Engine.init(settings, clock=clock)
    back.replace(settings.db_path)
    with Engine.open(settings, clock=clock) as again:
        assert migrate.content_digest(again.transfer_rows()) == there.source_hash
        for query in ("Where does Caroline live?", "deploy Fridays", "tea", "Oslo"):
            assert again.recall(query).text == filled.recall(query).text
        assert [m.ref for m in again.list_memories(status=None, limit=100)] == [
            m.ref for m in filled.list_memories(status=None, limit=100)
        ]


def _cli(*args: str) -> Any:
    from memoracle.cli.main import main

    env = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": "2024-01-01T00:00:00+00:00"}
    return CliRunner().invoke(main, list(args), env=env)


def _tables(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return sorted(r[0] for r in rows.fetchall())


def test_the_command_copies_checks_and_says_how_to_switch_without_the_password(
    filled: Engine, pg_server: Any, pg_url: str
) -> None:
    secret = pg_server.password
    assert secret in pg_url
    out = _cli("migrate", "--to", pg_url)
    assert out.exit_code == 0, out.output
    assert secret not in out.output and secret not in (out.stderr or "")
    shown = pg_url.replace(secret, "***")
    assert "row counts and content hash" in out.output
    assert f'url = "{shown}"' in out.output  # the config line, password masked
    assert f"MEMORACLE_STORAGE_URL='{shown}'" in out.output
    assert "migrate: importing into" in out.stderr  # progress on stderr
    assert _pg_counts(pg_url) == filled.transfer_rows().counts()

    # And the way back, from the server to a new file.
    out = _cli("migrate", "--from", pg_url, "--to", str(Path(filled.settings.home) / "b.db"))
    assert out.exit_code == 0, out.output
    assert "row counts and content hash" in out.output and secret not in out.output
    assert "move the current one aside" in out.output

    again = _cli("migrate", "--to", pg_url, "--json")  # now it is not empty: refused
    assert again.exit_code == 1 and "is not empty" in again.output
    assert "never merges" in again.output and secret not in again.output


def test_json_report(filled: Engine, pg_url: str) -> None:
    out = _cli("migrate", "--to", pg_url, "--json")
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["verified"] is True and report["dry_run"] is False
    assert report["source_hash"] == report["destination_hash"]
    assert report["counts"] == filled.transfer_rows().counts()
    assert report["rows"] == sum(report["counts"].values())
    assert report["destination_kind"] == "postgresql" and report["destination_state"] == "new"
    assert report["switch"]["env"].startswith("MEMORACLE_STORAGE_URL=")


def test_a_dry_run_writes_nothing(filled: Engine, pg_url: str, tmp_path: Path) -> None:
    assert _tables(pg_url) == []
    out = _cli("migrate", "--to", pg_url, "--dry-run")
    assert out.exit_code == 0, out.output
    assert "dry run, nothing written: would copy" in out.output and "(new)" in out.output
    assert f"memories {filled.transfer_rows().counts()['memories']}" in out.output
    assert _tables(pg_url) == []  # not even the schema

    path = tmp_path / "new.db"
    out = _cli("migrate", "--to", str(path), "--dry-run", "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["destination_state"] == "new"
    assert not path.exists()

    migrate.migrate(filled, migrate.parse_target(pg_url))
    before = _pg_counts(pg_url)
    out = _cli("migrate", "--to", pg_url, "--dry-run")  # a filled one: it would stop
    assert out.exit_code == 1 and "would stop:" in out.output and "is not empty" in out.output
    assert _pg_counts(pg_url) == before


@pytest.mark.parametrize("dry_run", [False, True], ids=["migrate", "dry-run"])
def test_a_wrong_password_is_a_clear_error_without_the_password(
    filled: Engine, pg_server: Any, pg_url: str, dry_run: bool
) -> None:
    wrong = pg_url.replace(pg_server.password, "NotTheSecret42")
    out = _cli("migrate", "--to", wrong, *(["--dry-run"] if dry_run else []))
    assert out.exit_code == 1
    assert "Check the user name and password" in out.output
    assert "NotTheSecret42" not in out.output and "NotTheSecret42" not in out.stderr
    assert pg_server.password not in out.output
    unreachable = f"postgresql://u:Hidden99@127.0.0.1:1/{pg_url.rsplit('/', 1)[1]}"
    out = _cli("migrate", "--to", unreachable, *(["--dry-run"] if dry_run else []))
    assert out.exit_code == 1 and "Is the server running" in out.output
    assert "Hidden99" not in out.output
    assert _cli("migrate", "--to", "mysql://x@h/db").exit_code == 1


def test_a_failure_midway_leaves_the_destination_as_it_was(
    filled: Engine, pg_url: str, clock: FixedClock
) -> None:
    from memoracle.store.postgres import PgStore

    # A text PostgreSQL cannot hold (a NUL character; SQLite can): its memory's line
    # comes after every turn, entity and relation, already inserted by then.
    newest = max(m.id for m in filled.list_memories(status=None, limit=1000))
    with filled._store.transaction():
        filled._store._db.execute(
            "UPDATE memories SET text = text || char(0) WHERE id = ?", (newest,)
        )
    counts = filled.transfer_rows().counts()
    assert counts["episodes"] and counts["entities"] and counts["relations"]
    with pytest.raises(StoreError, match=rf"memories row {newest}: .*NUL"):
        migrate.migrate(filled, migrate.parse_target(pg_url))
    assert set(_pg_counts(pg_url).values()) == {0}  # rolled back, every table
    store = PgStore.open(pg_url, now=clock.now())  # and the identities as they were
    try:
        with store.transaction():
            store.audit.append(at=clock.now(), actor="test", action="note")
        assert store.audit.entries(limit=1)[0].id == 1
    finally:
        store.close()


def test_a_mismatch_found_by_the_check_is_rolled_back(
    filled: Engine, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check itself: a destination whose records read back differently (here a
    digest that disagrees) is rolled back, and a new SQLite file made for it removed."""
    real = migrate.content_digest
    calls: list[Any] = []

    def differing(rows: Any) -> str:
        calls.append(rows)
        return real(rows) if len(calls) == 1 else "0" * 64

    monkeypatch.setattr(migrate, "content_digest", differing)
    with pytest.raises(StoreError, match="does not match the source .*rolled back"):
        migrate.migrate(filled, migrate.parse_target(pg_url))
    assert set(_pg_counts(pg_url).values()) == {0}
    calls.clear()
    path = tmp_path / "copy.db"
    with pytest.raises(StoreError, match="does not match"):
        migrate.migrate(filled, migrate.parse_target(str(path)))
    assert not path.exists() and not list(tmp_path.glob("copy.db*"))


def test_a_filled_sqlite_file_is_refused_and_the_source_itself_too(
    filled: Engine, tmp_path: Path, clock: FixedClock
) -> None:
    path = tmp_path / "other.db"
    migrate.migrate(filled, migrate.parse_target(str(path)))
    with pytest.raises(InvalidInput, match="is not empty"):
        migrate.migrate(filled, migrate.parse_target(str(path)))
    store = Store.open(path, now=clock.now())
    try:
        assert store.transfer.counts() == filled.transfer_rows().counts()
    finally:
        store.close()
    with pytest.raises(InvalidInput, match="is the source store itself"):
        migrate.migrate(filled, migrate.parse_target(str(filled.settings.db_path)))


def test_every_table_of_the_postgresql_schema_is_carried(pg_store_url: str) -> None:
    """A migration that adds a table must add it to the records (or say it is not data)."""
    from memoracle.store.postgres.transfer import NOT_EXPORTED
    from memoracle.store.transfer import DATA_TABLES

    assert set(_tables(pg_store_url)) == set(DATA_TABLES) | set(NOT_EXPORTED)
