"""The stable JSON shapes of what jobs and doors report: nightly, doctor, graph-log
compaction, export, import, checkpoint, install, uninstall. A door-floor module: the
reports' types are the jobs' and openclaw's, so it stands above them, apart from
`serialize` (the engine's values, below the jobs, which use them). docs/json.md
documents them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memoracle.jobs.checkpoint import CheckpointReport
from memoracle.jobs.doctor import Finding
from memoracle.jobs.graph_log import CompactReport
from memoracle.jobs.migrate import MigrateReport
from memoracle.jobs.nightly import FileChange, NightlyReport
from memoracle.jobs.scrub import RedactReport
from memoracle.jobs.thinking.night import ThinkReport
from memoracle.jobs.transfer import ExportReport, ImportReport
from memoracle.openclaw.install import InstallReport, UninstallReport
from memoracle.serialize.records import envelope, fields, memory


def export_report(r: ExportReport) -> dict[str, Any]:
    """What `memoracle export` wrote."""
    return envelope(
        path=str(r.path),
        format=r.format,
        schema_version=r.schema_version,
        lines=r.lines,
        bytes=r.bytes,
        vectors=r.vectors,
        counts=dict(r.counts),
    )


def import_report(r: ImportReport) -> dict[str, Any]:
    """What `memoracle import` stored, and whether the vectors need `reindex`."""
    return envelope(
        path=str(r.path),
        format=r.format,
        schema_version=r.schema_version,
        memoracle_version=r.memoracle_version,
        exported_at=r.exported_at,
        embedding_model=dict(r.embedding_model),
        lines=r.lines,
        counts=dict(r.counts),
        needs_reindex=r.needs_reindex,
    )


def migrate_report(r: MigrateReport) -> dict[str, Any]:
    """What `memoracle migrate` copied (or, with --dry-run, would copy) and its check."""
    return envelope(
        source=r.source,
        destination=r.destination,
        destination_kind=r.destination_kind,
        destination_state=r.destination_state,
        dry_run=r.dry_run,
        counts=dict(r.counts),
        rows=sum(r.counts.values()),
        source_hash=r.source_hash,
        destination_hash=r.destination_hash,
        verified=r.verified,
        seconds=r.seconds,
        export_bytes=r.export_bytes,
        switch=fields(r.switch) if r.switch is not None else None,
        problems=list(r.problems),
    )


def checkpoint_report(r: CheckpointReport) -> dict[str, Any]:
    """What a checkpoint saved, noted, held back, and what went wrong."""
    return envelope(
        ok=r.ok,
        session=r.session,
        items=r.items,
        episodes=r.episodes,
        already_stored=r.already_stored,
        added=[memory(m) for m in r.added],
        bumped=[memory(m) for m in r.bumped],
        forgotten=[memory(m) for m in r.forgotten],
        held=r.held,
        skipped=r.skipped,
        note={"path": r.note, "section": r.section, "lines": r.noted},
        queued=r.queued,
        problems=r.problems,
    )


def queued_capture(entry_id: str, items: int) -> dict[str, Any]:
    """A capture the store could not take, queued (docs/outage.md): `capture --json`'s
    shape, nothing stored yet, `queued` true and `queue_id` naming the queue entry."""
    return envelope(
        episodes=[], added=[], bumped=[], forgotten=[], skipped=[], duplicate_turn=False,
        queued=True, queue_id=entry_id, queued_items=items,
    )  # fmt: skip


def install_report(r: InstallReport) -> dict[str, Any]:
    """What `memoracle install` found, backed up and imported (or would, in a dry run)."""
    return envelope(
        home=str(r.home),
        workspace=str(r.workspace),
        manifest=str(r.manifest),
        dry_run=r.dry_run,
        already_installed=r.already_installed,
        found=list(r.found),
        backups=[
            {"path": b.path, "backup": str(b.backup), "sha256": b.sha256, "bytes": b.bytes}
            for b in r.backups
        ],
        imported=[str(p) for p in r.to_import],
        ingest=fields(r.ingest) if r.ingest is not None else None,
        created=list(r.created),
        warnings=list(r.warnings),
    )


def uninstall_report(r: UninstallReport) -> dict[str, Any]:
    """What `memoracle uninstall` did to the workspace (or would, in a dry run)."""
    return envelope(
        home=str(r.home),
        workspace=str(r.workspace),
        dry_run=r.dry_run,
        database=str(r.database),
        memories=r.memories,
        export=str(r.export) if r.export is not None else None,
        saved=str(r.saved),
        actions=[
            {
                "kind": a.kind,
                "path": str(a.path),
                "detail": a.detail,
                "source": str(a.source) if a.source is not None else None,
                "saved": str(a.saved) if a.saved is not None else None,
            }
            for a in r.actions
        ],
        keep_db=r.keep_db,
        db_deleted=r.db_deleted,
        crontab_removed=r.crontab_removed,
        notes=list(r.notes),
    )


def nightly_report(report: NightlyReport) -> dict[str, Any]:
    """What `memoracle nightly` did (or would, in a dry run), step by step."""
    md = report.memory_md
    return envelope(
        dry_run=report.dry_run,
        backup=str(report.backup) if report.backup else None,
        backup_before=report.backup_before,
        steps=report.steps,
        merged=report.merged,
        settled=report.settled,
        superseded=report.superseded,
        archived=[
            {"id": c.memory.ref, "reason": c.reason, "score": c.score} for c in report.archived
        ],
        duplicates=[
            {"keep": g.keep.ref, "merge": [m.ref for m, _ in g.merge]} for g in report.duplicates
        ],
        daily_notes=[str(p) for p in report.daily_notes],
        notes_archived=[str(p) for p in report.notes_archived],
        cleaned=[str(p) for p in report.cleaned],
        snapshot=str(report.snapshot) if report.snapshot else None,
        exports=[str(p) for p in report.exports],
        appended={str(p): n for p, n in report.appended.items()},
        memory_md=None
        if md is None
        else {
            "path": str(md.path),
            "added": list(md.added),
            "forgotten": list(md.forgotten),
            "memories": md.memories,
            "lines": md.lines,
            "chars": md.chars,
            "changed": md.changed,
            "problem": md.problem,
        },
        changes=[_change(c) for c in report.changes],
        vacuum=None if report.vacuum is None else fields(report.vacuum),
        redact=None if report.redact is None else redact_report(report.redact),
        model=None if report.model is None else model_report(report.model),
        problems=report.problems,
        seconds=report.seconds,
    )


def model_report(r: ThinkReport) -> dict[str, Any]:
    """The nightly model steps: what was asked, spent, applied, held, quarantined and
    queued; a dry run's prompts with their estimated tokens."""
    return {
        "skipped": r.skipped or None, "model": r.model_id or None, "budget": r.budget,
        "tokens": r.tokens, "asked": r.asked, "from_queue": r.from_queue, "queued": r.queued,
        "error": r.error or None, "counts": dict(r.counts),
        "prompts": [fields(p) for p in r.previews],
        "quarantined": [{k: q.get(k) for k in ("step", "key", "reason")} for q in r.refused],
    }  # fmt: skip


