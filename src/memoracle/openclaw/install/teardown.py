"""`memoracle uninstall`: export first, put every tracked file back byte for byte, remove
what memoracle added, and say what was done (or would be, in a dry run).
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import tarfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.config_file import set_key
from memoracle.engine import Engine
from memoracle.errors import NotFound, WorkspaceError
from memoracle.files import pid_lock
from memoracle.jobs import schedule, transfer
from memoracle.openclaw.install.manifest import (
    _BULLET,
    _CHECKPOINT,
    _DAY_TITLE,
    _SECTION,
    _TAGGED,
    ARCHIVED_MONTH,
    CLEANED,
    DAILY_NOTE,
    EMPTY_SHA256,
    MANIFEST,
    OWN_FOLDERS,
    REWRITTEN,
    SESSION_LOGS,
    Backup,
    Manifest,
    _digest,
    _free,
    _matches_any,
    _move,
    _rel,
    _save,
    _stamp,
    _write_bytes,
    read_manifest,
)
from memoracle.openclaw.install.setup import _snapshot
from memoracle.openclaw.workspace import (
    AGENTS_BEGIN,
    FLUSH_KEY,
    MCP_SERVER_NAME,
    state_dir,
)
from memoracle.render.daily import SECTIONS
from memoracle.workspace import NIGHTLY_LOCK  # no night runs during an uninstall

log = logging.getLogger(__name__)

_NUMBERED_ARCHIVE = re.compile(r"^(\d{4}-\d{2}-\d{2})-(\d+)$")


@dataclass(frozen=True)
class FileAction:
    """One thing uninstall does, or would do, to the workspace.

    kind: restore (a backup put back), set-aside (a file memoracle created, moved to
    `saved`), trim (a note cut back to its first `length` bytes: what memoracle appended
    goes), put-back (a note the nightly run archived or packed away, or a session log its
    clean step packed away, from `source`),
    remove-folder (an empty folder memoracle created), keep (left as it is: someone else
    wrote in it too), missing (gone since install, nowhere to bring it back from)."""

    kind: str
    path: Path
    detail: str
    source: Path | None = None  # where the content comes back from
    saved: Path | None = None  # where the current file goes first
    length: int | None = None  # bytes of `source` (or of the file) to keep; None: all
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
                for suffix in ("", "-wal", "-shm", "-writer"):
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


def _reminders(workspace: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """What memoracle never wrote and so cannot take out: the pasted snippets, the
    plugin's settings and the skill folder (install adds none of them: OpenClaw's
    `plugins install` and `skills install`, or the person, did)."""
    notes = [
        f"memoracle never edited OpenClaw's config: take {FLUSH_KEY} (or its .prompt on"
        f" older OpenClaw) and mcp.servers.{MCP_SERVER_NAME} out of openclaw.json if you"
        " pasted them.",
        f"If you installed memoracle's memory plugin: openclaw plugins uninstall"
        f" {MCP_SERVER_NAME}, set plugins.slots.memory back (e.g. to memory-core) and"
        " enable memory-core again (openclaw plugins enable memory-core);"
        f" plugins.entries.{MCP_SERVER_NAME} (its config and hooks.allowConversationAccess)"
        " goes with it.",
    ]
    for skills in (workspace / "skills", state_dir(env) / "skills"):
        skill = skills / MCP_SERVER_NAME
        if (skill / "SKILL.md").is_file():
            notes.append(f"{skill} holds memoracle's OpenClaw skill: remove the folder.")
    agents = workspace / "AGENTS.md"
    try:
        if AGENTS_BEGIN in agents.read_text(encoding="utf-8", errors="replace"):
            notes.append(f"{agents} still holds memoracle's block ({AGENTS_BEGIN}): remove it.")
    except OSError:
        pass  # no AGENTS.md: nothing to remind of
    return notes


def _plan(manifest: Manifest, home: Path, saved: Path) -> list[FileAction]:
    """What uninstall does to the workspace, in order; checks every backup first."""
    workspace = manifest.workspace
    files_now, dirs_now = _snapshot(workspace)
    leaving: set[str] = set()  # files that leave the workspace, learnt stage by stage
    actions = _restores(manifest, home, saved, files_now)
    moved = _Moved(
        archived=_archived_notes(workspace, manifest, files_now),
        packed=_packed(home / CLEANED),
        logs=_packed_session_logs(home / CLEANED, manifest),
    )
    actions += _tracked(manifest, home, saved, files_now, moved, leaving)
    actions += _session_logs(workspace, files_now, moved.logs)
    actions += _added(manifest, saved, files_now, leaving)
    actions += _folders(manifest, files_now, dirs_now, leaving)
    return actions


@dataclass(frozen=True)
class _Moved:
    """Where the nightly run moved workspace files since install: daily notes archived
    (name -> where), files packed away by the clean step (name in the archive ->
    archive) and, among those, the session logs (name -> archive)."""

    archived: dict[str, Path]
    packed: dict[str, Path]
    logs: dict[str, Path]


def _restores(
    manifest: Manifest, home: Path, saved: Path, files_now: dict[str, tuple[str, int]]
) -> list[FileAction]:
    """Every file install backed up and that differs now: put back from its backup
    (each backup checked first; what is there now is saved)."""
    actions: list[FileAction] = []
    for b in manifest.backups:
        if files_now.get(b.path) == (b.sha256, b.bytes):
            continue
        _check_backup(b, home)
        path = manifest.workspace / b.path
        actions.append(
            FileAction(
                "restore",
                path,
                f"put back as it was before install, from {b.backup}",
                source=b.backup,
                saved=saved / b.path if b.path in files_now else None,
            )
        )
    return actions


def _tracked(
    manifest: Manifest,
    home: Path,
    saved: Path,
    files_now: dict[str, tuple[str, int]],
    moved: _Moved,
    leaving: set[str],
) -> list[FileAction]:
    """Every file the manifest tracks (not backed up, not a packed session log) that
    changed: trimmed back or kept when it is there, else put back from where the nightly
    run archived or packed it, or reported missing. `leaving` learns the archived
    copies moved back."""
    workspace = manifest.workspace
    backed_up = {b.path for b in manifest.backups}
    packed = moved.packed
    actions: list[FileAction] = []
    for rel, (digest, size) in manifest.files.items():
        if rel in backed_up or files_now.get(rel) == (digest, size) or rel in moved.logs:
            continue
        path = workspace / rel
        if rel in files_now:
            actions.append(_changed(path, digest, size, saved / rel))
            continue
        archived = moved.archived.get(rel)
        if archived is not None and _grew_by_memoracle(archived, digest, size):
            archived_rel = _rel(archived, workspace)
            leaving.add(archived_rel)
            actions.append(
                FileAction(
                    "put-back",
                    path,
                    f"moved back from {archived_rel}, where the nightly run archived it",
                    source=archived,
                    saved=saved / archived_rel if _digest(archived)[1] != size else None,
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
    return actions


def _changed(path: Path, digest: str, size: int, saved: Path) -> FileAction:
    """A tracked file changed since install: cut back when only memoracle wrote after
    it, else kept."""
    if _grew_by_memoracle(path, digest, size):
        return FileAction(
            "trim",
            path,
            "cut back to what it was before install: only memoracle wrote after it",
            saved=saved,
            length=size,
        )
    return FileAction("keep", path, "changed since install, not only by memoracle")


def _session_logs(
    workspace: Path, files_now: Mapping[str, tuple[str, int]], logs: Mapping[str, Path]
) -> list[FileAction]:
    """The session logs the nightly run's clean step packed away, unpacked whole where
    no newer file of OpenClaw's is."""
    return [
        FileAction(
            "put-back",
            workspace / rel,
            f"a session log unpacked whole from {archive}, where the nightly run's"
            " clean step packed it away",
            source=archive,
            member=rel,
        )
        for rel, archive in sorted(logs.items())
        if rel not in files_now  # one there now is OpenClaw's newer file: left alone
    ]


