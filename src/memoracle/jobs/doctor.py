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

from memoracle import outbox
from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.engine import Engine, guard
from memoracle.errors import EngineError, WorkspaceError
from memoracle.jobs import health, nightly, recover
from memoracle.jobs.health import HealthReport, HealthWarning
from memoracle.storage_types import Damage
from memoracle.store import server_backup
from memoracle.store.server_backup import ServerBackup

__all__ = [
    "ADVICE", "Advice", "DoctorResult", "Finding", "describe", "explain", "fix", "run", "run_open"
]  # fmt: skip


@dataclass(frozen=True)
class Advice:
    """Why a warning matters and the command that fixes it; `automatic` when
    `memoracle health --fix` runs that fix itself."""

    why: str
    fix: str
    automatic: bool = False


RECOVER = "memoracle doctor --fix"
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
        "SQLite's check found damage: reads may fail or return wrong rows, and writes"
        " may spread it. Writing commands refuse until it is recovered.",
        f"{RECOVER} (restores the newest good backup; --dry-run first shows how)",
    ),
    "database_unreadable": Advice(
        "The database could not be read at all; writing commands refuse.",
        f"{RECOVER} (puts its permissions back when it is yours, else restores the newest"
        " good backup; --dry-run first shows how)",
    ),
    "database_missing": Advice(
        "The store is gone from a workspace that was in use: starting a new, empty one"
        " would render an empty MEMORY.md over what the agent still reads.",
        f"{RECOVER} (restores the newest good backup, or rebuilds from the last export"
        " and MEMORY.md)",
    ),
    "database_empty": Advice(
        "The store's file is empty (0 bytes) in a workspace that was in use: every memory"
        " is gone from it, and a new, empty store must not be started over it.",
        f"{RECOVER} (restores the newest good backup, or rebuilds from the last export"
        " and MEMORY.md)",
    ),
    "database_truncated": Advice(
        "The store's file is shorter than its own header says: its last pages are gone.",
        f"{RECOVER} (restores the newest good backup)",
    ),
    "database_not_sqlite": Advice(
        "The store's file does not start as an SQLite database: its header was overwritten.",
        f"{RECOVER} (restores the newest good backup)",
    ),
    "database_not_a_file": Advice(
        "Something other than a file (a folder) stands where the store should be.",
        f"{RECOVER} (moves it aside, kept, and restores the newest good backup)",
    ),
    "database_tables_missing": Advice(
        "The store lacks tables, indexes or triggers its schema version has: a part of"
        " it was dropped, and what it held is gone from it.",
        f"{RECOVER} (restores the newest good backup)",
    ),
    "server_check_failed": Advice(
        "memoracle's consistency check on the PostgreSQL server found rows that point at"
        " rows that are gone, or slots out of step with their memory: what a restore or a"
        " hand edit with triggers off leaves. Search and the nightly may show or merge the"
        " wrong rows.",
        "the server's own backups (point-in-time recovery) bring the database back whole;"
        " else `memoracle import` of the last export. docs/fleet.md#health says more",
    ),
    "index_invalid": Advice(
        "An index on the server was left not valid (a build that failed or was cut): the"
        " planner passes it over, so searches it served read whole tables.",
        "REINDEX INDEX CONCURRENTLY NAME, as the tables' owner, for each index named",
    ),
    "dead_rows_high": Advice(
        "Many row versions on the server are dead (updated or deleted rows autovacuum has"
        " not cleaned yet): tables and indexes grow, and reads slow down.",
        "memoracle nightly --only vacuum (VACUUM of memoracle's tables); check the"
        " server's autovacuum settings",
    ),
    "backup_missing": Advice(
        "The store has memories and no backup: if the file is damaged, only the last"
        " export and MEMORY.md are left to rebuild it from.",
        "memoracle nightly (it backs the store up when no backup is recent)",
    ),
    "backup_damaged": Advice(
        "The newest backup fails SQLite's integrity check or cannot be read: it could not"
        " be restored, and `doctor --fix` would fall back on an older one.",
        "memoracle nightly takes a new one once the newest is lifecycle.backup_every_days"
        " old; move the damaged file out of HOME/backups to have it taken tonight",
    ),
    "writes_queued": Advice(
        "What was said while the store was unusable waits in HOME/queue/pending-writes.jsonl"
        " (redacted): recall and search do not find it until it is stored.",
        f"{RECOVER} (once the store opens for writing, the queue is stored, once each and in"
        " order; `memoracle queue` lists it)",
        automatic=True,
    ),
    "queue_unreadable": Advice(
        "A line of the write queue cannot be read (cut by a crash, edited by hand): it"
        " cannot be stored, and is set aside at the next delivery, never dropped.",
        "memoracle queue (names the line); read it in HOME/queue/pending-writes.jsonl",
    ),
    "queue_set_aside": Advice(
        "Queued writes were set aside (unreadable, or refused by the store): they are not"
        " in memory.",
        "read HOME/queue/set-aside.jsonl (each line says why), say again what matters, then"
        " move the file away",
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


# -- the store's safety: examined, and recovered -----------------------------------------


@dataclass(frozen=True)
class DoctorResult:
    """What `memoracle doctor` found and did. `report` is the store as it is now (after
    a recovery: the recovered store); `plan` the recovery's steps, `done` what was
    done (empty in a dry run)."""

    report: HealthReport
    findings: list[Finding]
    plan: list[str]
    done: list[str]
    dry_run: bool


def run(
    settings: Settings,
    clock: Clock,
    *,
    deep: bool = False,
    fix: bool = False,
    dry_run: bool = False,
) -> DoctorResult:
    """Examine the store (its file, schema and SQLite's check: the full integrity check
    with `deep`, or when it was marked damaged before), the newest backup, and, when the
    store is sound, every health check. A damaged store is marked (HOME/store-damaged.txt:
    every open refuses until it is recovered); with `fix` it is recovered
    (`recover.plan`), or with `dry_run` the plan is only said. On a sound store `fix`
    runs the safe fixes `health --fix` runs. Writes nothing without `fix` but the mark."""
    exam = recover.examine(settings, deep=deep or guard.marked(settings) is not None)
    damage = exam.damage
    if damage is not None and damage.code == "missing" and not exam.life:
        raise WorkspaceError(
            f"No memoracle workspace at {settings.home} (no {settings.db_path.name}). "
            f"Run: memoracle init --home {settings.home}"
        )
    if damage is None:
        return _sound(settings, clock, exam, fixing=fix, dry_run=dry_run)
    if not dry_run and (exam.life or damage.code != "empty"):
        _mark(settings, damage.detail)  # an empty file in a new workspace: a fresh store
    if not fix:
        report = _damaged_report(settings, clock, exam, damage)
        return DoctorResult(report, explain(report), [], [], dry_run)
    plan = recover.plan(settings, damage)
    if dry_run:
        report = _damaged_report(settings, clock, exam, damage)
        return DoctorResult(report, explain(report), plan.steps, [], True)
    done = recover.recover(settings, plan, clock)
    done += _deliver(settings, clock)
    after = run(settings, clock, deep=True)
    return DoctorResult(after.report, after.findings, plan.steps, done, False)


def run_open(engine: Engine, *, fixing: bool = False, dry_run: bool = False) -> DoctorResult:
    """The doctor of a store on a server (PostgreSQL), over its open engine. There is no
    file to examine, move aside or restore here: a damaged database is mended by the
    server's own backups, or rebuilt by `memoracle import` of the last export. So:
    every health check, the store's consistency check run now, the server's state
    (versions, indexes, dead rows: health's `database`), the newest backup of
    HOME/backups (memoracle's JSON lines of the rows, read through and counted); with
    `fixing`, the safe fixes `health --fix` runs (`dry_run`: said, not run)."""
    backups = engine.settings.home / "backups"

    def checked() -> HealthReport:
        newest = server_backup.newest(backups)
        return _with_backup(
            health.check(engine),
            None if newest is None else server_backup.verify(newest),
            has_memories=engine.newest_memory_id() > 0,
        )

    report = checked()
    plan: list[str] = []
    done = _replayed(engine)
    if fixing:
        if dry_run:
            plan = [f.advice.fix for f in explain(report) if f.advice.automatic]
        else:
            done += fix(engine, report)
            report = checked()
    return DoctorResult(report, explain(report), plan, done, dry_run)


def describe(database: object) -> str | None:
    """One line on a server's state from health's `database` field, for a person; None
    for an SQLite file (whose facts the findings already name)."""
    if not isinstance(database, dict) or "url" not in database:
        return None
    share = database.get("dead_share")
    invalid = database.get("invalid_indexes") or []
    indexes = f"not valid: {', '.join(map(str, invalid))}" if invalid else "all valid"
    return (
        f"server: {database['url']}, PostgreSQL {database.get('server_version')},"
        f" pgvector {database.get('vector_version')}, schema {database.get('schema_version')}"
        f" of {database.get('schema_latest')}, {database.get('bytes') or 0:,} bytes,"
        f" {database.get('dead_rows') or 0:,} dead rows"
        f" ({share if isinstance(share, float) else 0:.0%}),"
        f" {len(database.get('hnsw_indexes') or [])} HNSW and"
        f" {len(database.get('gin_indexes') or [])} GIN indexes, {indexes};"
        f" check: {database.get('integrity')}"
    )


def _deliver(settings: Settings, clock: Clock) -> list[str]:
    """The write queue stored in the recovered store (docs/outage.md), said."""
    try:
        with Engine.open(settings, clock=clock) as engine:
            return _replayed(engine)
    except EngineError as exc:
        return [f"write queue: not stored ({exc})"]


def _mark(settings: Settings, why: str) -> None:
    try:
        guard.mark_damaged(settings, why)
    except WorkspaceError:
        pass  # a read-only HOME: the finding is still reported


def _sound(
    settings: Settings, clock: Clock, exam: recover.Examination, *, fixing: bool, dry_run: bool
) -> DoctorResult:
    """Every health check of a store that passed the examination (its SQLite check is
    that one, not run again)."""
    if exam.marked is not None and not dry_run:
        guard.unmark(settings)  # checked in full and found whole: writes may go on
    # The write queue is stored when fixing (docs/outage.md); a check changes nothing.
    with Engine.open(settings, clock=clock, replay=fixing and not dry_run) as engine:
        report = health.check(engine, integrity_checked=clock.now())
        report = _with_backup(
            report, exam.newest_backup, has_memories=engine.newest_memory_id() > 0
        )
        plan: list[str] = []
        done = _replayed(engine)
        if fixing:
            wanted = [f.advice.fix for f in explain(report) if f.advice.automatic]
            if dry_run:
                plan = wanted
            else:
                done += fix(engine, report)
                report = _with_backup(
                    health.check(engine, integrity_checked=clock.now()),
                    recover.examine(settings).newest_backup,
                    has_memories=engine.newest_memory_id() > 0,
                )
    return DoctorResult(report, explain(report), plan, done, dry_run)


def _replayed(engine: Engine) -> list[str]:
    """What opening the store delivered of the write queue (docs/outage.md), said."""
    replayed = engine.replayed
    if replayed is None or not (replayed.delivered or replayed.set_aside or replayed.error):
        return []
    said = (
        f"write queue: {len(replayed.delivered)} stored, {len(replayed.set_aside)} set aside,"
        f" {replayed.waiting} waiting"
    )
    return [said + (f" ({replayed.error})" if replayed.error else "")]


def _with_backup(
    report: HealthReport, newest: recover.BackupCheck | ServerBackup | None, *, has_memories: bool
) -> HealthReport:
    """`report` with the newest backup's check: its fields, and a warning when it is
    damaged, or missing for a store with memories that a nightly run has backed up."""
    warnings = list(report.warnings)
    codes = {w.code for w in warnings}
    if newest is None:
        field: object = None
        if has_memories and "nightly_missing" not in codes:
            warnings.append(
                HealthWarning(
                    "backup_missing",
                    "The store has memories and HOME/backups holds no backup of it. Run"
                    " `memoracle nightly`: it takes one.",
                )
            )
    else:
        field = {
            "path": str(newest.path),
            "counts": newest.counts,
            "integrity": "ok" if newest.good else "; ".join(newest.problems),
        }
        if not newest.good:
            warnings.append(
                HealthWarning(
                    "backup_damaged",
                    f"{newest.path}: the newest backup cannot be restored"
                    f" ({'; '.join(newest.problems)[:300]}).",
                )
            )
    status = report.status
    if status == "healthy" and len(warnings) > len(report.warnings):
        status = "warning"
    fields = {**report.fields, "backup": field}
    return HealthReport(status, report.checked_at, fields, tuple(warnings))


def _damaged_report(
    settings: Settings, clock: Clock, exam: recover.Examination, damage: Damage
) -> HealthReport:
    """The failing report on a damaged store: the damage, named, and the newest backup."""
    code = DAMAGE_CODES.get(damage.code, f"database_{damage.code}")
    message = (
        f"{damage.detail}. Writing commands refuse until it is recovered: run"
        f" `{RECOVER} --dry-run` to see how, then `{RECOVER}`."
    )
    database = {"path": str(settings.db_path), "damage": damage.code, "integrity": damage.detail}
    fields: dict[str, object] = {"database": database}
    waiting: list[HealthWarning] = []
    try:  # what waits to be stored meanwhile (docs/outage.md)
        queue = outbox.status(settings.home)
        fields["queue"] = queue.to_json(clock.now())
        waiting = [HealthWarning(c, m) for c, m in queue.warnings(clock.now())]
    except WorkspaceError as exc:
        waiting = [HealthWarning("check_failed", f"The write queue check failed: {exc}")]
    report = HealthReport(
        "failing", clock.now(), fields, (HealthWarning(code, message, "failing"), *waiting)
    )
    report = _with_backup(report, exam.newest_backup, has_memories=True)
    return HealthReport("failing", report.checked_at, report.fields, report.warnings)


DAMAGE_CODES = {"integrity": "database_damaged", "unreadable": "database_unreadable"}
