"""`run_nightly`: the nightly steps in order over one engine, under the store's nightly
lock (HOME/nightly.lock on SQLite, an advisory lock shared by every host on PostgreSQL),
with a verified backup before the first bulk change and the run recorded. Every step is
computed from time and idempotent: a missed night changes nothing and running twice
equals running once."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path

from memoracle import outbox
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, StoreError, WorkspaceError
from memoracle.jobs import graph_log, health, scrub
from memoracle.jobs.nightly import consolidation, topics
from memoracle.jobs.nightly.archive import ArchiveCandidate, archive, plan_archive
from memoracle.jobs.nightly.exports import (
    export_jsonl,
    write_entities_md,
    write_snapshot,
    write_topic_files,
)
from memoracle.jobs.nightly.index_md import write_index
from memoracle.jobs.nightly.memory_md import FileChange, MemoryMdReport, render_memory_md
from memoracle.jobs.nightly.notes import (
    DAILY_LOOKBACK_DAYS,
    FIRST_LOOKBACK_DAYS,
    append_daily_notes,
    archive_daily_notes,
    clean_old_files,
)
from memoracle.jobs.thinking.night import ThinkReport, run_night
from memoracle.store.backup import newest_backup
from memoracle.types import DuplicateSet
from memoracle.workspace import NIGHTLY_LOCK

# The store's lock a run holds: on SQLite HOME/nightly.lock, the file `memoracle redact`
# and `uninstall` take too.
NIGHTLY = NIGHTLY_LOCK.removesuffix(".lock")


@dataclass
class NightlyReport:
    dry_run: bool
    steps: dict[str, dict[str, int]] = field(default_factory=dict)  # counts of each step run
    backup: Path | None = None  # taken before the night's first bulk change, if any
    backup_seconds: float | None = None
    backup_before: str | None = None  # the step it was (a dry run: would be) taken before
    superseded: int = 0  # memories settling superseded (an old value said again otherwise)
    vacuum: Vacuum | None = None
    merged: int = 0  # near-duplicates merged into the memory kept
    duplicates: list[DuplicateSet] = field(default_factory=list)
    settled: int = 0  # memories whose slot was looked for (contradictions) for the first time
    archived: list[ArchiveCandidate] = field(default_factory=list)
    memory_md: MemoryMdReport | None = None
    daily_notes: list[Path] = field(default_factory=list)
    notes_archived: list[Path] = field(default_factory=list)
    cleaned: list[Path] = field(default_factory=list)  # old session logs and notes packed away
    snapshot: Path | None = None
    exports: list[Path] = field(default_factory=list)
    changes: list[FileChange] = field(default_factory=list)  # files written (or would be)
    appended: dict[Path, int] = field(default_factory=dict)  # lines an export appends
    problems: list[str] = field(default_factory=list)  # steps that failed on a file, and why
    health: health.HealthReport | None = None
    redact: scrub.RedactReport | None = None  # when the redaction's rules had changed
    model: ThinkReport | None = None  # the model steps (docs/llm.md)
    seconds: float = 0.0


@dataclass(frozen=True)
class Vacuum:
    """The vacuum step: the store's free pages against `lifecycle.vacuum_free_share`,
    and what VACUUM gave back (in a dry run, to the scratch copy: the same bytes)."""

    pages: int
    free_pages: int
    page_size: int
    threshold: float
    vacuumed: bool
    reclaimed_bytes: int


STEPS: tuple[str, ...] = (
    "queue", "redact", "summarize", "archive", "reindex", "resolve", "dedup", "model", "graph",
    "complete", "render", "clean", "index", "vacuum", "report", "health",
)  # fmt: skip
"""The nightly steps, in order (decay needs no step: activation is computed from time).
The write queue comes first (what was said while the store was unusable, stored once
each and in order: docs/outage.md), so the night works on everything that was said.
Redact comes next, when the redaction's rules changed since it last ran: what the
night writes (notes, views, exports, backups) is then written from redacted text.
Archive comes first after the daily notes, so the rest of the night works on what stays
live: at most about `lifecycle.max_facts` memories, however long the store's history
(on a store's first night that is the difference between minutes and an hour). Reindex
comes before dedup so every memory is compared with its vector, whenever the night runs
(a search during the day may have embedded some texts, and not others); resolve comes
before dedup so every memory has its slots, and a text with the same words but another
value ("tea over coffee" after "coffee over tea") supersedes the old one instead of
being merged into it. Vacuum comes last but for health, once the night's changes have
left their free pages, so health.json reports the file's size after it."""


OnStep = Callable[[str, dict[str, int], float], None]


def run_nightly(
    engine: Engine,
    *,
    dry_run: bool = False,
    only: str | None = None,
    actor: str = "nightly",
    on_step: OnStep | None = None,
) -> NightlyReport:
    """The nightly run, step by step (`STEPS`): redact (today's redaction applied to
    everything stored, `memoracle redact`, when its rules changed since it last ran:
    `scrub.due`), summarize (the days' memories appended to
    their daily notes), reindex (missing vectors embedded, the HNSW graph built when
    due), resolve (contradictions for memories that never had their slot looked for),
    dedup (near-duplicates merged, never two that give a slot different values), graph
    (entities and relations of memories never read for the knowledge graph), archive,
    render (topic files, MEMORY.md's block, the session-start snapshot, the JSONL
    exports), clean (old daily notes to memory/archive/, old session logs and year-old
    notes packed away), vacuum (the store rewritten without its free pages once they
    are `lifecycle.vacuum_free_share` of it), health (health.json). A verified backup
    is taken before the first step that changes `lifecycle.backup_min_changes` memories
    or more, and before the first destructive step (archive; render when run alone)
    whenever the store has memories and its newest backup is
    `lifecycle.backup_every_days` old or there is none (by the engine clock; a night's small
    changes are in the audit log and undone one by one: `restore`, `resolve`); each step
    is recorded in the runs table with its counts and time, and `on_step` hears of it.
    One run at a time among everyone sharing the store (`Engine.exclusive`: on SQLite
    HOME/nightly.lock, and a lock left by a dead process is taken over; on PostgreSQL
    an advisory lock, so a second host's run is refused while one runs, and the
    server drops it with a dead run's session).
    `only` runs one step. Every step is idempotent and
    computed from the store and the clock, so a killed run is finished by the next.
    A step that cannot read or write a file (a read-only folder, a note that is not
    UTF-8) is recorded as failed, named in `problems`, and the night goes on; the next
    run tries it again. Nothing is deleted.

    With `dry_run`, every step runs as it would, on a scratch copy of the store (made
    in HOME, removed afterwards), and no file is written: the report and the counts are
    the real run's — the merges after the archive, the files after the merges, the
    bytes VACUUM gives back — while the store, the workspace files and the backups are
    left exactly as they were. It costs what the run costs, plus the copy."""
    if only is not None and only not in STEPS:
        raise InvalidInput(f"Unknown nightly step {only!r}; the steps are: {', '.join(STEPS)}.")
    started = time.perf_counter()
    report = NightlyReport(dry_run=dry_run)
    with _nightly_lock(engine, dry_run=dry_run), _working(engine, dry_run) as work:
        for step in STEPS:
            if only is not None and step != only:
                continue
            if step == "health" and only is None and not report.problems:
                # The maintenance is done: recorded first, so health.json reports this run.
                work.record_run("nightly", {"milliseconds": _since(started)})
            step_started = time.perf_counter()
            run = work.start_run(f"nightly:{step}")  # a dry run's: in the scratch copy
            try:
                counts = _STEP[step](work, report, dry_run, actor)
            except WorkspaceError as exc:  # a file it could not read or write: the night goes on
                report.problems.append(f"{step}: {exc}")
                work.finish_run(run, "failed", {}, error=str(exc))
                if on_step is not None:
                    on_step(step, {"failed": 1}, time.perf_counter() - step_started)
                continue
            except BaseException as exc:
                work.finish_run(run, "failed", {}, error=f"{type(exc).__name__}: {exc}")
                raise
            seconds = time.perf_counter() - step_started
            counts["milliseconds"] = int(seconds * 1000)
            report.steps[step] = counts
            work.finish_run(run, "ok", counts)
            if on_step is not None:
                on_step(step, counts, seconds)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


ANN_NEVER = 1 << 62  # a dry run's threshold for the HNSW graph: its file is in HOME


@contextmanager
def _working(engine: Engine, dry_run: bool) -> Iterator[Engine]:
    """The engine the steps work on: `engine` itself, or for a dry run an engine over a
    scratch copy of its store (same settings and clock, no HNSW graph written), in a
    temporary folder of HOME (the system's when HOME is read-only), removed after."""
    if not dry_run:
        yield engine
        return
    try:
        folder = Path(tempfile.mkdtemp(prefix=".nightly-dry-run-", dir=engine.settings.home))
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="memoracle-nightly-dry-run-"))
    try:
        embedding = replace(engine.settings.embedding, ann_threshold=ANN_NEVER)
        settings = replace(engine.settings, embedding=embedding)
        with engine.scratch_copy(folder, settings=settings) as work:
            yield work
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _queue(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    """The write queue stored (docs/outage.md), with what opening the engine stored of it;
    a dry run counts the lines it would store and set aside, and stores none."""
    if dry_run:
        waiting = outbox.status(engine.settings.home)
        return {"delivered": waiting.pending, "set_aside": waiting.unreadable, "waiting": 0}
    at_open, engine.replayed = engine.replayed, None  # counted once, by this night
    now = engine.replay_queue()
    if now.error:
        report.problems.append(f"queue: {now.waiting} write(s) still waiting: {now.error}")
    earlier = [] if at_open is None else at_open.delivered
    return {
        "delivered": len(earlier) + len(now.delivered),
        "set_aside": len(now.set_aside) + (0 if at_open is None else len(at_open.set_aside)),
        "waiting": now.waiting,
    }


def _redact(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    """`memoracle redact` when the rules' fingerprint differs from the one its last run
    recorded (or it never ran); the texts it changes are embedded by the reindex step."""
    if not scrub.due(engine):
        return {"due": 0}
    report.redact = scrub.redact_store(engine, dry_run=dry_run, embed=False)
    report.problems += [f"redact: {p}" for p in report.redact.problems]
    return {"due": 1, **report.redact.counts()}


def _summarize(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    # Every day since the last finished summary, and at least the last few: a missed
    # night is caught up.
    days = DAILY_LOOKBACK_DAYS
    last = engine.last_run("nightly:summarize", status="ok")
    if last is not None:
        since = last.started_at
        days = max(days, (engine.clock.now() - since).days + 1)
    else:
        days = max(days, FIRST_LOOKBACK_DAYS)
    report.daily_notes = append_daily_notes(
        engine, days=days, dry_run=dry_run, preview=report.changes
    )
    return {"notes": len(report.daily_notes)}


def _before_changing(engine: Engine, report: NightlyReport, changes: int, step: str) -> bool:
    """Take the night's verified backup, if it has none yet, before `step` changes
    `changes` memories when they are `lifecycle.backup_min_changes` or more; and before
    the night's first destructive step (archive in a full run; render, which rewrites
    MEMORY.md, when run alone), whatever it changes, when the store has memories and
    no backup younger than `lifecycle.backup_every_days` (by the engine clock) — so a
    store never goes without one, from its first night on. A store that fails the
    backup's verification (a damaged file) stops the night here, before any change.
    Returns whether it was taken (in a dry run: would be; nothing is copied)."""
    if report.backup_before is not None:
        return False
    life = engine.settings.lifecycle
    if changes == 0 or changes < life.backup_min_changes:
        now = engine.clock.now()
        newest = newest_backup(engine.settings.home / "backups", now=now)
        if newest is not None and now - newest < timedelta(days=life.backup_every_days):
            return False
        if changes == 0 and engine.newest_memory_id() == 0:
            return False  # nothing stored: nothing to lose
    report.backup_before = step
    if not report.dry_run:
        info = engine.backup()
        report.backup, report.backup_seconds = info.path, info.seconds
    return True


def _backed_up(counts: dict[str, int], took: bool) -> dict[str, int]:
    return {**counts, "backup": 1} if took else counts


def _dedup(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    # The whole store on the first night, then what each day added (`through_id`).
    last = engine.last_run("nightly:dedup", status="ok")
    after = None if last is None else last.counts.get("through_id")
    through = engine.newest_memory_id()
    duplicates = report.duplicates = engine.duplicates(after=after)
    report.merged = sum(len(group.merge) for group in duplicates)
    took = _before_changing(engine, report, report.merged, "dedup")
    engine.merge_duplicates(duplicates, actor=actor)
    counts = {"groups": len(duplicates), "merged": report.merged, "through_id": through}
    return _backed_up(counts, took)


def _resolve(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    backlog = engine.unslotted(limit=engine.settings.lifecycle.backup_min_changes)
    took = _before_changing(engine, report, len(backlog), "resolve")  # settling may supersede
    before = _superseded(engine)
    report.settled = engine.settle_unslotted(actor=actor)
    report.superseded = _superseded(engine) - before
    return _backed_up({"settled": report.settled, "superseded": report.superseded}, took)


def _superseded(engine: Engine) -> int:
    counts = engine.memory_counts()
    return sum(n for (status, _kind), n in counts.items() if status == "superseded")


def _reindex(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    if engine.searcher.embedder is None:
        return {"embedded": 0}
    return {"embedded": engine.reindex()}


def _model(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    """The model steps (docs/llm.md), when `llm.provider` is set; never fails the night."""
    report.model = run_night(engine, dry_run=dry_run)
    return report.model.step_counts()


def _graph(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    try:
        read = engine.read_graph_backlog()
    except InvalidInput as exc:  # the ontology file: named, and the night goes on
        raise WorkspaceError(str(exc)) from None
    try:
        logged = graph_log.pending(engine) if dry_run else graph_log.append(engine).appended
    except InvalidInput as exc:  # a damaged line in the graph log
        raise WorkspaceError(
            f"{exc}. Move the graph log aside: the next run writes it again from the store."
        ) from None
    return {"read": read, "logged": logged}


def _archive(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    report.archived = plan_archive(engine)
    took = _before_changing(engine, report, len(report.archived), "archive")
    archive(engine, report.archived, actor=actor, log=not dry_run)
    expired = sum(c.reason == "expired" for c in report.archived)
    return _backed_up({"archived": len(report.archived), "expired": expired}, took)


def _render(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    took = _before_changing(engine, report, 0, "render")  # MEMORY.md is rewritten
    before = len(report.changes)
    topics = write_topic_files(engine, dry_run=dry_run, preview=report.changes)
    report.memory_md = render_memory_md(
        engine, dry_run=dry_run, preview=report.changes, pointers=topics, apply_edits=True
    )
    report.snapshot = write_snapshot(
        engine, dry_run=dry_run, preview=report.changes, block=report.memory_md.block
    )
    report.exports = export_jsonl(
        engine, dry_run=dry_run, preview=report.changes, appended=report.appended
    )
    report.exports.append(write_entities_md(engine, dry_run=dry_run, preview=report.changes))
    md = report.memory_md
    counts = {
        "added": len(md.added),
        "forgotten": len(md.forgotten),
        "lines": md.lines,
        "changed": int(md.changed),
        "files": len(report.changes) - before,
        "appended": sum(report.appended.values()),
    }
    return _backed_up(counts, took)


def _clean(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    report.notes_archived = archive_daily_notes(engine, dry_run=dry_run)
    report.cleaned = clean_old_files(engine, dry_run=dry_run)
    return {"notes_moved": len(report.notes_archived), "cleaned": len(report.cleaned)}


def _vacuum(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    """VACUUM once the free pages are `lifecycle.vacuum_free_share` of the file (a dry
    run vacuums its scratch copy, which has the same pages, to say what it would give
    back). A full VACUUM, not auto_vacuum=INCREMENTAL: docs/lifecycle.md says why."""
    space = engine.reclaimable_space()
    threshold = engine.settings.lifecycle.vacuum_free_share
    due = space.free_pages > 0 and space.share >= threshold
    reclaimed = 0
    if due:
        try:
            reclaimed = engine.compact_store()
        except StoreError as exc:  # a full disk, say: the file is as it was
            raise WorkspaceError(
                f"{exc} The store was not vacuumed; the next night tries again."
            ) from None
    report.vacuum = Vacuum(
        space.pages, space.free_pages, space.page_size, threshold, due, reclaimed
    )
    return {
        "pages": space.pages,
        "free_pages": space.free_pages,
        "vacuumed": int(due),
        "reclaimed_bytes": reclaimed,
    }


def _health(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    # SQLite's quick check reads the whole file: weekly, unless the last one failed.
    last = engine.last_run("nightly:integrity", status="ok")
    every = timedelta(days=engine.settings.lifecycle.integrity_every_days)
    passed = None if last is None else last.finished_at
    if passed is not None and engine.clock.now() - passed >= every:
        passed = None
    report.health = health.check(engine, integrity_checked=passed)
    database = report.health.fields.get("database")
    checked = passed is None and isinstance(database, dict) and database["integrity"] == "ok"
    if not dry_run:
        health.write(engine, report.health)
    if checked:
        engine.record_run("nightly:integrity", {})
    return {
        "warnings": len(report.health.warnings),
        "status": health.exit_code(report.health),
        "integrity_checked": int(checked),
    }


_STEP: dict[str, Callable[[Engine, NightlyReport, bool, str], dict[str, int]]] = {
    "queue": _queue,
    "redact": _redact,
    "summarize": _summarize,
    "dedup": _dedup,
    "resolve": _resolve,
    "model": _model,
    "graph": _graph,
    "reindex": _reindex,
    "archive": _archive,
    "render": _render,
    "clean": _clean,
    "vacuum": _vacuum,
    "health": _health,
    "complete": lambda e, r, dry, actor: topics.complete_due(e, dry_run=dry, actor=actor),
    "index": lambda e, r, dry, actor: {"written": int(bool(write_index(e, dry_run=dry)))},
    "report": lambda e, r, dry, actor: consolidation.write_report(e, r, dry_run=dry),
}


@contextmanager
def _nightly_lock(engine: Engine, *, dry_run: bool) -> Iterator[None]:
    """The store's "nightly" lock for the run's length (`Engine.exclusive`). A second run
    is refused while the first one holds it; a dry run, which changes nothing, takes
    none."""
    if dry_run:
        yield
        return
    with engine.exclusive(NIGHTLY, who="Another nightly run"):
        yield
