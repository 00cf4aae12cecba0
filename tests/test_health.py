"""The health check: health.json's fields, each warning on purpose, a damaged store."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import StoreError, WorkspaceError
from memoracle.jobs import canary, health, nightly
from memoracle.render.memory_md import BEGIN_MARKER, END_MARKER
from memoracle.types import IndexStatus

GIB = 1 << 30


class _Usage(NamedTuple):
    total: int
    used: int
    free: int


def _disk(percent: float) -> _Usage:
    used = int(100 * GIB * percent / 100)
    return _Usage(100 * GIB, used, 100 * GIB - used)


@pytest.fixture(autouse=True)
def _half_full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine running the tests may have a full disk; the checks must not care."""
    monkeypatch.setattr(shutil, "disk_usage", lambda path: _disk(50.0))


def _codes(report: health.HealthReport) -> list[str]:
    return [w.code for w in report.warnings]


def _message(report: health.HealthReport, code: str) -> str:
    return next(w.message for w in report.warnings if w.code == code)


def _settle(engine: Engine, clock: FixedClock) -> None:
    """A store in good order: one memory halfway faded (activation 0.5), its vector
    embedded, and a quick nightly run just now."""
    engine.remember("The NAS sits in the hall closet.", kind="fact")
    clock.advance(days=30)
    engine.reindex()
    engine.record_run("nightly", {"milliseconds": 1500})


def _memory_md(engine: Engine) -> Path:
    path = engine.settings.files_dir / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def small(settings: Settings, clock: FixedClock) -> Iterator[Engine]:
    """An engine whose limits are easy to reach: 10 facts, a 20-line MEMORY.md block."""
    tight = replace(
        settings,
        lifecycle=replace(settings.lifecycle, max_facts=10),
        render=replace(settings.render, memory_md_max_lines=20),
    )
    Engine.init(tight, clock=clock)
    with Engine.open(tight, clock=clock) as engine:
        yield engine


def test_an_empty_store_is_healthy_and_reports_every_field(engine: Engine) -> None:
    report = health.check(engine)
    assert report.status == "healthy" and report.warnings == ()
    assert health.exit_code(report) == 0
    body = report.to_json()
    assert list(body) == [
        "status",
        "checked_at",
        "memoracle_version",
        "disk",
        "memories",
        "average_activation",
        "files",
        "index",
        "index_bytes",
        "last_nightly",
        "database",
        "pointers",
        "canary",
        "graph",
        "duplicates",
        "duplicate_rate",
        "drift",
        "queue",
        "cron",
        "model",
        "warnings",
    ]
    assert body["duplicates"] == {"sampled": 0, "repeating": 0, "rate": 0.0}
    assert body["drift"] is None  # no check before this one
    assert body["graph"] == {"entities": 0, "orphans": 0, "relations": 0}
    assert body["canary"] is None  # only with probe=True
    assert body["queue"]["pending"] == 0  # type: ignore[index]
    assert body["checked_at"] == "2023-05-08T13:56:00+00:00"
    disk = body["disk"]
    assert isinstance(disk, dict)
    assert (disk["disk_total_bytes"], disk["disk_used_percent"]) == (100 * GIB, 50.0)
    assert disk["bytes_used_by_memoracle"] >= engine.store_size()
    assert body["memories"] == {
        "total": 0,
        "active": 0,
        "archived": 0,
        "superseded": 0,
        "disputed": 0,
        "forgotten": 0,
        "capped": 0,
        "max_facts": 10_000,
        "percent_of_max": 0.0,
    }
    assert body["average_activation"] is None and body["last_nightly"] is None
    assert body["index"] == {
        "model": "hash-ngram-v1@256",
        "dim": 256,
        "vectors": 0,
        "missing": 0,
        "stale": False,
        "ann": "exact",
    }
    assert body["database"] == {
        "path": str(engine.settings.db_path),
        "bytes": engine.store_size(),
        "integrity": "ok",
        "integrity_checked_at": engine.clock.now().isoformat(),
    }
    json.dumps(body)  # JSON-ready as it is


