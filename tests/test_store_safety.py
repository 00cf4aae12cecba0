"""The store's safety: never re-created silently, damage found and named by `doctor`,
writes refused until `doctor --fix` brings the memories back, backups taken and checked."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock, parse_instant
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.errors import StoreDamaged
from memoracle.jobs import doctor, nightly
from memoracle.store import safety

NOW = "2026-06-01T09:00:00+00:00"
MEMORIES = 40


@dataclass(frozen=True)
class Template:
    home: Path
    memories: int  # memories in the store and in its newest backup
    memory_md: bytes


def _settings(home: Path) -> Settings:
    return load(home, env={}, overrides={"embedding.model": "hash"})


def cli(home: Path, *args: str, code: int | None = 0) -> str:
    result = CliRunner().invoke(
        main, ["--home", str(home), "--set", "embedding.model=hash", "--now", NOW, *args]
    )
    if code is not None:
        assert result.exit_code == code, result.output
    # Anything but a clean exit is a traceback the user would have seen.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """A workspace after a night: memories, a verified backup, the nightly export and
    MEMORY.md's block."""
    home = tmp_path_factory.mktemp("template") / "home"
    settings = _settings(home)
    clock = FixedClock(parse_instant(NOW))
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        for i in range(MEMORIES):
            engine.remember(f"Never restart database server {i} during business hours.",
                            kind="guardrail")  # fmt: skip
        report = nightly.run_nightly(engine)
        assert report.backup is not None  # the first night backs the store up
        count = engine.newest_memory_id()
    memory_md = settings.files_dir / "MEMORY.md"
    assert memory_md.read_text().count("<!-- m_") == MEMORIES
    return Template(home, count, memory_md.read_bytes())


def _page_size(db: Path) -> int:
    return int.from_bytes(db.read_bytes()[16:18], "big")


def _empty(db: Path) -> None:
    db.write_bytes(b"")


