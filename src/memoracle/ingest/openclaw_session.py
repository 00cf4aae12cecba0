"""The OpenClaw (pi) session model, shared by the JSONL and SQLite readers.

A session is a header (``type: "session"``, version 3, ``id``) and entries that form a
tree through ``id`` / ``parentId``. Editing a message branches the tree; the live branch is
the path from the last appended entry back to the root. `Tree` keeps only what finding
that path needs (an index per id, the parent, where the entry is stored), so the readers
can load live entries one by one afterwards. Version-1 files (no ids) chain linearly.

`entry_turn` turns one live entry into a `Turn`: the text blocks of user and assistant
messages (thinking, tool calls, tool results, images, custom and bash entries skipped),
with OpenClaw's inbound wrappers stripped from user text (the ``Sender`` block's name
becomes the turn's speaker), and compaction summaries as
``Turn(kind="compaction", role="system")``. Branch summaries describe the abandoned branch
and are skipped with it.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from memoracle.ingest.callbacks import OnWarning, mb, too_big
from memoracle.ingest.envelope import strip_inbound
from memoracle.ingest.timestamps import parse_when
from memoracle.types import IngestWarning, Turn

_NO_PARENT = -1
_UNRESOLVED = -2
_PREVIOUS = object()

_THINK = re.compile(r"^\s*<(think|thinking)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
_REPLY_TAG = re.compile(r"\[\[\s*reply_to[^\]]*\]\]\s*")

# Sniffing an oversized line: pi writes type, id and parentId before the message.
_SNIFF_TYPE = re.compile(rb'"type"\s*:\s*"([^"\\]{1,64})"')
_SNIFF_ID = re.compile(rb'[{,]\s*"id"\s*:\s*"([^"\\]{1,200})"')
_SNIFF_PARENT = re.compile(rb'"parentId"\s*:\s*(?:null|"([^"\\]{1,200})")')
_SNIFF_ROLE = re.compile(rb'"role"\s*:\s*"([^"\\]{1,64})"')

SPOKEN_ROLES = ("user", "assistant")


def is_header(value: Mapping[str, Any]) -> bool:
    return value.get("type") == "session"


#: The newest session format these readers know (OpenClaw's pi sessions, version 3).
KNOWN_VERSION = 3


def newer_version(value: Mapping[str, Any], origin: str) -> IngestWarning | None:
    """A warning when a header says its session format is newer than `KNOWN_VERSION`:
    the file is still read as version 3 (entries of kinds it does not know are
    skipped), and the user learns why turns may be missing."""
    version = value.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version <= KNOWN_VERSION:
        return None
    return IngestWarning(
        origin,
        f"session format version {version} is newer than the version {KNOWN_VERSION} this "
        "memoracle reads; read as version 3 (what it does not know is skipped): upgrade "
        "memoracle to read it whole",
    )


class Tree:
    """The id/parentId skeleton of a session, in compact arrays.

    `position` is where the entry can be read again (a byte offset, or a row's seq) and
    `line` its line number (or seq) for origins.
    """

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._parent = array("i")
        self._position = array("q")
        self._line = array("i")
        self._unresolved: dict[int, str] = {}
        self.oversize: dict[int, tuple[str, str, int]] = {}

    def __len__(self) -> int:
        return len(self._parent)

    def add(self, entry_id: object, parent_id: object, position: int, line: int) -> int:
        """Record one entry; `parent_id` is `PREVIOUS` when the entry has no parentId key."""
        i = len(self._parent)
        if parent_id is _PREVIOUS:
            parent = i - 1 if i else _NO_PARENT
        elif isinstance(parent_id, str) and parent_id:
            parent = self._index.get(parent_id, _UNRESOLVED)
            if parent == _UNRESOLVED:
                self._unresolved[i] = parent_id
        else:
            parent = _NO_PARENT
        if isinstance(entry_id, str) and entry_id:
            self._index[entry_id] = i
        self._parent.append(parent)
        self._position.append(position)
        self._line.append(line)
        return i

    def add_entry(self, entry: Mapping[str, Any], position: int, line: int) -> int:
        parent: object = entry["parentId"] if "parentId" in entry else _PREVIOUS
        return self.add(entry.get("id"), parent, position, line)

    def add_sniffed(self, head: bytes, size: int, position: int, line: int) -> bool:
        """Record an entry too big to parse from the first bytes of its line."""
        found_id = _SNIFF_ID.search(head)
        if found_id is None:
            return False
        found_parent = _SNIFF_PARENT.search(head)
        parent: object = _PREVIOUS
        if found_parent is not None:
            raw = found_parent.group(1)
            parent = raw.decode("utf-8", "replace") if raw is not None else None
        i = self.add(found_id.group(1).decode("utf-8", "replace"), parent, position, line)
        kind = _SNIFF_TYPE.search(head)
        role = _SNIFF_ROLE.search(head)
        self.oversize[i] = (
            kind.group(1).decode("utf-8", "replace") if kind else "",
            role.group(1).decode("utf-8", "replace") if role else "",
            size,
        )
        return True

    def position(self, i: int) -> int:
        return self._position[i]

    def line(self, i: int) -> int:
        return self._line[i]

    def live_branch(self, origin: str, on_warning: OnWarning) -> list[int]:
        """Indices of the live branch, root first: the last entry and its ancestors."""
        for child, parent_id in self._unresolved.items():
            self._parent[child] = self._index.get(parent_id, _UNRESOLVED)
        path: list[int] = []
        i = len(self._parent) - 1
        while i >= 0 and len(path) <= len(self._parent):
            path.append(i)
            parent = self._parent[i]
            if parent == _UNRESOLVED:
                on_warning(
                    IngestWarning(
                        f"{origin}:{self._line[i]}",
                        f"parent '{self._unresolved.get(i)}' of this entry is not in the "
                        "session; the live branch is read from here on",
                    )
                )
                break
            i = parent
        if len(path) > len(self._parent):
            on_warning(IngestWarning(origin, "the id/parentId links form a cycle; stopped"))
        path.reverse()
        return path


def oversize_warning(tree: Tree, i: int, origin: str, max_line_bytes: int) -> IngestWarning | None:
    """The warning for an oversized live entry, unless it is one we would skip anyway."""
    kind, role, size = tree.oversize[i]
    if kind == "compaction" or (kind == "message" and role in SPOKEN_ROLES):
        return IngestWarning(
            origin,
            f"{role or kind} entry of {mb(size)} is above the {mb(max_line_bytes)} line "
            "limit; skipped (raise max_text_bytes to read it)",
        )
    return None


def entry_turn(
    entry: Mapping[str, Any],
    *,
    session_id: str | None,
    origin: str,
    fallback_id: str,
    max_text_bytes: int,
    on_warning: OnWarning,
) -> Turn | None:
    """The turn one live entry contributes, or None for entries that say nothing.

    `fallback_id` names entries without an id (version-1 files) so that reading the same
    file twice gives the same turn ids.
    """
    kind = entry.get("type")
    entry_id = entry.get("id")
    turn_id = entry_id if isinstance(entry_id, str) and entry_id else fallback_id
    at = parse_when(entry.get("timestamp"))
    if kind == "compaction":
        return _checked(
            _compaction(entry.get("summary"), at, session_id, turn_id, origin),
            max_text_bytes,
            on_warning,
        )
    if kind not in ("message", None):
        return None
    message = entry.get("message")
    if not isinstance(message, Mapping):
        if kind is None and "role" in entry:  # a bare v1 message line
            message = entry
        elif kind == "message":
            on_warning(IngestWarning(origin, "message entry without a message object; skipped"))
            return None
        else:
            return None
    role = message.get("role")
    if at is None:
        at = parse_when(message.get("timestamp"))
    if role == "compactionSummary":
        return _checked(
            _compaction(message.get("summary"), at, session_id, turn_id, origin),
            max_text_bytes,
            on_warning,
        )
    if role not in SPOKEN_ROLES:
        return None
    text = _text(message.get("content"))
    speaker = None
    if role == "user":
        inbound = strip_inbound(text)
        text, at, speaker = inbound.text, inbound.at or at, inbound.sender
    else:
        text = _REPLY_TAG.sub("", _THINK.sub("", text)).strip()
    return _checked(
        Turn(
            role=role,
            text=text,
            at=at,
            session_id=session_id,
            turn_id=turn_id,
            speaker=speaker,
            origin=origin,
        ),
        max_text_bytes,
        on_warning,
    )


def _compaction(
    summary: object, at: datetime | None, session_id: str | None, turn_id: str, origin: str
) -> Turn:
    """A compaction's summary (an entry of its own, or a v1 message) as a system turn."""
    return Turn(
        role="system",
        text=_text(summary).strip(),
        at=at,
        session_id=session_id,
        turn_id=turn_id,
        kind="compaction",
        origin=origin,
    )


def _checked(turn: Turn, max_text_bytes: int, on_warning: OnWarning) -> Turn | None:
    if not turn.text:
        return None
    size = too_big(turn.text, max_text_bytes)
    if size is not None:
        on_warning(
            IngestWarning(
                turn.origin or "",
                f"{turn.role} text of {mb(size)} is above the {mb(max_text_bytes)} limit; skipped",
            )
        )
        return None
    return turn


def _text(content: object) -> str:
    """The text of a message's content: a string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(t for t in _text_blocks(content) if t.strip())
    return ""


def _text_blocks(blocks: Iterable[object]) -> Iterable[str]:
    for block in blocks:
        if isinstance(block, str):
            yield block
        elif isinstance(block, Mapping) and block.get("type", "text") == "text":
            text = block.get("text")
            if isinstance(text, str):
                yield text


def carry_senders(turns: Iterable[Turn]) -> Iterator[Turn]:
    """A session is one conversation: a user turn that names no sender is from the last
    sender the session named, so one person's memories share one subject."""
    last: dict[str | None, str] = {}
    for turn in turns:
        if turn.role == "user":
            if turn.speaker:
                last[turn.session_id] = turn.speaker
            elif turn.session_id in last:
                turn = replace(turn, speaker=last[turn.session_id])
        yield turn