def test_a_store_in_good_order_is_healthy(engine: Engine, clock: FixedClock) -> None:
    _settle(engine, clock)
    notes = engine.settings.files_dir / "memory"
    (notes / "archive" / "2023-03").mkdir(parents=True)
    (notes / "2023-06-06.md").write_text("- a note\n")
    (notes / "travel.md").write_text("- a topic file, not a daily note\n")
    (notes / "archive" / "2023-03" / "2023-03-01.md").write_text("- an old note\n")
    report = health.check(engine)
    assert report.status == "healthy", report.warnings
    assert report.fields["average_activation"] == 0.5
    assert report.fields["last_nightly"] == {
        "at": clock.now().isoformat(),
        "seconds": 1.5,
        "status": "ok",
    }
    files = report.fields["files"]
    assert isinstance(files, dict)
    assert (files["daily_notes"], files["archived_notes"]) == (1, 1)
    memories = report.fields["memories"]
    assert isinstance(memories, dict) and (memories["total"], memories["active"]) == (1, 1)


def test_memories_and_no_nightly_run_warn(engine: Engine) -> None:
    engine.remember("The NAS sits in the hall closet.", kind="fact")
    report = health.check(engine)
    # All fresh, but a store younger than a half-life is not "barely fading".
    assert _codes(report) == ["vectors_missing", "nightly_missing"]
    assert report.status == "warning" and health.exit_code(report) == 1
    assert "`memoracle nightly`" in _message(report, "nightly_missing")
    assert "1 live texts" in _message(report, "vectors_missing")
    assert "`memoracle reindex`" in _message(report, "vectors_missing")


def test_a_nearly_full_disk_warns(
    engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settle(engine, clock)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: _disk(93.0))
    report = health.check(engine)
    assert _codes(report) == ["disk_usage_high"]
    assert "93.0% full" in report.warnings[0].message and "(80%)" in report.warnings[0].message


def test_active_memories_near_max_facts_warn(small: Engine, clock: FixedClock) -> None:
    for i in range(9):  # 9 of 10 is not over 90 %
        small.remember(f"Fact number {i}: the NAS has {i + 2} disks.", kind="fact")
    clock.advance(days=30)
    small.reindex()
    small.record_run("nightly", {"milliseconds": 1000})
    assert health.check(small).status == "healthy"
    small.remember("One fact too many: the router is in the attic.", kind="fact")
    small.reindex()
    report = health.check(small)
    assert _codes(report) == ["facts_near_limit"]
    assert (
        "10 active memories (guardrails and pinned ones aside), over 90% of "
        "lifecycle.max_facts (10)" in report.warnings[0].message
    )
    assert "`memoracle archive --apply`" in report.warnings[0].message
    memories = report.fields["memories"]
    assert isinstance(memories, dict) and memories["percent_of_max"] == 100.0


@pytest.mark.parametrize(
    ("kind", "days", "code"),
    [("guardrail", 40, "activation_high"), ("fact", 90, "activation_low")],
)
def test_average_activation_outside_its_band_warns(
    engine: Engine, clock: FixedClock, kind: str, days: int, code: str
) -> None:
    engine.remember("The NAS sits in the hall closet.", kind=kind)  # guardrails never fade
    engine.reindex()
    clock.advance(days=days)
    engine.record_run("nightly", {"milliseconds": 1000})
    report = health.check(engine)
    assert _codes(report) == [code]
    assert "decay.half_life_days (30)" in report.warnings[0].message


def test_memory_md_block_near_its_budget_warns(small: Engine, clock: FixedClock) -> None:
    _settle(small, clock)
    path = _memory_md(small)
    items = [f"- item {i} <!-- m_{i} -->\n" for i in range(16)]
    path.write_text(f"# Mine\n\n{BEGIN_MARKER}\n{''.join(items)}{END_MARKER}\n\nAfter.\n")
    report = health.check(small)
    assert _codes(report) == ["memory_md_near_budget"]  # 18 lines of 20
    assert "18 lines" in report.warnings[0].message
    assert "render.memory_md_max_lines 20" in report.warnings[0].message
    files = report.fields["files"]
    assert isinstance(files, dict)
    assert (files["memory_md_lines"], files["memory_md_block_lines"]) == (22, 18)
    assert files["memory_md_chars"] == len(path.read_text())

    path.write_text(f"{BEGIN_MARKER}\n{''.join(items[:4])}{END_MARKER}")
    assert health.check(small).status == "healthy"


