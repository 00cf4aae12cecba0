"""Which files of a folder `ingest` reads: the tree walked in a fixed order, each file's
format detected, and every file left out named with the reason.

Owns the rules of a folder walk, so that the same tree is always read the same way:

- names sorted at every level, files and folders together (byte order of the names);
- only regular files are opened (a FIFO would block the walk, a device is not a file);
- a link is followed only to a file inside the folder; a link out of it, to a folder,
  or to nothing is left out and named, so a walk can neither leave the tree nor loop;
  a file reached twice (a link to a file also walked) is read once;
- a name that says "secrets here" is left out, named with the reason, and a folder so
  named is not walked into (`ingest.secret_names`: version control, dot-env files, keys
  and key stores, credentials in four languages), whatever its format; a link is judged
  by its own name and by its target's;
- a file no reader takes (unknown shape, empty, binary, not UTF-8) is skipped with the
  reason, not refused: a folder of transcripts may hold a README;
- a file is detected, never read, here: what is wrong inside a readable file is the
  reader's warning (``file:line``), as when the file is given alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memoracle.errors import EngineError
from memoracle.ingest.detect import UnknownFormat, detect_format
from memoracle.ingest.secret_names import file_reason, folder_reason
from memoracle.types import SkippedFile

__all__ = ["FolderFile", "FolderListing", "walk_folder"]


@dataclass(frozen=True)
class FolderFile:
    """A file the walk found a reader for: its path as reached from the folder given,
    its format and its size in bytes (for one progress bar over every file)."""

    path: Path
    fmt: str
    size: int


@dataclass(frozen=True)
class FolderListing:
    """What a walk found: the files to read, in order, and those left out."""

    root: Path
    files: tuple[FolderFile, ...]
    skipped: tuple[SkippedFile, ...]


def walk_folder(root: Path, fmt: str | None = None) -> FolderListing:
    """Every file under `root` (recursively) that a reader takes, in sorted order, and
    every file left out with why. With `fmt`, only files detected as `fmt` are taken;
    the others are skipped, named."""
    inside = root.resolve()
    files: list[FolderFile] = []
    skipped: list[SkippedFile] = []
    seen: set[Path] = set()
    for path, problem in _entries(root, inside):
        if problem is not None:
            skipped.append(SkippedFile(str(path), problem))
            continue
        real = path.resolve()
        if real in seen:
            skipped.append(SkippedFile(str(path), f"the same file as {real}, read once"))
            continue
        seen.add(real)
        found = _detect(path)
        if isinstance(found, SkippedFile):
            skipped.append(found)
        elif fmt is not None and found != fmt:
            skipped.append(SkippedFile(str(path), f"detected as {found}, not {fmt} (--format)"))
        else:
            files.append(FolderFile(path, found, _size(real)))
    return FolderListing(root, tuple(files), tuple(skipped))


def _entries(folder: Path, inside: Path) -> list[tuple[Path, str | None]]:
    """The files under `folder` in walk order, each with None (a file to detect) or the
    reason it is left out."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: os.fsencode(e.name))
    except OSError as exc:
        return [(folder, f"cannot list this folder ({exc.strerror or exc})")]
    out: list[tuple[Path, str | None]] = []
    for entry in entries:
        path = folder / entry.name
        try:
            if entry.is_symlink():
                out.append((path, _link_problem(path, inside)))
            elif entry.is_dir(follow_symlinks=False):
                secret = folder_reason(entry.name)
                if secret is not None:
                    out.append((path, secret))
                else:
                    out += _entries(path, inside)
            elif entry.is_file(follow_symlinks=False):
                out.append((path, file_reason(entry.name)))
            else:
                out.append((path, "not a regular file (a FIFO, socket or device); not read"))
        except OSError as exc:
            out.append((path, f"cannot look at it ({exc.strerror or exc})"))
    return out


def _link_problem(path: Path, inside: Path) -> str | None:
    """None for a link to a regular file inside the folder, else why it is not followed:
    a link named like a secret, or to a file or folder so named, is not followed either."""
    secret = file_reason(path.name)
    if secret is not None:
        return secret
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
        return "a link that leads back to itself; not followed"
    if not target.exists():
        return f"a link to {target}, which does not exist; not followed"
    if not target.is_relative_to(inside):
        return f"a link to {target}, outside {inside}; not followed"
    if target.is_dir():
        return f"a link to the folder {target}; not followed (its files are read there)"
    if not target.is_file():
        return f"a link to {target}, not a regular file; not followed"
    for folder in target.relative_to(inside).parts[:-1]:
        secret = folder_reason(folder)
        if secret is not None:
            return f"a link into {folder}: {secret}"
    secret = file_reason(target.name)
    return None if secret is None else f"a link to {target.name}: {secret}"


def _detect(path: Path) -> str | SkippedFile:
    """The file's format, or why it is skipped."""
    try:
        return detect_format(path)
    except UnknownFormat as exc:
        return SkippedFile(str(path), exc.reason)
    except EngineError as exc:  # removed while we walked
        return SkippedFile(str(path), str(exc))
    except OSError as exc:
        return SkippedFile(str(path), f"cannot read it ({exc.strerror or exc})")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
