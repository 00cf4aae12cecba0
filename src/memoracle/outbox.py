"""The write queue: what was said while the store was unusable, kept in a file until it
can be stored (docs/outage.md).

A door whose write cannot reach the store (missing, damaged, locked past its timeout,
read-only) appends one line to HOME/queue/pending-writes.jsonl (mode 0600): a
self-contained write — its id, kind (``capture``: batches of turns, each with its scope;
``remember``: one text as a memory), the door, the actor, when it was said and when it
was queued. Every text is redacted (`capture.redact`) before it is written: a secret
never sits in the queue in plain text. Lines are appended under HOME/queue/queue.lock and
synced to disk, so two processes never interleave one and a power cut loses none that was
acknowledged.

This module owns the file: its lines (`capture_entry`, `remember_entry`, `parse`),
appending (`append`), reading (`read`), rewriting what is left (`rewrite`), putting a
line aside (`set_aside`, to HOME/queue/set-aside.jsonl, never dropped) and what waits
(`status`). It never touches the store: it is written exactly when the store cannot be.
Delivering the lines is the engine's (`engine.replay`).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memoracle.capture.redact import redact
from memoracle.errors import InvalidInput, WorkspaceError
from memoracle.files import fsync_dir, os_lock, replacing
from memoracle.types import Scope, Turn

__all__ = [
    "ASIDE_FILE",
    "QUEUE_DIR",
    "QUEUE_FILE",
    "Entry",
    "Line",
    "QueueStatus",
    "append",
    "capture_entry",
    "held",
    "parse",
    "queue_path",
    "read",
    "remember_entry",
    "rewrite",
    "set_aside",
    "status",
]

QUEUE_DIR = "queue"  # under HOME
QUEUE_FILE = "pending-writes.jsonl"
ASIDE_FILE = "set-aside.jsonl"
LOCK_FILE = "queue.lock"
LOCK_WAIT_SECONDS = 30.0
VERSION = 1

Batch = tuple[Scope, tuple[Turn, ...]]


@dataclass(frozen=True)
class Entry:
    """One queued write. `kind` "capture": `batches` (each turns with their scope),
    stored as `Engine.capture_many` stores them; "remember": `text` with `scope`,
    `memory_kind`, `source` and an expiry (`ttl_seconds` or `until`), stored as
    `Engine.remember` stores it. `said_at` is when the door was called."""

    id: str
    kind: str
    door: str
    actor: str
    said_at: datetime
    queued_at: datetime
    batches: tuple[Batch, ...] = ()
    text: str = ""
    scope: Scope = Scope()
    memory_kind: str | None = None
    source: str = "manual"
    ttl_seconds: float | None = None
    until: datetime | date | None = None

    @property
    def items(self) -> int:
        """Turns (a capture) or memories (a remember) the entry holds."""
        return sum(len(t) for _, t in self.batches) if self.kind == "capture" else 1

    @property
    def scopes(self) -> tuple[Scope, ...]:
        """Whose the entry's texts are: each batch's scope, or the remember's."""
        return tuple(s for s, _ in self.batches) if self.kind == "capture" else (self.scope,)

    def summary(self, width: int = 80) -> str:
        """One line: its first words."""
        first = self.batches[0][1][0].text if self.batches and self.batches[0][1] else self.text
        one = " ".join(first.split())
        return one if len(one) <= width else one[: width - 1] + "…"


@dataclass(frozen=True)
class Line:
    """One line of the queue file: its number, its text, and the entry it holds or why
    it holds none (`problem`)."""

    number: int
    raw: str
    entry: Entry | None
    problem: str | None = None


