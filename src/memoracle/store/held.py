"""Writes held back by the write audit: texts that look like prompt injection, kept out
of memory (and a captured turn's episode out of search) until a person decides.

A held write keeps what it takes to store it later as it would have been stored: the
text, its kind when one was given, its source, scope, time, and the episode or note it
came from. Deciding is the engine's (`Engine.confirm_held`, `Engine.reject_held`);
whether a text looks like injection is `capture.injection`'s.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import datetime

from memoracle.errors import InvalidInput, NotFound
from memoracle.storage_types import HeldWrite
from memoracle.store import rows as row_to
from memoracle.store.db import SQLITE_ROWS, Database, db_time
from memoracle.types import Scope

DECISIONS = ("confirm", "reject")
_FIELDS = (
    "id, held_at, actor, level, reasons, text, kind, source, observed_at, agent_id, user_id,"
    " chat_id, visibility, episode_id, origin, decision, decided_at, decided_by, expires_at"
)


class Held:
    def __init__(self, db: Database) -> None:
        self._db = db

    def add(
        self,
        *,
        now: datetime,
        actor: str,
        level: str,
        reasons: Sequence[str],
        text: str,
        kind: str | None,
        source: str,
        observed_at: datetime,
        scope: Scope,
        episode_id: int | None = None,
        origin: str | None = None,
        expires_at: datetime | None = None,
    ) -> int:
        """Hold a write; returns its id."""
        cursor = self._db.execute(
            "INSERT INTO held (held_at, actor, level, reasons, text, kind, source, observed_at,"
            " agent_id, user_id, chat_id, visibility, episode_id, origin, expires_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                db_time(now), actor, level, json.dumps(list(reasons)), text, kind, source,
                db_time(observed_at), scope.agent, scope.user, scope.chat, scope.visibility,
                episode_id, origin, db_time(expires_at),
            ),
        )  # fmt: skip
        return int(cursor.lastrowid or 0)

    def get(self, held_id: int) -> HeldWrite:
        row = self._db.execute(f"SELECT {_FIELDS} FROM held WHERE id = ?", (held_id,)).fetchone()
        if row is None:
            raise NotFound(f"No held write h_{held_id}. See: memoracle audit")
        return row_to.held(SQLITE_ROWS, row)

    def same(self, text: str, source: str, scope: Scope) -> HeldWrite | None:
        """A write of this text from this source and scope already held and not confirmed
        (waiting, or rejected): a line held again is the same write."""
        row = self._db.execute(
            f"SELECT {_FIELDS} FROM held WHERE text = ? AND source = ? AND visibility = ?"
            " AND agent_id IS ? AND user_id IS ? AND chat_id IS ?"
            " AND (decision IS NULL OR decision = 'reject') ORDER BY id DESC LIMIT 1",
            (text, source, scope.visibility, scope.agent, scope.user, scope.chat),
        ).fetchone()
        return None if row is None else row_to.held(SQLITE_ROWS, row)

    def same_turn(self, text: str, scope: Scope) -> HeldWrite | None:
        """A captured turn saying `text` in `scope` already held and not confirmed, from
        any door (capture, checkpoint, ingest): a turn saying it again is held by it."""
        row = self._db.execute(
            f"SELECT {_FIELDS} FROM held WHERE episode_id IS NOT NULL AND text = ?"
            " AND visibility = ? AND agent_id IS ? AND user_id IS ? AND chat_id IS ?"
            " AND (decision IS NULL OR decision = 'reject') ORDER BY id LIMIT 1",
            (text, scope.visibility, scope.agent, scope.user, scope.chat),
        ).fetchone()
        return None if row is None else row_to.held(SQLITE_ROWS, row)

    def list(
        self, *, since: datetime | None = None, waiting: bool = False, limit: int = 1000
    ) -> builtins.list[HeldWrite]:
        """Held writes, newest first: those held at or after `since`; only those still
        waiting for a decision with `waiting`."""
        clauses, params = ["1"], []
        if since is not None:
            clauses.append("held_at >= ?")
            params.append(db_time(since))
        if waiting:
            clauses.append("decision IS NULL")
        rows = self._db.execute(
            f"SELECT {_FIELDS} FROM held WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [row_to.held(SQLITE_ROWS, r) for r in rows]

    def decide(self, held_id: int, decision: str, *, now: datetime, actor: str) -> None:
        if decision not in DECISIONS:
            raise InvalidInput(f"A decision is confirm or reject, not {decision!r}.")
        self._db.execute(
            "UPDATE held SET decision = ?, decided_at = ?, decided_by = ? WHERE id = ?",
            (decision, db_time(now), actor, held_id),
        )
