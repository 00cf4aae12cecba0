"""What install records and uninstall reads: the manifest of backed-up files (`Backup`,
`Manifest`, `read_manifest`, `write_manifest`), the names memoracle tracks in a
workspace, and the file helpers both sides share.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from memoracle.errors import WorkspaceError
from memoracle.files import replacing, write_atomically

MANIFEST = "install.json"  # in HOME


MANIFEST_TYPE = "memoracle-install"


MANIFEST_FORMAT = 1


# Where memoracle writes in a workspace (Engine.init, the nightly run, checkpoints):
# only these are recorded, and only these are ever restored or cleared.
TRACKED = (
    "MEMORY.md",
    "SESSION-START.md",
    "INDEX.md",
    "memory",
    "reference",
    "knowledge-graph",
    "sessions",
)


# Files memoracle rewrites whole: the copy there before install is backed up.
REWRITTEN = (
    "MEMORY.md",
    "SESSION-START.md",
    "INDEX.md",
    "reference/entities.md",
    "knowledge-graph/*.jsonl",
    "memory/topics/*.md",
)


# OpenClaw's session logs in a workspace. The nightly clean step packs old ones into
# HOME/archive/cleaned/ and removes them; uninstall unpacks every one of them, whole.
SESSION_LOGS = "sessions"


# Where the clean step packs what it removes, under HOME.
CLEANED = "archive/cleaned"


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
    # The clean step's archives already in HOME before install (theirs is not this
    # workspace's past); None: a manifest from before this was recorded.
    cleaned_before: tuple[str, ...] | None = None


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
            cleaned_before=None
            if data.get("cleaned_before") is None
            else tuple(str(name) for name in data["cleaned_before"]),
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
        "cleaned_before": None
        if manifest.cleaned_before is None
        else list(manifest.cleaned_before),
    }
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


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
