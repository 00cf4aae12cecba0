"""The PostgreSQL store's upkeep (`PgMaintenance`): the change marker another host's
commit and this connection's own writes move, a verified backup of every row, the
consistency check, dead rows and VACUUM, the size, the dry run's copy refused, the
jobs' advisory lock (one holder among connections, released when a session dies) and
the server's state for health."""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pgharness import MISSING, SKIP_REASON

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import StoreError, WorkspaceError
from memoracle.jobs import nightly
from memoracle.store.backup import newest_backup, prune_backups
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)

if not MISSING:
    from memoracle.store.postgres import PgStore
    from memoracle.store.postgres.maintenance import job_lock_key


def _memory(store: Any, clock: FixedClock, text: str, **kw: object) -> int:
    new = NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
    )
    with store.transaction():
        turn = store.episodes.insert(
            Turn("user", text, turn_id=text), at=clock.now(), now=clock.now(), scope=Scope()
        )
        mid = int(store.memories.insert(replace(new, **kw), now=clock.now()))  # type: ignore[arg-type]
        store.memories.add_provenance(mid, now=clock.now(), episode_id=turn)
    return mid


@pytest.fixture
def two(pg_store_url: str, clock: FixedClock) -> Any:
    first = PgStore.open(pg_store_url, now=clock.now())
    second = PgStore.open(pg_store_url, now=clock.now())
    yield first, second
    first.close()
    second.close()


def test_the_change_marker_moves_with_every_commit_and_own_uncommitted_write(
    two: Any, clock: FixedClock
) -> None:
    mine, theirs = two
    seen = [mine.maintenance.change_marker()]
    assert mine.maintenance.change_marker() == seen[0]  # nothing written: it stays
    _memory(theirs, clock, "Another host stored this.")  # another connection commits
    seen.append(mine.maintenance.change_marker())
    assert seen[-1] != seen[-2]
    with mine.transaction():
        mine.runs.start("own", now=clock.now())
        seen.append(mine.maintenance.change_marker())  # its own write, not yet committed
        assert seen[-1] != seen[-2]
        mine.runs.start("own again", now=clock.now())
        seen.append(mine.maintenance.change_marker())  # and the next one in it
        assert seen[-1] != seen[-2]
    seen.append(mine.maintenance.change_marker())
    with pytest.raises(RuntimeError), mine.transaction():  # a write rolled back
        mine.runs.start("undone", now=clock.now())
        seen.append(mine.maintenance.change_marker())
        raise RuntimeError
    seen.append(mine.maintenance.change_marker())
    assert len(set(seen)) == len(seen)  # never a value seen before: no reader is fooled
    with mine.transaction():  # reading in a transaction moves nothing
        before = mine.maintenance.change_marker()
        mine.memories.max_id()
        assert mine.maintenance.change_marker() == before


