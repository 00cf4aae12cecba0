"""The consolidation report (docs/lifecycle.md): what each nightly run merged, superseded,
archived, completed and promoted to MEMORY.md's block, as a dated Markdown file,
HOME/reports/consolidation-YYYY-MM-DD.md (a second run the same day replaces it: the
night is idempotent), kept `REPORT_DAYS` days. Written by the nightly `report` step from
the run's own report; a dry run writes none."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Protocol

from memoracle.engine import Engine
from memoracle.files import write_atomically
from memoracle.jobs.nightly.archive import ArchiveCandidate
from memoracle.jobs.nightly.memory_md import FileChange
from memoracle.types import DuplicateSet
from memoracle.workspace import MEMORY_FILE

REPORTS_DIR = "reports"  # under HOME
REPORT_DAYS = 30  # consolidation reports older than this are removed by the next night
_PREFIX = "consolidation-"
_REF = re.compile(r"<!-- (m_\d+) -->")
_LISTED = 50  # items named under one heading, at most (all are counted)


class Night(Protocol):
    """What the report reads of the nightly run's report (`NightlyReport`)."""

    @property
    def steps(self) -> Mapping[str, Mapping[str, int]]: ...
    @property
    def duplicates(self) -> Sequence[DuplicateSet]: ...
    @property
    def superseded(self) -> int: ...
    @property
    def archived(self) -> Sequence[ArchiveCandidate]: ...
    @property
    def changes(self) -> Sequence[FileChange]: ...
    @property
    def problems(self) -> Sequence[str]: ...


def promoted(changes: Sequence[FileChange]) -> list[str]:
    """The memories the night put in MEMORY.md's block: refs in its new text, not its old."""
    for change in changes:
        if change.path.name == MEMORY_FILE:
            before = set(_REF.findall(change.before or ""))
            return [r for r in dict.fromkeys(_REF.findall(change.after)) if r not in before]
    return []


def report_text(engine: Engine, night: Night) -> str:
    day = engine.clock.now().astimezone(engine.zone)
    merged = [(g.keep.ref, m.ref) for g in night.duplicates for m, _score in g.merge]
    lifted = promoted(night.changes)
    completed = night.steps.get("complete", {})
    parts = [
        f"# Consolidation report — {day:%Y-%m-%d}",
        "",
        f"_The nightly run of {day:%Y-%m-%d %H:%M}: merged {len(merged)},"
        f" superseded {night.superseded}, archived {len(night.archived)},"
        f" completed {completed.get('topics', 0)} topic(s), promoted {len(lifted)}._",
    ]
    sections: list[tuple[str, list[str]]] = [
        ("Merged", [f"- {m} into {k}" for k, m in merged]),
        ("Archived", [f"- {c.memory.ref} ({c.reason}): {c.memory.text}" for c in night.archived]),
        ("Promoted to MEMORY.md", [f"- {r}" for r in lifted]),
        ("Problems", [f"- {p}" for p in night.problems]),
    ]
    for title, lines in sections:
        if lines:
            more = len(lines) - _LISTED
            tail = [f"- … and {more} more"] if more > 0 else []
            parts += ["", f"## {title}", "", *lines[:_LISTED], *tail]
    return "\n".join(parts) + "\n"


def write_report(engine: Engine, night: Night, *, dry_run: bool) -> dict[str, int]:
    """The `report` step: today's report written, those older than `REPORT_DAYS` removed
    (a dry run counts them and writes and removes nothing)."""
    folder = engine.settings.home / REPORTS_DIR
    today = engine.clock.now().astimezone(engine.zone).date()
    text = report_text(engine, night)
    cutoff = f"{_PREFIX}{today - timedelta(days=REPORT_DAYS):%Y-%m-%d}.md"
    old = [p for p in reports(engine.settings.home) if p.name < cutoff]
    if not dry_run:
        write_atomically(folder / f"{_PREFIX}{today:%Y-%m-%d}.md", text)
        for path in old:
            path.unlink(missing_ok=True)
    return {"removed": len(old), "lines": text.count("\n")}


def reports(home: Path) -> list[Path]:
    """The consolidation reports kept, newest first."""
    return sorted((home / REPORTS_DIR).glob(f"{_PREFIX}*.md"), reverse=True)
