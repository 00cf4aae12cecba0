"""Compress on completion (docs/lifecycle.md#compress-on-completion): a completed topic's
file becomes a short summary, its full notes move beside it and stay searchable, the
undo restores it; `memoracle complete` has a dry run and a backup; a project whose tasks
a turn said were done completes by itself at night."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.jobs import nightly
from memoracle.jobs.nightly import topics
from memoracle.render.topic import SUMMARY_ITEMS
from memoracle.types import Turn

FACTS = [
    "Project Atlas uses Redis for its job queue.",
    "The Project Atlas staging server is atlas-staging.internal.",
    "Dana reviews every Project Atlas pull request.",
    "Project Atlas launches on the first of December.",
    "Project Atlas stores invoices in the ledger bucket.",
    "Project Atlas sends its alerts to the ops channel.",
    "Project Atlas builds run on the blue runners.",
    "Project Atlas pins Python 3.12 for its workers.",
    "Project Atlas keeps its secrets in the vault namespace atlas.",
    "Project Atlas was estimated at six weeks of work.",
]


def _atlas(engine: Engine) -> Path:
    for text in FACTS:
        engine.remember(text, kind="fact")
    engine.remember("We decided to build Project Atlas on Postgres.", kind="decision")
    engine.read_graph_backlog()
    return engine.settings.files_dir / "memory" / "topics"


def _ids(text: str) -> set[str]:
    return {part.split(" -->")[0] for part in text.split("<!-- ")[1:]}


def test_complete_compresses_the_topic_file_and_keeps_the_full_notes(engine: Engine) -> None:
    folder = _atlas(engine)
    report = topics.complete_topic(engine, "Atlas")
    assert report.backup is not None and report.backup.exists()
    assert len(report.memories) == len(FACTS) + 1
    summary = (folder / "atlas.md").read_text()
    full = (folder / "atlas_full.md").read_text()
    assert summary.startswith("# Atlas (complete)")
    assert "[atlas_full.md](atlas_full.md)" in summary
    assert summary.count("\n- ") == SUMMARY_ITEMS + 1  # the items, and "… and N more"
    assert "decision: We decided to build Project Atlas on Postgres." in summary  # kept
    assert len(_ids(full)) == len(FACTS) + 1  # every memory, in the full notes
    assert len(summary.encode()) < len(full.encode())
    # still searchable: the memories stay stored, only marked
    hits = engine.search("ledger bucket invoices").hits
    assert hits and "ledger bucket" in hits[0].text
    actions = {e.action for e in engine.audit_entries(limit=100)}
    assert "complete" in actions


def test_the_dry_run_shows_the_files_and_changes_nothing(engine: Engine) -> None:
    folder = _atlas(engine)
    nightly.run_nightly(engine, only="render")
    before = (folder / "atlas.md").read_text()
    backups = sorted((engine.settings.home / "backups").glob("*.db"))
    report = topics.complete_topic(engine, "Atlas", dry_run=True)
    assert report.backup is None and report.memories
    assert {c.path.name for c in report.changes} == {"atlas.md", "atlas_full.md"}
    assert (folder / "atlas.md").read_text() == before
    assert not (folder / "atlas_full.md").exists()
    assert sorted((engine.settings.home / "backups").glob("*.db")) == backups
    assert all("completed" not in m.details for m in engine.all_memories("active"))
    preview = {c.path.name: c.after for c in report.changes}
    topics.complete_topic(engine, "Atlas")  # the dry run showed what the real run writes
    assert preview["atlas.md"] == (folder / "atlas.md").read_text()
    assert preview["atlas_full.md"] == (folder / "atlas_full.md").read_text()


def test_undo_reopens_the_topic_and_the_night_keeps_it_open(
    engine: Engine, clock: FixedClock
) -> None:
    folder = _atlas(engine)
    nightly.run_nightly(engine, only="render")
    plain = (folder / "atlas.md").read_text()
    topics.complete_topic(engine, "Atlas")
    assert (folder / "atlas.md").read_text() != plain
    nightly.run_nightly(engine, only="render")  # the night writes the summary again
    assert (folder / "atlas.md").read_text().startswith("# Atlas (complete)")
    report = topics.complete_topic(engine, "Atlas", undo=True)
    assert len(report.memories) == len(FACTS) + 1
    assert (folder / "atlas.md").read_text() == plain
    clock.advance(days=3)
    night = nightly.run_nightly(engine)
    assert night.steps["complete"]["topics"] == 0
    assert not (folder / "atlas.md").read_text().startswith("# Atlas (complete)")


def test_a_project_whose_tasks_a_turn_said_done_completes_at_night(
    engine: Engine, clock: FixedClock
) -> None:
    folder = _atlas(engine)
    engine.capture(
        [Turn("user", "I need to migrate Project Atlas billing to Stripe.", clock.now(), "s", "1")]
    )
    night = nightly.run_nightly(engine)
    assert night.steps["complete"]["topics"] == 0  # a task still open
    clock.advance(days=2)
    engine.capture(
        [Turn("user", "I migrated Project Atlas billing to Stripe, done.", clock.now(), "s", "2")]
    )
    night = nightly.run_nightly(engine)
    assert night.steps["complete"]["topics"] == 0  # said today: not yet quiet
    clock.advance(days=2)
    night = nightly.run_nightly(engine)
    assert night.steps["complete"] == {"topics": 1, "memories": len(FACTS) + 3} | {
        "milliseconds": night.steps["complete"]["milliseconds"]
    }
    assert (folder / "atlas.md").read_text().startswith("# Atlas (complete)")
    assert (folder / "atlas_full.md").exists()


def test_a_person_never_completes_by_themselves(engine: Engine, clock: FixedClock) -> None:
    for i in range(6):
        engine.remember(f"Anna reviewed pull request {i} for the billing service.", kind="fact")
    engine.capture(
        [Turn("user", "I need to send Anna the quarterly report.", clock.now(), "s", "1")]
    )
    clock.advance(days=1)
    engine.capture([Turn("user", "I sent Anna the quarterly report, done.", clock.now(), "s", "2")])
    clock.advance(days=2)
    night = nightly.run_nightly(engine)
    assert night.steps["complete"]["topics"] == 0


def test_the_complete_command(engine: Engine, settings: object) -> None:
    _atlas(engine)
    home = str(engine.settings.home)
    runner = CliRunner()
    dry = runner.invoke(main, ["--home", home, "complete", "Atlas", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would complete Atlas: 11 memories" in dry.output and "+# Atlas (complete)" in dry.output
    done = runner.invoke(main, ["--home", home, "complete", "Atlas", "--json"])
    body = json.loads(done.output)
    assert body["topic"] == "Atlas" and len(body["memories"]) == 11 and body["backup"]
    missing = runner.invoke(main, ["--home", home, "complete", "Nowhere"])
    assert missing.exit_code == 1 and "No topic named 'Nowhere'" in missing.output
