"""The cold tier: which memories are archived, when, why, and how to bring one back.

An archived memory keeps its `memories` row and its id (so `m_12` still resolves and the
provenance and `superseded_by` links into it stay valid); its status becomes 'archived',
which takes it out of full-text search (the FTS index covers `memories_searchable`, see
schema m003) and out of every status-filtered list. The `archive` row records when and
why, the status (and status time) to give back on restore, and a JSON snapshot of the
row and its provenance for the dated JSONL.

Which memories to archive (scores, thresholds) is `lifecycle`'s; writing
`archive/YYYY-MM-DD.jsonl` is the engine's (from `records_since`). Nothing here deletes
a memory.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from memoracle.errors import InvalidInput, NotFound
from memoracle.storage_types import ArchivedMemory
from memoracle.store import rows as row_to
from memoracle.store.audit import Audit
from memoracle.store.db import SQLITE_ROWS, Database, db_time, in_chunks
from memoracle.store.memories import Memories
from memoracle.store.schema import ARCHIVE_REASONS
from memoracle.types import LIVE, Memory

REASONS = ARCHIVE_REASONS

_FIELDS = "memory_id, archived_at, reason, score, prior_status, record"


class Archive:
    def __init__(self, db: Database, memories: Memories, audit: Audit) -> None:
        self._db = db
        self._memories = memories
        self._audit = audit

    def move(
        self,
        items: Iterable[tuple[int, str, float | None]],
        *,
        now: datetime,
        actor: str,
    ) -> int:
        """Archive each (memory id, reason, score); return how many were archived.

        Runs in the caller's transaction (or its own). One 'archive' audit entry per
        memory. Already archived memories are skipped (not counted); an unknown id or
        reason raises and nothing of the call is kept."""
        wanted = builtins.list(items)
        for _, reason, _ in wanted:
            if reason not in REASONS:
                raise InvalidInput(
                    f"Unknown archive reason {reason!r}; expected one of: {', '.join(REASONS)}."
                )
        known = self._existing([i for i, _, _ in wanted])
        for memory_id, _, _ in wanted:
            if memory_id not in known:  # checked before any write: a joined caller's
                raise NotFound(  # transaction is left as it was
                    f"No memory 'm_{memory_id}' to archive. Try: memoracle list --status all"
                )
        moved = 0
        stamp = db_time(now)
        with self._db.transaction():
            for memory_id, reason, score in wanted:
                cursor = self._db.execute("SELECT * FROM memories WHERE id = ?", (memory_id,))
                row = cursor.fetchone()
                record = dict(zip([d[0] for d in cursor.description], row, strict=True))
                status = str(record["status"])
                if status == "archived":
                    continue
                record["provenance"] = [
                    {"episode_id": episode_id, "origin": origin, "added_at": added_at}
                    for episode_id, origin, added_at in self._db.execute(
                        "SELECT episode_id, origin, added_at FROM provenance"
                        " WHERE memory_id = ? ORDER BY rowid",
                        (memory_id,),
                    )
                ]
                self._db.execute(
                    "INSERT INTO archive (memory_id, archived_at, reason, score, prior_status,"
                    " prior_changed_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        memory_id,
                        stamp,
                        reason,
                        score,
                        status,
                        record["status_changed_at"],
                        json.dumps(record, ensure_ascii=False),
                    ),
                )
                # status_changed_at says when a memory stopped being live (View.as_of
                # reads it): a live memory stops now; a superseded or forgotten one
                # stopped earlier, and keeps that time.
                self._db.execute(
                    "UPDATE memories SET status = 'archived', status_changed_at = ? WHERE id = ?",
                    (stamp if status in LIVE else record["status_changed_at"], memory_id),
                )
                detail: dict[str, Any] = {"reason": reason, "from": status}
                if score is not None:
                    detail["score"] = score
                self._audit.append(
                    at=now, actor=actor, action="archive", memory_id=memory_id, detail=detail
                )
                moved += 1
        return moved

    def restore(self, memory_id: int, *, now: datetime, actor: str) -> Memory:
        """Bring an archived memory back exactly as it was: its prior status (a disputed
        memory comes back disputed) and status time, and its place in search."""
        with self._db.transaction():
            row = self._db.execute(
                "SELECT m.status, a.prior_status, a.prior_changed_at, a.archived_at, a.reason"
                " FROM memories m LEFT JOIN archive a ON a.memory_id = m.id WHERE m.id = ?",
                (memory_id,),
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"No memory 'm_{memory_id}' to restore. Try: memoracle list --status archived"
                )
            status, prior_status, prior_changed_at, archived_at, reason = row
            if status != "archived" or prior_status is None:
                raise InvalidInput(
                    f"Memory 'm_{memory_id}' is {status}, not archived: nothing to restore."
                )
            self._db.execute(
                "UPDATE memories SET status = ?, status_changed_at = ? WHERE id = ?",
                (prior_status, prior_changed_at, memory_id),
            )
            # The snapshot lives on in the audit trail and the dated JSONL; the archive
            # row only describes the memory's current stay in the cold tier.
            self._db.execute("DELETE FROM archive WHERE memory_id = ?", (memory_id,))
            self._audit.append(
                at=now,
                actor=actor,
                action="restore",
                memory_id=memory_id,
                detail={"to": prior_status, "archived_at": archived_at, "reason": reason},
            )
            memory = self._memories.get(memory_id)
        if memory is None:  # read above in this transaction; cannot vanish
            raise NotFound(f"No memory 'm_{memory_id}'.")
        return memory

    def get(self, memory_id: int) -> ArchivedMemory | None:
        row = self._db.execute(
            f"SELECT {_FIELDS} FROM archive WHERE memory_id = ?", (memory_id,)
        ).fetchone()
        return None if row is None else row_to.archived(SQLITE_ROWS, row)

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM archive").fetchone()[0])

    def in_order(
        self, *, after: ArchivedMemory | None = None, limit: int = 1000
    ) -> builtins.list[ArchivedMemory]:
        """Archived memories in the order they were archived (then by id), starting just
        after `after`: a page at a time, each page as cheap as the first."""
        params: tuple[Any, ...] = ()
        where = ""
        if after is not None:
            where = "WHERE (archived_at, memory_id) > (?, ?)"
            params = (db_time(after.archived_at), after.memory_id)
        rows = self._db.execute(
            f"SELECT {_FIELDS} FROM archive {where} ORDER BY archived_at, memory_id LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [row_to.archived(SQLITE_ROWS, r) for r in rows]

    def position(self, memory_id: int) -> int | None:
        """How many archived memories come up to and including `memory_id` in the order
        of `in_order`; None when it is not archived."""
        row = self._db.execute(
            "SELECT count(*) FROM archive a, archive m WHERE m.memory_id = ?"
            " AND (a.archived_at, a.memory_id) <= (m.archived_at, m.memory_id)",
            (memory_id,),
        ).fetchone()
        return int(row[0]) or None

    def records_since(self, when: datetime) -> builtins.list[ArchivedMemory]:
        """Memories archived at or after `when`, oldest first: what the dated JSONL
        (`archive/YYYY-MM-DD.jsonl`) is written from."""
        rows = self._db.execute(
            f"SELECT {_FIELDS} FROM archive WHERE archived_at >= ? ORDER BY archived_at, memory_id",
            (db_time(when),),
        ).fetchall()
        return [row_to.archived(SQLITE_ROWS, r) for r in rows]

    def _existing(self, ids: builtins.list[int]) -> set[int]:
        found: set[int] = set()
        for chunk, marks in in_chunks(ids):
            found.update(
                int(r[0])
                for r in self._db.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk)
            )
        return found
