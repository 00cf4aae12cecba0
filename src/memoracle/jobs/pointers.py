"""The pointer check: every workspace path cited in live memory files exists (docs/lifecycle.md).

A dead pointer is worse than a missing note: the agent reads "detail in
`reference/foo.md`" and reports on a file that is gone. Owns which files are live
(MEMORY.md, the top level of memory/ and reference/ — not memory/archive/, whose notes
may cite files moved since), what counts as a pointer in them, and the report.

A pointer is a Markdown link target (`[x](path)`, `![x](path)`, `[x]: path`), or an
inline-code span or the word after an arrow (`→ path`, `-> path`) that looks like a
workspace path: no spaces, a slash, and a first folder that is one of the workspace's
(`WORKSPACE_FOLDERS`, or any folder at its root). `src/app.py` in a captured memory
names a file in some project, not in the workspace, so it is not checked; a bare
`README.md` is just as ambiguous. Not pointers: URLs and other `scheme:` targets,
absolute and home paths, anchors alone (`#x`; `path#x` checks `path`), placeholders
(`<name>`, `{x}`, `YYYY-MM-DD`, `...`, globs, `path/to/...`), fenced code and any line
holding `pointer-check:ignore` (an example path in prose: append
`<!-- pointer-check:ignore -->`). A path resolves against the workspace root; a link
also against its file's folder, as Markdown reads it; either existing will do.

`check` only reads, and never raises for a damaged file: one that is not UTF-8 or
cannot be read is named in `problems`. What to do with a report (exit code, health.json
field, warning) is the caller's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from memoracle.serialize import records

__all__ = ["IGNORE_MARK", "WORKSPACE_FOLDERS", "BrokenPointer", "PointerReport", "check"]

IGNORE_MARK = "pointer-check:ignore"
LIVE_FILES = ("MEMORY.md",)  # at the workspace root
LIVE_FOLDERS = ("memory", "reference")  # their *.md, top level only
# The workspace layout (docs/lifecycle.md) and the folders memory stacks keep beside it: a path
# starting with one is a workspace path even when the folder itself is gone.
WORKSPACE_FOLDERS = frozenset(
    {"memory", "reference", "knowledge-graph", "scripts", "data", "projects", "skills"}
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
# `](target)`, target in <...> or without spaces; balanced parentheses inside are kept.
_LINK = re.compile(r"\]\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>\n]*>|\S+)")
# `-->` closes an HTML comment (`<!-- m_12 -->`), `<->` is no pointer either.
_ARROW = re.compile(r"(?:→|(?<![-<])->)\s*([^\s`<>\[\]()\"']+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # http:, mailto:, file:, C:
_LINE_SUFFIX = re.compile(r":\d+(?:[-:]\d+)*$")  # memory/x.md:12, memory/x.md:2-4
_PLACEHOLDER = re.compile(r"[<>{}*?\[\]$]|\.\.\.|…|YYYY|MM-DD|HH:MM|(?:^|/)path/to/")
_PATH_CHARS = re.compile(r"^[\w.@+%~/-]+$")
_TRAILING = ".,;:!?'\""


@dataclass(frozen=True)
class BrokenPointer:
    """A pointer whose path does not exist. `file`: the citing file, relative to the
    workspace ("memory/travel.md"); `line`: from 1; `pointer`: as written; `resolved`:
    where it was looked for (for a link, beside the citing file first)."""

    file: str
    line: int
    pointer: str
    resolved: Path

    def to_json(self) -> dict[str, object]:
        return records.fields(self)


@dataclass(frozen=True)
class PointerReport:
    """What `check` found: `files` read, `checked` pointers in them, the `broken` ones,
    and `problems`: files that could not be read, each message naming its file."""

    files: int
    checked: int
    broken: tuple[BrokenPointer, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Every pointer resolves and every live file could be read."""
        return not self.broken and not self.problems

    def to_json(self) -> dict[str, object]:
        return {
            "files": self.files,
            "checked": self.checked,
            "broken": [b.to_json() for b in self.broken],
            "problems": list(self.problems),
        }


