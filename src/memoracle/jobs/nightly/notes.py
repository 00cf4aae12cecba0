"""The daily notes and what is past its keeping: notes appended (`append_daily_notes`),
moved to memory/archive/ after two weeks (`archive_daily_notes`), session logs and old
files packed or removed (`clean_old_files`)."""

from __future__ import annotations

import contextlib
import os
import re
import tarfile
from contextlib import nullcontext
from datetime import date, timedelta
from pathlib import Path

from memoracle.engine import Engine
from memoracle.errors import WorkspaceError
from memoracle.files import read_text, replacing, write_atomically
from memoracle.jobs.nightly.memory_md import FileChange
from memoracle.render.daily import append_entries, without
from memoracle.text import content_hash
from memoracle.types import Memory
from memoracle.workspace import (
    NOTES_DIR,
    note_lock,
)

DAILY_LOOKBACK_DAYS = 3  # days of memories a nightly run appends to their notes, at least


FIRST_LOOKBACK_DAYS = 30  # on the first run: a month of notes, not a whole history
LOGGED = ("active", "disputed", "superseded", "archived")  # in daily notes: not forgotten


def append_daily_notes(
    engine: Engine,
    *,
    days: int = DAILY_LOOKBACK_DAYS,
    dry_run: bool = False,
    preview: list[FileChange] | None = None,
) -> list[Path]:
    """Append the memories captured in the last `days` days that the workspace owner
    may see (docs/scopes.md) to their day's note
    (`memory/YYYY-MM-DD.md`, by capture time in the workspace timezone), whatever became
    of them since (a note is a log of what was learned that day; only forgotten ones are
    left out), so a night that runs late writes the same notes. Notes are only ever
    appended to, and a memory already in its note is not written again — but first
    every note loses the lines of what was forgotten since (`forget_in_notes`). Returns
    the notes that changed (with `dry_run`: would), each change added to `preview`.
    A note that cannot be read or written is left as it is and named in the
    `WorkspaceError` raised once every other note is written."""
    failed: list[str] = []
    try:
        grown = forget_in_notes(engine, dry_run=dry_run, preview=preview)
    except WorkspaceError as exc:  # the appends are still made
        grown, failed = [], [str(exc)]
    since = engine.clock.now() - timedelta(days=days)
    by_day: dict[date, list[Memory]] = {}
    for memory in engine.memories_created_since(since, LOGGED):
        if not engine.owner_sees(memory.scope):  # the notes are the owner's
            continue
        by_day.setdefault(memory.created_at.astimezone(engine.zone).date(), []).append(memory)
    for day, memories in sorted(by_day.items()):
        path = engine.settings.files_dir / NOTES_DIR / f"{day:%Y-%m-%d}.md"
        try:
            with nullcontext() if dry_run else note_lock(engine.settings.home):
                existing = read_text(path)
                updated = append_entries(existing, day, memories)
                if updated != (existing or ""):
                    if not dry_run:
                        write_atomically(path, updated)
                    if preview is not None:
                        preview.append(FileChange(path, existing, updated))
                    if path not in grown:
                        grown.append(path)
        except WorkspaceError as exc:  # this note is left as it is; the others are written
            failed.append(str(exc))
    if failed:
        raise WorkspaceError(" ".join(failed))
    return grown


def forget_in_notes(
    engine: Engine, *, dry_run: bool = False, preview: list[FileChange] | None = None
) -> list[Path]:
    """Take the lines of forgotten memories out of the daily notes (`render.daily.without`:
    a line tagged with the memory's ref, or a bullet saying its text or one of its
    turns', as a checkpoint may), so forgetting reaches the files too; the audit keeps
    the record. The notes changed (with `dry_run`: that would be)."""
    forgotten = engine.all_memories("forgotten", seen_by=engine.owner)
    if not forgotten:
        return []
    refs = {m.ref for m in forgotten}
    turns = [e for m in forgotten for e in engine.episodes_of(m, scope=engine.owner)]
    hashes = {content_hash(t) for t in [*(m.text for m in forgotten), *(e.text for e in turns)]}
    changed: list[Path] = []
    folder = engine.settings.files_dir / NOTES_DIR
    try:
        notes = sorted(p for p in folder.glob("*.md") if _DAY_NOTE.match(p.name))
    except OSError:
        return []
    failed: list[str] = []
    for path in notes:
        try:
            with nullcontext() if dry_run else note_lock(engine.settings.home):
                existing = read_text(path)
                if not existing:
                    continue
                kept = without(existing, refs, hashes)
                if kept != existing:
                    if not dry_run:
                        write_atomically(path, kept)
                    if preview is not None:
                        preview.append(FileChange(path, existing, kept))
                    changed.append(path)
        except WorkspaceError as exc:
            failed.append(str(exc))
    if failed:
        raise WorkspaceError(" ".join(failed))
    return changed


_DAY_NOTE = re.compile(r"^\d{4}-\d{2}-\d{2}\.md$")


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
    """Clean what is past its keeping (docs/lifecycle.md): session logs in the workspace's
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


FILE_UNSAFE = re.compile(r"[^\w-]+")
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
    try:
        with replacing(target, temp=target.with_name(f".{target.name}.part")) as tmp:
            with tarfile.open(tmp, "w:gz") as tar:
                for path in paths:
                    tar.add(path, arcname=str(path.relative_to(root)), recursive=False)
            with tarfile.open(tmp, "r:gz") as tar:
                sizes = {m.name: m.size for m in tar.getmembers()}
            for path in paths:
                if sizes.get(str(path.relative_to(root))) != path.stat().st_size:
                    raise WorkspaceError(f"{tmp}: {path} did not pack whole; nothing was removed.")
    except OSError as exc:
        raise WorkspaceError(
            f"{target}: cannot pack the old files ({exc.strerror or exc}); nothing was removed."
        ) from None
    return target
