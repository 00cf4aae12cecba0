"""OpenClaw's per-agent SQLite store (``agents/<id>/agent/openclaw-agent.sqlite``).

Owns getting transcripts out of a database the gateway may be writing to, without ever
writing it or reading rows from it: the file is opened read-only only to be copied with
SQLite's backup API into a temporary file; rows are read from the copy, and the copy is
deleted when the iterator finishes or is closed.

Each row of ``transcript_events`` holds one logical JSONL record of a session, either as
text in ``event_json`` or, since OpenClaw 2026.9.6 for large events, zstd-compressed in
``event_zstd`` (``event_json`` NULL, ``event_utf8_bytes`` the inflated size). Columns
that an older schema lacks are tolerated. Each session is read like a JSONL file (see
`openclaw_session`): a skeleton pass, then the live branch by ``seq``. Progress counts
rows. Origins are ``path#session:seq``. Cold archives (``session_transcript_archives``)
are not read.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from memoracle.errors import InvalidInput
from memoracle.ingest.callbacks import LINE_FACTOR, OnProgress, OnWarning, Throttle, mb
from memoracle.ingest.jsonlines import HEAD_BYTES, decode_json
from memoracle.ingest.openclaw_session import (
    Tree,
    carry_senders,
    entry_turn,
    is_header,
    newer_version,
    oversize_warning,
)
from memoracle.types import IngestWarning, Turn

_TABLE = "transcript_events"
_PROGRESS_STEP = 500


def read_openclaw_sqlite(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[Turn]:
    """The live-branch turns of every session in the store, session by session."""
    return carry_senders(
        _read_openclaw_sqlite(
            path, on_warning=on_warning, on_progress=on_progress, max_text_bytes=max_text_bytes
        )
    )


def _read_openclaw_sqlite(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[Turn]:
    copy = snapshot(path)
    try:
        conn = sqlite3.connect(copy)
        try:
            yield from _read_copy(
                conn,
                str(path),
                on_warning=on_warning,
                on_progress=on_progress,
                max_event_bytes=max_text_bytes * LINE_FACTOR,
                max_text_bytes=max_text_bytes,
            )
        except sqlite3.DatabaseError as exc:
            raise InvalidInput(f"Cannot read OpenClaw store '{path}': {exc}.") from exc
        finally:
            conn.close()
    finally:
        remove_copy(copy)


def snapshot(path: Path) -> Path:
    """A private copy of the database at `path`, made with the backup API.

    The original is opened read-only (``mode=ro``), so no journal, WAL or lock file of
    ours is left beside it.
    """
    fd, name = tempfile.mkstemp(prefix="memoracle-openclaw-", suffix=".sqlite")
    os.close(fd)
    copy = Path(name)
    try:
        source = sqlite3.connect(_source_uri(path), uri=True)
        try:
            target = sqlite3.connect(copy)
            try:
                source.backup(target)
            finally:
                target.close()
        finally:
            source.close()
    except sqlite3.DatabaseError as exc:
        remove_copy(copy)
        raise InvalidInput(
            f"Cannot copy '{path}' as an SQLite database: {exc}. Expected OpenClaw's "
            "agents/<id>/agent/openclaw-agent.sqlite."
        ) from exc
    except BaseException:
        remove_copy(copy)
        raise
    return copy


def _source_uri(path: Path) -> str:
    """A read-only URI for the original.

    A WAL-mode database that nobody has open has no ``-wal`` file, and even a read-only
    connection would create ``-wal`` and ``-shm`` beside it. Its main file only changes at
    a checkpoint, which needs a ``-wal``, so it is opened ``immutable`` instead.
    """
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with path.open("rb") as f:
        header = f.read(20)
    in_wal_mode = header[18:20] == b"\x02\x02"
    if in_wal_mode and not Path(f"{path}-wal").exists():
        uri += "&immutable=1"
    return uri


def remove_copy(copy: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{copy}{suffix}")


def _read_copy(
    conn: sqlite3.Connection,
    name: str,
    *,
    on_warning: OnWarning,
    on_progress: OnProgress,
    max_event_bytes: int,
    max_text_bytes: int,
) -> Iterator[Turn]:
    """The copy's sessions in the order they began, each read in two passes: its
    skeleton (every row), then the rows of its live branch as turns."""
    layout = _layout(conn, name)
    total = int(conn.execute(f"SELECT COUNT(*) FROM {_TABLE}").fetchone()[0])
    reading = _Reading(
        conn,
        layout,
        Throttle(on_progress, total, _PROGRESS_STEP),
        on_warning,
        max_event_bytes,
        max_text_bytes,
    )
    for session in layout.sessions:
        origin_base = f"{name}#{session}" if session is not None else name
        tree, header_id = reading.skeleton(session, origin_base)
        session_id = session if session is not None else header_id
        yield from reading.live_turns(session, session_id, tree, origin_base)
    reading.progress.finish()


@dataclass(frozen=True)
class _Layout:
    """How this schema's rows are read: the event columns (those an older schema lacks
    read as NULL), the column that orders a session, the condition that picks one
    session, and the sessions in the order they began (one, None, without a
    session_id column)."""

    columns: str
    seq: str
    where: str
    sessions: list[str | None]


def _layout(conn: sqlite3.Connection, name: str) -> _Layout:
    """The copy's `_Layout`; InvalidInput when it is not an OpenClaw agent store."""
    columns = {row[1] for row in conn.execute(f"PRAGMA table_info({_TABLE})")}
    if "event_json" not in columns:
        raise InvalidInput(
            f"'{name}' has no {_TABLE}.event_json: it is not an OpenClaw agent store "
            "(agents/<id>/agent/openclaw-agent.sqlite)."
        )
    columns_sql = "event_json, " + (
        "event_zstd, event_utf8_bytes"
        if {"event_zstd", "event_utf8_bytes"} <= columns
        else "event_zstd, NULL"
        if "event_zstd" in columns
        else "NULL, NULL"
    )
    seq = "seq" if "seq" in columns else "rowid"
    if "session_id" not in columns:
        return _Layout(columns_sql, seq, "? IS NULL", [None])
    first = "MIN(created_at)" if "created_at" in columns else f"MIN({seq})"
    sessions: list[str | None] = [
        row[0]
        for row in conn.execute(
            f"SELECT session_id FROM {_TABLE} GROUP BY session_id ORDER BY {first}"
        )
    ]
    return _Layout(columns_sql, seq, "session_id IS ?", sessions)


