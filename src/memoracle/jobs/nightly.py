"""The nightly jobs over one engine: archive, render the files the agent reads, run all.

Owns the policies and the file handling of SPEC §5–6 that need the whole engine: which
memories go to the cold tier (`plan_archive`, `archive`), MEMORY.md's block read back and
rewritten (`render_memory_md`: lines a person added become user-stated memories, lines
they deleted become forgets, text outside the block is kept byte for byte), the daily
notes appended and, past two weeks, moved to memory/archive/ (`append_daily_notes`,
`archive_daily_notes`), the session-start snapshot (`write_snapshot`), the JSONL exports
(`export_jsonl`), and `run_nightly`, which does them in order, backs the store up before
a bulk change and records the run. Every job is computed from time and idempotent:
a missed night changes nothing and running twice equals running once.

What it leaves to others: the formulas (`lifecycle.scoring`), the text of the block and
the notes (`render`), storage and backups (`store`), the doors (`cli`).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import logging
import os
import re
import tarfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from memoracle.engine import Engine
from memoracle.errors import InvalidInput, WorkspaceError, WriteHeld
from memoracle.files import os_lock, pid_lock, read_text, write_atomically
from memoracle.graph import log as graph_log
from memoracle.jobs import health
from memoracle.lifecycle.scoring import NAME as _NAME
from memoracle.lifecycle.scoring import PROMOTE_AT, activation, rank
from memoracle.render.daily import append_entries
from memoracle.render.memory_md import (
    BlockError,
    extract_block,
    merge_into,
    read_edits,
    render_block,
    tagged_line,
)
from memoracle.serialize import records
from memoracle.store.archive import ArchivedMemory
from memoracle.store.backup import newest_backup
from memoracle.types import DuplicateSet, Memory

__all__ = [
    "ArchiveCandidate",
    "FileChange",
    "MemoryMdReport",
    "NightlyReport",
    "append_daily_notes",
    "note_lock",
    "NIGHTLY_LOCK",
    "archive",
    "archive_daily_notes",
    "clean_old_files",
    "export_jsonl",
    "write_entities_md",
    "write_topic_files",
    "hot_topics",
    "plan_archive",
    "render_memory_md",
    "STEPS",
    "run_nightly",
    "write_snapshot",
]

log = logging.getLogger(__name__)

MEMORY_FILE = "MEMORY.md"
SNAPSHOT_FILE = "SESSION-START.md"
NOTES_DIR = "memory"
NOTES_LOCK = "notes.lock"  # in HOME; see note_lock
NIGHTLY_LOCK = "nightly.lock"  # in HOME, the pid of the run under way
NOTE_LOCK_WAIT_SECONDS = 30.0
LAST_BLOCK = Path("render") / "MEMORY.block.md"  # under HOME: what we last wrote
DAILY_LOOKBACK_DAYS = 3  # days of memories a nightly run appends to their notes, at least
CENTURY_DAYS = 36_524  # a longer --min-age-days means the same: nothing is old enough
TOPIC_MIN_MEMORIES = 5  # live memories naming an entity before it gets a topic file
TOPICS_SHOWN = 10  # topic files written (and pointed to from MEMORY.md), most named first
TOPIC_MEMORIES = 50  # memories listed in a topic file, newest first
FIRST_LOOKBACK_DAYS = 30  # on the first run: a month of notes, not a whole history
LOGGED = ("active", "disputed", "superseded", "archived")  # in daily notes: not forgotten


@dataclass(frozen=True)
class ArchiveCandidate:
    memory: Memory
    reason: str  # below_threshold | over_max_facts | superseded_retention | expired
    score: float | None


@dataclass(frozen=True)
class FileChange:
    """A file a dry run would write: its text now (None: it does not exist) and after."""

    path: Path
    before: str | None
    after: str

    def diff(self) -> str:
        """The change as a unified diff."""
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile="/dev/null" if self.before is None else str(self.path),
                tofile=str(self.path),
            )
        )


@dataclass(frozen=True)
class MemoryMdReport:
    path: Path
    added: tuple[str, ...]  # refs of memories made from lines a person added
    forgotten: tuple[str, ...]  # refs forgotten because a person deleted their line
    memories: int  # memories offered to the block
    lines: int
    chars: int
    changed: bool
    problem: str | None = None  # why the file was left as it was (broken markers)


@dataclass
class NightlyReport:
    dry_run: bool
    steps: dict[str, dict[str, int]] = field(default_factory=dict)  # counts of each step run
    backup: Path | None = None  # taken before the night's first bulk change, if any
    backup_seconds: float | None = None
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
    changes: list[FileChange] = field(default_factory=list)  # a dry run's files, as diffs
    problems: list[str] = field(default_factory=list)  # steps that failed on a file, and why
    health: health.HealthReport | None = None
    seconds: float = 0.0


# -- archive -------------------------------------------------------------------------


def plan_archive(engine: Engine, *, min_age_days: int = 7) -> list[ArchiveCandidate]:
    """What would go to the cold tier now (SPEC §6): active memories whose activation
    fell below `lifecycle.prune_threshold` (and said at least `min_age_days` ago), the
    lowest-scored beyond `lifecycle.max_facts`, superseded ones older than the retention,
    and expired TTL items. Guardrails and pinned memories are never archived."""
    now = engine.clock.now()
    life, decay = engine.settings.lifecycle, engine.settings.decay
    old_enough = now - timedelta(days=min(min_age_days, CENTURY_DAYS))
    chosen: dict[int, ArchiveCandidate] = {}
    active = [m for m in engine.all_memories("active") if not m.pinned and m.kind != "guardrail"]
    for memory in active:
        if memory.expires_at is not None and memory.expires_at <= now:
            chosen[memory.id] = ArchiveCandidate(memory, "expired", None)
        elif (
            memory.observed_at <= old_enough
            and (a := activation(memory, now, decay)) < life.prune_threshold
        ):
            chosen[memory.id] = ArchiveCandidate(memory, "below_threshold", round(a, 4))
    remaining = [m for m in active if m.id not in chosen]
    if len(remaining) > life.max_facts:
        by_id = {m.id: m for m in remaining}
        for s in rank(remaining, now, decay)[life.max_facts :]:
            chosen[s.memory_id] = ArchiveCandidate(by_id[s.memory_id], "over_max_facts", s.total)
    retention = now - timedelta(days=life.superseded_retention_days)
    for memory in engine.all_memories("superseded"):
        changed = memory_changed_at(engine, memory)
        if changed is not None and changed <= retention:
            chosen[memory.id] = ArchiveCandidate(memory, "superseded_retention", None)
    return sorted(chosen.values(), key=lambda c: c.memory.id)


def archive(engine: Engine, candidates: Iterable[ArchiveCandidate], *, actor: str) -> int:
    """Move `candidates` to the cold tier and append them to HOME/archive/YYYY-MM-DD.jsonl;
    the caller has taken a backup. Returns how many moved."""
    chosen = list(candidates)
    if not chosen:
        return 0
    now = engine.clock.now()
    with engine.store.transaction():
        moved = engine.store.archive.move(
            [(c.memory.id, c.reason, c.score) for c in chosen], now=now, actor=actor
        )
    folder = engine.settings.home / "archive"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{now.astimezone(engine.zone):%Y-%m-%d}.jsonl", "a", encoding="utf-8") as f:
        for c in chosen:
            row = engine.store.archive.get(c.memory.id)
            if row is not None:
                line = {
                    "id": row.ref,
                    "archived_at": row.archived_at.isoformat(),
                    "reason": row.reason,
                    "score": row.score,
                    "record": row.record,
                }
                f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    return moved


def memory_changed_at(engine: Engine, memory: Memory) -> datetime | None:
    entries = engine.store.audit.entries(memory_id=memory.id)
    changes = [e.at for e in entries if e.action in ("supersede", "resolve")]
    return max(changes) if changes else None


# -- MEMORY.md -----------------------------------------------------------------------


def render_memory_md(
    engine: Engine,
    *,
    dry_run: bool = False,
    preview: list[FileChange] | None = None,
    pointers: Sequence[tuple[str, str]] = (),
) -> MemoryMdReport:
    """Read back what a person changed inside memoracle's block of MEMORY.md (added lines
    become user-stated memories, deleted lines forgets), then rewrite the block from the
    store: guardrails and every memory scoring `PROMOTE_AT` or more, within
    `render.memory_md_max_lines` / `_max_chars`. Text outside the block is kept byte for
    byte. `pointers` ((title, path) pairs) fill its Topics section. With `dry_run`,
    nothing is written or changed; the change is added to `preview`."""
    path = engine.settings.files_dir / MEMORY_FILE
    last_path = engine.settings.home / LAST_BLOCK
    current = read_text(path)
    last = read_text(last_path)
    added: list[str] = []
    forgotten: list[str] = []
    try:
        has_block = current is not None and extract_block(current) is not None
        edits = read_edits(current, last) if has_block and current and last else None
    except BlockError as exc:  # a person broke a marker: their file stays as it is
        return MemoryMdReport(path, (), (), 0, 0, 0, False, problem=f"{path}: {exc}")
    if edits is not None:
        if not dry_run:
            refused: list[str] = []
            for text, kind in zip(edits.added, edits.added_kinds, strict=True):
                try:
                    memory, _ = engine.remember(
                        text, kind=kind, source="user-stated", actor="memory-md"
                    )
                except InvalidInput as exc:  # too long, say: the line stays in the file
                    refused.append(f"the line {_quote(text)} cannot be stored ({exc})")
                    continue
                except WriteHeld as exc:  # looks like prompt injection: a person decides
                    refused.append(f"the line {_quote(text)} is held for review ({exc})")
                    continue
                added.append(memory.ref)
            if refused:  # the others are stored; once it is fixed, the next night goes on
                return MemoryMdReport(
                    path,
                    tuple(added),
                    (),
                    0,
                    0,
                    0,
                    False,
                    problem=f"{path}: {'; '.join(refused)}; the file was left as it is.",
                )
            for ref in edits.forgotten:
                forgotten.append(engine.forget(ref, actor="memory-md", reason="line deleted").ref)
        else:
            added, forgotten = list(edits.added), list(edits.forgotten)
    chosen = [m for m, s in engine.score() if m.kind == "guardrail" or s.total >= PROMOTE_AT]
    render = engine.settings.render
    block = render_block(
        chosen,
        max_lines=render.memory_md_max_lines,
        max_chars=render.memory_md_max_chars,
        pointers=pointers,
    )
    merged = merge_into(current, block)
    changed = merged != current
    if not dry_run:
        if changed:
            write_atomically(path, merged)
        write_atomically(last_path, block)
    elif changed and preview is not None:
        preview.append(FileChange(path, current, merged))
    return MemoryMdReport(
        path,
        tuple(added),
        tuple(forgotten),
        len(chosen),
        block.count("\n"),
        len(block),
        changed,
    )


# -- daily notes ---------------------------------------------------------------------


def note_lock(home: Path) -> AbstractContextManager[None]:
    """HOME/notes.lock, held while a daily note is read and written again (the nightly
    run, a checkpoint), so one writer's lines are never lost to the other's."""
    path = home / NOTES_LOCK
    return os_lock(
        path,
        wait_seconds=NOTE_LOCK_WAIT_SECONDS,
        busy=f"Another memoracle process has held {path} for {NOTE_LOCK_WAIT_SECONDS:.0f} s.",
    )


def append_daily_notes(
    engine: Engine,
    *,
    days: int = DAILY_LOOKBACK_DAYS,
    dry_run: bool = False,
    preview: list[FileChange] | None = None,
) -> list[Path]:
    """Append the memories captured in the last `days` days to their day's note
    (`memory/YYYY-MM-DD.md`, by capture time in the workspace timezone), whatever became
    of them since (a note is a log of what was learned that day; only forgotten ones are
    left out), so a night that runs late writes the same notes. Notes are only ever
    appended to, and a memory already in its note is not written again. Returns
    the notes that grew (with `dry_run`: would grow, the changes added to `preview`).
    A note that cannot be read or written is left as it is and named in the
    `WorkspaceError` raised once every other note is written."""
    since = engine.clock.now() - timedelta(days=days)
    by_day: dict[date, list[Memory]] = {}
    for memory in engine.store.memories.created_since(since, LOGGED):
        by_day.setdefault(memory.created_at.astimezone(engine.zone).date(), []).append(memory)
    grown: list[Path] = []
    failed: list[str] = []
    for day, memories in sorted(by_day.items()):
        path = engine.settings.files_dir / NOTES_DIR / f"{day:%Y-%m-%d}.md"
        try:
            with nullcontext() if dry_run else note_lock(engine.settings.home):
                existing = read_text(path)
                updated = append_entries(existing, day, memories)
                if updated != (existing or ""):
                    if not dry_run:
                        write_atomically(path, updated)
                    elif preview is not None:
                        preview.append(FileChange(path, existing, updated))
                    grown.append(path)
        except WorkspaceError as exc:  # this note is left as it is; the others are written
            failed.append(str(exc))
    if failed:
        raise WorkspaceError(" ".join(failed))
    return grown


def archive_daily_notes(engine: Engine, *, dry_run: bool = False) -> list[Path]:
    """Move daily notes older than `lifecycle.daily_notes_archive_days` to
    `memory/archive/YYYY-MM/` (only files named YYYY-MM-DD.md; topic files stay).
    Returns where they went (or would go)."""
    folder = engine.settings.files_dir / NOTES_DIR
    if not folder.is_dir():
        return []
    today = engine.clock.now().astimezone(engine.zone).date()
    cutoff = today - timedelta(days=engine.settings.lifecycle.daily_notes_archive_days)
    moved: list[Path] = []
    for path in sorted(folder.glob("*.md")):
        try:
            day = date.fromisoformat(path.stem)
        except ValueError:
            continue  # a topic file, or a note named otherwise
        if day >= cutoff or path.name != f"{day:%Y-%m-%d}.md":
            continue
        target = folder / "archive" / f"{day:%Y-%m}" / path.name
        if target.exists():
            continue  # never overwrite: a person may have put a note there
        moved.append(target)
        if not dry_run:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)
    return moved


def clean_old_files(engine: Engine, *, dry_run: bool = False) -> list[Path]:
    """Clean what is past its keeping (SPEC §6): session logs in the workspace's
    `sessions/` folder older than `lifecycle.session_logs_keep_days` (30) and daily
    notes, in `memory/` or `memory/archive/`, older than `daily_notes_keep_days` (365).
    Only files whose names start with their date are looked at; the age is that date,
    never the file's mtime; 0 keeps them forever. The files are packed into
    `HOME/archive/cleaned/YYYY-MM-DD.tar.gz`, the archive is read back and checked,
    and only then are they removed: nothing is lost, the workspace stays small.
    Returns the files cleaned (or that would be)."""
    files = engine.settings.files_dir
    life = engine.settings.lifecycle
    today = engine.clock.now().astimezone(engine.zone).date()
    old: list[Path] = []
    for folder, pattern, keep in (
        (files / "sessions", "*", life.session_logs_keep_days),
        (files / NOTES_DIR, "*.md", life.daily_notes_keep_days),
        (files / NOTES_DIR / "archive", "*/*.md", life.daily_notes_keep_days),
    ):
        if keep <= 0 or not folder.is_dir():
            continue
        cutoff = today - timedelta(days=keep)
        old += [p for p in sorted(folder.glob(pattern)) if _dated_before(p, cutoff)]
    if old and not dry_run:
        _pack(old, files, engine.settings.home / "archive" / "cleaned", today)
        for path in old:
            path.unlink()
            if path.parent.parent == files / NOTES_DIR / "archive":
                with contextlib.suppress(OSError):
                    path.parent.rmdir()  # a month folder left empty
    return old


def _dated_before(path: Path, cutoff: date) -> bool:
    """Whether `path` is a file whose name starts with a date (YYYY-MM-DD) before `cutoff`."""
    match = _DATED.match(path.name)
    if match is None or not path.is_file():
        return False
    try:
        return date.fromisoformat(match.group(1)) < cutoff
    except ValueError:
        return False  # 2026-13-40: not a date


_FILE_UNSAFE = re.compile(r"[^\w-]+")
_DATED = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[-_T.]|$)")


def _pack(paths: list[Path], root: Path, folder: Path, today: date) -> Path:
    """`paths` (under `root`) into a new gzip tar in `folder`, read back and checked
    against the files' sizes before anyone deletes them."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{today:%Y-%m-%d}.tar.gz"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{today:%Y-%m-%d}-{n}.tar.gz"
    tmp = target.with_name(f".{target.name}.part")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for path in paths:
                tar.add(path, arcname=str(path.relative_to(root)), recursive=False)
        with tarfile.open(tmp, "r:gz") as tar:
            sizes = {m.name: m.size for m in tar.getmembers()}
        for path in paths:
            if sizes.get(str(path.relative_to(root))) != path.stat().st_size:
                raise WorkspaceError(f"{tmp}: {path} did not pack whole; nothing was removed.")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WorkspaceError(
            f"{target}: cannot pack the old files ({exc.strerror or exc}); nothing was removed."
        ) from None
    return target


