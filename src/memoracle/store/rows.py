"""Rows -> values, once for both backends: the Python that turns a `SELECT`'s row into a
`Memory`, `Episode`, `HeldWrite`, `ArchivedMemory`, `AuditEntry` or `Run`.

The backends differ only in what their driver hands back for a time and for a JSON
column, so each mapper takes a `Reading` that says it: SQLite's (`store.db.SQLITE_ROWS`:
ISO-8601 text and JSON text) or PostgreSQL's (`store.postgres.memories.PG_ROWS`:
`timestamptz` and `jsonb`, already a datetime and a dict). The SQL, and so the order of
the columns each mapper reads, stays in each backend's repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoracle.storage_types import ArchivedMemory, AuditEntry, HeldWrite, Run
from memoracle.types import Episode, Memory, Scope


@dataclass(frozen=True)
class Reading:
    """How one backend's driver hands back a time and a JSON object column."""

    time: Callable[[Any], datetime]  # a non-NULL time column
    document: Callable[[Any], dict[str, Any]]  # a non-empty JSON object column

    def maybe_time(self, value: Any) -> datetime | None:
        return None if value is None else self.time(value)

    def json(self, value: Any) -> dict[str, Any]:
        """A JSON object column that may be NULL (or empty): {} then."""
        return self.document(value) if value else {}


def memory(read: Reading, row: Any, episodes: tuple[int, ...], origins: tuple[str, ...]) -> Memory:
    """A `Memory` from the columns of `store.memories`' `_COLUMNS`, in that order."""
    (
        id_, kind, text, layer, status, created, observed, accessed, activation, importance,
        access_count, confidence, pinned, source, content_hash, agent, user, chat, vis,
        subject, predicate, obj, valid_from, valid_to, due_at, expires_at, superseded_by,
        lang, rule, details,
    ) = row  # fmt: skip
    return Memory(
        id=int(id_),
        kind=kind,
        text=text,
        layer=layer,
        status=status,
        created_at=read.time(created),
        observed_at=read.time(observed),
        last_accessed_at=read.time(accessed),
        activation=activation,
        importance=importance,
        access_count=access_count,
        confidence=confidence,
        pinned=bool(pinned),
        source=source,
        content_hash=content_hash,
        scope=Scope(agent=agent, user=user, chat=chat, visibility=vis),
        subject=subject,
        predicate=predicate,
        object=obj,
        valid_from=read.maybe_time(valid_from),
        valid_to=read.maybe_time(valid_to),
        due_at=read.maybe_time(due_at),
        expires_at=read.maybe_time(expires_at),
        superseded_by=None if superseded_by is None else int(superseded_by),
        lang=lang,
        rule=rule,
        episode_ids=episodes,
        origins=origins,
        details=read.json(details),
    )


def episode(read: Reading, row: Any) -> Episode:
    """An `Episode` from id, role, text, at, created_at, kind, session_id, turn_id,
    speaker, origin, agent_id, user_id, chat_id, visibility."""
    (id_, role, text, at, created, kind, session, turn, speaker, origin, agent, user, chat, vis) = (
        row
    )
    return Episode(
        id=int(id_),
        role=role,
        text=text,
        at=read.time(at),
        created_at=read.time(created),
        kind=kind,
        session_id=session,
        turn_id=turn,
        speaker=speaker,
        origin=origin,
        scope=Scope(agent=agent, user=user, chat=chat, visibility=vis),
    )


def held(read: Reading, row: Any) -> HeldWrite:
    """A `HeldWrite` from the columns of `store.held`'s `_FIELDS`, in that order
    (`reasons` is JSON text in both backends)."""
    (id_, held_at, actor, level, reasons, text, kind, source, observed, agent, user, chat,
     vis, episode_id, origin, decision, decided_at, decided_by, expires_at) = row  # fmt: skip
    return HeldWrite(
        id=int(id_),
        held_at=read.time(held_at),
        actor=str(actor),
        level=str(level),
        reasons=tuple(json.loads(reasons)),
        text=str(text),
        kind=kind,
        source=str(source),
        observed_at=read.time(observed),
        scope=Scope(agent, user, chat, vis),
        episode_id=None if episode_id is None else int(episode_id),
        origin=origin,
        decision=decision,
        decided_at=read.maybe_time(decided_at),
        decided_by=decided_by,
        expires_at=read.maybe_time(expires_at),
    )


def archived(read: Reading, row: Any) -> ArchivedMemory:
    """An `ArchivedMemory` from memory_id, archived_at, reason, score, prior_status,
    record."""
    memory_id, archived_at, reason, score, prior_status, record = row
    return ArchivedMemory(
        memory_id=int(memory_id),
        archived_at=read.time(archived_at),
        reason=str(reason),
        score=None if score is None else float(score),
        prior_status=str(prior_status),
        record=read.document(record),
    )


def audit_entry(read: Reading, row: Any) -> AuditEntry:
    """An `AuditEntry` from id, at, actor, action, memory_id, detail."""
    id_, at, actor, action, memory_id, detail = row
    memory_ = None if memory_id is None else int(memory_id)
    return AuditEntry(int(id_), read.time(at), actor, action, memory_, read.json(detail))


def run(read: Reading, kind: str, row: Any) -> Run:
    """The `Run` of `kind` from started_at, finished_at, status, counts."""
    started, finished, ended, counts = row
    return Run(
        kind,
        read.time(started),
        read.maybe_time(finished),
        ended,
        {str(k): int(v) for k, v in read.json(counts).items()},
    )