class _Reading:
    """One copy read session by session: its layout, the rows counted for progress,
    the limits, and where warnings go."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        layout: _Layout,
        progress: Throttle,
        on_warning: OnWarning,
        max_event_bytes: int,
        max_text_bytes: int,
    ) -> None:
        self.conn, self.layout, self.progress = conn, layout, progress
        self.on_warning = on_warning
        self.max_event_bytes, self.max_text_bytes = max_event_bytes, max_text_bytes
        self.decompressor = zstandard.ZstdDecompressor()
        self.done = 0

    def skeleton(self, session: str | None, origin_base: str) -> tuple[Tree, str | None]:
        """Pass 1: every row of `session` into the tree of entries (an oversized one by
        its sniffed head), each problem reported once; and the session header's id."""
        layout = self.layout
        tree = Tree()
        header_id: str | None = None
        rows = self.conn.execute(
            f"SELECT {layout.seq}, {layout.columns} FROM {_TABLE} "
            f"WHERE {layout.where} ORDER BY {layout.seq}",
            (session,),
        )
        for row_seq, text, blob, inflated in rows:
            self.done += 1
            self.progress(self.done)
            origin = f"{origin_base}:{row_seq}"
            payload = _payload(
                text,
                blob,
                inflated,
                origin,
                self.decompressor,
                self.max_event_bytes,
                self.on_warning,
            )
            if payload is None:
                continue
            data, oversize = payload
            if oversize is not None:
                if not tree.add_sniffed(data, oversize, int(row_seq), int(row_seq)):
                    self.on_warning(_too_big(origin, oversize, self.max_event_bytes))
                continue
            event = _event(data, origin, self.on_warning)
            if event is None:
                continue
            if is_header(event):
                newer = newer_version(event, origin)
                if newer is not None:
                    self.on_warning(newer)
                if header_id is None and isinstance(event.get("id"), str):
                    header_id = event["id"]
                continue
            tree.add_entry(event, int(row_seq), int(row_seq))
        return tree, header_id

    def live_turns(
        self, session: str | None, session_id: str | None, tree: Tree, origin_base: str
    ) -> Iterator[Turn]:
        """Pass 2: the rows of the live branch read again, as turns (what pass 1
        reported is not reported twice; an oversized entry is, once)."""
        layout = self.layout
        for i in tree.live_branch(origin_base, self.on_warning):
            row_seq = tree.position(i)
            origin = f"{origin_base}:{row_seq}"
            if i in tree.oversize:
                warning = oversize_warning(tree, i, origin, self.max_event_bytes)
                if warning is not None:
                    self.on_warning(warning)
                continue
            found = self.conn.execute(
                f"SELECT {layout.columns} FROM {_TABLE} WHERE {layout.where} AND {layout.seq} = ?",
                (session, row_seq),
            ).fetchone()
            if found is None:
                continue
            text, blob, inflated = found
            payload = _payload(
                text,
                blob,
                inflated,
                origin,
                self.decompressor,
                self.max_event_bytes,
                _already_reported,
            )
            if payload is None or payload[1] is not None:
                continue
            event = _event(payload[0], origin, _already_reported)
            if event is None:
                continue
            turn = entry_turn(
                event,
                session_id=session_id,
                origin=origin,
                fallback_id=f"S{row_seq}",
                max_text_bytes=self.max_text_bytes,
                on_warning=self.on_warning,
            )
            if turn is not None:
                yield turn


