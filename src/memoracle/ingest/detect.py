"""Which reader a file needs, decided from its first bytes and its name.

Owns refusing what no reader can take: a missing path (`NotFound`), a directory, an empty
or binary file, text that is not UTF-8, or an unknown shape (`InvalidInput`, naming the
file and the formats accepted). Only the head of the file is read.

- ``SQLite format 3`` magic: ``openclaw-sqlite``
- ``*.md``: ``daily-note`` when named ``YYYY-MM-DD*.md``, else ``memory-md``
- first JSON line ``{"type": "session", ...}`` or a pi entry (``type`` plus
  ``id``/``parentId`` or ``message``): ``openclaw-jsonl``
- first JSON line with ``role``: ``jsonl``
- a JSON document whose head mentions LoCoMo keys (``sample_id``, ``conversation``,
  ``dia_id``, ``qa``/``evidence``): ``locomo``
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

from memoracle.errors import InvalidInput, NotFound
from memoracle.ingest.markdown import daily_note_day

FORMATS: tuple[str, ...] = (
    "openclaw-jsonl",
    "openclaw-sqlite",
    "jsonl",
    "locomo",
    "memory-md",
    "daily-note",
)
ACCEPTED = (
    "Accepted: OpenClaw session JSONL (openclaw-jsonl), OpenClaw agent store "
    "openclaw-agent.sqlite (openclaw-sqlite), JSONL with one {role, content, timestamp} per "
    "line (jsonl), LoCoMo JSON (locomo), MEMORY.md (memory-md), daily notes "
    "memory/YYYY-MM-DD.md (daily-note)."
)

HEAD_BYTES = 64 * 1024
_SNIFF_LINES = 20
_SQLITE_MAGIC = b"SQLite format 3\x00"
_MARKDOWN = (".md", ".markdown")
_PI_TYPES = (
    "message",
    "compaction",
    "branch_summary",
    "model_change",
    "thinking_level_change",
    "custom",
    "custom_message",
    "label",
    "session_info",
)
_SNIFF_SESSION = re.compile(r'^\s*\{\s*"type"\s*:\s*"session"')
_SNIFF_PI = re.compile(r'"parentId"\s*:')
_SNIFF_ROLE = re.compile(r'^\s*\{[^\n]{0,200}"role"\s*:')
_LOCOMO_KEYS = ('"sample_id"', '"conversation"', '"speaker_a"', '"dia_id"')


class UnknownFormat(InvalidInput):
    """A file no reader takes. `reason` says why in a few words, without the path and
    the list of formats, for a folder walk that names many such files."""

    def __init__(self, path: Path, reason: str, hint: str = "") -> None:
        super().__init__(f"'{path}' {reason}. {ACCEPTED}{hint}")
        self.reason = reason


def check_file(path: Path) -> None:
    """Raise unless `path` is an existing regular file."""
    if not path.exists():
        raise NotFound(f"No file '{path}'. Check the path, or try: ls {path.parent}")
    if path.is_dir():
        raise InvalidInput(f"'{path}' is a directory; give one file. {ACCEPTED}")


def detect_format(path: Path) -> str:
    """The name (one of `FORMATS`) of the reader `path` needs."""
    path = Path(path)
    check_file(path)
    with path.open("rb") as f:
        head = f.read(HEAD_BYTES)
    if not head:
        raise UnknownFormat(path, "is empty; there is nothing to read")
    if head.startswith(_SQLITE_MAGIC):
        return "openclaw-sqlite"
    if b"\x00" in head:
        hint = " (UTF-16? save it as UTF-8)" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise UnknownFormat(path, f"is a binary file{hint}")
    lines, undecodable = _head_lines(head)
    if path.suffix.lower() in _MARKDOWN:
        if not lines and undecodable:
            raise UnknownFormat(path, "is not UTF-8 text")
        return "daily-note" if daily_note_day(path) is not None else "memory-md"
    if not lines:
        if undecodable:
            raise UnknownFormat(path, "is not UTF-8 text")
        raise UnknownFormat(path, "holds only blank lines; there is nothing to read")
    # A bad first line (a cut write, a stray byte) is the reader's warning to give: the
    # format is that of the first of the head's lines that says what it is.
    for line in lines[:_SNIFF_LINES]:
        found = _line_format(line.strip())
        if found is not None:
            return found
    stripped = lines[0].strip()
    if stripped.startswith(("[", "{")):
        text = head.decode("utf-8", "replace")
        if any(key in text for key in _LOCOMO_KEYS) or ('"qa"' in text and '"evidence"' in text):
            return "locomo"
    raise UnknownFormat(
        path,
        f"is not a format memoracle reads (first line: {_excerpt(stripped)})",
        " Or pass the format explicitly.",
    )


def _head_lines(head: bytes) -> tuple[list[str], bool]:
    """The head's non-blank lines that are UTF-8, and whether any line was not."""
    start = 3 if head.startswith(codecs.BOM_UTF8) else 0
    raw_lines = head[start:].split(b"\n")
    cut = len(head) == HEAD_BYTES  # the last line may end in half a character
    lines: list[str] = []
    undecodable = False
    for i, raw in enumerate(raw_lines):
        if not raw.strip():
            continue
        try:
            decoder = codecs.getincrementaldecoder("utf-8")()
            lines.append(decoder.decode(raw, final=not (cut and i == len(raw_lines) - 1)))
        except UnicodeDecodeError:
            undecodable = True
    return lines, undecodable


def _line_format(stripped: str) -> str | None:
    """The format one JSON line belongs to, or None if it does not say."""
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        kind = value.get("type")
        if kind == "session" or (kind in _PI_TYPES and ("parentId" in value or "message" in value)):
            return "openclaw-jsonl"
        if "role" in value:
            return "jsonl"
        if "conversation" in value or "sample_id" in value:
            return "locomo"
        return None
    if _SNIFF_SESSION.match(stripped) or (
        stripped.startswith('{"type"') and _SNIFF_PI.search(stripped)
    ):
        return "openclaw-jsonl"  # a first line longer than the head
    if _SNIFF_ROLE.match(stripped):
        return "jsonl"
    return None


def _excerpt(line: str) -> str:
    return repr(line[:60] + ("…" if len(line) > 60 else ""))