# -- session-start snapshot and exports ----------------------------------------------


def write_snapshot(
    engine: Engine, *, dry_run: bool = False, preview: list[FileChange] | None = None
) -> Path:
    """`SESSION-START.md` in the workspace folder: memoracle's MEMORY.md block, today's
    and yesterday's notes and the week's hot topics, cut to `render.snapshot_bytes`
    (8 KB) — what an agent reads first in a new session. (Not BOOTSTRAP.md: that is
    OpenClaw's first-run file.)"""
    files = engine.settings.files_dir
    today = engine.clock.now().astimezone(engine.zone).date()
    parts: list[str] = [f"# Session start — {today:%Y-%m-%d}"]
    block = read_text(engine.settings.home / LAST_BLOCK)
    if block:
        parts.append(block.strip())
    for day in (today, today - timedelta(days=1)):
        try:
            note = read_text(files / NOTES_DIR / f"{day:%Y-%m-%d}.md")
        except WorkspaceError as exc:  # the snapshot goes without it
            log.warning("%s", exc)
            continue
        if note:
            parts.append(note.strip())
    topics = hot_topics(engine)
    if topics:
        parts.append("## Hot topics (7 days)\n" + "\n".join(f"- {t} ({n})" for t, n in topics))
    text = _cut("\n\n".join(parts) + "\n", engine.settings.render.snapshot_bytes)
    path = files / SNAPSHOT_FILE
    if not dry_run:
        write_atomically(path, text)
    elif preview is not None and (before := read_text(path)) != text:
        preview.append(FileChange(path, before, text))
    return path