def _payload(
    text: object,
    blob: object,
    inflated: object,
    origin: str,
    decompressor: zstandard.ZstdDecompressor,
    max_event_bytes: int,
    on_warning: OnWarning,
) -> tuple[bytes, int | None] | None:
    """A row's event bytes and None, or for an oversized event its head and size.

    None (reported) when the row holds nothing readable.
    """
    if isinstance(text, str):
        data = text.encode("utf-8", "surrogatepass")
        if len(data) > max_event_bytes:
            return data[:HEAD_BYTES], len(data)
        return data, None
    if not isinstance(blob, bytes):
        on_warning(IngestWarning(origin, "row has neither event_json nor event_zstd; skipped"))
        return None
    declared = inflated if isinstance(inflated, int) else None
    try:
        size = max(zstandard.frame_content_size(blob), declared or 0)
        inflated_data = (
            None if size > max_event_bytes else _inflate(decompressor, blob, max_event_bytes)
        )
        if inflated_data is None:
            head = _inflate(decompressor, blob, HEAD_BYTES, cut=True) or b""
            return head, max(size, max_event_bytes + 1)
    except zstandard.ZstdError as exc:
        on_warning(IngestWarning(origin, f"compressed event is unreadable ({exc}); skipped"))
        return None
    data = inflated_data
    if declared is not None and len(data) != declared:
        on_warning(
            IngestWarning(
                origin,
                f"compressed event inflates to {len(data)} bytes, not the {declared} "
                "recorded; read anyway",
            )
        )
    return data, None


def _event(data: bytes, origin: str, on_warning: OnWarning) -> dict[str, Any] | None:
    """One row's event as a dict, or None (reported) when it is not a JSON object."""
    value, why = decode_json(data)
    if why is not None:
        on_warning(IngestWarning(origin, f"event is {why}; skipped"))
        return None
    if not isinstance(value, dict):
        on_warning(IngestWarning(origin, "event is not a JSON object; skipped"))
        return None
    return value


def _already_reported(warning: IngestWarning) -> None:
    """Pass 2 re-reads rows pass 1 has already reported on."""


def _inflate(
    decompressor: zstandard.ZstdDecompressor, blob: bytes, limit: int, *, cut: bool = False
) -> bytes | None:
    """The inflated bytes, or None when they would exceed `limit` (its first `limit`
    bytes when `cut`)."""
    parts: list[bytes] = []
    size = 0
    with decompressor.stream_reader(blob) as reader:
        while size <= limit:
            chunk = reader.read(min(limit + 1 - size, 1 << 20))
            if not chunk:
                break
            parts.append(chunk)
            size += len(chunk)
    data = b"".join(parts)
    if size > limit:
        return data[:limit] if cut else None
    return data


def _too_big(origin: str, size: int, limit: int) -> IngestWarning:
    return IngestWarning(origin, f"event of {mb(size)} is above the {mb(limit)} limit; skipped")