@dataclass(frozen=True)
class QueueStatus:
    """What waits: `pending` entries (`items` turns or memories), the oldest one's time,
    lines that cannot be read (`unreadable`) and lines put aside (`set_aside`)."""

    path: Path
    pending: int
    items: int
    oldest_at: datetime | None
    unreadable: int
    set_aside: int
    aside_path: Path

    def age_hours(self, now: datetime) -> float | None:
        if self.oldest_at is None:
            return None
        oldest = self.oldest_at if self.oldest_at.tzinfo else self.oldest_at.astimezone()
        return round(max(0.0, (now - oldest).total_seconds()) / 3600, 2)

    def warnings(self, now: datetime) -> list[tuple[str, str]]:
        """(code, message) for each thing to look at: writes waiting, lines that cannot
        be read, lines set aside (docs/outage.md)."""
        found: list[tuple[str, str]] = []
        if self.pending:
            found.append((
                "writes_queued",
                f"{self.pending} write(s) ({self.items} item(s)) said while the store was"
                f" unusable wait in {self.path}, the oldest {self.age_hours(now):.1f} h old."
                " They are stored, once each and in order, when the store opens for writing:"
                " recover it with `memoracle doctor --fix`; `memoracle queue` lists them.",
            ))  # fmt: skip
        if self.unreadable:
            found.append((
                "queue_unreadable",
                f"{self.unreadable} line(s) of {self.path} cannot be read as a queued write;"
                f" the next delivery keeps them in {self.aside_path}, never stored, and"
                " stores the rest. `memoracle queue` names them.",
            ))  # fmt: skip
        if self.set_aside:
            found.append((
                "queue_set_aside",
                f"{self.set_aside} queued write(s) were set aside in {self.aside_path} (a line"
                " that could not be read, or that the store refused): they are not in memory."
                " Each line says why; say again what matters, then move the file away.",
            ))  # fmt: skip
        return found

    def to_json(self, now: datetime) -> dict[str, object]:
        return {
            "path": str(self.path),
            "pending": self.pending,
            "items": self.items,
            "oldest_at": None if self.oldest_at is None else self.oldest_at.isoformat(),
            "oldest_age_hours": self.age_hours(now),
            "unreadable": self.unreadable,
            "set_aside": self.set_aside,
            "set_aside_path": str(self.aside_path),
        }


# -- making entries ------------------------------------------------------------------


def _new_id(now: datetime) -> str:
    return f"q_{now:%Y%m%dT%H%M%S}_{secrets.token_hex(6)}"


def capture_entry(
    batches: Sequence[tuple[Sequence[Turn], Scope]],
    *,
    now: datetime,
    door: str,
    actor: str = "capture",
) -> Entry:
    """A capture to queue: every turn's text redacted, every turn given its time (`now`
    when it has none: the time it was said, kept so a replay stores it as said)."""
    kept = tuple(
        (scope, tuple(replace(t, text=redact(t.text).text, at=t.at or now) for t in turns))
        for turns, scope in batches
    )
    return Entry(_new_id(now), "capture", door, actor, now, now, batches=kept)


def remember_entry(
    text: str,
    scope: Scope,
    *,
    now: datetime,
    door: str,
    actor: str,
    memory_kind: str | None = None,
    source: str = "manual",
    ttl_seconds: float | None = None,
    until: datetime | date | None = None,
) -> Entry:
    """A memory to queue (`Engine.remember`'s arguments), its text redacted."""
    return Entry(
        _new_id(now), "remember", door, actor, now, now, text=redact(text).text, scope=scope,
        memory_kind=memory_kind, source=source, ttl_seconds=ttl_seconds, until=until,
    )  # fmt: skip


# -- the file ----------------------------------------------------------------------


def queue_path(home: Path) -> Path:
    return home / QUEUE_DIR / QUEUE_FILE


def held(home: Path) -> AbstractContextManager[None]:
    """HOME/queue/queue.lock, held while the queue file is appended to or rewritten."""
    path = home / QUEUE_DIR / LOCK_FILE
    return os_lock(
        path,
        wait_seconds=LOCK_WAIT_SECONDS,
        busy=f"Another memoracle process has held {path} for {LOCK_WAIT_SECONDS:.0f} s.",
    )


