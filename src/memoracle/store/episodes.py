"""Episodes: raw turns, verbatim, keyed so the same turn is never stored twice."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from memoracle.storage_types import View, every_word
from memoracle.store import rows as row_to
from memoracle.store.db import SQLITE_ROWS, Database, db_time, in_chunks
from memoracle.store.fts import match_expression
from memoracle.store.index import scope_clause
from memoracle.text import content_hash, date_words, search_form
from memoracle.types import Episode, Scope, Turn

_COLUMNS = (
    "id, role, text, at, created_at, kind, session_id, turn_id, speaker, origin,"
    " agent_id, user_id, chat_id, visibility"
)


def search_text(text: str, speaker: str | None, at: datetime | None) -> str:
    """What FTS indexes for an episode (stemmed, `search_form`): who said it, the day it
    was said in words ("7 May 2023", UTC) and its text — a question names the speaker
    and the date as often as the words said (docs/retrieval.md)."""
    head = [speaker or "", date_words(at) if at is not None else ""]
    return search_form(" ".join([*head, text]))


def turn_key(turn: Turn, scope: Scope) -> str:
    """Identity of a stored turn: whose it is (agent, user, chat), then (session, role,
    speaker, turn id) when a turn id is given, else its time and text. Two people whose
    transports number their messages alike keep two turns; readers give every turn of
    a file an id (the entry id, or the line), so reading a file again adds nothing; a
    turn captured with neither id nor time is stamped now, and saying the same thing
    later is a new utterance."""
    parts = [
        scope.agent or "",
        scope.user or "",
        scope.chat or "",
        turn.session_id or "",
        turn.role,
        turn.speaker or "",
    ]
    if turn.turn_id:
        parts.append(turn.turn_id)
    else:
        parts += [db_time(turn.at) or "", turn.text]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


class Episodes:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(self, turn: Turn, *, at: datetime, now: datetime, scope: Scope) -> int | None:
        """Store a turn; None when the same turn (`turn_key`) is already stored."""
        row = self._db.execute(
            "INSERT INTO episodes (turn_key, session_id, turn_id, role, speaker, kind, text,"
            " search_text, at, created_at, origin, agent_id, user_id, chat_id, visibility,"
            " content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (turn_key) DO NOTHING RETURNING id",
            (
                turn_key(replace(turn, at=at), scope),
                turn.session_id,
                turn.turn_id,
                turn.role,
                turn.speaker,
                turn.kind,
                turn.text,
                search_text(turn.text, turn.speaker, at),
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

    def has_turn(self, turn: Turn, scope: Scope) -> bool:
        """Whether this turn (`turn_key`) is stored already."""
        key = turn_key(turn, scope)
        return (
            self._db.execute("SELECT 1 FROM episodes WHERE turn_key = ?", (key,)).fetchone()
            is not None
        )

    def get_many(self, ids: Sequence[int]) -> list[Episode]:
        """Episodes by id, in the order asked; unknown ids are left out."""
        found: dict[int, Episode] = {}
        for chunk, marks in in_chunks(ids):
            for row in self._db.execute(
                f"SELECT {_COLUMNS} FROM episodes WHERE id IN ({marks})", chunk
            ):
                episode = row_to.episode(SQLITE_ROWS, row)
                found[episode.id] = episode
        return [found[i] for i in ids if i in found]

    def without_memory(self, since: datetime, until: datetime, *, limit: int) -> list[Episode]:
        """Messages said in [since, until) that no memory came from and the write audit
        did not hold back, oldest first (what the rules found nothing in)."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM episodes e WHERE e.at >= ? AND e.at < ?"
            " AND e.kind = 'message' AND e.role IN ('user', 'assistant')"
            " AND NOT EXISTS (SELECT 1 FROM provenance p WHERE p.episode_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM held h WHERE h.episode_id = e.id)"
            " ORDER BY e.at, e.id LIMIT ?",
            (db_time(since), db_time(until), limit),
        ).fetchall()
        return [row_to.episode(SQLITE_ROWS, row) for row in rows]

    def taken_out_by_forget(self, episode_id: int) -> bool:
        """Whether a forgotten memory came from the turn (or it only repeated one, or said
        the forget in its words): it is out of search and recall with it, as `View` says."""
        row = self._db.execute(
            "SELECT 1 FROM provenance p JOIN memories m ON m.id = p.memory_id"
            " WHERE m.status = 'forgotten' AND p.episode_id = ? LIMIT 1",
            (episode_id,),
        ).fetchone()
        return row is not None

    def get(self, episode_id: int) -> Episode | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)
        ).fetchone()
        return None if row is None else row_to.episode(SQLITE_ROWS, row)

    def pages(self, view: View, *, size: int = 2000) -> Iterator[list[Episode]]:
        """Every turn `view`'s requester may see, a page at a time in id order (each page
        starts where the last ended)."""
        where, params = scope_clause(view, "episodes")
        last = 0
        while rows := self._db.execute(
            f"SELECT {_COLUMNS} FROM episodes WHERE id > ? AND {where} ORDER BY id LIMIT ?",
            (last, *params, size),
        ).fetchall():
            last = rows[-1][0]
            yield [row_to.episode(SQLITE_ROWS, row) for row in rows]

    def with_a_word_of(self, text: str, scope: Scope, *, limit: int = 200) -> list[Episode]:
        """Message turns of exactly `scope`'s agent, user and chat holding a word of
        `text` (as search stems it), newest first: where a forgotten memory's repeats are
        looked for."""
        words = every_word(text, any=True)
        if words is None:
            return []
        rows = self._db.execute(
            f"SELECT {', '.join('e.' + c.strip() for c in _COLUMNS.split(','))}"
            " FROM episodes_fts f JOIN episodes e ON e.id = f.rowid"
            " WHERE episodes_fts MATCH ? AND e.kind = 'message'"
            " AND e.agent_id IS ? AND e.user_id IS ? AND e.chat_id IS ?"
            " ORDER BY e.id DESC LIMIT ?",
            (match_expression(words), scope.agent, scope.user, scope.chat, limit),
        ).fetchall()
        return [row_to.episode(SQLITE_ROWS, row) for row in rows]

    def count(self, view: View | None = None) -> int:
        """How many turns are stored (that `view`'s requester may see)."""
        where, params = scope_clause(view, "episodes") if view else ("1", [])
        return int(
            self._db.execute(f"SELECT count(*) FROM episodes WHERE {where}", params).fetchone()[0]
        )

    def count_sessions(self, view: View | None = None) -> int:
        where, params = scope_clause(view, "episodes") if view else ("1", [])
        row = self._db.execute(
            "SELECT count(DISTINCT session_id) FROM episodes"
            f" WHERE session_id IS NOT NULL AND {where}",
            params,
        ).fetchone()
        return int(row[0])

    def count_by_kind(self, view: View | None = None) -> dict[str, int]:
        where, params = scope_clause(view, "episodes") if view else ("1", [])
        rows = self._db.execute(
            f"SELECT kind, count(*) FROM episodes WHERE {where} GROUP BY kind", params
        ).fetchall()
        return {str(kind): int(n) for kind, n in rows}