def check(files_dir: Path) -> PointerReport:
    """Check the pointers of the live memory files under `files_dir`, the workspace
    folder (`settings.files_dir`). Read-only; a missing workspace has nothing to check."""
    folders = WORKSPACE_FOLDERS | _root_folders(files_dir)
    looked_up: dict[tuple[str, str], tuple[Path, bool]] = {}  # (folder, path): where, found
    broken: dict[BrokenPointer, None] = {}  # a pointer written twice on a line: once
    problems: list[str] = []
    files = checked = 0
    for path in _live_files(files_dir):
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                f"{path}: not UTF-8 text (byte {exc.start + 1}); its pointers were not "
                "checked. Save it as UTF-8."
            )
            continue
        except OSError as exc:
            problems.append(
                f"{path}: cannot read it ({exc.strerror or exc}); its pointers were not "
                "checked. Check its permissions."
            )
            continue
        files += 1
        name = path.relative_to(files_dir).as_posix()
        root = str(files_dir)
        link_bases = (str(path.parent), root)  # Markdown reads a link beside its file
        for number, written, target, is_link in _pointers(text, folders):
            checked += 1
            bases = link_bases if is_link else (root,)
            tried = [_look_up(base, target, looked_up) for base in bases]
            if not any(found for _, found in tried):
                broken[BrokenPointer(name, number, written, tried[0][0])] = None
    return PointerReport(files, checked, tuple(broken), tuple(problems))


def _live_files(root: Path) -> list[Path]:
    found = [root / name for name in LIVE_FILES if (root / name).is_file()]
    for folder in LIVE_FOLDERS:  # glob finds nothing in a missing or unlistable folder
        found += sorted(p for p in (root / folder).glob("*.md") if p.is_file())
    return found


def _root_folders(root: Path) -> set[str]:
    try:
        return {entry.name for entry in os.scandir(root) if entry.is_dir()}
    except OSError:
        return set()


def _look_up(
    folder: str, target: str, cache: dict[tuple[str, str], tuple[Path, bool]]
) -> tuple[Path, bool]:
    """Where `target` resolves from `folder`, and whether something is there."""
    key = (folder, target)
    if key not in cache:
        where = os.path.normpath(os.path.join(folder, target))
        cache[key] = (Path(where), os.path.exists(where))
    return cache[key]


def _pointers(text: str, folders: frozenset[str]) -> Iterator[tuple[int, str, str, bool]]:
    """(line number, pointer as written, path to look up, is a link) for each pointer."""
    fence: str | None = None
    for number, line in enumerate(text.split("\n"), 1):
        opened = _FENCE.match(line)
        if fence is not None:  # closed by a line of the same mark, at least as long
            mark = line.strip()
            if opened and mark == fence[0] * len(mark) and len(mark) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if IGNORE_MARK in line or not any(m in line for m in ("`", "](", "]:", "→", "->")):
            continue
        for span in _CODE_SPAN.finditer(line):
            written = span.group(2).strip()
            if (target := _workspace_path(written, folders)) is not None:
                yield number, written, target, False
        prose = _CODE_SPAN.sub(" ", line)
        for link in (*_LINK.finditer(prose), *_LINK_DEFINITION.finditer(prose)):
            written = link.group(1)
            if (target := _link_path(written)) is not None:
                yield number, written, target, True
        prose = _LINK.sub(" ", prose)
        for arrow in _ARROW.finditer(prose):
            written = arrow.group(1).rstrip(_TRAILING)
            if (target := _workspace_path(written, folders)) is not None:
                yield number, written, target, False


def _link_path(written: str) -> str | None:
    """The path a link target names, or None when it names none (URL, anchor, ...)."""
    if written.startswith("<") and written.endswith(">"):  # [x](<a path with spaces>)
        written = written[1:-1]
    target = unquote(written.split("#", 1)[0].split("?", 1)[0])
    return _relative(target)


def _workspace_path(written: str, folders: frozenset[str]) -> str | None:
    """The path in a code span or after an arrow, or None when it is not a workspace
    path: spaces, no slash, or a first folder the workspace does not have."""
    target = _LINE_SUFFIX.sub("", written.split("#", 1)[0])
    if "/" not in target or not _PATH_CHARS.match(target):
        return None
    relative = _relative(target)
    if relative is None or relative.removeprefix("./").split("/", 1)[0] not in folders:
        return None
    return relative


def _relative(target: str) -> str | None:
    """`target` when it is a relative path to look up; None for an empty target, a URL,
    an absolute or home path, or a placeholder."""
    if (
        not target
        or _SCHEME.match(target)
        or target.startswith(("/", "\\", "~"))
        or _PLACEHOLDER.search(target)
    ):
        return None
    return target