def hot_topics(engine: Engine, *, days: int = 7, top: int = 10) -> list[tuple[str, int]]:
    """The names mentioned most in memories of the last `days` days."""
    since = engine.clock.now() - timedelta(days=days)
    counts: dict[str, int] = {}
    for memory in engine.all_memories("active"):
        if memory.observed_at >= since:
            for name in set(_NAME.findall(memory.text)):
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def export_jsonl(engine: Engine, *, dry_run: bool = False) -> list[Path]:
    """`knowledge-graph/facts.jsonl` (live memories), `entities.jsonl` and
    `relations.jsonl` (the graph, each with how many live memories state it), rewritten
    whole each night, and `archived-facts.jsonl` (the cold tier, `export_archived`), one
    JSON object a line: views of the store for tools that read JSONL."""
    folder = engine.settings.files_dir / "knowledge-graph"
    facts = [
        json.dumps(records.memory(m), ensure_ascii=False, sort_keys=True)
        for status in ("active", "disputed")
        for m in engine.all_memories(status)
    ]
    entities = [json.dumps(records.entity(e), ensure_ascii=False) for e in engine.graph_entities()]
    relations = [
        json.dumps(records.relation(r), ensure_ascii=False) for r in engine.graph_relations()
    ]
    written = []
    for name, lines in (
        ("facts.jsonl", facts),
        ("entities.jsonl", entities),
        ("relations.jsonl", relations),
    ):
        path = folder / name
        written.append(path)
        if not dry_run:
            write_atomically(path, "".join(line + "\n" for line in lines))
    written.append(export_archived(engine, dry_run=dry_run))
    return written


