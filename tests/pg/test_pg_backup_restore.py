"""A PostgreSQL store's backup restores: the file `PgMaintenance.backup` writes is an
export (vectors included, gzipped) that `memoracle import` reads back into a new
SQLite home and the existing import into a new empty database, record for record, the
same recall after it (docs/fleet.md#backups)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pgharness import SKIP_REASON

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.jobs import transfer
from memoracle.store import server_backup
from test_transfer import INJECTION, _say, _settings

pytestmark = pytest.mark.pg
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)


def _fill(engine: Engine, clock: FixedClock) -> None:
    """A store that lived, as far as an engine on PostgreSQL goes here: superseded and
    disputed memories, a held write, a merge, the graph, vectors, runs, the audit."""
    _say(engine, "I live in Paris.", "1", speaker="Caroline")
    clock.advance(days=1)
    _say(engine, "I moved to Lyon.", "2", speaker="Caroline")  # supersedes Paris
    _say(engine, "I live in Oslo.", "3")
    _say(engine, "I might move to Bergen.", "4")  # disputes Oslo
    _say(engine, INJECTION, "6")  # the turn is kept, its memories held
    engine.remember("Marc lives in Nice.", kind="fact")
    engine.remember("Marc lives in Nice since 2021.", kind="fact")
    engine.merge_duplicates(engine.duplicates())
    engine.remember("My wife Anna works at Acme.")
    assert engine.reindex() > 0  # the vectors, of the hash model


def _records(rows: Any) -> dict[str, list[dict[str, Any]]]:
    from memoracle.store.transfer import SECTIONS

    with rows.snapshot():
        return {s.type: list(rows.records(s.type)) for s in SECTIONS}


def _cli(home: Path, *args: str) -> Any:
    from memoracle.cli.main import main

    env = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": "2024-01-01T00:00:00+00:00"}
    return CliRunner().invoke(main, ["--home", str(home), *args], env=env)


def test_a_server_backup_restores_into_a_new_file_and_a_new_database(
    pg_store_url: str, pg_url: str, settings: Settings, clock: FixedClock, tmp_path: Path
) -> None:
    from memoracle.store.postgres import PgStore

    settings.home.mkdir(parents=True, exist_ok=True)
    store = PgStore.open(pg_store_url, now=clock.now())
    try:
        source = Engine(settings, store, clock)  # type: ignore[arg-type]
        _fill(source, clock)
        info = store.maintenance.backup(tmp_path / "backups", now=clock.now())
        want = _records(store.transfer)
        counts = store.transfer.counts()
        recalled = {q: source.recall(q).text for q in ("Where does Caroline live?", "Oslo")}
    finally:
        store.close()
    assert info.counts == counts and all(counts[t] for t in ("memories", "vectors", "held"))
    assert server_backup.verify(info.path).good  # what doctor reads, no driver needed

    # Into a new SQLite home, with the command docs/fleet.md gives.
    home = tmp_path / "restored"
    assert _cli(home, "init").exit_code == 0
    out = _cli(home, "import", str(info.path), "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["counts"] == counts
    with Engine.open(_settings(home), clock=clock) as restored:
        assert _records(restored.transfer_rows()) == want
        for query, text in recalled.items():
            assert restored.recall(query).text == text

    # Into a new empty database, with the same import.
    empty = PgStore.open(pg_url, now=clock.now())
    try:
        transfer.import_(empty, info.path)
        assert empty.transfer.counts() == counts
        assert _records(empty.transfer) == want
    finally:
        empty.close()


def test_a_backup_cut_short_is_refused_by_import_and_told_by_doctors_check(
    pg_store_url: str, settings: Settings, clock: FixedClock, tmp_path: Path
) -> None:
    from memoracle.store.postgres import PgStore

    settings.home.mkdir(parents=True, exist_ok=True)
    store = PgStore.open(pg_store_url, now=clock.now())
    try:
        _fill(Engine(settings, store, clock), clock)  # type: ignore[arg-type]
        info = store.maintenance.backup(tmp_path / "backups", now=clock.now())
    finally:
        store.close()
    with gzip.open(info.path, "rt", encoding="utf-8") as whole:
        lines = whole.readlines()
    short = tmp_path / "short.pg.jsonl.gz"
    with gzip.open(short, "wt", encoding="utf-8") as out:
        out.writelines(lines[:-3])
    assert not server_backup.verify(short).good
    torn = tmp_path / "torn.pg.jsonl.gz"
    torn.write_bytes(info.path.read_bytes()[:-40])
    assert not server_backup.verify(torn).good

    home = tmp_path / "restored"
    Engine.init(_settings(home), clock=clock)
    with Engine.open(_settings(home), clock=clock) as target:
        with pytest.raises(InvalidInput, match="does not add up"):
            transfer.import_(target, short)
        with pytest.raises(InvalidInput, match="cut short or damaged"):
            transfer.import_(target, torn)
        assert sum(target.transfer_rows().counts().values()) == 0  # nothing was imported
