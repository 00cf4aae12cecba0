"""The store's maintenance object: what it tells of an open store, and of a file alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.errors import StoreError, WorkspaceError
from memoracle.store import Store
from memoracle.store.maintenance import SqliteMaintenance


def _remember(store: Store, clock: FixedClock, actor: str) -> None:
    with store.transaction():
        store.audit.append(at=clock.now(), actor=actor, action="add")


def test_the_change_marker_moves_on_a_write_of_its_own_and_of_another_connection(
    store: Store, clock: FixedClock
) -> None:
    first = store.maintenance.change_marker()
    assert store.maintenance.change_marker() == first  # a read changes nothing
    _remember(store, clock, "self")
    mine = store.maintenance.change_marker()
    assert mine[1] > first[1] and mine != first
    other = Store.open(store.path, now=clock.now(), existing=True)
    try:
        _remember(other, clock, "other")
    finally:
        other.close()
    theirs = store.maintenance.change_marker()
    assert theirs[0] != mine[0] and theirs[1] == mine[1]


def test_a_whole_store_passes_every_check_and_a_file_alone_has_no_live_side(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    _remember(store, clock, "t")
    assert store.maintenance.check() == ["ok"]
    assert store.maintenance.size() >= store.path.stat().st_size > 0
    space = store.maintenance.reclaimable()
    assert space.pages > 0 and 0 <= space.free_pages <= space.pages
    copy = tmp_path / "copy.db"
    store.maintenance.scratch_copy(copy)
    alone = SqliteMaintenance.at(copy)
    assert alone.probe() is None and alone.damage(deep=True) is None
    assert alone.check_file(deep=True) == ["ok"]
    assert alone.row_counts()["audit"] == 1
    with pytest.raises(StoreError, match="copy.db: the store is not open here"):
        alone.check()


def test_a_damaged_file_is_told_and_replaced_by_a_verified_copy(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    _remember(store, clock, "t")
    good = store.maintenance.backup(tmp_path / "backups", now=clock.now())
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"")
    file = SqliteMaintenance.at(broken)
    found = file.damage()
    assert found is not None and found.code == "empty"
    moved = file.set_aside(tmp_path / "damaged", "stamp")
    assert moved == [tmp_path / "damaged" / "broken.db-stamp"] and not broken.exists()
    fresh = SqliteMaintenance.at(tmp_path / "fresh.db")
    fresh.copy_from(good.path)
    assert fresh.check_file(deep=True) == ["ok"]
    file.replace_with(fresh.path)
    assert file.damage(deep=True) is None and file.row_counts() == good.counts


def test_a_jobs_lock_is_the_pid_file_beside_the_database_one_holder_at_a_time(
    store: Store, clock: FixedClock
) -> None:
    other = Store.open(store.path, now=clock.now(), existing=True)
    lock = store.path.parent / "nightly.lock"
    try:
        with store.maintenance.exclusive("nightly", who="Another nightly run"):
            assert lock.read_text() == str(os.getpid())
            with pytest.raises(WorkspaceError, match=r"Another nightly run \(pid \d+\)"):
                with other.maintenance.exclusive("nightly", who="Another nightly run"):
                    pytest.fail("two holders")
            with other.maintenance.exclusive("graph", who="x"):  # another job's: free
                pass
        assert not lock.exists()
        with other.maintenance.exclusive("nightly", who="Another nightly run"):
            pass
    finally:
        other.close()


def test_the_state_of_a_file_is_its_path_and_size(store: Store) -> None:
    state = store.maintenance.state()
    assert state.fields == {"path": str(store.path), "bytes": store.maintenance.size()}
    assert state.where == str(store.path) and state.problems == ()