def _added(
    manifest: Manifest, saved: Path, files_now: Mapping[str, tuple[str, int]], leaving: set[str]
) -> list[FileAction]:
    """The files memoracle added since install (rewritten views, daily notes only it
    wrote in), set aside; `leaving` learns them."""
    backed_up = {b.path for b in manifest.backups}
    actions: list[FileAction] = []
    for rel in sorted(set(files_now) - set(manifest.files) - leaving - backed_up):
        path = manifest.workspace / rel
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
    return actions


def _folders(
    manifest: Manifest,
    files_now: Mapping[str, tuple[str, int]],
    dirs_now: Collection[str],
    leaving: set[str],
) -> list[FileAction]:
    """The folders memoracle created since install, deepest first, removed when
    everything in them leaves."""
    workspace = manifest.workspace
    actions: list[FileAction] = []
    for rel in sorted(set(dirs_now) - set(manifest.dirs), key=lambda d: (-d.count("/"), d)):
        if not (rel in OWN_FOLDERS or ARCHIVED_MONTH.match(rel)):
            continue
        inside = [f for f in files_now if f.startswith(rel + "/")]
        subdirs = [d for d in dirs_now if d.startswith(rel + "/")]
        removed = {a.path for a in actions}
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


def _packed_session_logs(folder: Path, manifest: Manifest) -> dict[str, Path]:
    """The session logs the clean step packed away since install (every archive, for a
    manifest that did not record those already there): name in the archive, which is
    its path in the workspace -> the newest archive holding it."""
    before = set(manifest.cleaned_before or ())
    packed = _packed(folder, lambda archive: archive.name not in before)
    return {rel: a for rel, a in packed.items() if rel.startswith(f"{SESSION_LOGS}/")}


def _archive_order(archive: Path) -> tuple[str, int]:
    """Oldest first: by the day in the name, then the number the clean step adds to a
    second archive of the same day (2026-12-01.tar.gz, 2026-12-01-2.tar.gz, …)."""
    stem = archive.name.removesuffix(".tar.gz")
    numbered = _NUMBERED_ARCHIVE.match(stem)
    return (numbered[1], int(numbered[2])) if numbered else (stem, 1)


def _packed(folder: Path, wanted: Callable[[Path], bool] = lambda _: True) -> dict[str, Path]:
    """Files packed away by the nightly run's clean step: name in the archive -> archive
    (the newest archive holding a name wins)."""
    found: dict[str, Path] = {}
    if not folder.is_dir():
        return found
    for archive in sorted(filter(wanted, folder.glob("*.tar.gz")), key=_archive_order):
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
            assert action.source is not None
            if action.member is not None:
                data = _member(action.source, action.member)
            else:
                data = action.source.read_bytes()
            _write_bytes(action.path, data if action.length is None else data[: action.length])
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
