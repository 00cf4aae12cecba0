"""The nightly jobs: archive and restore, MEMORY.md's block, daily notes, idempotence."""

from __future__ import annotations

import json
import os
import sqlite3
import tarfile
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, WorkspaceError
from memoracle.jobs import nightly
from memoracle.types import Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
PERSON = "# My notes\r\n\r\nKeep this line exactly.\r\n<!-- openclaw-memory-promotion:abc -->\r\n"


def _memory_md(engine: Engine) -> Path:
    return engine.settings.files_dir / "MEMORY.md"


def test_faded_memories_are_archived_after_a_backup_and_restored_exactly(
    engine: Engine, clock: FixedClock
) -> None:
    faded, _ = engine.remember("I went to the pottery fair.", kind="event")
    kept, _ = engine.remember("Never deploy on Fridays.", kind="guardrail")
    clock.advance(days=200)  # 0.5^(200/30) < 0.05
    plan = nightly.plan_archive(engine)
    assert [(c.memory.id, c.reason) for c in plan] == [(faded.id, "below_threshold")]
    assert engine.get(faded.ref).status == "active"  # planning changes nothing

    report = nightly.run_nightly(engine)
    assert report.backup is not None and report.backup.exists()
    assert engine.get(faded.ref).status == "archived"
    assert engine.get(kept.ref).status == "active"
    assert not any(h.id == faded.id for h in engine.search("pottery fair", k=5).hits)
    lines = (engine.settings.home / "archive").glob("*.jsonl")
    record = json.loads(next(iter(lines)).read_text().splitlines()[0])
    assert record["id"] == faded.ref and record["reason"] == "below_threshold"

    back = engine.restore(faded.ref)
    assert back.status == "active" and back.text == faded.text


