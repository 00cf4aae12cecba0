"""What each health warning means, and the fixes: `memoracle doctor` and `health --fix`.

Owns the advice for every warning code `health.check` raises (why it matters to the
person who runs memoracle, and the command that fixes it) and the fixes that are safe to
run unattended: embedding missing vectors, the nightly run when it is overdue, archiving
down to `max_facts`, merging duplicates — each after a verified backup when it changes
memories. Checking is `health`'s; the doors print what this returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memoracle.engine import Engine
from memoracle.jobs import nightly
from memoracle.jobs.health import HealthReport, HealthWarning

__all__ = ["ADVICE", "Advice", "Finding", "explain", "fix"]


@dataclass(frozen=True)
class Advice:
    """Why a warning matters and the command that fixes it; `automatic` when
    `memoracle health --fix` runs that fix itself."""

    why: str
    fix: str
    automatic: bool = False


ADVICE: dict[str, Advice] = {
    "disk_usage_high": Advice(
        "SQLite needs free space for its journal, and the nightly backup a copy of the"
        " database: on a full disk writes fail.",
        "free space on the disk; `memoracle archive --apply` moves faded memories to the"
        " cold tier, and old copies in HOME/backups can go",
    ),
    "facts_near_limit": Advice(
        "Past lifecycle.max_facts the lowest-scored memories are archived each night, so"
        " the live memory is only the strongest of what it holds.",
        "memoracle archive --apply (or raise lifecycle.max_facts)",
        automatic=True,
    ),
    "activation_low": Advice(
        "Most live memories are rarely recalled: the store keeps more than the agent uses,"
        " and recall ranks more noise.",
        "memoracle archive --apply; and check that the agent recalls before each turn",
    ),
    "activation_high": Advice(
        "Nearly every memory is recalled all the time: decay does little, so old and new"
        " weigh the same.",
        "lower decay.half_life_days in config.toml",
    ),
    "memory_md_near_budget": Advice(
        "memoracle's block in MEMORY.md is nearly full: new key facts push older ones out"
        " of what the agent reads at the start of a session.",
        "raise render.memory_md_max_lines or render.memory_md_max_chars, or `memoracle"
        " forget` what no longer matters",
    ),
    "memory_md_unreadable": Advice(
        "MEMORY.md cannot be read as UTF-8 text: the nightly run will not rewrite its"
        " block, and lines a person added are not taken.",
        "fix or restore MEMORY.md (the nightly run never writes over a file it cannot read)",
    ),
    "memory_md_markers": Advice(
        "The markers around memoracle's block in MEMORY.md are damaged: the nightly run"
        " leaves the file alone rather than guess where the block is.",
        "put back one BEGIN and one END marker (see docs/lifecycle.md), then"
        " `memoracle nightly --only render`",
    ),
    "nightly_slow": Advice(
        "A long nightly run may overlap the next one or the morning's first turns.",
        "memoracle nightly --json (each step's time); `memoracle archive --apply` shrinks"
        " the store",
    ),
    "nightly_missing": Advice(
        "Without the nightly run nothing is merged, archived or rendered: MEMORY.md, the"
        " daily notes and the session-start snapshot fall behind the store.",
        "memoracle nightly, and schedule it",
        automatic=True,
    ),
    "vectors_missing": Advice(
        "Memories without a vector are found by their words only, not by meaning.",
        "memoracle reindex",
        automatic=True,
    ),
    "index_stale": Advice(
        "The stored vectors belong to another model than the configured one, so search"
        " uses words only until they are recomputed.",
        "memoracle reindex",
        automatic=True,
    ),
    "ann_missing": Advice(
        "The store is big enough for the HNSW graph, but it is not built: every search"
        " compares the query with every vector.",
        "memoracle reindex",
        automatic=True,
    ),
    "ann_unavailable": Advice(
        "The store is big enough for the HNSW graph, but the ann extra is not installed:"
        " every search compares the query with every vector.",
        "pip install 'memoracle[ann]', then `memoracle reindex`",
    ),
    "pointers_broken": Advice(
        "The memory files cite paths that do not exist: the agent will follow them and"
        " find nothing.",
        "memoracle pointers (lists them); fix each path or mark its line pointer-check:ignore",
    ),
    "pointer_file_unreadable": Advice(
        "A memory file could not be read, so its pointers were not checked.",
        "fix the file's encoding or permissions, then `memoracle pointers`",
    ),
    "canary_low": Advice(
        "Questions whose answers are known no longer find them: recall is missing what"
        " it should find.",
        "memoracle search QUERY for each failed canary; `memoracle reindex` if vectors are missing",
    ),
    "duplicates_high": Advice(
        "Many new memories repeat old ones: recall spends its budget on the same fact twice.",
        "memoracle dedup --fix (the nightly run does it each night)",
        automatic=True,
    ),
    "database_damaged": Advice(
        "SQLite's quick check found damage: reads may fail or return wrong rows.",
        "stop the agents that write to it, then copy the newest backup from HOME/backups"
        " over the database",
    ),
    "database_unreadable": Advice(
        "The database could not be read at all.",
        "check the file's permissions and that no other program holds it; restore the"
        " newest backup from HOME/backups if it is damaged",
    ),
    "check_failed": Advice(
        "One check could not finish; what it measures is unknown.",
        "run `memoracle health` again; if it persists, report it with the message",
    ),
}


@dataclass(frozen=True)
class Finding:
    """One warning of a health report with its advice."""

    warning: HealthWarning
    advice: Advice


def explain(report: HealthReport) -> list[Finding]:
    """Each warning of `report` with why it matters and the command that fixes it."""
    unknown = Advice("(no advice for this warning yet)", "see its message")
    return [Finding(w, ADVICE.get(w.code, unknown)) for w in report.warnings]


def fix(engine: Engine, report: HealthReport, *, actor: str = "health-fix") -> list[str]:
    """Run the automatic fixes for the warnings of `report`, each once, and return what
    each did, one line each. An overdue nightly run does all the others' work, so it runs
    alone; changes to memories come after a verified backup."""
    codes = {w.code for w in report.warnings}
    if "nightly_missing" in codes:
        night = nightly.run_nightly(engine, actor=actor)
        return [f"nightly: {len(night.steps)} steps run in {night.seconds:.1f} s"]
    done: list[str] = []
    steps: list[tuple[set[str], Callable[[], str]]] = [
        ({"vectors_missing", "index_stale", "ann_missing"}, lambda: _reindex(engine)),
        ({"duplicates_high"}, lambda: _dedup(engine, actor)),
        ({"facts_near_limit"}, lambda: _archive(engine, actor)),
    ]
    for wanted, step in steps:
        if codes & wanted:
            done.append(step())
    return done


def _reindex(engine: Engine) -> str:
    return f"reindex: {engine.reindex():,} texts embedded"


def _dedup(engine: Engine, actor: str) -> str:
    groups = engine.duplicates()
    if not groups:
        return "dedup: nothing to merge"
    backup = engine.backup()
    merged = engine.merge_duplicates(groups, actor=actor)
    return f"dedup: {merged:,} memories merged (backup {backup.path})"


def _archive(engine: Engine, actor: str) -> str:
    plan = nightly.plan_archive(engine)
    if not plan:
        return "archive: nothing to archive"
    backup = engine.backup()
    moved = nightly.archive(engine, plan, actor=actor)
    return f"archive: {moved:,} memories moved to the cold tier (backup {backup.path})"