def redact_report(report: RedactReport) -> dict[str, Any]:
    """What `memoracle redact` changed (or would, with --dry-run): per column of the
    store and per file, how many rows or lines, the first refs, the kinds found. Never
    the text."""
    return envelope(
        dry_run=report.dry_run,
        rules=report.rules,
        counts=report.counts(),
        places=[
            {"place": p.place, "rows": p.rows, "refs": p.refs, "kinds": dict(p.kinds)}
            for p in report.places
        ],
        files=[
            {"path": str(f.path), "what": f.what, "changed": f.changed, "kinds": dict(f.kinds)}
            for f in report.files
        ],
        kinds=dict(report.kinds),
        vectors_dropped=report.vectors_dropped,
        embedded=report.embedded,
        reclaimed_bytes=report.reclaimed_bytes,
        guard_backup=None if report.guard_backup is None else str(report.guard_backup),
        problems=report.problems,
        seconds=report.seconds,
    )


def _change(change: FileChange) -> dict[str, Any]:
    added, removed = change.size()
    diff = None if change.path.suffix == ".jsonl" else change.diff()
    return {"path": str(change.path), "added": added, "removed": removed, "diff": diff}


def doctor_report(
    status: str, findings: Sequence[Finding], database: object = None
) -> dict[str, Any]:
    """What `memoracle doctor` found: each health warning, why it matters, what fixes it;
    and the store itself (health's `database`: an SQLite file, or a server's state)."""
    return envelope(
        status=status,
        database=database,
        findings=[
            {
                **f.warning.to_json(),
                "why": f.advice.why,
                "fix": f.advice.fix,
                "automatic": f.advice.automatic,
            }
            for f in findings
        ],
    )


def graph_compact_report(report: CompactReport) -> dict[str, Any]:
    """What `memoracle graph compact` did to the graph log (or would, in a dry run)."""
    return envelope(
        path=str(report.path),
        dry_run=report.dry_run,
        compacted=report.compacted,
        reason=report.reason,
        gain=round(report.gain, 4),
        bytes_before=report.bytes_before,
        bytes_after=report.bytes_after,
        lines_before=report.lines_before,
        lines_after=report.lines_after,
        entities=report.entities,
        relations=report.relations,
        links=report.links,
        appended=report.appended,
        backup=str(report.backup) if report.backup else None,
        checksum=report.checksum,
    )
