"""The files that hold copies of stored text, cleaned in place: the rendered views
(MEMORY.md, SESSION-START.md, the daily notes and topic files, reference/), the JSONL
exports and the graph log, memoracle's record of the block it last wrote, the packed
old notes, and the backups — each database backup rewritten through the same
redaction on a copy, verified, and only then renamed over the old one."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import zstandard

from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import StoreError, WorkspaceError
from memoracle.files import replacing, write_atomically
from memoracle.jobs.scrub import database
from memoracle.jobs.scrub.clean import Cleaned, Cleaner
from memoracle.store.backup import NAME, copy, row_counts, seal
from memoracle.workspace import LAST_BLOCK, MEMORY_FILE, NOTES_DIR, SNAPSHOT_FILE

MARKDOWN, JSONL, BACKUP, PACKED = "markdown", "jsonl", "backup", "packed"
REMOVED = "removed"  # a topic file named after a secret (the next render writes it anew)


@dataclass
class FileChange:
    """A file the redaction changes (or would): what it is, how many of its lines (a
    backup: rows) change, and the kinds found. Never the text."""

    path: Path
    what: str
    changed: int = 0
    kinds: Counter[str] = field(default_factory=Counter)


def targets(settings: Settings) -> list[tuple[Path, str]]:
    """Every file of ours that may hold stored text, and how it is read."""
    files, home = settings.files_dir, settings.home
    found: list[tuple[Path, str]] = [
        (files / MEMORY_FILE, MARKDOWN),
        (files / SNAPSHOT_FILE, MARKDOWN),
        (home / LAST_BLOCK, MARKDOWN),
    ]
    for folder in (files / NOTES_DIR, files / "reference"):
        found += [(p, MARKDOWN) for p in sorted(folder.rglob("*.md"))]
    found += [(p, JSONL) for p in sorted((files / "knowledge-graph").glob("*.jsonl"))]
    backups = home / "backups"
    found += [(p, JSONL) for p in sorted(backups.glob("graph-log-*.jsonl"))]
    for path in sorted(backups.glob("memoracle-*")):
        bare = path.name.removesuffix(".zst")
        if NAME.match(bare):
            found.append((path, BACKUP))
    found += [(p, PACKED) for p in sorted((home / "archive" / "cleaned").glob("*.tar.gz"))]
    seen: set[Path] = set()
    out = []
    for path, what in found:
        real = path.resolve()
        if real not in seen and path.is_file():
            seen.add(real)
            out.append((path, what))
    return out


def clean_text(text: str, what: str, cleaner: Cleaner) -> tuple[str, int, Counter[str]]:
    """`text` cleaned as Markdown (line by line, tags kept) or JSONL (each line's
    strings); the lines changed and the kinds found."""
    lines = text.split("\n")
    kinds: Counter[str] = Counter()
    changed = 0
    out = []
    for line in lines:
        done: Cleaned = cleaner.clean_line(line) if what == MARKDOWN else _json_line(line, cleaner)
        if done.changed(line):
            changed += 1
            kinds.update(done.kinds)
        out.append(done.text)
    return "\n".join(out), changed, kinds


def _json_line(line: str, cleaner: Cleaner) -> Cleaned:
    if not line.strip():
        return Cleaned(line, ())
    end = "\r" if line.endswith("\r") else ""
    done = cleaner.clean_json(line.removesuffix("\r"))
    return Cleaned(done.text + end, done.kinds)


def clean_file(path: Path, what: str, cleaner: Cleaner, *, dry_run: bool) -> FileChange | None:
    """A text file cleaned in place (atomically), or None when nothing in it changes. A
    topic file (`memory/topics/<entity>.md`) whose name holds a secret is removed: it
    is a view, and the next render writes it under the entity's redacted key."""
    if path.parent.name == "topics" and path.parent.parent.name == NOTES_DIR:
        named = cleaner.clean(path.stem)
        if named.changed(path.stem):
            if not dry_run:
                try:
                    path.unlink()
                except OSError as exc:
                    raise WorkspaceError(
                        f"{path}: cannot remove it ({exc.strerror or exc})."
                    ) from None
            # Named in the report with its name redacted: the report never says a secret.
            shown = path.with_name(f"{named.text}{path.suffix}")
            return FileChange(shown, REMOVED, 1, Counter(named.kinds))
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise WorkspaceError(f"{path}: not UTF-8 text; it was not rewritten.") from None
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    new, changed, kinds = clean_text(text, what, cleaner)
    if not changed:
        return None
    if not dry_run:
        try:
            write_atomically(path, new)
        except OSError as exc:
            raise WorkspaceError(f"{path}: cannot rewrite it ({exc.strerror or exc}).") from None
    return FileChange(path, what, changed, kinds)


