"""`memoracle migrate`: a store that lived (every kind of row) moved from SQLite to a
real PostgreSQL server and back to a new SQLite file, nothing lost; a dry run writes
nothing; a wrong password, a filled destination and a failure midway are refused and
leave the destination as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_transfer import _fill, _settings

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, StoreError
from memoracle.jobs import migrate
from memoracle.store import Store

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
    from memoracle.store.postgres import PgStore

    there = migrate.migrate(filled, "workspace", migrate.parse_target(pg_url))
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
        returned = migrate.migrate(pg, pg.url, migrate.parse_target(str(back)))
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