def append(home: Path, entry: Entry) -> Path:
    """Append `entry` as one line, under the lock, synced to disk. A file that cannot be
    written is a `WorkspaceError` naming it (then nothing was queued)."""
    path = queue_path(home)
    line = json.dumps(_to_json(entry), ensure_ascii=False, separators=(",", ":")) + "\n"
    _folder(path.parent)
    with held(home):
        try:
            new = not path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                if _ends_unfinished(path):
                    os.write(fd, b"\n")  # a line cut by a crash stays its own (bad) line
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            if new:
                fsync_dir(path.parent)
        except OSError as exc:
            raise WorkspaceError(
                f"{path}: cannot queue the write ({exc.strerror or exc}); check free space"
                " and the folder's permissions."
            ) from None
    return path


def read(home: Path) -> list[Line]:
    """Every line of the queue file, in order, each parsed (or with its problem). Call
    under `held` to act on them."""
    path = queue_path(home)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    lines: list[Line] = []
    for number, chunk in enumerate(data.split(b"\n"), start=1):
        if not chunk.strip():
            continue
        try:
            raw = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            raw = chunk.decode("utf-8", errors="replace")
            lines.append(Line(number, raw, None, f"not UTF-8 (byte {exc.start + 1})"))
            continue
        try:
            lines.append(Line(number, raw, parse(raw)))
        except InvalidInput as exc:
            lines.append(Line(number, raw, None, str(exc)))
    return lines


def rewrite(home: Path, raws: Sequence[str]) -> None:
    """Replace the queue file by `raws` (the lines still waiting), atomically and synced;
    call under `held`."""
    path = queue_path(home)
    try:
        with replacing(path, durable=True) as tmp:  # mkstemp: mode 0600
            tmp.write_text("".join(f"{r}\n" for r in raws), encoding="utf-8")
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot rewrite it ({exc.strerror or exc}).") from None


def set_aside(home: Path, raw: str, reason: str, now: datetime) -> Path:
    """Keep `raw` (a line that cannot be parsed or that the store refuses) in
    HOME/queue/set-aside.jsonl with the reason, mode 0600; call under `held`."""
    path = home / QUEUE_DIR / ASIDE_FILE
    record = {"set_aside_at": now.isoformat(), "reason": reason, "line": raw}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot write it ({exc.strerror or exc}).") from None
    return path


def status(home: Path) -> QueueStatus:
    """What waits in the queue (read without the lock: a count, not an action)."""
    lines = read(home)
    entries = [line.entry for line in lines if line.entry is not None]
    aside_path = home / QUEUE_DIR / ASIDE_FILE
    try:
        aside = sum(1 for row in aside_path.read_bytes().split(b"\n") if row.strip())
    except FileNotFoundError:
        aside = 0
    except OSError as exc:
        raise WorkspaceError(f"{aside_path}: cannot read it ({exc.strerror or exc}).") from None
    return QueueStatus(
        path=queue_path(home),
        pending=len(entries),
        items=sum(e.items for e in entries),
        oldest_at=min((e.said_at for e in entries), default=None, key=_comparable),
        unreadable=len(lines) - len(entries),
        set_aside=aside,
        aside_path=aside_path,
    )


def _comparable(at: datetime) -> datetime:
    return at if at.tzinfo else at.astimezone()


def _folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise WorkspaceError(
            f"{folder}: cannot create it to queue the write ({exc.strerror or exc})."
        ) from None