@pytest.mark.parametrize(
    ("items", "warned"),
    [
        (11, []),
        (12, ["memory_md_prune"]),
        (15, ["memory_md_prune"]),
        (16, ["memory_md_near_budget"]),
    ],
)
def test_the_l1_prune_warning_comes_at_70_percent_of_the_line_budget(
    small: Engine, clock: FixedClock, items: int, warned: list[str]
) -> None:
    _settle(small, clock)
    lines = "".join(f"- item {i} <!-- m_{i} -->\n" for i in range(items))
    _memory_md(small).write_text(f"{BEGIN_MARKER}\n{lines}{END_MARKER}\n")

    report = health.check(small)

    assert _codes(report) == warned  # the block is items + 2 marker lines, of 20
    if warned == ["memory_md_prune"]:
        said = report.warnings[0].message
        assert f"{items + 2} lines, 70% or more" in said and "max_lines 20" in said


@pytest.mark.parametrize(
    ("content", "code", "said"),
    [
        (b"# Notes\n\xff\xfe broken\n", "memory_md_unreadable", "not UTF-8 text (byte 9)"),
        (f"{BEGIN_MARKER}\n- x\n<!-- memoracle:en -->\n".encode(), "memory_md_markers", "line"),
    ],
)
def test_an_unreadable_memory_md_is_a_warning_naming_the_file(
    engine: Engine, clock: FixedClock, content: bytes, code: str, said: str
) -> None:
    _settle(engine, clock)
    path = _memory_md(engine)
    path.write_bytes(content)
    report = health.check(engine)
    assert _codes(report) == [code]
    assert str(path) in report.warnings[0].message and said in report.warnings[0].message


def test_a_slow_nightly_run_warns(engine: Engine, clock: FixedClock) -> None:
    _settle(engine, clock)
    engine.record_run("nightly", {"milliseconds": 700_000})
    report = health.check(engine)
    assert _codes(report) == ["nightly_slow"]
    assert "700 s" in report.warnings[0].message and "(600 s)" in report.warnings[0].message


def test_no_nightly_run_for_two_days_warns(engine: Engine, clock: FixedClock) -> None:
    _settle(engine, clock)
    clock.advance(hours=47)
    assert health.check(engine).status == "healthy"
    clock.advance(hours=2)
    report = health.check(engine)
    assert _codes(report) == ["nightly_missing"]
    assert "49 hours ago" in report.warnings[0].message


@pytest.mark.parametrize(
    ("status", "codes"),
    [
        (IndexStatus("hash", 256, 0, 3, {"use@1": (512, 3)}, stale=True), ["index_stale"]),
        (IndexStatus("hash", 256, 60_000, 0, {}, stale=False, ann="missing"), ["ann_missing"]),
        (
            IndexStatus("hash", 256, 60_000, 5, {}, stale=False, ann="unavailable"),
            ["vectors_missing", "ann_unavailable"],
        ),
    ],
)
def test_index_states_that_need_a_reindex_warn(
    engine: Engine,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    status: IndexStatus,
    codes: list[str],
) -> None:
    _settle(engine, clock)
    monkeypatch.setattr(engine, "index_status", lambda: status)
    report = health.check(engine)
    assert _codes(report) == codes
    assert all("`memoracle reindex`" in w.message for w in report.warnings)


def test_a_check_that_raises_is_reported_and_the_others_still_run(
    engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settle(engine, clock)

    def broken() -> IndexStatus:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "index_status", broken)
    report = health.check(engine)
    assert report.status == "warning" and _codes(report) == ["check_failed"]
    assert "vector index" in report.warnings[0].message and "boom" in report.warnings[0].message
    assert report.fields["index"] is None and report.fields["average_activation"] == 0.5


def test_a_damaged_database_is_failing_not_an_exception(
    settings: Settings, clock: FixedClock
) -> None:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        for i in range(30):
            engine.remember(f"Fact number {i}: the NAS has {i + 2} disks.", kind="fact")
    with sqlite3.connect(settings.db_path) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories'")
        page = root.fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(settings.db_path, "r+b") as f:  # the memories table's first page: noise
        f.seek((page - 1) * size)
        f.write(b"\xff" * size)
    with Engine.open(settings, clock=clock) as engine:
        report = health.check(engine)
    assert report.status == "failing" and health.exit_code(report) == 2
    assert "database_damaged" in _codes(report)
    database = report.fields["database"]
    assert isinstance(database, dict) and "malformed" in str(database["integrity"])
    assert all(w.severity == "failing" for w in report.warnings if w.code.startswith("database"))
    json.dumps(report.to_json())


