from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.errors import InvalidInput, StoreError
from memoracle.store import Store, backup, prune_backups
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn


def _fill(store: Store, clock: FixedClock, n: int, prefix: str = "m") -> None:
    with store.transaction():
        for i in range(n):
            text = f"{prefix} memory number {i}"
            mid = store.memories.insert(
                NewMemory(
                    kind="fact",
                    text=text,
                    layer="semantic",
                    source="capture",
                    observed_at=clock.now(),
                    content_hash=content_hash(text),
                ),
                now=clock.now(),
            )
            episode = store.episodes.insert(
                Turn("user", text, turn_id=f"{prefix}{i}"),
                at=clock.now(),
                now=clock.now(),
                scope=Scope(),
            )
            store.memories.add_provenance(mid, now=clock.now(), episode_id=episode)
            store.audit.append(at=clock.now(), actor="t", action="add", memory_id=mid)


def _writer(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def _count(path: Path, table: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_backup_is_a_verified_self_contained_copy(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    _fill(store, clock, 20)
    with store.transaction():
        store.archive.move([(1, "manual", None)], now=clock.now(), actor="t")
    folder = tmp_path / "backups"
    info = store.maintenance.backup(folder, now=datetime(2026, 12, 2, 14, 30, tzinfo=UTC))

    assert info.path == folder / "memoracle-20261202T143000Z.db"
    assert info.counts == {"memories": 20, "episodes": 20, "audit": 21, "archive": 1}
    assert info.bytes == info.path.stat().st_size > 0 and info.seconds >= 0
    assert sorted(p.name for p in folder.iterdir()) == [info.path.name]  # no -wal, no .partial
    copy = Store.open(info.path, now=clock.now())
    try:
        assert copy.archive.count() == 1
        assert copy.memories.match("memory number 5") == [6]
        assert copy.memories.get(6) == store.memories.get(6)
    finally:
        copy.close()


def test_backup_leaves_out_what_is_not_committed(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    _fill(store, clock, 3)
    with store.transaction():
        _fill(store, clock, 2, prefix="pending")
        info = store.maintenance.backup(
            tmp_path / "b", now=clock.now()
        )  # does not wait on our lock
    assert info.counts["memories"] == 3 == _count(info.path, "memories")
    assert store.memories.match("pending") != []


def test_backup_while_another_connection_writes(
    store: Store, clock: FixedClock, tmp_path: Path
) -> None:
    _fill(store, clock, 50)
    started, stop = threading.Event(), threading.Event()

    def write() -> None:
        conn = _writer(store.path)
        try:
            while not stop.is_set():
                conn.execute("INSERT INTO audit (at, actor, action) VALUES ('x', 'writer', 'add')")
                started.set()
        finally:
            conn.close()

    thread = threading.Thread(target=write)
    thread.start()
    try:
        assert started.wait(10)
        infos = []
        for _ in range(5):
            clock.advance(seconds=1)
            infos.append(store.maintenance.backup(tmp_path / "b", now=clock.now()))
    finally:
        stop.set()
        thread.join()
    audited = [info.counts["audit"] for info in infos]
    assert 50 < audited[0] and audited == sorted(audited) and audited[-1] <= store.audit.count()
    for info in infos:  # each copy verified, and holds exactly what its counts say
        assert _count(info.path, "audit") == info.counts["audit"]


def test_counts_and_copy_come_from_one_snapshot(
    store: Store, clock: FixedClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store, clock, 5)
    real_counts = backup._counts
    other = _writer(store.path)

    calls: list[int] = []

    def counts_then_commit(conn: sqlite3.Connection) -> dict[str, int]:
        found = real_counts(conn)
        if not calls:  # the source's counts: a write commits between them and the copy
            other.execute("INSERT INTO audit (at, actor, action) VALUES ('x', 'w', 'add')")
        calls.append(1)
        return found

    monkeypatch.setattr(backup, "_counts", counts_then_commit)
    try:
        info = store.maintenance.backup(tmp_path / "b", now=clock.now())
    finally:
        other.close()
    assert info.counts["audit"] == 5 == _count(info.path, "audit")
    assert store.audit.count() == 6


def test_a_corrupt_copy_is_detected_and_removed(
    store: Store, clock: FixedClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(store, clock, 200)
    folder = tmp_path / "b"
    good = store.maintenance.backup(folder, now=clock.now())
    before = good.path.read_bytes()
    real_copy = backup._copy

    def copy_then_truncate(source: Path, partial: Path) -> dict[str, int]:
        counts = real_copy(source, partial)
        with partial.open("r+b") as f:
            f.truncate(partial.stat().st_size // 2)
        return counts

    monkeypatch.setattr(backup, "_copy", copy_then_truncate)
    # A second backup in the same second gets its own name (…Z-2.db), never the first's.
    with pytest.raises(StoreError, match=r"memoracle-20230508T135600Z-2\.db: the backup failed"):
        store.maintenance.backup(folder, now=clock.now())
    # The earlier good backup is untouched; no partial file is left.
    assert sorted(p.name for p in folder.iterdir()) == [good.path.name]
    assert good.path.read_bytes() == before

    clock.advance(seconds=1)
    monkeypatch.setattr(backup, "_copy", lambda s, p: {**real_copy(s, p), "memories": 999})
    with pytest.raises(StoreError, match="row counts"):
        store.maintenance.backup(folder, now=clock.now())
    assert sorted(p.name for p in folder.iterdir()) == [good.path.name]


def test_a_missing_database_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with pytest.raises(StoreError, match="missing.db"):
        backup.backup(missing, tmp_path / "copy.db")
    assert not missing.exists() and not (tmp_path / "copy.db").exists()


def test_prune_keeps_the_newest(store: Store, clock: FixedClock, tmp_path: Path) -> None:
    folder = tmp_path / "b"
    made = []
    for _ in range(4):
        made.append(store.maintenance.backup(folder, now=clock.now()).path)
        clock.advance(days=1, seconds=5)
    (folder / "notes.txt").write_text("not a backup")
    (folder / "memoracle-old.db").write_text("not named like a backup")

    removed = prune_backups(folder, keep=2)
    assert removed == [made[1], made[0]]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [made[2].name, made[3].name, "notes.txt", "memoracle-old.db"]
    )
    assert prune_backups(folder, keep=2) == []
    assert prune_backups(tmp_path / "nowhere", keep=1) == []
    with pytest.raises(InvalidInput, match="at least 1"):
        prune_backups(folder, keep=0)


def test_backup_names_sort_by_time() -> None:
    t = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    names = [backup.backup_name(t + timedelta(hours=h)) for h in (0, 9, 30)]
    assert names == sorted(names)
    assert names[0] == "memoracle-20260102T030405Z.db"