def _ends_unfinished(path: Path) -> bool:
    """Whether the file's last line has no newline (a writer killed mid-line)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except OSError:
        return False


# -- lines -------------------------------------------------------------------------


def _to_json(entry: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {
        "v": VERSION,
        "id": entry.id,
        "kind": entry.kind,
        "door": entry.door,
        "actor": entry.actor,
        "said_at": entry.said_at.isoformat(),
        "queued_at": entry.queued_at.isoformat(),
    }
    if entry.kind == "capture":
        out["batches"] = [
            {"scope": _scope_json(scope), "turns": [_turn_json(t) for t in turns]}
            for scope, turns in entry.batches
        ]
        return out
    until = entry.until
    return out | {
        "scope": _scope_json(entry.scope),
        "text": entry.text,
        "memory_kind": entry.memory_kind,
        "source": entry.source,
        "ttl_seconds": entry.ttl_seconds,
        "until": None if until is None else until.isoformat(),
    }


def _scope_json(scope: Scope) -> dict[str, str | None]:
    return {"agent": scope.agent, "user": scope.user, "chat": scope.chat,
            "visibility": scope.visibility}  # fmt: skip


def _turn_json(turn: Turn) -> dict[str, str | None]:
    return {
        "role": turn.role, "text": turn.text,
        "at": None if turn.at is None else turn.at.isoformat(),
        "session": turn.session_id, "turn": turn.turn_id, "speaker": turn.speaker,
        "kind": turn.kind, "origin": turn.origin,
    }  # fmt: skip


def parse(raw: str) -> Entry:
    """The entry a queue line holds; `InvalidInput` naming what is wrong with it."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(f"not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidInput("not a JSON object")
    if data.get("v") != VERSION:
        raise InvalidInput(f"field 'v' must be {VERSION} (a queue from another memoracle?)")
    kind = _text(data, "kind")
    common = (
        _text(data, "id"), kind, _text(data, "door"), _text(data, "actor"),
        _time(data, "said_at"), _time(data, "queued_at"),
    )  # fmt: skip
    if kind == "capture":
        batches = data.get("batches")
        if not isinstance(batches, list) or not batches:
            raise InvalidInput("field 'batches' must be a non-empty list")
        return Entry(*common, batches=tuple(_batch(b, i) for i, b in enumerate(batches)))
    if kind != "remember":
        raise InvalidInput(f"field 'kind' must be capture or remember, not {kind!r}")
    ttl, until = data.get("ttl_seconds"), _optional(data, "until")
    if ttl is not None and (not isinstance(ttl, int | float) or isinstance(ttl, bool)):
        raise InvalidInput("field 'ttl_seconds' must be a number")
    return Entry(
        *common, text=_text(data, "text"), scope=_scope(data.get("scope"), "scope"),
        memory_kind=_optional(data, "memory_kind"), source=_text(data, "source"),
        ttl_seconds=ttl, until=None if until is None else _instant(until, "until"),
    )  # fmt: skip


def _batch(value: object, index: int) -> Batch:
    where = f"batches[{index}]"
    if not isinstance(value, dict) or not isinstance(value.get("turns"), list):
        raise InvalidInput(f"field '{where}' must be an object with a list 'turns'")
    turns = tuple(_turn(t, f"{where}.turns[{i}]") for i, t in enumerate(value["turns"]))
    return _scope(value.get("scope"), f"{where}.scope"), turns


def _turn(value: object, where: str) -> Turn:
    if not isinstance(value, dict):
        raise InvalidInput(f"field '{where}' must be an object")
    at = _optional(value, "at", where)
    return Turn(
        role=_text(value, "role", where), text=_text(value, "text", where),
        at=None if at is None else _datetime(at, f"{where}.at"),
        session_id=_optional(value, "session", where), turn_id=_optional(value, "turn", where),
        speaker=_optional(value, "speaker", where), kind=_optional(value, "kind", where)
        or "message", origin=_optional(value, "origin", where),
    )  # fmt: skip


def _scope(value: object, where: str) -> Scope:
    if not isinstance(value, dict):
        raise InvalidInput(f"field '{where}' must be an object")
    return Scope(
        agent=_optional(value, "agent", where), user=_optional(value, "user", where),
        chat=_optional(value, "chat", where),
        visibility=_optional(value, "visibility", where) or "private",
    )  # fmt: skip


def _text(data: dict[str, Any], key: str, where: str = "") -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"field '{_at(where, key)}' must be a non-empty string")
    return value


def _optional(data: dict[str, Any], key: str, where: str = "") -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidInput(f"field '{_at(where, key)}' must be a string or null")
    return value


def _time(data: dict[str, Any], key: str) -> datetime:
    return _datetime(_text(data, key), key)


def _datetime(value: str, where: str) -> datetime:
    found = _instant(value, where)
    if not isinstance(found, datetime):
        raise InvalidInput(f"field '{where}' must be a time, not a date")
    return found


def _instant(value: str, where: str) -> datetime | date:
    try:
        return date.fromisoformat(value) if len(value) == 10 else datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"field '{where}': {value!r} is not an ISO time") from None


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