def _snapshot(root: Path) -> dict[str, bytes]:
    # The -shm file is SQLite's shared memory: readers mark it, by design.
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() and p.suffix != ".db-shm" else b""
        for p in sorted(root.rglob("*"))
    }


def test_check_writes_nothing(engine: Engine, clock: FixedClock) -> None:
    _settle(engine, clock)
    _memory_md(engine).write_text(f"{BEGIN_MARKER}\n- x <!-- m_1 -->\n{END_MARKER}\n")
    home = engine.settings.home
    before = _snapshot(home)
    assert "memoracle.db" in before
    health.check(engine)
    assert _snapshot(home) == before


def test_write_replaces_health_json_and_appends_history(
    engine: Engine, clock: FixedClock, tmp_path: Path
) -> None:
    first = health.check(engine)
    path = health.write(engine, first)
    assert path == engine.settings.home / "health.json"
    assert json.loads(path.read_text()) == first.to_json()

    _settle(engine, clock)
    second = health.check(engine)
    elsewhere = health.write(engine, second, output_dir=tmp_path / "out")
    assert json.loads(elsewhere.read_text()) == second.to_json()
    assert json.loads(path.read_text()) == first.to_json()  # not this one
    history = (engine.settings.home / "health-history.jsonl").read_text().splitlines()
    assert [json.loads(line)["checked_at"] for line in history] == [
        first.checked_at.isoformat(),
        second.checked_at.isoformat(),
    ]
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".health.json.")]


