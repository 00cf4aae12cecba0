"""Episodes: raw turns, verbatim, keyed so the same turn is never stored twice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoracle.store.db import Database, db_time, from_db_time
from memoracle.text import content_hash, for_index
from memoracle.types import Episode, Scope, Turn

_COLUMNS = (
    "id, role, text, at, created_at, kind, session_id, turn_id, speaker, origin,"
    " agent_id, user_id, chat_id, visibility"
)


def _episode(row: Any) -> Episode:
    (id_, role, text, at, created, kind, session, turn, speaker, origin, agent, user, chat, vis) = (
        row
    )
    return Episode(
        id=id_,
        role=role,
        text=text,
        at=from_db_time(at),
        created_at=from_db_time(created),
        kind=kind,
        session_id=session,
        turn_id=turn,
        speaker=speaker,
        origin=origin,
        scope=Scope(agent=agent, user=user, chat=chat, visibility=vis),
    )


def search_text(text: str, speaker: str | None) -> str:
    """What FTS indexes for an episode: its text, after who said it (as `insert` does)."""
    return for_index((f"{speaker} " if speaker else "") + text)


class Episodes:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(
        self, turn: Turn, *, key: str, at: datetime, now: datetime, scope: Scope
    ) -> int | None:
        """Store a turn; None when a turn with this key is already stored."""
        label = f"{turn.speaker} " if turn.speaker else ""
        row = self._db.execute(
            "INSERT INTO episodes (turn_key, session_id, turn_id, role, speaker, kind, text,"
            " search_text, at, created_at, origin, agent_id, user_id, chat_id, visibility,"
            " content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (turn_key) DO NOTHING RETURNING id",
            (
                key,
                turn.session_id,
                turn.turn_id,
                turn.role,
                turn.speaker,
                turn.kind,
                turn.text,
                for_index(label + turn.text),
                db_time(at),
                db_time(now),
                turn.origin,
                scope.agent,
                scope.user,
                scope.chat,
                scope.visibility,
                content_hash(turn.text),
            ),
        ).fetchone()
        return None if row is None else int(row[0])

    def has_key(self, key: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM episodes WHERE turn_key = ?", (key,)).fetchone()
            is not None
        )

    def get_many(self, ids: Sequence[int]) -> list[Episode]:
        """Episodes by id, in the order asked; unknown ids are left out."""
        found: dict[int, Episode] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(
                f"SELECT {_COLUMNS} FROM episodes WHERE id IN ({marks})", chunk
            ):
                episode = _episode(row)
                found[episode.id] = episode
        return [found[i] for i in ids if i in found]

    def get(self, episode_id: int) -> Episode | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)
        ).fetchone()
        return None if row is None else _episode(row)

    def count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM episodes").fetchone()[0])

    def count_sessions(self) -> int:
        row = self._db.execute(
            "SELECT count(DISTINCT session_id) FROM episodes WHERE session_id IS NOT NULL"
        ).fetchone()
        return int(row[0])

    def count_by_kind(self) -> dict[str, int]:
        rows = self._db.execute("SELECT kind, count(*) FROM episodes GROUP BY kind").fetchall()
        return {str(kind): int(n) for kind, n in rows}