def test_a_backup_holds_every_row_and_is_checked_against_the_counts(
    two: Any, clock: FixedClock, tmp_path: Path
) -> None:
    store, _ = two
    for n in range(5):
        _memory(store, clock, f"Fact number {n} about the Lyon office.")
    info = store.maintenance.backup(tmp_path / "backups", now=clock.now())
    assert info.path.name == f"memoracle-{clock.now():%Y%m%dT%H%M%SZ}.pg.jsonl.gz"
    assert info.counts["memories"] == 5 and info.counts["episodes"] == 5
    assert info.counts["provenance"] == 5 and info.bytes == info.path.stat().st_size
    with gzip.open(info.path, "rt", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    # an export's lines (docs/transfer.md), vectors included: `memoracle import` reads it
    assert lines[0]["type"] == "memoracle-export" and lines[0]["format"] == 1
    assert lines[0]["counts"] == info.counts and lines[0]["vectors"] is True
    assert "***" in lines[0]["server"]
    texts = {r["text"] for r in lines[1:] if r["type"] == "memory"}
    assert texts == {f"Fact number {n} about the Lyon office." for n in range(5)}
    assert not list((tmp_path / "backups").glob("*.partial"))
    # a second that second gets its own name; both rotate with SQLite's backups
    again = store.maintenance.backup(tmp_path / "backups", now=clock.now())
    assert again.path.name.endswith("Z-2.pg.jsonl.gz")
    assert newest_backup(tmp_path / "backups") == clock.now()
    assert prune_backups(tmp_path / "backups", keep=1) == [info.path]


def test_the_check_finds_rows_pointing_at_nothing_slots_out_of_step_and_invalid_indexes(
    two: Any, clock: FixedClock
) -> None:
    store, raw = two
    mid = _memory(store, clock, "Marc prefers tea.")
    with store.transaction():
        store.memories.set_slot(mid, "marc", "prefers", "tea", hedged=False, negated=False)
    assert store.maintenance.check() == ["ok"]
    with raw.transaction():  # a restore or a hand edit with triggers and keys off
        raw._db.execute("SET LOCAL session_replication_role = replica")
        raw._db.execute("UPDATE slots SET live = false")
        raw._db.execute(
            "INSERT INTO provenance (memory_id, origin, added_at) VALUES (999, 'x', now())"
        )
    raw._db.execute("CREATE INDEX broken_on_purpose ON runs (kind)")
    raw._db.execute(
        "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'broken_on_purpose'::regclass"
    )
    try:
        problems = store.maintenance.check()
        state = store.maintenance.state()
        assert store.maintenance.check(limit=1) == problems[:1]
    finally:  # the session's database is shared by the tests: its schema left as it was
        raw._db.execute("DROP INDEX broken_on_purpose")
    assert not any("broken_on_purpose" in p for p in problems), problems  # no damage
    assert "1 provenance rows of a memory that is not there" in problems
    assert "1 slots whose 'live' is out of step with their memory's status" in problems
    assert state.fields["invalid_indexes"] == ["broken_on_purpose"]
    assert [p.code for p in state.problems] == ["index_invalid"]


def test_dead_rows_are_reclaimable_and_vacuum_makes_them_reusable(
    two: Any, clock: FixedClock
) -> None:
    store, _ = two
    size = store.maintenance.size()
    with store.transaction():
        for n in range(3000):
            store.runs.start(f"job {n} " + "x" * 200, now=clock.now())
    assert store.maintenance.size() > size  # the tables, with their indexes, grew
    store._db.execute("DELETE FROM runs WHERE kind LIKE 'job %'")
    store._db.execute("SELECT pg_stat_force_next_flush()")  # the statistics, now
    store._db.execute("SELECT 1")
    space = store.maintenance.reclaimable()
    assert space.pages * space.page_size >= store.maintenance.size() - space.page_size
    assert space.free_pages > 0 and 0 < space.share < 1
    store.maintenance.compact()
    assert store.maintenance.reclaimable().free_pages == 0
    last_vacuum = store.maintenance.state().fields["last_vacuum"]
    assert last_vacuum is not None


def test_a_dry_runs_scratch_copy_is_refused_saying_why(two: Any, tmp_path: Path) -> None:
    store, _ = two
    with pytest.raises(StoreError, match="SQLite-only") as caught:
        store.maintenance.scratch_copy(tmp_path / "copy.db")
    assert "***" in str(caught.value) and not (tmp_path / "copy.db").exists()


def test_the_server_state_names_versions_indexes_and_hides_the_password(
    two: Any, clock: FixedClock
) -> None:
    store, _ = two
    _memory(store, clock, "Lyon is where the office is.")
    state = store.maintenance.state()
    fields = state.fields
    assert str(fields["url"]).count("***") == 1 and state.where == fields["url"]
    assert str(fields["server_version"]).startswith("16")
    assert fields["vector_version"] and fields["schema_version"] == fields["schema_latest"]
    assert {"memories_tsv", "episodes_tsv"} <= set(fields["gin_indexes"])  # type: ignore[arg-type]
    assert fields["invalid_indexes"] == [] and state.problems == ()
    assert fields["bytes"] == store.maintenance.size() > 0
    json.dumps(fields)  # JSON-ready


def test_two_connections_cannot_both_hold_a_jobs_lock(two: Any) -> None:
    first, second = two
    with first.maintenance.exclusive("nightly", who="Another nightly run"):
        with pytest.raises(WorkspaceError, match="Another nightly run") as caught:
            with second.maintenance.exclusive("nightly", who="Another nightly run"):
                pytest.fail("two holders")
        assert "server process" in str(caught.value) and "***" in str(caught.value)
        with pytest.raises(WorkspaceError, match="from this process"):
            with first.maintenance.exclusive("nightly", who="Another nightly run"):
                pytest.fail("held twice by one store")
        with second.maintenance.exclusive("other-job", who="x"):  # another job's: free
            pass
    with second.maintenance.exclusive("nightly", who="Another nightly run"):
        pass  # let go at the block's end


HOLD = """
import sys, time
from datetime import UTC, datetime
from memoracle.store.postgres import PgStore
store = PgStore.open(sys.argv[1], now=datetime.now(UTC))
with store.maintenance.exclusive("nightly", who="x"):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_killed_holders_lock_is_released_by_the_server(two: Any, pg_store_url: str) -> None:
    _, store = two
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, pg_store_url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(WorkspaceError, match="Another nightly run"):
            with store.maintenance.exclusive("nightly", who="Another nightly run"):
                pytest.fail("two holders")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    deadline = time.monotonic() + 30
    while True:  # the server ends the session when it sees the client gone
        try:
            with store.maintenance.exclusive("nightly", who="Another nightly run"):
                break
        except WorkspaceError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    key = job_lock_key("nightly")
    held = store._db.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
        " AND objid = (%s::bigint & 4294967295)::bigint::oid",
        (key,),
    ).fetchone()
    assert held == (0,)  # and ours went at the end of the block


def test_a_second_hosts_nightly_is_refused_while_one_runs(
    two: Any, settings: Settings, clock: FixedClock
) -> None:
    here, there = two
    engine = Engine(settings, here, clock)  # this host's engine, on the shared database
    with there.maintenance.exclusive("nightly", who="Another nightly run"):  # the other host
        with pytest.raises(WorkspaceError, match="Another nightly run") as caught:
            nightly.run_nightly(engine)
    assert "server process" in str(caught.value) and "***" in str(caught.value)
    assert here.runs.latest("nightly:queue") is None  # no step ran
    assert not (settings.home / "nightly.lock").exists()  # no file lock on a server
