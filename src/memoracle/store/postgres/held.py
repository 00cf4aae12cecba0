"""Writes held back by the write audit, in PostgreSQL: `store.held.Held`'s methods, same
signatures and the same `HeldWrite` values."""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from datetime import datetime

from memoracle.errors import InvalidInput, NotFound
from memoracle.storage_types import HeldWrite
from memoracle.store import rows as row_to
from memoracle.store.held import DECISIONS
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.memories import PG_ROWS
from memoracle.types import Scope

_FIELDS = (
    "id, held_at, actor, level, reasons, text, kind, source, observed_at, agent_id, user_id,"
    " chat_id, visibility, episode_id, origin, decision, decided_at, decided_by, expires_at"
)
_SAME_SCOPE = (
    "visibility = %s AND agent_id IS NOT DISTINCT FROM %s AND user_id IS NOT DISTINCT FROM %s"
    " AND chat_id IS NOT DISTINCT FROM %s AND (decision IS NULL OR decision = 'reject')"
)


def _scope(scope: Scope) -> tuple[str, str | None, str | None, str | None]:
    return scope.visibility, scope.agent, scope.user, scope.chat


class PgHeld:
    def __init__(self, db: PgDatabase) -> None:
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
        row = self._db.execute(
            "INSERT INTO held (held_at, actor, level, reasons, text, kind, source, observed_at,"
            " agent_id, user_id, chat_id, visibility, episode_id, origin, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                now, actor, level, json.dumps(list(reasons)), text, kind, source, observed_at,
                scope.agent, scope.user, scope.chat, scope.visibility, episode_id, origin,
                expires_at,
            ),
        ).fetchone()  # fmt: skip
        assert row is not None
        return int(row[0])

    def get(self, held_id: int) -> HeldWrite:
        row = self._db.execute(f"SELECT {_FIELDS} FROM held WHERE id = %s", (held_id,)).fetchone()
        if row is None:
            raise NotFound(f"No held write h_{held_id}. See: memoracle audit")
        return row_to.held(PG_ROWS, row)

    def same(self, text: str, source: str, scope: Scope) -> HeldWrite | None:
        """A write of this text from this source and scope already held, not confirmed."""
        row = self._db.execute(
            f"SELECT {_FIELDS} FROM held WHERE text = %s AND source = %s AND {_SAME_SCOPE}"
            " ORDER BY id DESC LIMIT 1",
            (text, source, *_scope(scope)),
        ).fetchone()
        return None if row is None else row_to.held(PG_ROWS, row)

    def same_turn(self, text: str, scope: Scope) -> HeldWrite | None:
        """A captured turn saying `text` in `scope` already held and not confirmed."""
        row = self._db.execute(
            f"SELECT {_FIELDS} FROM held WHERE episode_id IS NOT NULL AND text = %s"
            f" AND {_SAME_SCOPE} ORDER BY id LIMIT 1",
            (text, *_scope(scope)),
        ).fetchone()
        return None if row is None else row_to.held(PG_ROWS, row)

    def list(
        self, *, since: datetime | None = None, waiting: bool = False, limit: int = 1000
    ) -> builtins.list[HeldWrite]:
        """Held writes, newest first (held at or after `since`; still waiting)."""
        rows = self._db.execute(
            f"SELECT {_FIELDS} FROM held WHERE (%s::timestamptz IS NULL OR held_at >= %s)"
            " AND (NOT %s OR decision IS NULL) ORDER BY id DESC LIMIT %s",
            (since, since, waiting, limit),
        ).fetchall()
        return [row_to.held(PG_ROWS, r) for r in rows]

    def decide(self, held_id: int, decision: str, *, now: datetime, actor: str) -> None:
        if decision not in DECISIONS:
            raise InvalidInput(f"A decision is confirm or reject, not {decision!r}.")
        self._db.execute(
            "UPDATE held SET decision = %s, decided_at = %s, decided_by = %s WHERE id = %s",
            (decision, now, actor, held_id),
        )