def export_archived(engine: Engine, *, dry_run: bool = False) -> Path:
    """`knowledge-graph/archived-facts.jsonl`: the cold tier, one memory a line, in the
    order they were archived. The cold tier only grows, night after night, so the file
    is appended with what was archived since the last export, when it is as that export
    left it (the same size, and no memory up to its last line restored since);
    otherwise it is written whole again. Each export is recorded (runs:
    `export:archived`, with its lines, bytes and last memory id)."""
    path = engine.settings.files_dir / "knowledge-graph" / "archived-facts.jsonl"
    if dry_run:
        return path
    archive = engine.store.archive
    last = engine.store.runs.latest("export:archived", status="ok")
    done = {} if last is None else last.counts
    lines = done.get("lines", 0)
    newest = archive.get(done.get("last_id", 0)) if lines else None
    appending = (
        last is not None
        and _size(path) == done.get("bytes")
        and (lines == 0 or (newest is not None and archive.position(newest.memory_id) == lines))
    )
    if not appending:
        lines, newest = 0, None
    written = 0

    def fresh_lines() -> Iterator[str]:
        nonlocal newest, written
        while page := archive.in_order(after=newest, limit=1000):
            for a in page:
                yield _archived_line(a) + "\n"
            newest, written = page[-1], written + len(page)

    if appending:
        _append(path, fresh_lines())
    else:
        write_atomically(path, fresh_lines())
    engine.record_run(
        "export:archived",
        {
            "lines": lines + written,
            "bytes": _size(path) or 0,
            "last_id": newest.memory_id if newest is not None else 0,
            "written": written,
            "whole": int(not appending),
        },
    )
    return path


