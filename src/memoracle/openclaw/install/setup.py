"""`memoracle install`: back up what memoracle will touch, import MEMORY.md and the daily
notes once, write the manifest.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from memoracle.clock import Clock
from memoracle.config import Settings, installed_version
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.ingest.markdown import daily_note_day
from memoracle.openclaw.install.manifest import (
    CLEANED,
    MANIFEST,
    REWRITTEN,
    TRACKED,
    Backup,
    Manifest,
    _digest,
    _matches_any,
    _rel,
    _stamp,
    read_manifest,
    write_manifest,
)
from memoracle.openclaw.workspace import (
    check_workspace,
)
from memoracle.store import require_fts5
from memoracle.types import IngestReport


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
            cleaned_before=tuple(sorted(p.name for p in (home / CLEANED).glob("*.tar.gz"))),
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
