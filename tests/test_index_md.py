"""INDEX.md (docs/lifecycle.md#indexmd) and the consolidation report
(docs/lifecycle.md#the-consolidation-report), both written by the nightly run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.jobs import nightly
from memoracle.jobs.nightly import consolidation
from memoracle.jobs.nightly.index_md import INDEX_FILE, index_text


def test_the_index_lists_every_memory_file_with_what_it_holds_and_its_size(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    files = {
        "MEMORY.md": "# Memory\n\n## Key facts\n- a\n",
        "memory/topics/atlas.md": "# Atlas\n\n- Atlas uses Redis\n",
        "memory/topics/atlas_full.md": "# Atlas: the full notes\n",
        "reference/entities.md": "# Entities\n\n## Person\n- Anna\n",
        "memory/2026-11-20.md": "# 2026-11-20\n\n## Decisions\n- x\n",
        "memory/2026-12-01.md": "# 2026-12-01\n\n## Facts Learned\n- y\n",
        "memory/archive/2026-10/2026-10-02.md": "# 2026-10-02\n",
        "memory/archive/2026-10/2026-10-03.md": "# 2026-10-03\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    text = index_text(root)
    assert f"- [MEMORY.md](MEMORY.md) — Memory: Key facts ({len(files['MEMORY.md'])} B)" in text
    assert (
        "- [memory/topics/atlas_full.md](memory/topics/atlas_full.md) — Atlas: the full notes"
        in text
    )
    assert "[reference/entities.md](reference/entities.md) — Entities: Person" in text
    assert text.index("## Daily notes, 2026-12") < text.index("## Daily notes, 2026-11")
    assert "2026-11-20: Decisions" in text
    assert "- [memory/archive/2026-10/](memory/archive/2026-10/) — 2 archived notes (26 B)" in text
    listed = [line for line in text.splitlines() if line.startswith("- [")]
    assert len(listed) == 7  # one line a file, the archive one line a month


def test_the_night_writes_the_index_atomically_and_keeps_it_current(
    engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(6):
        engine.remember(f"Project Atlas reviewed pull request {i} for billing.", kind="fact")
    replaced: list[str] = []
    real_replace = os.replace
    monkeypatch.setattr(
        os, "replace", lambda a, b: (replaced.append(Path(b).name), real_replace(a, b))[1]
    )
    night = nightly.run_nightly(engine)
    assert INDEX_FILE in replaced  # written to a temp file, then renamed over
    index = (engine.settings.files_dir / INDEX_FILE).read_text()
    assert "memory/topics/atlas.md" in index and "- [MEMORY.md](MEMORY.md)" in index
    assert night.steps["index"]["written"] == 1
    # a file the day added shows at the next night
    (engine.settings.files_dir / "reference" / "trips.md").write_text("# Trips\n")
    nightly.run_nightly(engine, only="index")
    assert "reference/trips.md" in (engine.settings.files_dir / INDEX_FILE).read_text()
    dry = nightly.run_nightly(engine, dry_run=True)
    assert "index" in dry.steps


def test_each_night_writes_a_dated_consolidation_report_kept_thirty_days(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("The billing service is deployed with Helm charts on the blue cluster.")
    engine.remember(
        "The billing service is deployed with Helm charts on the blue cluster, says Dana."
    )
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    night = nightly.run_nightly(engine)
    [path] = consolidation.reports(engine.settings.home)
    assert path.name == f"consolidation-{clock.now():%Y-%m-%d}.md"
    text = path.read_text()
    assert night.merged == 1
    assert "merged 1, superseded 0, archived 0" in text
    assert "## Merged" in text and " into m_" in text
    assert "## Promoted to MEMORY.md" in text  # the guardrail entered the block
    for _ in range(32):
        clock.advance(days=1)
        nightly.run_nightly(engine, only="report")
    kept = consolidation.reports(engine.settings.home)
    assert len(kept) == consolidation.REPORT_DAYS + 1  # today and the 30 days before
    assert path not in kept