def _archived_line(a: ArchivedMemory) -> str:
    return json.dumps(
        {
            "id": a.ref,
            "archived_at": a.archived_at.isoformat(),
            "reason": a.reason,
            "score": a.score,
            "record": a.record,
        },
        ensure_ascii=False,
        sort_keys=True,
        default=str,
    )


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _append(path: Path, lines: Iterable[str]) -> None:
    """Append `lines` to `path` and sync; a failure raises `WorkspaceError` naming it."""
    try:
        with open(path, "a", encoding="utf-8", newline="") as f:
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot append to it ({exc.strerror or exc}); check free space and the"
            " folder's permissions."
        ) from None


def _quote(text: str, width: int = 60) -> str:
    return f"“{text[:width]}…”" if len(text) > width else f"“{text}”"


def _cut(text: str, max_bytes: int) -> str:
    """`text` within `max_bytes` of UTF-8, cut at a line end."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    head = data[:max_bytes].decode("utf-8", errors="ignore")
    return head[: head.rfind("\n") + 1] if "\n" in head else head


def write_topic_files(
    engine: Engine, *, dry_run: bool = False, preview: list[FileChange] | None = None
) -> list[tuple[str, str]]:
    """Topic files (L2), `memory/topics/<entity>.md`: for the `TOPICS_SHOWN` entities
    named by the most live memories (at least `TOPIC_MIN_MEMORIES`), those memories,
    newest first, each tagged with its id; rewritten whole each night (a view). Returns
    the (title, workspace-relative path) pointers MEMORY.md's Topics section shows."""
    pointers: list[tuple[str, str]] = []
    for entity in engine.graph_entities(limit=TOPICS_SHOWN * 2):
        if entity.memories < TOPIC_MIN_MEMORIES or len(pointers) == TOPICS_SHOWN:
            break
        stem = _FILE_UNSAFE.sub("-", entity.key).strip("-")
        if not stem or entity.key == "user":  # the speaker is everywhere: no topic
            continue
        relative = f"{NOTES_DIR}/topics/{stem}.md"
        ids = engine.store.graph.memories_of([entity.id], limit=TOPIC_MEMORIES)
        lines = [
            f"# {entity.name}",
            "",
            f"_Written by memoracle each night: the memories naming {entity.name} "
            f"({entity.type}), newest first._",
            "",
            *(tagged_line(m.ref, m.text) for m in engine.store.memories.get_many(ids)),
        ]
        text = "\n".join(lines) + "\n"
        path = engine.settings.files_dir / relative
        if not dry_run:
            write_atomically(path, text)
        elif preview is not None and (before := read_text(path)) != text:
            preview.append(FileChange(path, before, text))
        pointers.append((entity.name, relative))
    return pointers


