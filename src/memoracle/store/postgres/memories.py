"""Memories in PostgreSQL: the SQLite repository's methods (`store.memories.Memories`),
same signatures, same answers (tests/pg/test_pg_repositories.py runs both)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from memoracle.clock import as_utc
from memoracle.storage_types import View
from memoracle.store import rows as row_to
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.lexical import Lexical, search_words
from memoracle.store.postgres.visibility import memory_clause, scope_clause, unexpired
from memoracle.store.rows import Reading
from memoracle.types import CAP_EXEMPT_KINDS, LIVE, Memory, NewMemory, Scope

COLUMNS = (
    "id, kind, text, layer, status, created_at, observed_at, last_accessed_at, activation,"
    " importance, access_count, confidence, pinned, source, content_hash, agent_id, user_id,"
    " chat_id, visibility, subject, predicate, object, valid_from, valid_to, due_at,"
    " expires_at, superseded_by, lang, rule, details"
)
_dumps = functools.partial(json.dumps, ensure_ascii=False, default=str)


def jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=_dumps)


# What psycopg hands back: `timestamptz` as an aware datetime (put in UTC here), `jsonb`
# as a dict.
PG_ROWS = Reading(time=as_utc, document=dict)


def search_text(text: str, subject: str | None, obj: str | None) -> str:
    """What `tsv` is built from for a memory: its text plus who it is about."""
    return search_words(" ".join(part for part in (text, subject, obj) if part))


class PgMemories:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def insert(self, new: NewMemory, *, now: datetime) -> int:
        row = self._db.execute(
            "INSERT INTO memories (kind, text, search_text, subject, predicate, object, layer,"
            " status, created_at, observed_at, valid_from, valid_to, due_at, last_accessed_at,"
            " expires_at, activation, importance, access_count, confidence, pinned, source,"
            " lang, rule, details, agent_id, user_id, chat_id, visibility, content_hash)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, 'active', %s, %s, %s, %s, %s, %s, %s, %s,"
            " %s, 0, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                new.kind,
                new.text,
                search_text(new.text, new.subject, new.object),
                new.subject,
                new.predicate,
                new.object,
                new.layer,
                now,
                new.observed_at,
                new.valid_from,
                new.valid_to,
                new.due_at,
                now,
                new.expires_at,
                new.activation,
                new.importance,
                new.confidence,
                new.pinned,
                new.source,
                new.lang,
                new.rule,
                jsonb(new.details) if new.details else None,
                new.scope.agent,
                new.scope.user,
                new.scope.chat,
                new.scope.visibility,
                new.content_hash,
            ),
        ).fetchone()
        assert row is not None
        return int(row[0])

    def find_duplicate(
        self, content_hash: str, subject: str | None, scope: Scope, *, now: datetime | None = None
    ) -> int | None:
        """A live memory with the same normalised text, about the same subject, in the
        same scope; with `now`, not one that has expired by then."""
        params: list[Any] = [content_hash, subject, scope.agent, scope.user, scope.chat]
        fresh = unexpired("memories", now, params)
        row = self._db.execute(
            "SELECT id FROM memories WHERE content_hash = %s AND status IN ('active', 'disputed')"
            " AND subject IS NOT DISTINCT FROM %s AND agent_id IS NOT DISTINCT FROM %s"
            " AND user_id IS NOT DISTINCT FROM %s AND chat_id IS NOT DISTINCT FROM %s"
            f" AND {fresh} ORDER BY id LIMIT 1",
            params,
        ).fetchone()
        return None if row is None else int(row[0])

    def set_expiry(self, memory_id: int, expires_at: datetime | None) -> None:
        self._db.execute(
            "UPDATE memories SET expires_at = %s WHERE id = %s", (expires_at, memory_id)
        )

    def expired(self, now: datetime) -> list[Memory]:
        """Live memories whose time to live ran out by `now`, oldest expiry first."""
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM memories WHERE expires_at IS NOT NULL AND expires_at <= %s"
            " AND status IN ('active', 'disputed') ORDER BY expires_at, id",
            (now,),
        ).fetchall()
        return self._with_provenance(rows)

    def bump(self, memory_id: int, *, now: datetime, boost: float) -> None:
        self._db.execute(
            "UPDATE memories SET access_count = access_count + 1,"
            " activation = least(1.0, activation + %s), last_accessed_at = %s WHERE id = %s",
            (boost, now, memory_id),
        )

    def touch(self, ids: Sequence[int], *, now: datetime, boost: float) -> None:
        self._db.executemany(
            "UPDATE memories SET activation = least(1.0, activation + %s),"
            " last_accessed_at = %s WHERE id = %s",
            [(boost, now, memory_id) for memory_id in ids],
        )

    def recalled(self, activations: Mapping[int, float], *, now: datetime) -> None:
        self._db.executemany(
            "UPDATE memories SET activation = %s, access_count = access_count + 1,"
            " last_accessed_at = %s WHERE id = %s",
            [(value, now, memory_id) for memory_id, value in activations.items()],
        )

    def set_status(self, memory_id: int, status: str, *, now: datetime) -> None:
        self._db.execute(
            "UPDATE memories SET status = %s, status_changed_at = %s WHERE id = %s",
            (status, now, memory_id),
        )

    def set_slot(
        self,
        memory_id: int,
        subject: str,
        attribute: str,
        value: str,
        *,
        hedged: bool,
        negated: bool,
    ) -> None:
        self._db.execute(
            "INSERT INTO slots (memory_id, subject, attribute, value, hedged, negated, live)"
            " SELECT %s, %s, %s, %s, %s, %s, status IN ('active', 'disputed') FROM memories"
            " WHERE id = %s ON CONFLICT (memory_id, subject, attribute) DO UPDATE SET"
            " value = EXCLUDED.value, hedged = EXCLUDED.hedged, negated = EXCLUDED.negated,"
            " live = EXCLUDED.live",
            (memory_id, subject, attribute, value, hedged, negated, memory_id),
        )

    def in_slot(
        self,
        subject: str,
        attribute: str,
        scope: Scope,
        *,
        exclude: int,
        value_prefix: str | None = None,
    ) -> list[tuple[int, str, bool, bool]]:
        """(id, value, hedged, negated) of the live memories of the same owner in the
        slot, oldest first, `exclude` left out; with `value_prefix`, only values that
        begin with it or hold a comma."""
        params: list[Any] = [subject, attribute, exclude, scope.agent, scope.user, scope.chat]
        which = ""
        if value_prefix is not None:
            which = " AND (starts_with(s.value, %s) OR strpos(s.value, ',') > 0)"
            params.append(value_prefix)
        rows = self._db.execute(
            "SELECT s.memory_id, s.value, s.hedged, s.negated FROM slots s"
            " JOIN memories m ON m.id = s.memory_id WHERE s.subject = %s AND s.attribute = %s"
            " AND s.live AND m.id != %s AND m.agent_id IS NOT DISTINCT FROM %s"
            " AND m.user_id IS NOT DISTINCT FROM %s AND m.chat_id IS NOT DISTINCT FROM %s"
            f"{which} ORDER BY m.observed_at, m.id",
            params,
        ).fetchall()
        return [(int(i), str(v), bool(h), bool(n)) for i, v, h, n in rows]

    def seen_in_slot(self, subject: str, attribute: str, view: View, *, limit: int) -> list[int]:
        clause, params = scope_clause(view, "m")
        rows = self._db.execute(
            "SELECT m.id FROM slots s JOIN memories m ON m.id = s.memory_id"
            f" WHERE s.subject = %s AND s.attribute = %s AND s.live AND {clause}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT %s",
            (subject, attribute, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def slot_values(self, memory_ids: Sequence[int]) -> dict[int, dict[tuple[str, str], str]]:
        found: dict[int, dict[tuple[str, str], str]] = {i: {} for i in memory_ids}
        if memory_ids:
            for memory_id, subject, attribute, value in self._db.execute(
                "SELECT memory_id, subject, attribute, value FROM slots WHERE memory_id = ANY(%s)",
                (list(memory_ids),),
            ):
                found[int(memory_id)][(str(subject), str(attribute))] = str(value)
        return found

    def without_slot(self, *, limit: int) -> list[int]:
        """Ids of live memories whose slot was never looked for, oldest first."""
        rows = self._db.execute(
            "SELECT m.id FROM memories m WHERE m.status IN ('active', 'disputed')"
            " AND NOT EXISTS (SELECT 1 FROM slots s WHERE s.memory_id = m.id)"
            " ORDER BY m.id LIMIT %s",
            (limit,),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def supersede(self, memory_id: int, by: int, *, now: datetime) -> None:
        """`memory_id` no longer holds: `by` replaced it; its validity ends where `by`'s
        begins, or when `by` was said if earlier, unless it had an earlier end."""
        self._db.execute(
            "UPDATE memories SET status = 'superseded', superseded_by = %s,"
            " status_changed_at = %s, valid_to = (SELECT least(coalesce(memories.valid_to, e.at),"
            " e.at) FROM (SELECT least(coalesce(n.valid_from, n.observed_at), n.observed_at)"
            " AS at FROM memories n WHERE n.id = %s) e) WHERE id = %s",
            (by, now, by, memory_id),
        )

    def replaced_by(self, ids: Sequence[int]) -> list[int]:
        rows = self._db.execute(
            "SELECT id FROM memories WHERE status = 'superseded' AND superseded_by = ANY(%s)"
            " ORDER BY id",
            (list(ids),),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def reinstate(
        self, memory_id: int, status: str, *, valid_to: datetime | None, now: datetime
    ) -> None:
        self._db.execute(
            "UPDATE memories SET status = %s, superseded_by = NULL, valid_to = %s,"
            " status_changed_at = %s WHERE id = %s",
            (status, valid_to, now, memory_id),
        )

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        self._db.execute("UPDATE memories SET pinned = %s WHERE id = %s", (pinned, memory_id))

    def confirm(self, memory_id: int, *, step: float) -> None:
        self._db.execute(
            "UPDATE memories SET confidence = least(1.0, confidence + %s) WHERE id = %s",
            (step, memory_id),
        )

    def set_details(self, memory_id: int, details: dict[str, Any]) -> None:
        self._db.execute(
            "UPDATE memories SET details = %s WHERE id = %s", (jsonb(details), memory_id)
        )

    def add_provenance(
        self,
        memory_id: int,
        *,
        now: datetime,
        episode_id: int | None = None,
        origin: str | None = None,
    ) -> None:
        self._db.execute(
            "INSERT INTO provenance (memory_id, episode_id, origin, added_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (memory_id, episode_id, origin, now),
        )

    def has_origin(self, memory_id: int, origin: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM provenance WHERE memory_id = %s AND origin = %s", (memory_id, origin)
        ).fetchone()
        return row is not None

    def get(self, memory_id: int) -> Memory | None:
        found = self.get_many([memory_id])
        return found[0] if found else None

    def replaced_turns(self, episode_ids: Sequence[int]) -> dict[int, datetime]:
        """Of `episode_ids`, the turns whose every memory (one at least) was replaced by
        a newer one, each with when the last of them stopped being true."""
        rows = self._db.execute(
            "SELECT p.episode_id,"
            " max(coalesce(m.valid_to, n.valid_from, n.observed_at, m.status_changed_at))"
            " FROM provenance p JOIN memories m ON m.id = p.memory_id"
            " LEFT JOIN memories n ON n.id = m.superseded_by"
            " WHERE p.episode_id = ANY(%s) GROUP BY p.episode_id"
            " HAVING bool_and(m.superseded_by IS NOT NULL AND m.status != 'active')",
            (list(episode_ids),),
        ).fetchall()
        return {int(e): as_utc(t) for e, t in rows if t is not None}

    def get_many(self, ids: Sequence[int]) -> list[Memory]:
        """Memories by id, in the order asked; unknown ids are left out."""
        rows = {
            int(r[0]): r
            for r in self._db.execute(
                f"SELECT {COLUMNS} FROM memories WHERE id = ANY(%s)", (list(ids),)
            )
        }
        return self._with_provenance([rows[i] for i in dict.fromkeys(ids) if i in rows])

    def owners(self, ids: Sequence[int]) -> list[tuple[int, str, str, str | None, Scope]]:
        rows = {
            int(r[0]): r
            for r in self._db.execute(
                "SELECT id, kind, text, subject, agent_id, user_id, chat_id, visibility"
                " FROM memories WHERE id = ANY(%s)",
                (list(ids),),
            )
        }
        return [
            (i, str(r[1]), str(r[2]), r[3], Scope(r[4], r[5], r[6], r[7]))
            for i in dict.fromkeys(ids)
            if (r := rows.get(i)) is not None
        ]

    def of_subject(
        self, subject: str | None, kind: str, view: View, *, limit: int
    ) -> list[tuple[int, str, str, Scope]]:
        clause, params = memory_clause(view, "m")
        rows = self._db.execute(
            "SELECT m.id, m.text, m.content_hash, m.agent_id, m.user_id, m.chat_id,"
            " m.visibility FROM memories m WHERE m.subject IS NOT DISTINCT FROM %s"
            f" AND m.kind = %s AND {clause} ORDER BY m.id DESC LIMIT %s",
            (subject, kind, *params, limit),
        ).fetchall()
        return [(int(r[0]), str(r[1]), str(r[2]), Scope(r[3], r[4], r[5], r[6])) for r in rows]

    def select(
        self,
        *,
        kind: str | None = None,
        status: str | None = "active",
        limit: int = 50,
        offset: int = 0,
        view: View | None = None,
    ) -> list[Memory]:
        clauses: list[str] = ["TRUE"]
        params: list[Any] = []
        if view is not None:
            clause, params = scope_clause(view, "memories")
            clauses.append(clause)
        if kind:
            clauses.append("kind = %s")
            params.append(kind)
        if status:
            clauses.append("status = %s")
            params.append(status)
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM memories WHERE {' AND '.join(clauses)}"
            " ORDER BY observed_at DESC, id DESC LIMIT %s OFFSET %s",
            (*params, limit, offset),
        ).fetchall()
        return self._with_provenance(rows)

    def max_id(self) -> int:
        row = self._db.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()
        return int(row[0]) if row else 0

    def id_before_newest(self, count: int, statuses: Sequence[str]) -> int:
        """The id just below the `count` newest memories with one of `statuses` (0 when
        there are no more than `count`)."""
        row = self._db.execute(
            "SELECT id FROM memories WHERE status = ANY(%s) ORDER BY id DESC LIMIT 1 OFFSET %s",
            (list(statuses), count),
        ).fetchone()
        return 0 if row is None else int(row[0])

    def count_after(self, after: int, statuses: Sequence[str]) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM memories WHERE id > %s AND status = ANY(%s)",
            (after, list(statuses)),
        ).fetchone()
        return int(row[0]) if row else 0

    def created_since(self, since: datetime, statuses: Sequence[str]) -> list[Memory]:
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM memories WHERE created_at >= %s AND status = ANY(%s)"
            " ORDER BY created_at, id",
            (since, list(statuses)),
        ).fetchall()
        return self._with_provenance(rows)

    def pages(
        self, status: str, *, after: int = 0, size: int = 2000, view: View | None = None
    ) -> Iterator[list[Memory]]:
        """Every memory with `status` (id above `after`; with `view`, that its requester
        may see), a page at a time in id order, each page starting where the last ended."""
        visible, more = scope_clause(view, "memories") if view else ("TRUE", [])
        last = after
        while rows := self._db.execute(
            f"SELECT {COLUMNS} FROM memories WHERE id > %s AND status = %s AND {visible}"
            " ORDER BY id LIMIT %s",
            (last, status, *more, size),
        ).fetchall():
            last = rows[-1][0]
            yield self._with_provenance(rows)

    def match(
        self,
        query: str,
        *,
        statuses: Iterable[str] = LIVE,
        scope: Scope | None = None,
        subject: str | None = None,
        view: View | None = None,
        limit: int = 20,
    ) -> list[int]:
        """Ids of memories holding every word of `query`, best `ts_rank_cd` first; with
        `scope` only that owner's, with `view` only what its requester may see, with
        `subject` only those about it."""
        found = Lexical.words(query).sql()
        if found is None:
            return []
        tsquery, params = found
        # Archived memories are out of full-text search, as out of SQLite's FTS index;
        # the condition also lets the planner use the GIN index (partial on it).
        clauses = ["m.tsv @@ q.q", "m.status != 'archived'", "m.status = ANY(%s)"]
        params.append(list(statuses))
        if view is not None:
            visible, more = scope_clause(view, "m")
            clauses.append(visible)
            params += more
        if scope is not None:
            clauses.append(
                "m.agent_id IS NOT DISTINCT FROM %s AND m.user_id IS NOT DISTINCT FROM %s"
                " AND m.chat_id IS NOT DISTINCT FROM %s"
            )
            params += [scope.agent, scope.user, scope.chat]
        if subject is not None:
            clauses.append("m.subject IS NOT DISTINCT FROM %s")
            params.append(subject)
        rows = self._db.execute(
            f"SELECT m.id FROM memories m, (SELECT {tsquery} AS q) q"
            f" WHERE {' AND '.join(clauses)} ORDER BY ts_rank_cd(m.tsv, q.q, 1) DESC, m.id"
            " LIMIT %s",
            (*params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def count_capped(self) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM memories WHERE status = 'active' AND NOT pinned"
            " AND kind != ALL(%s)",
            (sorted(CAP_EXEMPT_KINDS),),
        ).fetchone()
        return int(row[0]) if row else 0

    def counts(self, view: View | None = None) -> dict[tuple[str, str], int]:
        where, params = scope_clause(view, "memories") if view else ("TRUE", [])
        rows = self._db.execute(
            f"SELECT status, kind, count(*) FROM memories WHERE {where} GROUP BY status, kind",
            params,
        ).fetchall()
        return {(str(s), str(k)): int(n) for s, k, n in rows}

    def _with_provenance(self, rows: Sequence[Any]) -> list[Memory]:
        if not rows:
            return []
        ids = [int(r[0]) for r in rows]
        episodes: dict[int, list[int]] = {i: [] for i in ids}
        origins: dict[int, list[str]] = {i: [] for i in ids}
        for memory_id, episode_id, origin in self._db.execute(
            "SELECT memory_id, episode_id, origin FROM provenance WHERE memory_id = ANY(%s)"
            " ORDER BY id",
            (ids,),
        ):
            if episode_id is not None:
                episodes[int(memory_id)].append(int(episode_id))
            if origin is not None:
                origins[int(memory_id)].append(origin)
        return [
            row_to.memory(PG_ROWS, r, tuple(episodes[int(r[0])]), tuple(origins[int(r[0])]))
            for r in rows
        ]
