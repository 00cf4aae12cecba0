"""The SQL of the web page (`memoracle ui`): memories filtered and paged for a person to
browse, what a memory superseded, and the pinned flag set by hand.

Every read takes the requester's `View`, so a row they may not see is never read
(docs/scopes.md); the page asks one more row than it shows to know whether a next page
exists, instead of counting the whole store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoracle.store.db import Database, db_time
from memoracle.store.index import View
from memoracle.store.memories import match_expression


@dataclass(frozen=True)
class Filter:
    """What the memories page asks for; None or "" leaves a field out."""

    kind: str | None = None
    status: str | None = "active"
    subject: str | None = None
    since: datetime | None = None  # observed at or after
    until: datetime | None = None  # observed before
    text: str | None = None  # every word, as FTS matches it


class Browse:
    def __init__(self, db: Database) -> None:
        self._db = db

    def page(self, view: View, wanted: Filter, *, limit: int, offset: int) -> list[int]:
        """Ids of the memories `view`'s requester may see that fit `wanted`, newest
        first (by the time they were said), `limit` of them from `offset`."""
        visible, params = view.scope_clause("m")
        clauses = [visible]
        source = "memories m"
        if wanted.text and (expression := match_expression(wanted.text)) is not None:
            source = "memories_fts f JOIN memories m ON m.id = f.rowid"
            clauses.append("memories_fts MATCH ?")
            params.append(expression)
        for column, value in (
            ("m.kind = ?", wanted.kind),
            ("m.status = ?", wanted.status),
            ("m.subject = ? COLLATE NOCASE", wanted.subject),
            ("m.observed_at >= ?", db_time(wanted.since)),
            ("m.observed_at < ?", db_time(wanted.until)),
        ):
            if value:
                clauses.append(column)
                params.append(value)
        rows = self._db.execute(
            f"SELECT m.id FROM {source} WHERE {' AND '.join(clauses)}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def superseded(self, memory_id: int, *, limit: int = 50) -> list[int]:
        """Ids of the memories `memory_id` superseded (their `superseded_by`), newest first."""
        rows = self._db.execute(
            "SELECT id FROM memories WHERE superseded_by = ? ORDER BY id DESC LIMIT ?",
            (memory_id, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        """Pin a memory (kept through the archive's cap, like a guardrail) or unpin it."""
        self._db.execute("UPDATE memories SET pinned = ? WHERE id = ?", (int(pinned), memory_id))

    def subjects(self, view: View, *, limit: int = 40) -> list[tuple[str, int]]:
        """The subjects most live memories `view`'s requester sees are about, with counts."""
        visible, params = view.scope_clause("m")
        rows: list[Any] = self._db.execute(
            "SELECT m.subject, count(*) AS n FROM memories m INDEXED BY memories_subject"
            f" WHERE m.subject IS NOT NULL AND m.status = 'active' AND {visible}"
            " GROUP BY m.subject ORDER BY n DESC, m.subject LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [(str(r[0]), int(r[1])) for r in rows]
