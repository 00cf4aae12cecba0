"""Generic chat logs as JSONL: one ``{role, content, timestamp}`` object per line.

Owns the plain format any agent can write. ``content`` is a string or a list of text
blocks (``{"type": "text", "text": ...}`` or bare strings); ``timestamp`` is ISO-8601 or
epoch seconds/milliseconds and may be missing. Optional fields: a session
(``session_id`` / ``sessionId`` / ``session``), a turn id (``id`` / ``turn_id``), a
``speaker`` name and ``kind`` (``message`` or ``compaction``). A line without a role or
content is reported and skipped. Origins are ``path:line``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memoracle.ingest.callbacks import (
    LINE_FACTOR,
    OnProgress,
    OnWarning,
    Throttle,
    mb,
    too_big,
)
from memoracle.ingest.jsonlines import decode_json, iter_lines
from memoracle.ingest.timestamps import parse_when
from memoracle.types import IngestWarning, Turn

_PROGRESS_STEP = 1 << 20
_ROLES = {"human": "user", "ai": "assistant", "bot": "assistant", "model": "assistant"}
_SESSION_KEYS = ("session_id", "sessionId", "session", "conversation_id")
_ID_KEYS = ("id", "turn_id", "turnId", "message_id")
_TIME_KEYS = ("timestamp", "time", "created_at", "at", "date")


def read_generic_jsonl(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[Turn]:
    """Every readable line of the file as a turn, in file order."""
    name = str(path)
    max_line = max_text_bytes * LINE_FACTOR
    progress = Throttle(on_progress, path.stat().st_size, _PROGRESS_STEP)
    with path.open("rb") as f:
        for line in iter_lines(f, max_line):
            progress(line.offset)
            origin = f"{name}:{line.number}"
            if line.oversize:
                limit = f"above the {mb(max_line)} limit"
                on_warning(IngestWarning(origin, f"line of {mb(line.size)} is {limit}; skipped"))
                continue
            value, why = decode_json(line.data)
            if why is None and not isinstance(value, dict):
                why = "not a JSON object"
            if why is not None:
                on_warning(IngestWarning(origin, f"{why}; skipped"))
                continue
            turn = _turn(value, origin, on_warning, session=name, line=line.number)
            if turn is None:
                continue
            size = too_big(turn.text, max_text_bytes)
            if size is not None:
                limit = f"above the {mb(max_text_bytes)} limit"
                on_warning(IngestWarning(origin, f"text of {mb(size)} is {limit}; skipped"))
                continue
            yield turn
    progress.finish()


def _turn(
    value: Mapping[str, Any], origin: str, on_warning: OnWarning, *, session: str, line: int
) -> Turn | None:
    """The turn on one line. Without ids of its own, the file is its session and the line
    number its turn id, so reading the file again adds nothing."""
    role = value.get("role")
    if not isinstance(role, str) or not role.strip():
        on_warning(IngestWarning(origin, "no 'role' field; skipped"))
        return None
    if "content" not in value:
        on_warning(IngestWarning(origin, "no 'content' field; skipped"))
        return None
    text = _text(value["content"])
    if text is None:
        on_warning(IngestWarning(origin, "'content' is neither text nor text blocks; skipped"))
        return None
    if not text.strip():
        return None
    role = role.strip().lower()
    at = None
    for key in _TIME_KEYS:
        if value.get(key) is not None:
            at = parse_when(value[key])
            if at is None:
                on_warning(IngestWarning(origin, f"unreadable {key} {value[key]!r}; kept"))
            break
    kind = value.get("kind")
    return Turn(
        role=_ROLES.get(role, role),
        text=text.strip(),
        at=at,
        session_id=_first_str(value, _SESSION_KEYS) or session,
        turn_id=_first_str(value, _ID_KEYS) or f"line-{line}",
        speaker=_first_str(value, ("speaker", "name")),
        kind=kind if kind in ("message", "compaction") else "message",
        origin=origin,
    )


def _text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type", "text") == "text":
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n\n".join(p for p in parts if p.strip())


def _first_str(value: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = value.get(key)
        if isinstance(found, str) and found:
            return found
        if isinstance(found, int) and not isinstance(found, bool):
            return str(found)
    return None