def clean_packed(path: Path, cleaner: Cleaner, *, dry_run: bool) -> FileChange | None:
    """A packed archive of old notes and session logs (`archive/cleaned/*.tar.gz`):
    each text member cleaned, the archive written anew, read back and checked, then
    renamed over the old one."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            members = [(m, _read_member(tar, m)) for m in tar.getmembers()]
    except (OSError, tarfile.TarError) as exc:
        raise WorkspaceError(f"{path}: cannot read the archive ({exc}).") from None
    report = FileChange(path, PACKED)
    rewritten: list[tuple[tarfile.TarInfo, bytes | None]] = []
    for member, data in members:
        if data is not None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                what = MARKDOWN if member.name.endswith((".md", ".txt")) else JSONL
                new, changed, kinds = clean_text(text, what, cleaner)
                if changed:
                    report.changed += changed
                    report.kinds.update(kinds)
                    data = new.encode("utf-8")
                    member.size = len(data)
        rewritten.append((member, data))
    if not report.changed:
        return None
    if not dry_run:
        _write_packed(path, rewritten)
    return report


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes | None:
    handle = tar.extractfile(member) if member.isfile() else None
    return None if handle is None else handle.read()


def _write_packed(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> None:
    try:
        with replacing(path, temp=path.with_name(f".{path.name}.redact"), durable=True) as tmp:
            with tarfile.open(tmp, "w:gz") as tar:
                for member, data in members:
                    tar.addfile(member, None if data is None else io.BytesIO(data))
            with tarfile.open(tmp, "r:gz") as tar:
                sizes = {m.name: m.size for m in tar.getmembers()}
            if sizes != {m.name: m.size for m, _ in members}:
                raise WorkspaceError(f"{path}: the rewritten archive does not read back whole.")
    except (OSError, tarfile.TarError) as exc:
        raise WorkspaceError(f"{path}: cannot rewrite the archive ({exc}).") from None


def clean_backup(
    engine: Engine, path: Path, cleaner: Cleaner, *, now: datetime, dry_run: bool
) -> FileChange | None:
    """A database backup (`memoracle-…db`, or `….db.zst`) put through the same redaction
    as the store: copied beside itself under a hidden name (decompressed if need be),
    opened (migrated to this version's schema), cleaned and vacuumed, then made one
    verified file again (integrity check, row counts as before) and compressed back —
    and only then renamed over the old backup. Until that rename the old one stays as
    it was; a backup that cannot be rewritten is named in a StoreError and left. Each is
    worked on through an engine over it, with `engine`'s settings and clock."""
    work = path.with_name(f".{path.name}.redact")
    packed = path.name.endswith(".zst")
    if not packed:
        # Read in place first (read only: a backup is one file, no WAL to write): most
        # backups need no change, and a copy of each would cost a store's size apiece.
        found = _plan_in_place(engine, path, cleaner, now)
        if found is not None and (not found.rows or dry_run):
            return _report(path, found)
    try:
        _remove(work)
        if packed:
            with open(path, "rb") as src, open(work, "wb") as out:
                zstandard.ZstdDecompressor().copy_stream(src, out)
        else:
            copy(path, work)
        expected = row_counts(work)
        with engine.over(work, now=now) as copied:
            database.learn(copied, cleaner)
            found = database.plan(copied, cleaner)
            if found.rows and not dry_run:
                database.apply(copied, found, now=now, actor="redact", audit=False)
                copied.compact_store()
        if not found.rows or dry_run:
            return _report(path, found)
        seal(work, expected)
        _swap_in(path, work, packed)
        return _report(path, found)
    except OSError as exc:
        raise StoreError(
            f"{path}: the backup could not be rewritten ({exc}); it was left as it was."
        ) from None
    finally:
        _remove(work)


def _plan_in_place(
    engine: Engine, path: Path, cleaner: Cleaner, now: datetime
) -> database.Plan | None:
    """What the backup at `path` needs, read where it is; None when it cannot be read
    so (a schema of another version, which only a copy may be migrated from)."""
    try:
        backup = engine.over(path, now=now, readonly=True)
    except StoreError:
        return None
    with backup:
        database.learn(backup, cleaner)
        return database.plan(backup, cleaner)


def _report(path: Path, found: database.Plan) -> FileChange | None:
    if not found.rows:
        return None
    report = FileChange(path, BACKUP, found.rows)
    for change in found.changes:
        report.kinds.update(change.kinds)
    return report


def _swap_in(path: Path, work: Path, packed: bool) -> None:
    if not packed:
        os.replace(work, path)
        return
    squeezed = path.with_name(f".{path.name}.redact.zst")
    try:
        with open(work, "rb") as src, open(squeezed, "wb") as out:
            zstandard.ZstdCompressor().copy_stream(src, out)
            out.flush()
            os.fsync(out.fileno())
        check = hashlib.sha256()
        with open(squeezed, "rb") as src:
            for chunk in zstandard.ZstdDecompressor().read_to_iter(src):
                check.update(chunk)
        if check.hexdigest() != hashlib.sha256(work.read_bytes()).hexdigest():
            raise StoreError(f"{path}: the recompressed backup does not read back; left as it was.")
        os.replace(squeezed, path)
    finally:
        squeezed.unlink(missing_ok=True)


def _remove(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm", "-writer"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
