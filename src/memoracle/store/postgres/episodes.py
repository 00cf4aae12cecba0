"""Episodes in PostgreSQL: the SQLite repository's methods (`store.episodes.Episodes`),
same signatures; turns keyed by the same `turn_key`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from memoracle.clock import as_utc
from memoracle.storage_types import View
from memoracle.store import rows as row_to
from memoracle.store.episodes import turn_key
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.lexical import Lexical, search_words
from memoracle.store.postgres.memories import PG_ROWS
from memoracle.store.postgres.visibility import scope_clause
from memoracle.text import content_hash, date_words
from memoracle.types import Episode, Scope, Turn

_FIELDS = (
    "id",
    "role",
    "text",
    "at",
    "created_at",
    "kind",
    "session_id",
    "turn_id",
    "speaker",
    "origin",
    "agent_id",
    "user_id",
    "chat_id",
    "visibility",
)
COLUMNS = ", ".join(_FIELDS)


def search_text(text: str, speaker: str | None, at: datetime | None) -> str:
    """What `tsv` is built from for a turn: its speaker, its day in words, its text (as
    `store.episodes.search_text`, unstemmed)."""
    head = [speaker or "", date_words(at) if at is not None else ""]
    return search_words(" ".join([*head, text]))


class PgEpisodes:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def insert(self, turn: Turn, *, at: datetime, now: datetime, scope: Scope) -> int | None:
        """Store a turn; None when the same turn (`turn_key`) is already stored."""
        row = self._db.execute(
            "INSERT INTO episodes (turn_key, session_id, turn_id, role, speaker, kind, text,"
            " search_text, at, created_at, origin, agent_id, user_id, chat_id, visibility,"
            " content_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
            " %s, %s) ON CONFLICT (turn_key) DO NOTHING RETURNING id",
            (
                turn_key(replace(turn, at=at), scope),
                turn.session_id,
                turn.turn_id,
                turn.role,
                turn.speaker,
                turn.kind,
                turn.text,
                search_text(turn.text, turn.speaker, as_utc(at)),
                at,
                now,
                turn.origin,
                scope.agent,
                scope.user,
                scope.chat,
                scope.visibility,
                content_hash(turn.text),
            ),
        ).fetchone()
        return None if row is None else int(row[0])

    def has_turn(self, turn: Turn, scope: Scope) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM episodes WHERE turn_key = %s", (turn_key(turn, scope),)
        ).fetchone()
        return row is not None

    def get_many(self, ids: Sequence[int]) -> list[Episode]:
        """Episodes by id, in the order asked; unknown ids are left out."""
        found = {
            int(r[0]): row_to.episode(PG_ROWS, r)
            for r in self._db.execute(
                f"SELECT {COLUMNS} FROM episodes WHERE id = ANY(%s)", (list(ids),)
            )
        }
        return [found[i] for i in ids if i in found]

    def get(self, episode_id: int) -> Episode | None:
        found = self.get_many([episode_id])
        return found[0] if found else None

    def without_memory(self, since: datetime, until: datetime, *, limit: int) -> list[Episode]:
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM episodes e WHERE e.at >= %s AND e.at < %s"
            " AND e.kind = 'message' AND e.role IN ('user', 'assistant')"
            " AND NOT EXISTS (SELECT 1 FROM provenance p WHERE p.episode_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM held h WHERE h.episode_id = e.id)"
            " ORDER BY e.at, e.id LIMIT %s",
            (since, until, limit),
        ).fetchall()
        return [row_to.episode(PG_ROWS, row) for row in rows]

    def taken_out_by_forget(self, episode_id: int) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM provenance p JOIN memories m ON m.id = p.memory_id"
            " WHERE m.status = 'forgotten' AND p.episode_id = %s LIMIT 1",
            (episode_id,),
        ).fetchone()
        return row is not None

    def pages(self, view: View, *, size: int = 2000) -> Iterator[list[Episode]]:
        where, params = scope_clause(view, "episodes")
        last = 0
        while rows := self._db.execute(
            f"SELECT {COLUMNS} FROM episodes WHERE id > %s AND {where} ORDER BY id LIMIT %s",
            (last, *params, size),
        ).fetchall():
            last = rows[-1][0]
            yield [row_to.episode(PG_ROWS, row) for row in rows]

    def with_a_word_of(self, text: str, scope: Scope, *, limit: int = 200) -> list[Episode]:
        """Message turns of exactly `scope`'s agent, user and chat holding a word of
        `text`, newest first."""
        found = Lexical.words(text, any=True).sql()
        if found is None:
            return []
        tsquery, params = found
        columns = ", ".join(f"e.{c}" for c in _FIELDS)
        rows = self._db.execute(
            f"SELECT {columns} FROM episodes e WHERE e.tsv @@ {tsquery} AND e.kind = 'message'"
            " AND e.agent_id IS NOT DISTINCT FROM %s AND e.user_id IS NOT DISTINCT FROM %s"
            " AND e.chat_id IS NOT DISTINCT FROM %s ORDER BY e.id DESC LIMIT %s",
            (*params, scope.agent, scope.user, scope.chat, limit),
        ).fetchall()
        return [row_to.episode(PG_ROWS, row) for row in rows]

    def count(self, view: View | None = None) -> int:
        where, params = scope_clause(view, "episodes") if view else ("TRUE", [])
        row = self._db.execute(f"SELECT count(*) FROM episodes WHERE {where}", params).fetchone()
        return int(row[0]) if row else 0

    def count_sessions(self, view: View | None = None) -> int:
        where, params = scope_clause(view, "episodes") if view else ("TRUE", [])
        row = self._db.execute(
            "SELECT count(DISTINCT session_id) FROM episodes"
            f" WHERE session_id IS NOT NULL AND {where}",
            params,
        ).fetchone()
        return int(row[0]) if row else 0

    def count_by_kind(self, view: View | None = None) -> dict[str, int]:
        where, params = scope_clause(view, "episodes") if view else ("TRUE", [])
        rows = self._db.execute(
            f"SELECT kind, count(*) FROM episodes WHERE {where} GROUP BY kind", params
        ).fetchall()
        return {str(kind): int(n) for kind, n in rows}
