"""Installing memoracle into an OpenClaw workspace, and taking it out again.

Owns the install manifest (HOME/install.json) and what it promises. `install` checks
that SQLite has FTS5, then, before anything can render into the workspace, copies byte
for byte (checksums recorded) every file memoracle rewrites whole that is already there
(MEMORY.md first) and records every file and folder in the places memoracle writes
(`TRACKED`); then it creates the store bound to the workspace (`Engine.init`) and
imports the existing MEMORY.md and daily notes through `Engine.ingest`, once.

`uninstall` undoes it from that record: the whole memory exported first (nothing else
happens if that fails), each backup put back (the current file saved beside the
export), the files memoracle created moved beside the export too, daily notes memoracle
appended to cut back to what they were, notes its nightly run archived or packed away
brought back, the folders it created removed when empty, this HOME's crontab lines and
`workspace.files_dir` taken out, and the database deleted unless kept. A file someone
else also wrote in is left where it is and listed. Both compute their plan first; with
`dry_run` the plan is returned and nothing changes.

Never touched: AGENTS.md, SOUL.md and every other file outside `TRACKED`, OpenClaw's
own config. Prompts and flags are the CLI's; the snippets to paste are `openclaw`'s;
the export format is `transfer`'s.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tarfile
from dataclasses import dataclass, field, replace
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from memoracle.clock import Clock
from memoracle.config import Settings, installed_version, set_key
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.files import pid_lock, replacing, write_atomically
from memoracle.ingest.markdown import daily_note_day
from memoracle.jobs import schedule, transfer
from memoracle.openclaw.workspace import (
    AGENTS_BEGIN,
    FLUSH_PROMPT_KEY,
    MCP_SERVER_NAME,
    check_workspace,
)
from memoracle.render.daily import SECTIONS
from memoracle.store import require_fts5
from memoracle.types import IngestReport
from memoracle.workspace import NIGHTLY_LOCK  # no night runs during an uninstall

__all__ = [
    "MANIFEST",
    "TRACKED",
    "Backup",
    "FileAction",
    "InstallReport",
    "Manifest",
    "UninstallReport",
    "install",
    "read_manifest",
    "uninstall",
    "write_manifest",
]

log = logging.getLogger(__name__)

MANIFEST = "install.json"  # in HOME
MANIFEST_TYPE = "memoracle-install"
MANIFEST_FORMAT = 1
# Where memoracle writes in a workspace (Engine.init, the nightly run, checkpoints):
# only these are recorded, and only these are ever restored or cleared.
TRACKED = ("MEMORY.md", "SESSION-START.md", "memory", "reference", "knowledge-graph", "sessions")
# Files memoracle rewrites whole: the copy there before install is backed up.
REWRITTEN = (
    "MEMORY.md",
    "SESSION-START.md",
    "reference/entities.md",
    "knowledge-graph/*.jsonl",
    "memory/topics/*.md",
)
# Folders memoracle creates (Engine.init, topic files, archived notes).
OWN_FOLDERS = ("memory", "reference", "knowledge-graph", "memory/topics", "memory/archive")
DAILY_NOTE = re.compile(r"^memory/(?:archive/\d{4}-\d{2}/)?\d{4}-\d{2}-\d{2}\.md$")
ARCHIVED_MONTH = re.compile(r"^memory/archive/\d{4}-\d{2}$")
CHUNK = 1 << 20
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

_DAY_TITLE = re.compile(r"^# \d{4}-\d{2}-\d{2}$")
_CHECKPOINT = re.compile(r"^## Checkpoint \[\d{2}:\d{2}\]$")
_SECTION = re.compile(r"^## (?P<title>.+)$")
_TAGGED = re.compile(r"^- .*<!-- m_\d+ -->$")
_BULLET = re.compile(r"^- \S")


# -- reports ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Backup:
    """A byte-exact copy of a workspace file taken at install."""

    path: str  # relative to the workspace, with "/"
    backup: Path  # the copy, under HOME/backups/install-<time>/
    sha256: str
    bytes: int


@dataclass(frozen=True)
class Manifest:
    """HOME/install.json: what install found and did, what uninstall undoes."""

    workspace: Path
    installed_at: str
    memoracle_version: str
    backups: tuple[Backup, ...]
    files: dict[str, tuple[str, int]]  # every file in TRACKED before install: sha256, bytes
    dirs: tuple[str, ...]  # every folder in TRACKED before install
    imported_at: str | None = None  # when MEMORY.md and the daily notes were imported
    imported: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class InstallReport:
    home: Path
    workspace: Path
    manifest: Path
    dry_run: bool
    already_installed: bool  # the manifest was there: no new backups, no second import
    found: tuple[str, ...]  # OpenClaw's files seen in the workspace
    backups: tuple[Backup, ...]  # taken now (in a dry run: would be)
    to_import: tuple[Path, ...]  # MEMORY.md and daily notes imported now (or that would be)
    ingest: IngestReport | None  # None when nothing was imported this time
    created: tuple[str, ...]  # folders and files `memoracle init` created
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class FileAction:
    """One thing uninstall does, or would do, to the workspace.

    kind: restore (a backup put back), set-aside (a file memoracle created, moved to
    `saved`), trim (a note cut back to its first `length` bytes: what memoracle appended
    goes), put-back (a note the nightly run archived or packed away, from `source`),
    remove-folder (an empty folder memoracle created), keep (left as it is: someone else
    wrote in it too), missing (gone since install, nowhere to bring it back from)."""

    kind: str
    path: Path
    detail: str
    source: Path | None = None  # where the content comes back from
    saved: Path | None = None  # where the current file goes first
    length: int | None = None  # bytes of `source` (or of the file) to keep
    member: str | None = None  # the file's name inside the `source` archive


@dataclass(frozen=True)
class UninstallReport:
    home: Path
    workspace: Path
    dry_run: bool
    database: Path
    memories: int  # memories in the database, every status (0 without a database)
    export: Path | None  # None: no database, nothing to export
    saved: Path  # where current versions of changed and created files go
    actions: tuple[FileAction, ...]
    keep_db: bool
    db_deleted: bool
    crontab_removed: int | None  # lines removed; None: not tried (dry run) or failed (notes)
    notes: tuple[str, ...]


# -- install ---------------------------------------------------------------------------


def install(
    settings: Settings,
    workspace: Path,
    *,
    clock: Clock,
    dry_run: bool = False,
    force: bool = False,
) -> InstallReport:
    """Install memoracle into the OpenClaw workspace `workspace`: FTS5 checked, backups
    and the manifest written before anything else, the store created with the
    workspace as its files folder, MEMORY.md and the daily notes imported.

    Refused, with nothing changed: a folder that is not an OpenClaw workspace (unless
    `force`), a `workspace.files_dir` set by environment or flag to another folder, a
    HOME already installed into another workspace, SQLite without FTS5. Installing again
    into the same workspace keeps the first backups and imports nothing twice."""
    workspace = workspace.expanduser().resolve()
    check = check_workspace(workspace)
    if check.problem is not None and not (force and workspace.is_dir()):
        raise WorkspaceError(check.problem)
    _refuse_other_files_dir(settings, workspace)
    require_fts5()
    home = settings.home.expanduser()
    manifest = read_manifest(home)
    if manifest is not None and manifest.workspace != workspace:
        raise WorkspaceError(
            f"{home} is installed into {manifest.workspace} ({home / MANIFEST}). Run"
            f" memoracle --home {home} uninstall first, or install with another --home."
            " Nothing was changed."
        )
    already = manifest is not None
    sources = _import_sources(workspace)
    if manifest is None:
        files, dirs = _snapshot(workspace)
        folder = home / "backups" / f"install-{_stamp(clock.now())}"
        planned = tuple(
            Backup(rel, folder / rel, digest, size)
            for rel, (digest, size) in files.items()
            if _matches_any(rel, REWRITTEN)
        )
        if dry_run:
            return _planned(home, workspace, check.found, planned, sources, already=False)
        manifest = Manifest(
            workspace=workspace,
            installed_at=clock.now().isoformat(),
            memoracle_version=installed_version(),
            backups=tuple(_back_up(workspace, b) for b in planned),
            files=files,
            dirs=dirs,
        )
        write_manifest(home, manifest)
    elif dry_run:
        todo = () if manifest.imported_at else sources
        return _planned(home, workspace, check.found, (), todo, already=True)
    init = Engine.init(settings, clock=clock, openclaw_workspace=workspace)
    ingest: IngestReport | None = None
    warnings: list[str] = []
    imported: tuple[Path, ...] = ()
    if manifest.imported_at is None:
        bound = replace(settings, workspace=replace(settings.workspace, files_dir=str(workspace)))
        if sources:
            with Engine.open(bound, clock=clock) as engine:
                try:
                    ingest = engine.ingest(sources)
                except (InvalidInput, NotFound) as exc:  # the only file could not be read
                    warnings.append(str(exc))
            imported = sources
        counts = {
            "files": ingest.files if ingest else 0,
            "memories_added": ingest.memories_added if ingest else 0,
            "memories_bumped": ingest.memories_bumped if ingest else 0,
        }
        manifest = replace(manifest, imported_at=clock.now().isoformat(), imported=counts)
        write_manifest(home, manifest)
    if ingest is not None:
        warnings += [f"{w.origin}: {w.message}" for w in ingest.warnings]
    return InstallReport(
        home=home,
        workspace=workspace,
        manifest=home / MANIFEST,
        dry_run=False,
        already_installed=already,
        found=check.found,
        backups=() if already else manifest.backups,
        to_import=imported,
        ingest=ingest,
        created=init.created,
        warnings=tuple(warnings),
    )


def _planned(
    home: Path,
    workspace: Path,
    found: tuple[str, ...],
    backups: tuple[Backup, ...],
    to_import: tuple[Path, ...],
    *,
    already: bool,
) -> InstallReport:
    """What a dry run reports: the backups and imports install would make."""
    return InstallReport(
        home=home,
        workspace=workspace,
        manifest=home / MANIFEST,
        dry_run=True,
        already_installed=already,
        found=found,
        backups=backups,
        to_import=to_import,
        ingest=None,
        created=(),
        warnings=(),
    )


def _refuse_other_files_dir(settings: Settings, workspace: Path) -> None:
    """install writes `workspace.files_dir` into config.toml; an environment variable or
    flag naming another folder would win over it, and memoracle would render elsewhere."""
    source = settings.sources.get("workspace.files_dir", "default")
    given = settings.workspace.files_dir
    if (source.startswith("env:") or source == "flag") and given:
        if Path(given).expanduser().resolve() != workspace:
            raise InvalidInput(
                f"workspace.files_dir is set to {given} ({source}), which would win over the"
                f" workspace {workspace} that install records in config.toml. Unset it, or"
                " set it to the workspace. Nothing was changed."
            )


def _import_sources(workspace: Path) -> tuple[Path, ...]:
    """MEMORY.md and the daily notes (memory/YYYY-MM-DD*.md), those with any bytes."""
    found: list[Path] = []
    memory_md = workspace / "MEMORY.md"
    if memory_md.is_file():
        found.append(memory_md)
    notes = workspace / "memory"
    if notes.is_dir():
        found += sorted(p for p in notes.glob("*.md") if p.is_file() and daily_note_day(p))
    return tuple(p for p in found if p.stat().st_size > 0)


def _snapshot(workspace: Path) -> tuple[dict[str, tuple[str, int]], tuple[str, ...]]:
    """Every file (sha256, bytes) and folder in `TRACKED`, relative to the workspace."""
    files: dict[str, tuple[str, int]] = {}
    dirs: list[str] = []
    for name in TRACKED:
        top = workspace / name
        if top.is_file():
            files[name] = _digest(top)
        elif top.is_dir():
            dirs.append(name)
            for root, subdirs, names in os.walk(top):
                subdirs.sort()
                dirs += [_rel(Path(root) / d, workspace) for d in subdirs]
                for n in sorted(names):
                    path = Path(root) / n
                    if path.is_file():
                        files[_rel(path, workspace)] = _digest(path)
    return files, tuple(dirs)


def _back_up(workspace: Path, planned: Backup) -> Backup:
    """Copy the file byte for byte and check the copy against the recorded checksum."""
    source = workspace / planned.path
    try:
        planned.backup.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, planned.backup)
    except OSError as exc:
        raise WorkspaceError(
            f"{planned.backup}: cannot back up {source} ({exc.strerror or exc}). Nothing in"
            " the workspace was changed."
        ) from None
    if _digest(planned.backup) != (planned.sha256, planned.bytes):
        raise WorkspaceError(
            f"{planned.backup}: the backup of {source} does not read back as the file was"
            " (it changed while being copied?). Run install again. Nothing in the workspace"
            " was changed."
        )
    return planned


# -- the manifest ----------------------------------------------------------------------


def read_manifest(home: Path) -> Manifest | None:
    """HOME/install.json, or None when memoracle was never installed from this HOME."""
    path = home.expanduser() / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise WorkspaceError(
            f"{path}: cannot read the install manifest ({exc}). Nothing was changed."
        ) from None
    try:
        if data.get("type") != MANIFEST_TYPE or data["format"] > MANIFEST_FORMAT:
            raise ValueError(f"not a format {MANIFEST_FORMAT} {MANIFEST_TYPE} file")
        return Manifest(
            workspace=Path(data["workspace"]),
            installed_at=str(data["installed_at"]),
            memoracle_version=str(data["memoracle_version"]),
            backups=tuple(
                Backup(str(b["path"]), Path(b["backup"]), str(b["sha256"]), int(b["bytes"]))
                for b in data["backups"]
            ),
            files={
                str(rel): (str(f["sha256"]), int(f["bytes"]))
                for rel, f in data["before"]["files"].items()
            },
            dirs=tuple(str(d) for d in data["before"]["dirs"]),
            imported_at=data.get("imported_at"),
            imported={str(k): int(v) for k, v in (data.get("imported") or {}).items()},
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise WorkspaceError(
            f"{path}: not an install manifest memoracle can read ({exc}). Nothing was changed."
        ) from None


def write_manifest(home: Path, manifest: Manifest) -> Path:
    """Write HOME/install.json whole (a reader never sees half of it)."""
    path = home / MANIFEST
    data: dict[str, Any] = {
        "type": MANIFEST_TYPE,
        "format": MANIFEST_FORMAT,
        "memoracle_version": manifest.memoracle_version,
        "workspace": str(manifest.workspace),
        "installed_at": manifest.installed_at,
        "backups": [
            {"path": b.path, "backup": str(b.backup), "sha256": b.sha256, "bytes": b.bytes}
            for b in manifest.backups
        ],
        "before": {
            "files": {rel: {"sha256": d, "bytes": n} for rel, (d, n) in manifest.files.items()},
            "dirs": list(manifest.dirs),
        },
        "imported_at": manifest.imported_at,
        "imported": manifest.imported,
    }
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


# -- uninstall -------------------------------------------------------------------------


def uninstall(
    settings: Settings,
    *,
    keep_db: bool,
    export_path: Path | None = None,
    dry_run: bool = False,
    clock: Clock,
) -> UninstallReport:
    """Take memoracle out of the workspace it was installed into (HOME/install.json).

    In order: the whole memory exported to `export_path` (default
    HOME/uninstall/<time>/memoracle-export.jsonl; if that fails, nothing else happens),
    the workspace put back as the manifest recorded it (see `FileAction`; every current
    file replaced or removed is first saved in `<export name>-workspace/` beside the
    export), this HOME's crontab lines removed (no crontab program: noted),
    `workspace.files_dir` cleared in config.toml, the database (memoracle.db, -wal, -shm)
    deleted unless `keep_db`, the manifest moved beside the export. With `dry_run`, the
    plan and the number of memories, nothing done.

    Refused with nothing changed: no manifest (NotFound, saying what can still be done),
    the workspace gone, a backup missing or whose checksum no longer matches (named)."""
    home = settings.home.expanduser()
    manifest = read_manifest(home)
    if manifest is None:
        raise NotFound(
            f"No install manifest {home / MANIFEST}: memoracle was never installed into an"
            f" OpenClaw workspace from {home}, so there is no backup to put back. You can"
            f" still export everything (memoracle --home {home} export FILE), take its jobs"
            f" out of your crontab (memoracle --home {home} schedule remove), then delete"
            f" {home}."
        )
    workspace = manifest.workspace
    if not workspace.is_dir():
        raise WorkspaceError(
            f"The workspace {workspace} recorded in {home / MANIFEST} is gone: there is"
            f" nothing to put back. Export with memoracle --home {home} export FILE and"
            f" delete {home} by hand. Nothing was changed."
        )
    export = export_path or home / "uninstall" / _stamp(clock.now()) / "memoracle-export.jsonl"
    export = export.expanduser().resolve()
    saved = export.parent / f"{export.stem}-workspace"
    actions = tuple(_plan(manifest, home, saved))
    notes = _reminders(workspace)
    database = settings.db_path
    exists = database.exists()
    if not exists:
        notes.append(f"There is no database ({database}): nothing to export.")
    engine = Engine.open(settings, clock=clock) if exists else None
    try:
        plan = UninstallReport(
            home=home,
            workspace=workspace,
            dry_run=True,
            database=database,
            memories=engine.stats().memories if engine is not None else 0,
            export=export if exists else None,
            saved=saved,
            actions=actions,
            keep_db=keep_db,
            db_deleted=False,
            crontab_removed=None,
            notes=tuple(notes),
        )
        if dry_run:
            return plan
        with pid_lock(
            home / NIGHTLY_LOCK,
            busy=lambda pid: (
                f"A nightly run (pid {pid}) is working on {home}; wait for it to finish,"
                " then uninstall. Nothing was changed."
            ),
        ):
            if engine is not None:
                transfer.export(engine, export, clock=clock)
                engine.close()
                engine = None
            for action in actions:
                _apply(action)
            crontab_removed: int | None = None
            try:
                crontab_removed = schedule.remove_crontab(settings)
            except WorkspaceError as exc:  # no crontab program, or it failed: said, not fatal
                notes.append(str(exc))
            if settings.config_path.exists():
                set_key(settings.config_path, "workspace", "files_dir", "")
            if exists and not keep_db:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{database}{suffix}").unlink(missing_ok=True)
            export.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(home / MANIFEST, _free(export.parent / f"{export.stem}-install.json"))
    finally:
        if engine is not None:
            engine.close()
    return replace(
        plan,
        dry_run=False,
        db_deleted=exists and not keep_db,
        crontab_removed=crontab_removed,
        notes=tuple(notes),
    )


def _reminders(workspace: Path) -> list[str]:
    """What memoracle never wrote and so cannot take out: the pasted snippets."""
    notes = [
        f"memoracle never edited OpenClaw's config: take {FLUSH_PROMPT_KEY} and"
        f" mcp.servers.{MCP_SERVER_NAME} out of openclaw.json if you pasted them."
    ]
    agents = workspace / "AGENTS.md"
    try:
        if AGENTS_BEGIN in agents.read_text(encoding="utf-8", errors="replace"):
            notes.append(f"{agents} still holds memoracle's block ({AGENTS_BEGIN}): remove it.")
    except OSError:
        pass  # no AGENTS.md: nothing to remind of
    return notes


# -- the plan --------------------------------------------------------------------------


def _plan(manifest: Manifest, home: Path, saved: Path) -> list[FileAction]:
    """What uninstall does to the workspace, in order; checks every backup first."""
    workspace = manifest.workspace
    files_now, dirs_now = _snapshot(workspace)
    actions: list[FileAction] = []
    leaving: set[str] = set()  # files that leave the workspace
    backed_up = {b.path for b in manifest.backups}
    for b in manifest.backups:
        if files_now.get(b.path) == (b.sha256, b.bytes):
            continue
        _check_backup(b, home)
        path = workspace / b.path
        actions.append(
            FileAction(
                "restore",
                path,
                f"put back as it was before install, from {b.backup}",
                source=b.backup,
                saved=saved / b.path if b.path in files_now else None,
            )
        )
    archived = _archived_notes(workspace, manifest, files_now)
    packed = _packed(home / "archive" / "cleaned")
    for rel, (digest, size) in manifest.files.items():
        if rel in backed_up or files_now.get(rel) == (digest, size):
            continue
        path = workspace / rel
        if rel in files_now:
            if _grew_by_memoracle(path, digest, size):
                actions.append(
                    FileAction(
                        "trim",
                        path,
                        "cut back to what it was before install: only memoracle wrote after it",
                        saved=saved / rel,
                        length=size,
                    )
                )
            else:
                actions.append(
                    FileAction("keep", path, "changed since install, not only by memoracle")
                )
            continue
        moved = archived.get(rel)
        if moved is not None and _grew_by_memoracle(moved, digest, size):
            moved_rel = _rel(moved, workspace)
            leaving.add(moved_rel)
            actions.append(
                FileAction(
                    "put-back",
                    path,
                    f"moved back from {moved_rel}, where the nightly run archived it",
                    source=moved,
                    saved=saved / moved_rel if _digest(moved)[1] != size else None,
                    length=size,
                )
            )
        elif (member := _packed_as(rel, packed, digest, size)) is not None:
            actions.append(
                FileAction(
                    "put-back",
                    path,
                    f"unpacked from {packed[member]}, where the nightly run packed it away",
                    source=packed[member],
                    length=size,
                    member=member,
                )
            )
        else:
            actions.append(
                FileAction(
                    "missing",
                    path,
                    "gone since install, and not in memory/archive/ nor in"
                    f" {home / 'archive' / 'cleaned'}; nothing to put back",
                )
            )
    for rel in sorted(set(files_now) - set(manifest.files) - leaving - backed_up):
        path = workspace / rel
        if _matches_any(rel, REWRITTEN):
            why = "created by memoracle after install"
        elif DAILY_NOTE.match(rel):
            if not _grew_by_memoracle(path, EMPTY_SHA256, 0):  # all memoracle's
                actions.append(FileAction("keep", path, "a note someone else wrote in too"))
                continue
            why = "a daily note only memoracle wrote"
        else:
            continue  # not memoracle's: OpenClaw's, the person's
        leaving.add(rel)
        actions.append(FileAction("set-aside", path, why, saved=saved / rel))
    for rel in sorted(set(dirs_now) - set(manifest.dirs), key=lambda d: (-d.count("/"), d)):
        if not (rel in OWN_FOLDERS or ARCHIVED_MONTH.match(rel)):
            continue
        inside = [f for f in files_now if f.startswith(rel + "/")]
        subdirs = [d for d in dirs_now if d.startswith(rel + "/")]
        removed = {a.path for a in actions if a.kind == "remove-folder"}
        if all(f in leaving for f in inside) and all(workspace / d in removed for d in subdirs):
            actions.append(
                FileAction("remove-folder", workspace / rel, "a folder memoracle created")
            )
    return actions


def _check_backup(b: Backup, home: Path) -> None:
    if not b.backup.is_file():
        raise WorkspaceError(
            f"The backup {b.backup} of {b.path} taken at install is gone, so it cannot be put"
            f" back. The manifest is {home / MANIFEST}. Nothing was changed."
        )
    if _digest(b.backup) != (b.sha256, b.bytes):
        raise WorkspaceError(
            f"The backup {b.backup} of {b.path} no longer matches its checksum ({b.sha256}):"
            " it was changed after install, so it is not put back. Look at it, copy what"
            " you need by hand, and remove its entry from"
            f" {home / MANIFEST} to uninstall without it. Nothing was changed."
        )


def _archived_notes(
    workspace: Path, manifest: Manifest, files_now: dict[str, tuple[str, int]]
) -> dict[str, Path]:
    """Notes that were in memory/ before install and are now in memory/archive/YYYY-MM/
    (the nightly run moves them there), keyed by where they were."""
    found: dict[str, Path] = {}
    for rel in files_now:
        m = re.match(r"^memory/archive/\d{4}-\d{2}/(?P<name>\d{4}-\d{2}-\d{2}\.md)$", rel)
        if m and rel not in manifest.files:
            found[f"memory/{m.group('name')}"] = workspace / rel
    return found


def _packed(folder: Path) -> dict[str, Path]:
    """Files packed away by the nightly run's clean step: name in the archive -> archive
    (the newest archive holding a name wins)."""
    found: dict[str, Path] = {}
    if not folder.is_dir():
        return found
    for archive in sorted(folder.glob("*.tar.gz")):
        try:
            with tarfile.open(archive, "r:gz") as tar:
                for member in tar.getmembers():
                    if member.isfile():
                        found[member.name] = archive
        except (OSError, tarfile.TarError) as exc:
            log.warning("%s: cannot read it (%s); its files are not looked for", archive, exc)
    return found


def _packed_as(rel: str, packed: dict[str, Path], digest: str, size: int) -> str | None:
    """The name under which the file recorded as `rel` was packed away, if it was: as
    itself, or (a daily note) as the copy the nightly run had archived first."""
    names = [rel]
    if day := re.match(r"^memory/(?P<month>\d{4}-\d{2})-\d{2}\.md$", rel):
        names.append(f"memory/archive/{day.group('month')}/{rel.removeprefix('memory/')}")
    for name in names:
        if name in packed and _grown_bytes(_member(packed[name], name), digest, size):
            return name
    return None


def _member(archive: Path, member: str) -> bytes:
    with tarfile.open(archive, "r:gz") as tar:
        handle = tar.extractfile(member)
        if handle is None:
            raise WorkspaceError(f"{archive}: {member} is not a file in it.")
        with handle:
            return handle.read()


def _grew_by_memoracle(path: Path, digest: str, size: int) -> bool:
    """Whether `path` is the file recorded (sha256 `digest`, `size` bytes), or it with
    only lines memoracle writes appended."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return _grown_bytes(data, digest, size)


