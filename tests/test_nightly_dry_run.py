"""A nightly dry run lists exactly what the real run then does, and writes nothing."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.jobs import nightly


def _tree(folder: Path) -> dict[str, str]:
    """Every file under `folder` by its relative path, with the hash of its bytes (but
    the WAL's shared-memory index, which any reader of the database changes)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith("-shm")
    }


def _busy_night(engine: Engine, clock: FixedClock) -> None:
    """A store with work for every step: faded memories, near-duplicates, a line a person
    added to MEMORY.md, restored memories (free pages), old notes."""
    for i in range(150):
        engine.remember(f"Old event {i}: the team visited plant {i} in town {i % 7}.", kind="event")
    clock.advance(days=300)
    engine.remember("We deploy the billing service with Helm charts.", kind="decision")
    engine.remember("We deploy the billing service with Helm charts!", kind="decision")
    for i in range(6):
        engine.remember(f"Anna reviewed pull request {i} for the billing service.", kind="fact")
    nightly.run_nightly(engine, only="render")
    memory_md = engine.settings.files_dir / "MEMORY.md"
    text = memory_md.read_text()
    marker = "## Key facts"
    if marker in text:
        text = text.replace(marker, f"{marker}\n- The VPN gateway is vpn2.example.org", 1)
        memory_md.write_text(text)
    engine.reindex()
    faded = nightly.plan_archive(engine)
    nightly.archive(engine, faded[:140], actor="test")
    for candidate in faded[:140]:
        engine.restore(candidate.memory.id)  # their archive rows go: free pages
    clock.advance(days=7)  # the render's backup is a week old: the night takes its own


def _counts(report: nightly.NightlyReport) -> dict[str, dict[str, int]]:
    """Each step's counts but its time; health is left out: it checks the files as they
    are, and a dry run has not written them."""
    return {
        step: {k: v for k, v in counts.items() if k != "milliseconds"}
        for step, counts in report.steps.items()
        if step != "health"
    }


def test_a_dry_run_lists_what_the_run_does_and_writes_nothing(
    settings: Settings, clock: FixedClock
) -> None:
    tuned = replace(settings, lifecycle=replace(settings.lifecycle, vacuum_free_share=0.0))
    Engine.init(tuned, clock=clock)
    with Engine.open(tuned, clock=clock) as engine:
        _busy_night(engine, clock)
        home, files = engine.settings.home, engine.settings.files_dir
        store_before = _tree(home)
        files_before = _tree(files)

        dry = nightly.run_nightly(engine, dry_run=True)
        assert _tree(home) == store_before  # the database, its WAL, backups, archive
        assert _tree(files) == files_before
        assert dry.backup is None and dry.backup_before is not None
        assert not list(home.glob(".nightly-dry-run-*"))  # the scratch copy is gone

        real = nightly.run_nightly(engine)
    counts = _counts(dry)
    assert counts == _counts(real)
    assert counts["archive"]["archived"] > 0 and counts["dedup"]["merged"] > 0
    assert counts["render"]["files"] > 0 and counts["render"]["added"] == 1
    assert counts["vacuum"]["vacuumed"] == 1 and counts["vacuum"]["reclaimed_bytes"] > 0
    assert dry.backup_before == real.backup_before and real.backup is not None
    assert [c.memory.id for c in dry.archived] == [c.memory.id for c in real.archived]
    assert [(g.keep.id, [m.id for m, _ in g.merge]) for g in dry.duplicates] == [
        (g.keep.id, [m.id for m, _ in g.merge]) for g in real.duplicates
    ]
    assert [(c.path, c.after) for c in dry.changes] == [(c.path, c.after) for c in real.changes]
    assert dry.appended == real.appended
    for change in real.changes:  # what the dry run showed is what was written
        assert change.path.read_text() == change.after


def test_the_cli_dry_run_lists_each_change(settings: Settings, clock: FixedClock) -> None:
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        _busy_night(engine, clock)
        home = engine.settings.home
    result = CliRunner().invoke(
        main,
        ["--home", str(home), "--set", "embedding.model=hash", "--now", clock.now().isoformat()]
        + ["nightly", "--dry-run"],
    )
    assert result.exit_code == 0, result.output
    out = result.output
    for line in ("backup  the store, before the archive step", "archive m_", "merge   m_"):
        assert line in out
    assert "write   " in out and " lines)" in out and "facts.jsonl (+" in out
    assert "append  " in out and "archived-facts.jsonl" in out
    assert "vacuum: " in out and "(dry run)" in out