def test_memory_md_block_is_rendered_and_read_back(engine: Engine, clock: FixedClock) -> None:
    path = _memory_md(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(PERSON.encode())
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    decision, _ = engine.remember("We chose Postgres 16 for billing.", kind="decision")
    report = nightly.render_memory_md(engine)
    text = path.read_bytes().decode()
    assert text.startswith(PERSON)  # outside the block: byte for byte
    assert "Never deploy on Fridays." in text and "Postgres 16" in text
    assert report.changed and report.memories == 2

    # A person adds a line inside the block and deletes the decision's line.
    lines = text.split("\r\n")
    lines = [line for line in lines if "Postgres" not in line]
    end = next(i for i, line in enumerate(lines) if "memoracle:end" in line)
    lines.insert(end, "- Anna's birthday is on May 3")
    path.write_bytes("\r\n".join(lines).encode())
    again = nightly.render_memory_md(engine)
    assert len(again.added) == 1 and again.forgotten == (decision.ref,)
    assert engine.get(decision.ref).status == "forgotten"
    assert engine.get(again.added[0]).source == "user-stated"
    assert path.read_bytes().decode().startswith(PERSON)


def test_daily_notes_are_appended_once(engine: Engine, clock: FixedClock) -> None:
    clock.set(AT)
    engine.capture([Turn("user", "We decided to ship on Tuesdays.", AT, "s", "1")])
    first = nightly.append_daily_notes(engine)
    assert [p.name for p in first] == ["2026-03-02.md"]
    note = first[0].read_text()
    assert "## Decisions Made" in note and "ship on Tuesdays" in note
    assert nightly.append_daily_notes(engine) == []  # nothing new: nothing written
    assert first[0].read_text() == note


def test_a_dry_run_changes_nothing_and_a_second_run_does_nothing_new(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    engine.remember("I went to the pottery fair.", kind="event")
    clock.advance(days=200)
    dry = nightly.run_nightly(engine, dry_run=True)
    assert dry.backup is None and len(dry.archived) == 1
    assert not _memory_md(engine).exists()
    assert engine.list_memories(status="archived") == []

    nightly.run_nightly(engine)
    snapshot = _memory_md(engine).read_bytes()
    second = nightly.run_nightly(engine)
    assert second.archived == [] and second.daily_notes == []
    assert second.memory_md is not None and not second.memory_md.changed
    assert _memory_md(engine).read_bytes() == snapshot


def test_old_notes_move_and_the_snapshot_and_exports_are_written(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(AT)
    notes = engine.settings.files_dir / "memory"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "2026-01-05.md").write_text("# 2026-01-05\n- old\n")
    (notes / "projects.md").write_text("# a topic file stays\n")
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    for n in range(400):
        engine.remember(f"Marc asked about invoice {n} for Lyon.", kind="fact")
    report = nightly.run_nightly(engine)
    assert report.notes_archived == [notes / "archive" / "2026-01" / "2026-01-05.md"]
    assert (notes / "archive" / "2026-01" / "2026-01-05.md").exists()
    assert (notes / "projects.md").exists()
    assert report.snapshot is not None
    snapshot = report.snapshot.read_text()
    assert len(snapshot.encode()) <= engine.settings.render.snapshot_bytes
    assert snapshot.startswith("# Session start") and "Never deploy" in snapshot
    facts = (engine.settings.files_dir / "knowledge-graph" / "facts.jsonl").read_text()
    assert len(facts.splitlines()) == 401
    assert nightly.hot_topics(engine)[0] == ("Lyon", 400)  # a sentence's first word is no name


def test_the_session_start_snapshot_is_memory_md_whole_and_invites_no_edit(
    engine: Engine, clock: FixedClock
) -> None:
    """SESSION-START.md holds the person's own MEMORY.md text (outside memoracle's
    block) and the block's lines, but not the block's markers: their "add a line to
    remember it" is true of MEMORY.md only; its header says edits here are overwritten."""
    clock.set(AT)
    path = _memory_md(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# My notes\n\n- The boat is moored at slip 14\n")
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    report = nightly.run_nightly(engine)
    assert report.snapshot is not None
    snapshot = report.snapshot.read_text()
    assert "The boat is moored at slip 14" in snapshot and "Never deploy" in snapshot
    assert "memoracle:begin" not in snapshot and "memoracle:end" not in snapshot
    assert "add a line to remember" not in snapshot
    assert "overwritten" in snapshot.splitlines()[2]
    assert "Never deploy" in path.read_text()  # MEMORY.md keeps its block and markers
    assert "memoracle:begin" in path.read_text()


def test_nightly_merges_duplicates_and_settles_older_memories(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("Anna lives in Lyon.", kind="fact")
    engine.remember("Anna lives in Lyon since 2021.", kind="fact")  # says more: stored
    paris, _ = engine.remember("I live in Paris.", kind="fact")
    clock.advance(days=1)
    oslo, _ = engine.remember("I moved to Oslo.", kind="fact")
    assert engine.get(paris.ref).status == "superseded"
    # A store written before slots existed: nothing was settled.
    with sqlite3.connect(engine.settings.db_path) as db:
        db.execute("DELETE FROM slots")
        db.execute("UPDATE memories SET status = 'active', superseded_by = NULL")
    report = nightly.run_nightly(engine)
    assert report.merged == 1 and report.settled == 4  # resolve runs before dedup: all four
    live = {m.text for m in engine.all_memories("active")}
    assert live == {"Anna lives in Lyon since 2021.", "I moved to Oslo."}
    assert engine.get(paris.ref).superseded_by == oslo.id
    assert nightly.run_nightly(engine).settled == 0  # once is enough


def test_steps_are_recorded_one_can_run_alone_and_runs_do_not_overlap(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    seen: list[str] = []
    report = nightly.run_nightly(engine, on_step=lambda step, counts, s: seen.append(step))
    assert seen == list(nightly.STEPS) and set(report.steps) == set(nightly.STEPS)
    assert engine._store.runs.last("nightly:render") is not None

    only = nightly.run_nightly(engine, only="render")
    assert list(only.steps) == ["render"] and only.backup is None
    with pytest.raises(InvalidInput, match="the steps are"):
        nightly.run_nightly(engine, only="decay")

    lock = engine.settings.home / "nightly.lock"
    lock.write_text(str(os.getpid()))  # a live process holds it
    with pytest.raises(WorkspaceError, match="Another nightly run"):
        nightly.run_nightly(engine)
    lock.write_text("999999999")  # a dead one: taken over
    nightly.run_nightly(engine)
    assert not lock.exists()


def test_a_broken_marker_leaves_memory_md_as_it_is_and_the_night_goes_on(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    nightly.run_nightly(engine)
    path = _memory_md(engine)
    broken = path.read_text().replace("<!-- memoracle:end -->", "<!-- memoracle:en -->")
    path.write_text(broken)
    report = nightly.run_nightly(engine)
    assert report.memory_md is not None and "marker" in (report.memory_md.problem or "")
    assert path.read_text() == broken
    assert "render" in report.steps and "clean" in report.steps


def test_a_memory_md_that_is_not_utf8_is_refused_by_name(engine: Engine) -> None:
    path = _memory_md(engine)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(WorkspaceError, match="MEMORY.md: not UTF-8"):
        nightly.render_memory_md(engine)
    assert path.read_bytes() == b"\xff\xfe not utf-8"


def test_a_missed_week_is_caught_up_in_the_daily_notes(engine: Engine, clock: FixedClock) -> None:
    clock.set(AT)
    nightly.run_nightly(engine, only="summarize")
    for day in range(7):  # a week of turns, no nightly run
        clock.advance(days=1)
        engine.capture([Turn("user", f"We decided to ship build {day}0{day}.", clock.now(),
                             "s", f"t{day}")])  # fmt: skip
    clock.advance(days=1)
    report = nightly.run_nightly(engine, only="summarize")
    assert len(report.daily_notes) == 7


def test_over_max_facts_the_lowest_scored_go_and_superseded_ones_after_retention(
    settings: Settings, clock: FixedClock
) -> None:
    small = replace(settings, lifecycle=replace(settings.lifecycle, max_facts=2))
    Engine.init(small, clock=clock)
    with Engine.open(small, clock=clock) as engine:
        decision, _ = engine.remember("We chose Postgres 16 for billing.", kind="decision")
        fact, _ = engine.remember("The NAS sits in the hall closet.", kind="fact")
        event, _ = engine.remember("I went to the pottery fair.", kind="event")
        paris, _ = engine.remember("I live in Paris.", kind="fact")
        clock.advance(days=1)
        engine.remember("I moved to Oslo.", kind="fact")  # supersedes Paris
        plan = {c.memory.id: c.reason for c in nightly.plan_archive(engine)}
        assert plan == {event.id: "over_max_facts", fact.id: "over_max_facts"}
        clock.advance(days=engine.settings.lifecycle.superseded_retention_days + 1)
        reasons = {c.memory.id: c.reason for c in nightly.plan_archive(engine, min_age_days=10**9)}
        assert reasons[paris.id] == "superseded_retention" and decision.id not in reasons


def test_old_session_logs_and_year_old_notes_are_packed_then_removed(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(AT)  # 2026-03-02
    files = engine.settings.files_dir
    sessions, notes = files / "sessions", files / "memory"
    for folder in (sessions, notes / "archive" / "2025-02", notes / "archive" / "2025-03"):
        folder.mkdir(parents=True)
    old_log = sessions / "2026-01-20-101500.jsonl"  # 41 days
    (old_log).write_text('{"role": "user"}\n')
    (sessions / "2026-02-10-080000.jsonl").write_text("{}\n")  # 20 days: kept
    (sessions / "notes-about-2020-01-01.jsonl").write_text("{}\n")  # no leading date: kept
    (sessions / "2026-13-40.jsonl").write_text("{}\n")  # not a date: kept
    year_old = notes / "archive" / "2025-02" / "2025-02-27.md"  # 368 days
    year_old.write_text("# 2025-02-27\n- old\n")
    (notes / "archive" / "2025-03" / "2025-03-02.md").write_text("# 2025-03-02\n")  # 365: kept

    dry = nightly.run_nightly(engine, dry_run=True)
    assert dry.cleaned == [old_log, year_old] and old_log.exists() and year_old.exists()

    report = nightly.run_nightly(engine)
    assert report.cleaned == [old_log, year_old]
    assert not old_log.exists() and not year_old.parent.exists()  # its month folder emptied
    assert sorted(p.name for p in sessions.iterdir()) == [
        "2026-02-10-080000.jsonl", "2026-13-40.jsonl", "notes-about-2020-01-01.jsonl"
    ]  # fmt: skip
    packed = engine.settings.home / "archive" / "cleaned" / "2026-03-02.tar.gz"
    with tarfile.open(packed) as tar:
        names = sorted(tar.getnames())
        assert names == ["memory/archive/2025-02/2025-02-27.md", "sessions/2026-01-20-101500.jsonl"]
        member = tar.extractfile("sessions/2026-01-20-101500.jsonl")
        assert member is not None and member.read() == b'{"role": "user"}\n'
    assert nightly.run_nightly(engine).cleaned == []  # twice is once


def test_a_keep_of_zero_cleans_nothing(settings: Settings, clock: FixedClock) -> None:
    life = replace(settings.lifecycle, session_logs_keep_days=0, daily_notes_keep_days=0)
    keep = replace(settings, lifecycle=life)
    Engine.init(keep, clock=clock)
    with Engine.open(keep, clock=clock) as engine:
        (engine.settings.files_dir / "sessions").mkdir(parents=True)
        log = engine.settings.files_dir / "sessions" / "2001-01-01.jsonl"
        log.write_text("{}\n")
        assert nightly.clean_old_files(engine) == [] and log.exists()


def test_after_the_first_night_dedup_looks_only_at_what_each_day_added(
    engine: Engine, clock: FixedClock
) -> None:
    old, _ = engine.remember("Anna lives in Lyon.", kind="fact")
    older, _ = engine.remember("Anna lives in Lyon since 2021.", kind="fact")
    assert len(engine.duplicates()) == 1
    assert engine.duplicates(after=older.id) == []  # both already compared
    marc, _ = engine.remember("Marc works at Ikea.", kind="fact")
    first = nightly.run_nightly(engine)
    assert first.merged == 1 and first.steps["dedup"]["through_id"] == marc.id

    clock.advance(days=1)  # a new memory meets an old one through FTS
    new, _ = engine.remember("Marc works at Ikea in Lyon since May 2020.", kind="fact")
    second = nightly.run_nightly(engine)
    assert [(g.keep.id, [m.text for m, _ in g.merge]) for g in second.duplicates] == [
        (new.id, ["Marc works at Ikea."])
    ]
    assert engine.get(old.ref).status == "superseded"
    assert nightly.run_nightly(engine).merged == 0


@pytest.mark.parametrize("ratio", [0, 10**9], ids=["fts-per-new-memory", "whole-store"])
def test_both_ways_of_comparing_a_day_find_the_same_duplicates(
    engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, ratio: int
) -> None:
    monkeypatch.setattr("memoracle.engine.upkeep.WHOLE_STORE_RATIO", ratio)
    for n in range(12):
        engine.remember(f"Sofia {n} booked the team offsite in Porto number {n}.", kind="fact")
    old, _ = engine.remember("Marc works at Ikea.", kind="fact")
    twin, _ = engine.remember("Anna lives in Lyon.", kind="fact")
    clock.advance(days=1)
    new, _ = engine.remember("Marc works at Ikea in Lyon since May 2020.", kind="fact")
    again, _ = engine.remember("Anna lives in Lyon since 2021.", kind="fact")
    found = engine.duplicates(after=twin.id)
    assert [(g.keep.id, [m.id for m, _ in g.merge]) for g in found] == [
        (new.id, [old.id]),
        (again.id, [twin.id]),
    ]


def test_a_backup_comes_before_a_bulk_change_and_weekly_before_any(
    settings: Settings, clock: FixedClock
) -> None:
    life = replace(settings.lifecycle, backup_min_changes=3, backup_every_days=7)
    few = replace(settings, lifecycle=life)
    Engine.init(few, clock=clock)
    with Engine.open(few, clock=clock) as engine:
        assert nightly.run_nightly(engine).backup is None  # nothing to change
        engine.remember("I went to the pottery fair.", kind="event")
        clock.advance(days=200)
        first = nightly.run_nightly(engine)  # one change, and no backup at all yet
        assert len(first.archived) == 1 and first.backup is not None
        assert first.backup_seconds is not None

        engine.remember("I went to the glass fair.", kind="event")
        clock.advance(days=200)
        engine.backup()
        clock.advance(hours=1)  # one change, and the newest backup is an hour old
        small = nightly.run_nightly(engine)
        assert len(small.archived) == 1 and small.backup is None

        for name in ("wood", "tea", "map"):
            engine.remember(f"I went to the {name} fair.", kind="event")
        clock.advance(days=200)
        engine.backup()
        clock.advance(hours=1)  # three changes at once: a bulk change
        bulk = nightly.run_nightly(engine)
        assert len(bulk.archived) == 3 and bulk.backup is not None


def test_archived_facts_are_appended_each_night_and_written_whole_when_they_must(
    engine: Engine, clock: FixedClock
) -> None:
    path = engine.settings.files_dir / "knowledge-graph" / "archived-facts.jsonl"

    def exported() -> list[str]:
        return [json.loads(line)["id"] for line in path.read_text().splitlines()]

    def last_export() -> dict[str, int]:
        run = engine.last_run("export:archived", status="ok")
        assert run is not None
        return run.counts

    first, _ = engine.remember("I went to the pottery fair.", kind="event")
    clock.advance(days=200)
    nightly.run_nightly(engine)
    second, _ = engine.remember("I went to the glass fair.", kind="event")
    clock.advance(days=200)
    nightly.run_nightly(engine)
    assert exported() == [first.ref, second.ref]
    assert (last_export()["whole"], last_export()["written"]) == (0, 1)  # appended
    nightly.run_nightly(engine)
    assert exported() == [first.ref, second.ref] and last_export()["written"] == 0

    engine.restore(first.ref)  # out of the cold tier: the file is written whole
    nightly.export_archived(engine)
    assert exported() == [second.ref] and last_export()["whole"] == 1
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"id": "m_')  # an append cut short by a crash
    nightly.export_archived(engine)
    assert exported() == [second.ref] and last_export()["whole"] == 1


def test_the_nightly_integrity_check_runs_weekly(engine: Engine, clock: FixedClock) -> None:
    checked = [nightly.run_nightly(engine).steps["health"]["integrity_checked"]]
    for _ in range(8):
        clock.advance(days=1)
        checked.append(nightly.run_nightly(engine).steps["health"]["integrity_checked"])
    assert checked == [1, 0, 0, 0, 0, 0, 0, 1, 0]
    body = json.loads((engine.settings.home / "health.json").read_text())
    assert body["database"]["integrity"] == "ok"
    assert body["database"]["integrity_checked_at"] == (clock.now() - timedelta(days=1)).isoformat()


def test_a_memory_folder_it_cannot_write_fails_one_step_and_the_next_night_catches_up(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(AT)
    engine.capture([Turn("user", "We decided to ship on Tuesdays.", AT, "s", "1")])
    blocker = engine.settings.files_dir / "memory"
    blocker.rmdir()  # init made it
    blocker.write_text("not a folder")  # as unwritable as a read-only folder, even for root
    report = nightly.run_nightly(engine)
    assert len(report.problems) == 1 and report.problems[0].startswith("summarize: ")
    assert "memory/2026-03-02.md: cannot read it (Not a directory)" in report.problems[0]
    assert set(report.steps) == set(nightly.STEPS) - {"summarize"}
    assert _memory_md(engine).exists() and blocker.read_text() == "not a folder"
    assert engine._store.runs.last("nightly:summarize") is not None
    assert engine._store.runs.last("nightly:summarize", status="ok") is None

    blocker.unlink()
    clock.advance(days=1)
    assert [p.name for p in nightly.run_nightly(engine).daily_notes] == ["2026-03-02.md"]


def test_a_half_written_note_is_left_as_it_is_and_the_other_days_are_written(
    engine: Engine, clock: FixedClock
) -> None:
    clock.set(AT)
    engine.capture([Turn("user", "We decided to ship on Tuesdays.", AT, "s", "1")])
    clock.advance(days=1)
    engine.capture([Turn("user", "We decided to ship on Fridays.", clock.now(), "s", "2")])
    notes = engine.settings.files_dir / "memory"
    notes.mkdir(parents=True, exist_ok=True)
    cut = "# 2026-03-02\n- Café".encode()[:-1]  # a crash cut 'é' in half
    (notes / "2026-03-02.md").write_bytes(cut)
    report = nightly.run_nightly(engine)
    assert "2026-03-02.md: not UTF-8" in report.problems[0]
    assert (notes / "2026-03-02.md").read_bytes() == cut
    assert "ship on Fridays" in (notes / "2026-03-03.md").read_text()


def test_a_line_a_person_added_that_cannot_be_stored_stays_and_is_named(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    nightly.render_memory_md(engine)
    path = _memory_md(engine)
    huge = "- " + "word " * (engine.settings.capture.max_turn_chars // 5 + 10)
    text = path.read_text().replace(
        "<!-- memoracle:end -->", f"- Anna likes tea\n{huge}\n<!-- memoracle:end -->"
    )
    path.write_text(text)
    report = nightly.render_memory_md(engine)
    assert report.problem is not None and "cannot be stored" in report.problem
    assert "max_turn_chars" in report.problem and path.read_text() == text
    assert [engine.get(r).text for r in report.added] == ["Anna likes tea"]

    path.write_text(text.replace(huge + "\n", ""))  # the person shortens it
    again = nightly.render_memory_md(engine)
    assert again.problem is None and "Anna likes tea <!--" in path.read_text()
    assert len(engine.list_memories()) == 2  # stored once


def test_a_reversed_preference_stored_before_slots_supersedes_instead_of_merging(
    engine: Engine, clock: FixedClock
) -> None:
    old, _ = engine.remember("I prefer coffee over tea.", kind="preference")
    clock.advance(days=1)
    new, _ = engine.remember("I prefer tea over coffee.", kind="preference")
    with sqlite3.connect(engine.settings.db_path) as db:  # as if stored before slots existed
        db.execute("DELETE FROM slots")
        db.execute("UPDATE memories SET status = 'active', superseded_by = NULL")
    assert len(engine.duplicates()) == 1  # the same words: a duplicate, by words alone
    report = nightly.run_nightly(engine)
    assert report.merged == 0 and report.settled == 2
    assert engine.get(old.ref).superseded_by == new.id
    assert engine.get(new.ref).status == "active"


def test_a_damaged_graph_log_fails_the_graph_step_by_name_and_the_night_goes_on(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("My wife Anna works at Acme.")
    nightly.run_nightly(engine)
    log = engine.settings.files_dir / "knowledge-graph" / "graph-log.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    clock.advance(days=1)
    report = nightly.run_nightly(engine)
    assert report.problems and report.problems[0].startswith(f"graph: {log}:2")
    assert "Move the graph log aside" in report.problems[0]
    assert "render" in report.steps and "health" in report.steps
    log.rename(log.with_suffix(".bad"))
    clock.advance(days=1)
    again = nightly.run_nightly(engine)
    assert again.problems == [] and again.steps["graph"]["logged"] > 0