def write_entities_md(engine: Engine, *, dry_run: bool = False) -> Path:
    """`reference/entities.md`: the knowledge graph's entities by type, each with the
    names it was seen under, how many memories name it and its relations; rewritten
    whole each night (a view: edit the memories, not this file)."""
    by_type: dict[str, list[str]] = {}
    relations: dict[str, list[str]] = {}
    for r in engine.graph_relations():
        relations.setdefault(r.source, []).append(f"{r.relation} {r.target}")
    for e in engine.graph_entities():
        also = [a for a in e.aliases if a != e.name]
        line = f"- **{e.name}** (`{e.key}`), {e.memories} memor{'y' if e.memories == 1 else 'ies'}"
        if also:
            line += f"; also {', '.join(also[:5])}"
        if e.key in relations:
            line += f"; {', '.join(relations[e.key][:8])}"
        by_type.setdefault(e.type, []).append(line)
    parts = ["# Entities\n\n_Written by memoracle each night from the knowledge graph._"]
    for type_ in sorted(by_type):
        parts.append(f"## {type_}\n" + "\n".join(by_type[type_]))
    path = engine.settings.files_dir / "reference" / "entities.md"
    if not dry_run:
        write_atomically(path, "\n\n".join(parts) + "\n")
    return path


# -- all of it -----------------------------------------------------------------------


