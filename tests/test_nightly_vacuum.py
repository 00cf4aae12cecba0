"""The nightly vacuum step, the max_facts count against the archive's cap, and backups
and canaries by the engine clock (`--now`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.jobs import health, nightly


def _settings(settings: Settings, **lifecycle: object) -> Settings:
    return replace(settings, lifecycle=replace(settings.lifecycle, **lifecycle))


@pytest.fixture
def churned(settings: Settings, clock: FixedClock) -> Iterator[Engine]:
    """A store where 300 memories were archived and then restored: the archive rows
    that held them are deleted, so the file has free pages."""
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        for i in range(300):
            engine.remember(
                f"Rack note {i}: server s{i} in row {i % 13} runs build agent {i * 37}.",
                kind="fact",
            )
        clock.advance(days=400)  # every one faded below the prune threshold
        nightly.archive(engine, nightly.plan_archive(engine), actor="test")
        for memory in engine._store.archive.in_order(limit=1000):
            engine.restore(memory.memory_id)
        yield engine


def _vacuum_at(engine: Engine, share: float) -> nightly.NightlyReport:
    with Engine.open(
        _settings(engine.settings, vacuum_free_share=share), clock=engine.clock
    ) as other:
        return nightly.run_nightly(other, only="vacuum")


def test_vacuum_gives_back_the_free_pages_once_over_the_share(churned: Engine) -> None:
    space = churned.reclaimable_space()
    assert space.free_pages > 0
    db = churned.database_path

    above = round(space.share + 0.01, 4)  # the free pages are under it: no VACUUM
    size = db.stat().st_size
    quiet = _vacuum_at(churned, above)
    assert quiet.vacuum is not None and not quiet.vacuum.vacuumed
    assert quiet.steps["vacuum"]["vacuumed"] == 0
    assert quiet.steps["vacuum"]["reclaimed_bytes"] == 0
    assert churned.reclaimable_space().free_pages == space.free_pages

    report = _vacuum_at(churned, round(space.share - 0.01, 4))
    assert report.vacuum is not None and report.vacuum.vacuumed
    reclaimed = report.steps["vacuum"]["reclaimed_bytes"]
    assert reclaimed >= space.free_pages * space.page_size // 2 > 0
    assert db.stat().st_size <= size - reclaimed
    assert churned.reclaimable_space().free_pages == 0
    run = churned.last_run("nightly:vacuum", status="ok")
    assert run is not None and run.counts["reclaimed_bytes"] == reclaimed
    assert {m.status for m in churned.all_memories("active")} == {"active"}
    assert len(churned.all_memories("active")) == 300  # nothing lost


def test_the_cli_reports_the_bytes_given_back_and_a_dry_run_vacuums_nothing(
    churned: Engine,
) -> None:
    home = churned.settings.home
    db = churned.database_path
    churned.close()
    args = ["--home", str(home), "--set", "embedding.model=hash"]
    args += ["--set", "lifecycle.vacuum_free_share=0.01", "--now", "2024-06-12T09:00:00Z"]
    runner = CliRunner()
    size = db.stat().st_size
    dry = runner.invoke(main, [*args, "nightly", "--dry-run", "--only", "vacuum"])
    assert dry.exit_code == 0, dry.output
    assert "VACUUM would give back" in dry.output
    assert db.stat().st_size == size

    done = runner.invoke(main, [*args, "nightly", "--only", "vacuum", "--json"])
    assert done.exit_code == 0, done.output
    body = json.loads(done.output)
    assert body["vacuum"]["vacuumed"] is True
    assert body["vacuum"]["reclaimed_bytes"] == body["steps"]["vacuum"]["reclaimed_bytes"] > 0
    assert db.stat().st_size < size
    again = runner.invoke(main, [*args, "nightly", "--only", "vacuum"])
    assert "0 of" in again.output and "not run" in again.output


def test_guardrails_are_not_counted_against_max_facts_and_archiving_clears_the_warning(
    settings: Settings, clock: FixedClock
) -> None:
    tight = _settings(settings, max_facts=10)
    tight = replace(tight, health=replace(tight.health, facts_warn_ratio=1.0))
    Engine.init(tight, clock=clock)
    with Engine.open(tight, clock=clock) as engine:
        for i in range(4):
            engine.remember(f"Never run migration {i} on a Friday.", kind="guardrail")
        for i in range(14):
            engine.remember(f"The lab printer {i} is on floor {i + 2}.", kind="fact")
        report = health.check(engine)
        assert "facts_near_limit" in {w.code for w in report.warnings}
        assert "14 active memories (guardrails and pinned ones aside)" in report.warnings[0].message

        nightly.run_nightly(engine, only="archive")  # to the cap: the 4 lowest facts go
        memories = health.check(engine).fields["memories"]
        assert isinstance(memories, dict)
        assert (memories["active"], memories["capped"], memories["max_facts"]) == (14, 10, 10)
        assert "facts_near_limit" not in {w.code for w in health.check(engine).warnings}
        assert nightly.plan_archive(engine) == []  # the count is the archive's own


def test_the_count_against_the_cap_is_the_one_the_archive_cuts(
    settings: Settings, clock: FixedClock
) -> None:
    """At the default ratio (90 %), 9 facts of 10 do not warn, however many guardrails."""
    Engine.init(_settings(settings, max_facts=10), clock=clock)
    with Engine.open(_settings(settings, max_facts=10), clock=clock) as engine:
        for i in range(6):
            engine.remember(f"Never delete backup set {i}.", kind="guardrail")
        for i in range(9):
            engine.remember(f"Cabinet {i} holds the spare cables of desk {i}.", kind="fact")
        assert engine._store.memories.count_capped() == sum(
            nightly.counts_against_cap(m) for m in engine.all_memories("active")
        )
        assert "facts_near_limit" not in {w.code for w in health.check(engine).warnings}


def _cli(home: Path, now: str, *args: str) -> str:
    result = CliRunner().invoke(
        main, ["--home", str(home), "--set", "embedding.model=hash", "--now", now, *args]
    )
    assert result.exit_code == 0, result.output
    return result.output


def _backup_at(home: Path, now: str, n: int) -> None:
    """`archive --apply` at `now` with a memory over a cap of one: a backup first."""
    _cli(home, now, "remember", f"Spare key number {n} is under pot {n}.")
    _cli(home, now, "--set", "lifecycle.max_facts=1", "archive", "--apply")


def test_backups_are_named_and_rotated_by_now(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _cli(home, "2023-05-08T10:00:00Z", "init")
    _cli(home, "2023-05-08T10:00:00Z", "remember", "The shed key is under the red pot.")
    backups = home / "backups"
    later = [backups / f"memoracle-2026010{d}T000000Z.db" for d in range(1, 8)]
    for path in later:  # seven backups a later clock took
        path.write_bytes(b"x")
    _backup_at(home, "2023-05-08T10:00:00Z", 1)
    _backup_at(home, "2023-05-08T10:00:00Z", 2)
    names = sorted(p.name for p in backups.iterdir())
    assert "memoracle-20230508T100000Z.db" in names
    assert "memoracle-20230508T100000Z-2.db" in names  # not written over the first
    assert all(p.exists() for p in later)  # not older by the engine clock: left alone

    for day in range(10, 20):
        _backup_at(home, f"2023-05-{day}T10:00:00Z", day)
    kept = sorted(p.name for p in backups.iterdir() if p.name.startswith("memoracle-2023"))
    assert len(kept) == 7 and kept[-1] == "memoracle-20230519T100000Z.db"
    assert kept[0] == "memoracle-20230513T100000Z.db"  # the oldest by the clock went
    assert all(p.exists() for p in later)


def test_canary_added_at_is_now(tmp_path: Path) -> None:
    home = tmp_path / "h"
    _cli(home, "2023-05-08T10:00:00", "init")
    _cli(home, "2023-05-08T10:00:00", "canary", "add", "where is the key?", "--expect", "pot")
    (entry,) = json.loads((home / "canary.json").read_text())
    assert datetime.fromisoformat(entry["added_at"]) == datetime(2023, 5, 8, 10, tzinfo=UTC)
