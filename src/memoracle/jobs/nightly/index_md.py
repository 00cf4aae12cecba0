"""INDEX.md (docs/lifecycle.md): the catalogue of every memory file the agent can read in
the workspace — MEMORY.md and SESSION-START.md, topic files (and the full notes of
completed topics), reference files, the daily notes by month, the archived notes — one
line each with what it holds and its size. Written by the nightly `index` step, whole
and atomically (a reader never sees half of it), after the night's files moved."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from memoracle.engine import Engine
from memoracle.errors import WorkspaceError
from memoracle.files import write_atomically
from memoracle.jobs.nightly.memory_md import FileChange
from memoracle.workspace import MEMORY_FILE, NOTES_DIR, SNAPSHOT_FILE

INDEX_FILE = "INDEX.md"
_DAY = re.compile(r"^(\d{4}-\d{2})-\d{2}\.md$")
_HEAD_BYTES = 4096  # what is read of a file to say what it holds
_WHAT_CHARS = 90


def size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MB"


def holds(path: Path) -> str:
    """What `path` holds: its title (the first `# ` heading), and its `## ` sections;
    else its first line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(_HEAD_BYTES)
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    title = next((line[2:] for line in lines if line.startswith("# ")), "")
    sections = list(dict.fromkeys(line[3:] for line in lines if line.startswith("## ")))
    what = title
    if sections:
        what = f"{title}: {', '.join(sections)}" if title else ", ".join(sections)
    what = what or (lines[0] if lines else "(empty)")
    return what if len(what) <= _WHAT_CHARS else what[: _WHAT_CHARS - 1] + "…"


def _line(root: Path, path: Path) -> str:
    relative = path.relative_to(root).as_posix()
    return f"- [{relative}]({relative}) — {holds(path)} ({size(path.stat().st_size)})"


def _md(folder: Path, pattern: str = "*.md") -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file()) if folder.is_dir() else []


def index_text(root: Path) -> str:
    """INDEX.md's text for the workspace folder `root`, from the files as they are."""
    notes = root / NOTES_DIR
    parts = [
        "# Index",
        "",
        "_Written by memoracle each night: every memory file of this workspace, what it holds"
        " and its size. A view: edit the files (or the memories), not this one._",
    ]
    core = [root / name for name in (MEMORY_FILE, SNAPSHOT_FILE) if (root / name).is_file()]
    sections: list[tuple[str, Iterable[Path]]] = [
        ("Core", core),
        ("Topics", _md(notes / "topics")),
        ("Reference", _md(root / "reference", "**/*.md")),
        ("Notes", [p for p in _md(notes) if not _DAY.match(p.name)]),
    ]
    for title, paths in sections:
        lines = [_line(root, p) for p in paths]
        if lines:
            parts += ["", f"## {title}", "", *lines]
    by_month: dict[str, list[Path]] = {}
    for p in _md(notes):
        if m := _DAY.match(p.name):
            by_month.setdefault(m.group(1), []).append(p)
    for month in sorted(by_month, reverse=True):
        parts += ["", f"## Daily notes, {month}", "", *(_line(root, p) for p in by_month[month])]
    archived = [_archived(root, f) for f in sorted(_folders(notes / "archive"), reverse=True)]
    if archived:
        parts += ["", "## Archive", "", *archived]
    return "\n".join(parts) + "\n"


def _folders(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []


def _archived(root: Path, folder: Path) -> str:
    """One line for a month of archived notes: how many, their size."""
    files = _md(folder, "**/*.md")
    total = sum(p.stat().st_size for p in files)
    relative = folder.relative_to(root).as_posix()
    return f"- [{relative}/]({relative}/) — {len(files)} archived notes ({size(total)})"


def write_index(
    engine: Engine, *, dry_run: bool = False, preview: list[FileChange] | None = None
) -> Path:
    """Write INDEX.md in the workspace folder (not in a dry run); a change of its text
    goes to `preview`."""
    root = engine.settings.files_dir
    path = root / INDEX_FILE
    text = index_text(root)
    try:
        before: str | None = path.read_text(encoding="utf-8")
    except OSError:
        before = None
    if before != text:
        if preview is not None:
            preview.append(FileChange(path, before, text))
        if not dry_run:
            write_atomically(path, text)
    return path