STEPS: tuple[str, ...] = (
    "summarize", "archive", "reindex", "resolve", "dedup", "graph", "render", "clean",
    "health",
)  # fmt: skip
"""The nightly steps, in order (decay needs no step: activation is computed from time).
Archive comes first after the daily notes, so the rest of the night works on what stays
live: at most about `lifecycle.max_facts` memories, however long the store's history
(on a store's first night that is the difference between minutes and an hour). Reindex
comes before dedup so every memory is compared with its vector, whenever the night runs
(a search during the day may have embedded some texts, and not others); resolve comes
before dedup so every memory has its slots, and a text with the same words but another
value ("tea over coffee" after "coffee over tea") supersedes the old one instead of
being merged into it."""

OnStep = Callable[[str, dict[str, int], float], None]


def run_nightly(
    engine: Engine,
    *,
    dry_run: bool = False,
    only: str | None = None,
    actor: str = "nightly",
    on_step: OnStep | None = None,
) -> NightlyReport:
    """The nightly run, step by step (`STEPS`): summarize (the days' memories appended to
    their daily notes), reindex (missing vectors embedded, the HNSW graph built when
    due), resolve (contradictions for memories that never had their slot looked for),
    dedup (near-duplicates merged, never two that give a slot different values), graph
    (entities and relations of memories never read for the knowledge graph), archive,
    render (topic files, MEMORY.md's block, the session-start snapshot, the JSONL
    exports), clean (old daily notes to memory/archive/, old session logs and year-old
    notes packed away), health (health.json). A verified backup is taken before the
    first step that changes `lifecycle.backup_min_changes` memories or more, or any at
    all once the newest backup is `lifecycle.backup_every_days` old (a night's small
    changes are in the audit log and undone one by one: `restore`, `resolve`); each step
    is recorded in the runs table with its counts and time, and `on_step` hears of it.
    One run at a time (HOME/nightly.lock; a lock left by a dead process is taken over).
    `only` runs one step. Every step is idempotent and
    computed from the store and the clock, so a killed run is finished by the next.
    A step that cannot read or write a file (a read-only folder, a note that is not
    UTF-8) is recorded as failed, named in `problems`, and the night goes on; the next
    run tries it again. Nothing is deleted."""
    if only is not None and only not in STEPS:
        raise InvalidInput(f"Unknown nightly step {only!r}; the steps are: {', '.join(STEPS)}.")
    started = time.perf_counter()
    report = NightlyReport(dry_run=dry_run)
    with _nightly_lock(engine.settings.home, dry_run=dry_run):
        for step in STEPS:
            if only is not None and step != only:
                continue
            if step == "health" and not dry_run and only is None and not report.problems:
                # The maintenance is done: recorded first, so health.json reports this run.
                engine.record_run("nightly", {"milliseconds": _since(started)})
            step_started = time.perf_counter()
            run = None if dry_run else engine.start_run(f"nightly:{step}")
            try:
                counts = _STEP[step](engine, report, dry_run, actor)
            except WorkspaceError as exc:  # a file it could not read or write: the night goes on
                report.problems.append(f"{step}: {exc}")
                if run is not None:
                    engine.finish_run(run, "failed", {}, error=str(exc))
                if on_step is not None:
                    on_step(step, {"failed": 1}, time.perf_counter() - step_started)
                continue
            except BaseException as exc:
                if run is not None:
                    engine.finish_run(run, "failed", {}, error=f"{type(exc).__name__}: {exc}")
                raise
            seconds = time.perf_counter() - step_started
            counts["milliseconds"] = int(seconds * 1000)
            report.steps[step] = counts
            if run is not None:
                engine.finish_run(run, "ok", counts)
            if on_step is not None:
                on_step(step, counts, seconds)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _summarize(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    # Every day since the last finished summary, and at least the last few: a missed
    # night is caught up.
    days = DAILY_LOOKBACK_DAYS
    last = engine.store.runs.last("nightly:summarize", status="ok")
    if last is not None:
        since = datetime.fromisoformat(last[0])
        days = max(days, (engine.clock.now() - since).days + 1)
    else:
        days = max(days, FIRST_LOOKBACK_DAYS)
    report.daily_notes = append_daily_notes(
        engine, days=days, dry_run=dry_run, preview=report.changes
    )
    return {"notes": len(report.daily_notes)}


def _before_changing(engine: Engine, report: NightlyReport, changes: int) -> None:
    """Take the night's verified backup, if it has none yet, before a step changes
    `changes` memories: when they are `lifecycle.backup_min_changes` or more, or when
    the newest backup is older than `lifecycle.backup_every_days`."""
    if report.dry_run or report.backup is not None or changes == 0:
        return
    life = engine.settings.lifecycle
    if changes < life.backup_min_changes:
        newest = newest_backup(engine.settings.home / "backups")
        if newest is not None and engine.clock.now() - newest < timedelta(
            days=life.backup_every_days
        ):
            return
    info = engine.backup()
    report.backup, report.backup_seconds = info.path, info.seconds


def _dedup(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    # The whole store on the first night, then what each day added (`through_id`).
    last = engine.store.runs.latest("nightly:dedup", status="ok")
    after = None if last is None else last.counts.get("through_id")
    through = engine.store.memories.max_id()
    duplicates = report.duplicates = engine.duplicates(after=after)
    report.merged = sum(len(group.merge) for group in duplicates)
    if not dry_run:
        _before_changing(engine, report, report.merged)
        engine.merge_duplicates(duplicates, actor=actor)
    return {"groups": len(duplicates), "merged": report.merged, "through_id": through}


def _resolve(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    if dry_run:
        report.settled = len(engine.store.memories.without_slot(limit=1 << 62))
    else:
        backlog = engine.store.memories.without_slot(
            limit=engine.settings.lifecycle.backup_min_changes
        )
        _before_changing(engine, report, len(backlog))  # settling may supersede some
        report.settled = engine.settle_unslotted(actor=actor)
    return {"settled": report.settled}


def _reindex(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    if engine.searcher.embedder is None:
        return {"embedded": 0}
    return {"embedded": engine.index_status().missing if dry_run else engine.reindex()}


def _graph(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    if dry_run:
        return {"read": len(engine.store.graph.unread(limit=1 << 62))}
    try:
        read = engine.read_graph_backlog()
    except InvalidInput as exc:  # the ontology file: named, and the night goes on
        raise WorkspaceError(str(exc)) from None
    try:
        logged = graph_log.append(engine).appended
    except InvalidInput as exc:  # a damaged line in the graph log
        raise WorkspaceError(
            f"{exc}. Move the graph log aside: the next run writes it again from the store."
        ) from None
    return {"read": read, "logged": logged}


def _archive(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    report.archived = plan_archive(engine)
    if not dry_run:
        _before_changing(engine, report, len(report.archived))
        archive(engine, report.archived, actor=actor)
    return {"archived": len(report.archived)}


def _render(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    topics = write_topic_files(engine, dry_run=dry_run, preview=report.changes)
    report.memory_md = render_memory_md(
        engine, dry_run=dry_run, preview=report.changes, pointers=topics
    )
    report.snapshot = write_snapshot(engine, dry_run=dry_run, preview=report.changes)
    report.exports = export_jsonl(engine, dry_run=dry_run)
    report.exports.append(write_entities_md(engine, dry_run=dry_run))
    md = report.memory_md
    return {
        "added": len(md.added),
        "forgotten": len(md.forgotten),
        "lines": md.lines,
        "changed": int(md.changed),
    }


def _clean(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    report.notes_archived = archive_daily_notes(engine, dry_run=dry_run)
    report.cleaned = clean_old_files(engine, dry_run=dry_run)
    return {"notes_moved": len(report.notes_archived), "cleaned": len(report.cleaned)}


def _health(engine: Engine, report: NightlyReport, dry_run: bool, actor: str) -> dict[str, int]:
    # SQLite's quick check reads the whole file: weekly, unless the last one failed.
    last = engine.store.runs.latest("nightly:integrity", status="ok")
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
    "summarize": _summarize,
    "dedup": _dedup,
    "resolve": _resolve,
    "graph": _graph,
    "reindex": _reindex,
    "archive": _archive,
    "render": _render,
    "clean": _clean,
    "health": _health,
}


@contextmanager
def _nightly_lock(home: Path, *, dry_run: bool) -> Iterator[None]:
    """HOME/nightly.lock holding our pid, for the run's length. A second run is refused
    while the first one's process lives; a lock left by a dead process is taken over."""
    if dry_run:
        yield
        return
    path = home / NIGHTLY_LOCK
    with pid_lock(
        path,
        busy=lambda pid: (
            f"Another nightly run (pid {pid}) is working on {home}; "
            f"wait for it, or remove {path} if that process is gone."
        ),
    ):
        yield
