"""The nightly run over one engine: archive, render the files the agent reads, run all.

`run_nightly` (in `runner`) does the steps in order; each step's work is its own module:
the cold tier's policy (`archive`), MEMORY.md's block (`memory_md`), the daily notes and
cleaning (`notes`), and the other views — snapshot, JSONL exports, topic and entity files
(`exports`). What it leaves to others: the formulas (`lifecycle.scoring`), the text of the
block and the notes (`render`), storage, backups and VACUUM (`store`), the doors (`cli`).
"""

from memoracle.jobs.nightly.archive import (
    ArchiveCandidate,
    archive,
    counts_against_cap,
    memory_changed_at,
    plan_archive,
)
from memoracle.jobs.nightly.exports import (
    export_archived,
    export_jsonl,
    hot_topics,
    write_entities_md,
    write_snapshot,
    write_topic_files,
)
from memoracle.jobs.nightly.memory_md import (
    FileChange,
    MemoryMdReport,
    render_memory_md,
)
from memoracle.jobs.nightly.notes import (
    append_daily_notes,
    archive_daily_notes,
    clean_old_files,
)
from memoracle.jobs.nightly.runner import STEPS, NightlyReport, Vacuum, run_nightly

__all__ = [
    "STEPS",
    "ArchiveCandidate",
    "FileChange",
    "MemoryMdReport",
    "NightlyReport",
    "Vacuum",
    "append_daily_notes",
    "archive",
    "archive_daily_notes",
    "clean_old_files",
    "counts_against_cap",
    "export_archived",
    "export_jsonl",
    "hot_topics",
    "memory_changed_at",
    "plan_archive",
    "render_memory_md",
    "run_nightly",
    "write_entities_md",
    "write_snapshot",
    "write_topic_files",
]