def test_a_failed_write_leaves_the_old_health_json_whole(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = health.check(engine)
    path = health.write(engine, report)
    before = path.read_bytes()

    def no_rename(src: str, dst: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(WorkspaceError, match="health.json: cannot write it"):
        health.write(engine, report)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.glob(".health.json.*")) == []


def test_a_broken_pointer_and_a_failing_canary_warn(engine: Engine, clock: FixedClock) -> None:
    _settle(engine, clock)
    note = engine.settings.files_dir / "memory" / "projects.md"
    note.write_text("# Projects\n- Travel plans → memory/travel.md\n")
    canary.add(
        engine.settings.home / canary.CANARY_FILE, "pottery fair", "pottery", now=clock.now()
    )
    report = health.check(engine, probe=True)
    assert _codes(report) == ["pointers_broken", "canary_low"]
    assert "memory/projects.md:2 → memory/travel.md" in report.warnings[0].message
    assert "0 of 1 canary queries" in report.warnings[1].message
    body = report.to_json()
    assert isinstance(body["pointers"], dict) and body["pointers"]["broken_count"] == 1
    assert isinstance(body["canary"], dict) and body["canary"]["ratio"] == 0.0


def test_the_duplicate_rate_counts_the_newest_memories_that_repeat_another(
    engine: Engine,
) -> None:
    engine.remember("Anna lives in Lyon.", kind="fact")
    engine.remember("Marc works at Ikea.", kind="fact")
    engine.remember("Marc works at Ikea in Lyon since May 2020.", kind="fact")  # says more
    report = health.check(engine)
    assert report.fields["duplicates"] == {"sampled": 3, "repeating": 2, "rate": 0.6667}
    assert report.fields["duplicate_rate"] == 0.6667
    (warning,) = [w for w in report.warnings if w.code == "duplicates_high"]
    assert "2 of the 3 newest" in warning.message and "dedup --fix" in warning.message

    nightly.run_nightly(engine)  # merged: one of the two is no longer live
    after = health.check(engine)
    assert after.fields["duplicates"] == {"sampled": 2, "repeating": 0, "rate": 0.0}


def test_drift_is_what_changed_since_the_last_readable_check(
    engine: Engine, clock: FixedClock
) -> None:
    health.write(engine, health.check(engine))
    history = engine.settings.home / health.HISTORY_FILE
    first = json.loads(history.read_text().splitlines()[-1])
    with open(history, "a", encoding="utf-8") as f:
        f.write('{"status": "heal')  # a line cut short
    clock.advance(hours=1)
    engine.remember("Marc works at Ikea.", kind="fact")
    engine.remember("Marc works at Ikea in Lyon since May 2020.", kind="fact")
    drift = health.check(engine).fields["drift"]
    assert isinstance(drift, dict)
    assert drift["since"] == first["checked_at"]
    assert drift["memories"] == {
        "total": 2, "active": 2, "disputed": 0, "superseded": 0, "archived": 0
    }  # fmt: skip
    assert drift["duplicate_rate"] == 1.0 and drift["average_activation"] is None
    assert drift["warnings_new"] == ["duplicates_high", "nightly_missing", "vectors_missing"]
    assert drift["warnings_cleared"] == []


def test_orphan_entities_are_those_no_live_memory_names(engine: Engine) -> None:
    anna, _ = engine.remember("My wife Anna works at Acme.")
    engine.remember("Marc lives in Lyon.")
    before = health.check(engine).fields["graph"]
    assert isinstance(before, dict) and before["orphans"] == 0 and before["entities"] >= 4
    named = engine.entities_of([anna.id])[anna.id]  # Anna, Acme, the speaker
    engine.forget(anna.ref)
    after = health.check(engine).fields["graph"]
    assert isinstance(after, dict) and after["orphans"] == len(named) == 3
    assert after["entities"] == before["entities"]


def test_the_quick_check_runs_on_the_real_clock_and_finds_a_damaged_file(
    settings: Settings,
) -> None:
    """With the system clock (no --now), a check without a passed one reads the database:
    4 KiB overwritten in the middle of the file is found, and the status is failing."""
    Engine.init(settings)
    with Engine.open(settings) as engine:
        for n in range(300):
            engine.remember(f"Fact number {n}: the server {n} runs Debian {n % 13}.")
    path = settings.home / "memoracle.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    assert size > 64 * 1024
    with open(path, "r+b") as f:
        f.seek(size // 2 // 4096 * 4096)
        f.write(os.urandom(4096))
    with Engine.open(settings) as engine:
        report = health.check(engine)
    assert report.fields["database"]["integrity"] != "ok"  # type: ignore[index]
    assert report.status == "failing"
    assert "database_damaged" in {w.code for w in report.warnings}


def _cli(home: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--home", str(home), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.mark.parametrize("damage", ["garbage", "a folder", "no permission"])
def test_a_store_that_cannot_be_opened_is_written_to_health_json_as_failing(
    tmp_path: Path, damage: str
) -> None:
    home = tmp_path / "home"
    db = home / "memoracle.db"
    assert _cli(home, "init")[0] == 0
    assert _cli(home, "capture", "--user", "I live in Lyon.")[0] == 0
    healthy = db.read_bytes()
    assert _cli(home, "--now", "2026-12-01T10:00", "health")[0] in (0, 1)
    before = json.loads((home / "health.json").read_text())
    assert before["status"] in ("healthy", "warning")
    if damage == "garbage":
        db.write_bytes(b"this is not a database at all " * 400)
    elif damage == "a folder":
        db.unlink()
        db.mkdir()
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads a file whatever its mode")
        db.chmod(0)

    code, out = _cli(home, "--now", "2026-12-02T10:00", "health")

    assert code == 2, out
    after = json.loads((home / "health.json").read_text())
    assert after["status"] == "failing"
    assert after["checked_at"].startswith("2026-12-02")
    [warning] = after["warnings"]
    assert warning["code"] == "database_unreadable" and warning["severity"] == "failing"
    assert str(db) in warning["message"] and str(db) in after["database"]["integrity"]
    assert set(after) == set(before)  # the same fields, those not measured null
    assert after["memories"] is None and after["database"]["path"] == str(db)
    history = (home / health.HISTORY_FILE).read_text().splitlines()
    assert [json.loads(line)["status"] for line in history] == [before["status"], "failing"]
    assert f"failing (1 warning(s)); {home / 'health.json'}" in out
    if damage == "no permission":
        db.chmod(0o644)
    elif damage == "a folder":
        db.rmdir()
    db.write_bytes(healthy)  # put back: the next check clears the failure
    assert _cli(home, "--now", "2026-12-03T10:00", "health")[0] in (0, 1)
    again = json.loads((home / "health.json").read_text())
    assert again["status"] == before["status"]
    assert again["drift"]["warnings_cleared"] == ["database_unreadable"]


def test_an_unopened_report_has_every_field_a_check_has(engine: Engine, clock: FixedClock) -> None:
    checked = health.check(engine).to_json()
    report = health.unopened(engine.settings, clock.now(), StoreError("x.db: broken"))
    assert list(report.to_json()) == list(checked)
    assert report.status == "failing" and health.exit_code(report) == 2