def _truncate(db: Path) -> None:
    size = db.stat().st_size
    os.truncate(db, size // 2 // _page_size(db) * _page_size(db))


def _overwrite_middle(db: Path) -> None:
    size = db.stat().st_size
    with open(db, "r+b") as file:
        file.seek(size // 2 // 4096 * 4096)
        file.write(random.Random(7).randbytes(4096))


def _header_garbage(db: Path) -> None:
    with open(db, "r+b") as file:
        file.write(b"\xde\xad\xbe\xef" * 25)


def _delete(db: Path) -> None:
    db.unlink()
    assert list((db.parent / "backups").glob("memoracle-*.db"))


def _stale_wal(db: Path) -> None:
    """A crash leaves the WAL of the last writes; then an older copy of the file (laid
    out otherwise) is put back beside it, and SQLite replays the WAL over it."""
    settings = _settings(db.parent)
    older = db.parent / "older.db"
    with Engine.open(settings, clock=FixedClock(parse_instant(NOW))) as engine:
        engine._store.maintenance.scratch_copy(older)
        engine._store._db.conn.execute("PRAGMA wal_autocheckpoint = 0")
        for i in range(60):
            engine.remember(f"Rack {i % 5} holds the crash test host {i}.", kind="fact")
        crashed = Path(f"{db}-wal").read_bytes()  # the process is killed here
    conn = sqlite3.connect(older, isolation_level=None)
    conn.execute("VACUUM")
    conn.close()
    os.replace(older, db)
    Path(f"{db}-wal").write_bytes(crashed)
    Path(f"{db}-shm").unlink(missing_ok=True)


def _drop_table(db: Path) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DROP TABLE memories")
    conn.close()


def _corrupt_index(db: Path) -> None:
    conn = sqlite3.connect(db)
    (root,) = conn.execute(
        "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND name = 'memories_hash'"
    ).fetchone()
    conn.close()
    page = _page_size(db)
    with open(db, "r+b") as file:
        file.seek((root - 1) * page)
        file.write(bytes(page))


def _directory(db: Path) -> None:
    db.unlink()
    db.mkdir()
    (db / "stray.txt").write_text("not a database")


def _no_permissions(db: Path) -> None:
    db.chmod(0)


# case -> (how the file is damaged, the finding doctor names)
CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "emptied": (_empty, "database_empty"),
    "truncated": (_truncate, "database_truncated"),
    "4 KiB overwritten": (_overwrite_middle, "database_damaged"),
    "header garbage": (_header_garbage, "database_not_sqlite"),
    "deleted, backups kept": (_delete, "database_missing"),
    "stale WAL after a crash": (_stale_wal, "database_damaged"),
    "table dropped": (_drop_table, "database_tables_missing"),
    "index corrupted": (_corrupt_index, "database_damaged"),
    "a folder in its place": (_directory, "database_not_a_file"),
    "permissions 000": (_no_permissions, "database_unreadable"),
}


def _state(db: Path) -> object:
    """What stands at `db` now, to tell that a dry run changed nothing."""
    if db.is_dir():
        return sorted(p.name for p in db.iterdir())
    if not db.exists():
        return None
    if not os.access(db, os.R_OK):
        return db.stat().st_mode
    return db.read_bytes()


@pytest.mark.parametrize("case", list(CASES))
def test_each_damage_is_named_refused_and_recovered(
    case: str, template: Template, tmp_path: Path
) -> None:
    if case == "permissions 000" and os.geteuid() == 0:
        pytest.skip("running as root: root reads a file whatever its permissions")
    home = tmp_path / "home"
    shutil.copytree(template.home, home)
    db = home / "memoracle.db"
    damage, code = CASES[case]
    damage(db)

    out = cli(home, "doctor", code=2)  # detected, and named
    assert f"[{code}]" in out and "failing" in out
    refused = cli(home, "remember", "Deploy the billing service on Fridays.", code=2)
    assert "doctor --fix" in refused and "nothing was written" in refused
    assert "doctor --fix" in cli(home, "nightly", code=2)
    assert (home / "workspace" / "MEMORY.md").read_bytes() == template.memory_md

    before = _state(db)
    plan = cli(home, "doctor", "--fix", "--dry-run", code=2)
    assert "would: " in plan and ("would: restore" in plan or "permission" in plan)
    assert _state(db) == before  # a dry run changes nothing

    fixed = cli(home, "doctor", "--fix", code=None)
    assert "fixed: " in fixed and "failing" not in fixed, fixed
    assert safety.check(db, deep=True) == ["ok"]
    assert safety.counts(db)["memories"] >= template.memories
    listed = cli(home, "list", "--limit", "1000")
    assert listed.count("Never restart database server") == MEMORIES
    cli(home, "remember", "Deploy the billing service on Tuesdays.")  # writes go on
    kept = list((home / "damaged").iterdir()) if (home / "damaged").exists() else []
    assert kept or case in ("deleted, backups kept", "permissions 000")  # never deleted


def test_the_attack_emptied_store_keeps_memory_md_and_init_needs_force(
    template: Template, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template.home, home)
    (home / "memoracle.db").write_bytes(b"")
    out = cli(home, "nightly", code=2)
    assert "is empty (0 bytes)" in out and "memoracle --home" in out and "--dry-run" in out
    assert (home / "workspace" / "MEMORY.md").read_bytes() == template.memory_md
    assert (home / "memoracle.db").read_bytes() == b""  # nothing written to it
    assert "init --force" in cli(home, "init", code=2)
    # Read-only recall still answers, from the files.
    assert "Never restart database server 7" in cli(home, "recall", "database server 7")
    cli(home, "init", "--force")
    assert [p.name for p in (home / "damaged").iterdir()][0].startswith("memoracle.db-")
    assert safety.counts(home / "memoracle.db")["memories"] == 0


def test_without_backups_the_store_is_rebuilt_from_the_export_and_memory_md(
    template: Template, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template.home, home)
    shutil.rmtree(home / "backups")
    memory_md = home / "workspace" / "MEMORY.md"
    added = "- The VPN gateway is vpn2.example.org <!-- m_999 -->"
    memory_md.write_text(memory_md.read_text().replace("## Guardrails", f"## Guardrails\n{added}"))
    (home / "memoracle.db").write_bytes(b"")
    plan = cli(home, "doctor", "--fix", "--dry-run", code=2)
    assert "would: rebuild a store from" in plan and f"{MEMORIES + 1} memories" in plan
    cli(home, "doctor", "--fix", code=None)
    listed = cli(home, "list", "--limit", "1000")
    assert listed.count("Never restart database server") == MEMORIES
    assert "vpn2.example.org" in listed


def test_a_new_workspace_is_still_created_and_opened(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    cli(home, "init")
    (home / "memoracle.db").write_bytes(b"")  # nothing shows earlier life: a fresh start
    cli(home, "remember", "Never deploy on Fridays.")
    assert "No memoracle workspace" in cli(
        tmp_path / "none", "list", code=2
    )  # a missing home: exit 2


def test_deep_runs_the_full_integrity_check_and_its_failure_is_reported(
    template: Template, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    shutil.copytree(template.home, home)
    asked: list[bool] = []
    real = safety.check

    def spy(path: Path, *, deep: bool, limit: int = 5) -> list[str]:
        asked.append(deep)
        return real(path, deep=deep, limit=limit)

    monkeypatch.setattr(safety, "check", spy)
    cli(home, "doctor", code=None)
    cli(home, "doctor", "--deep", code=None)
    assert asked[0] is False and asked[-1] is True  # the store's check; backups: always deep

    def broken(path: Path, *, deep: bool, limit: int = 5) -> list[str]:
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(safety, "check", broken)
    out = cli(home, "doctor", "--deep", code=2)
    assert "[database_damaged]" in out and "malformed" in out
    assert "doctor --fix" in cli(home, "remember", "Ship it.", code=2)  # marked: refused


def test_the_newest_backup_is_checked_and_a_store_gets_one_on_its_first_night(
    settings: Settings, clock: FixedClock
) -> None:
    kept = replace(settings, lifecycle=replace(settings.lifecycle, backups_kept=2))
    Engine.init(kept, clock=clock)
    with Engine.open(kept, clock=clock) as engine:
        engine.remember("Never deploy on Fridays.", kind="guardrail")
        first = nightly.run_nightly(engine)  # nothing to change, but no backup yet
        assert first.backup is not None and first.backup_before == "archive"
        for _ in range(3):  # a week later each time: rotated down to two
            clock.advance(days=8)
            assert nightly.run_nightly(engine).backup is not None
    backups = sorted((kept.home / "backups").glob("memoracle-*.db"))
    assert len(backups) == 2
    result = doctor.run(kept, clock)
    assert result.report.fields["backup"]["counts"]["memories"] == 1  # type: ignore[index]
    backups[-1].write_bytes(b"SQLite format 3\x00" + bytes(4000))
    codes = {f.warning.code for f in doctor.run(kept, clock).findings}
    assert "backup_damaged" in codes
    for path in backups:
        path.unlink()
    codes = {f.warning.code for f in doctor.run(kept, clock).findings}
    assert "backup_missing" in codes


def test_opening_refuses_a_store_without_its_tables(settings: Settings, clock: FixedClock) -> None:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.remember("Never deploy on Fridays.", kind="guardrail")
    conn = sqlite3.connect(settings.db_path, isolation_level=None)
    conn.execute("DROP TABLE held")
    conn.close()
    with pytest.raises(StoreDamaged, match="lacks table held.*doctor --fix"):
        Engine.open(settings, clock=clock)