def _grown_bytes(data: bytes, digest: str, size: int) -> bool:
    if len(data) < size or hashlib.sha256(data[:size]).hexdigest() != digest:
        return False
    try:
        return _memoracle_only(data[size:].decode("utf-8"))
    except UnicodeDecodeError:
        return False


def _memoracle_only(text: str) -> bool:
    """Whether every line of `text` (a daily note, or what was appended to one) is a line
    memoracle writes: the day's title, its section headings, entries tagged with their
    ref (`render.daily`), and the bullets of a ``## Checkpoint [HH:MM]`` section."""
    in_checkpoint = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or _DAY_TITLE.match(line):
            continue
        if _CHECKPOINT.match(line):
            in_checkpoint = True
            continue
        heading = _SECTION.match(line)
        if heading and heading.group("title") in SECTIONS:
            in_checkpoint = False
            continue
        if _TAGGED.match(line) or (in_checkpoint and _BULLET.match(line)):
            continue
        return False
    return True


# -- doing it --------------------------------------------------------------------------


def _apply(action: FileAction) -> None:
    """Do one planned action; a file that cannot be read or written is a WorkspaceError
    naming it (what is done stays done: running uninstall again goes on from there)."""
    try:
        if action.kind in ("restore", "trim") and action.saved is not None:
            _save(action.path, action.saved)
        if action.kind == "restore":
            assert action.source is not None
            _write_bytes(action.path, action.source.read_bytes())
        elif action.kind == "trim":
            assert action.length is not None
            _write_bytes(action.path, action.path.read_bytes()[: action.length])
        elif action.kind == "put-back":
            assert action.source is not None and action.length is not None
            if action.member is not None:
                data = _member(action.source, action.member)
            else:
                data = action.source.read_bytes()
            _write_bytes(action.path, data[: action.length])
            if action.member is None:
                if action.saved is not None:
                    _move(action.source, action.saved)
                else:
                    action.source.unlink()
        elif action.kind == "set-aside":
            assert action.saved is not None
            _move(action.path, action.saved)
        elif action.kind == "remove-folder":
            action.path.rmdir()
    except (OSError, tarfile.TarError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise WorkspaceError(
            f"{action.path}: cannot {action.kind} it ({why}). The export and"
            " the files saved so far are kept; fix this and run uninstall again."
        ) from None


def _save(path: Path, target: Path) -> None:
    """Copy `path` to `target` (a free name near it when taken), keeping its bytes."""
    target = _free(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)


def _move(path: Path, target: Path) -> None:
    target = _free(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(path, target)


def _write_bytes(path: Path, data: bytes) -> None:
    """`data` into `path` through a temp file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with replacing(path) as tmp:
        tmp.write_bytes(data)


def _free(path: Path) -> Path:
    """`path`, or `path` with .1, .2, … added when something is already there."""
    n = 0
    candidate = path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


# -- small helpers ---------------------------------------------------------------------


def _digest(path: Path) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _rel(path: Path, workspace: Path) -> str:
    return path.relative_to(workspace).as_posix()


def _matches_any(rel: str, patterns: tuple[str, ...]) -> bool:
    parts = PurePosixPath(rel).parts
    for pattern in patterns:
        wanted = PurePosixPath(pattern).parts
        if len(parts) == len(wanted) and all(map(fnmatchcase, parts, wanted)):
            return True
    return False


def _stamp(at: datetime) -> str:
    return at.strftime("%Y%m%dT%H%M%SZ")
