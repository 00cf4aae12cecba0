"""Memories: rows <-> `Memory`, provenance links, exact-duplicate lookup, FTS matching."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import View, every_word
from memoracle.store import rows as row_to
from memoracle.store.db import SQLITE_ROWS, Database, db_time, from_db_time, in_chunks
from memoracle.store.fts import match_expression
from memoracle.store.index import memory_clause, scope_clause, unexpired
from memoracle.text import search_form
from memoracle.types import CAP_EXEMPT_KINDS, LIVE, Memory, NewMemory, Scope

_COLUMNS = (
    "id, kind, text, layer, status, created_at, observed_at, last_accessed_at, activation,"
    " importance, access_count, confidence, pinned, source, content_hash, agent_id, user_id,"
    " chat_id, visibility, subject, predicate, object, valid_from, valid_to, due_at,"
    " expires_at, superseded_by, lang, rule, details"
)


def search_text(text: str, subject: str | None, obj: str | None) -> str:
    """What FTS indexes for a memory: its text plus who it is about."""
    return search_form(" ".join(part for part in (text, subject, obj) if part))


class Memories:
    def __init__(self, db: Database) -> None:
        self._db = db

    def insert(self, new: NewMemory, *, now: datetime) -> int:
        row = self._db.execute(
            "INSERT INTO memories (kind, text, search_text, subject, predicate, object, layer,"
            " status, created_at, observed_at, valid_from, valid_to, due_at, last_accessed_at,"
            " expires_at, activation, importance, access_count, confidence, pinned, source,"
            " lang, rule, details, agent_id, user_id, chat_id, visibility, content_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?,"
            " ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                new.kind,
                new.text,
                search_text(new.text, new.subject, new.object),
                new.subject,
                new.predicate,
                new.object,
                new.layer,
                db_time(now),
                db_time(new.observed_at),
                db_time(new.valid_from),
                db_time(new.valid_to),
                db_time(new.due_at),
                db_time(now),
                db_time(new.expires_at),
                new.activation,
                new.importance,
                new.confidence,
                int(new.pinned),
                new.source,
                new.lang,
                new.rule,
                json.dumps(new.details, ensure_ascii=False, default=str) if new.details else None,
                new.scope.agent,
                new.scope.user,
                new.scope.chat,
                new.scope.visibility,
                new.content_hash,
            ),
        ).fetchone()
        return int(row[0])

    def find_duplicate(
        self, content_hash: str, subject: str | None, scope: Scope, *, now: datetime | None = None
    ) -> int | None:
        """A live memory with the same normalised text, about the same subject, in the
        same scope; with `now`, not one that has expired by then (a text said again after
        its memory expired is a new memory, not a bump of one search no longer shows)."""
        params: list[Any] = [content_hash, subject, scope.agent, scope.user, scope.chat]
        fresh = unexpired("memories", now, params)
        row = self._db.execute(
            "SELECT id FROM memories WHERE content_hash = ? AND status IN ('active', 'disputed')"
            f" AND subject IS ? AND agent_id IS ? AND user_id IS ? AND chat_id IS ? AND {fresh}"
            " ORDER BY id LIMIT 1",
            params,
        ).fetchone()
        return None if row is None else int(row[0])

    def set_expiry(self, memory_id: int, expires_at: datetime | None) -> None:
        """Give `memory_id` a new time to live (None: it never expires)."""
        self._db.execute(
            "UPDATE memories SET expires_at = ? WHERE id = ?", (db_time(expires_at), memory_id)
        )

    def expired(self, now: datetime) -> list[Memory]:
        """Live memories whose time to live ran out by `now`, oldest expiry first (through
        the partial index of memories with an expiry: a night looks at those only)."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM memories INDEXED BY memories_expires"
            " WHERE expires_at IS NOT NULL AND expires_at <= ?"
            " AND status IN ('active', 'disputed') ORDER BY expires_at, id",
            (db_time(now),),
        ).fetchall()
        return self._with_provenance(rows)

    def bump(self, memory_id: int, *, now: datetime, boost: float) -> None:
        """Seen again: one more access, activation raised (capped at 1), last access now."""
        self._db.execute(
            "UPDATE memories SET access_count = access_count + 1,"
            " activation = min(1.0, activation + ?), last_accessed_at = ? WHERE id = ?",
            (boost, db_time(now), memory_id),
        )

    def touch(self, ids: Sequence[int], *, now: datetime, boost: float) -> None:
        """Recalled: activation raised by `boost` (capped at 1), last access now."""
        self._db.executemany(
            "UPDATE memories SET activation = min(1.0, activation + ?), last_accessed_at = ?"
            " WHERE id = ?",
            [(boost, db_time(now), memory_id) for memory_id in ids],
        )

    def recalled(self, activations: Mapping[int, float], *, now: datetime) -> None:
        """Recalled: the activation the caller computed (the decayed value plus the
        recall boost), one more access, last access now."""
        self._db.executemany(
            "UPDATE memories SET activation = ?, access_count = access_count + 1,"
            " last_accessed_at = ? WHERE id = ?",
            [(value, db_time(now), memory_id) for memory_id, value in activations.items()],
        )

    def set_status(self, memory_id: int, status: str, *, now: datetime) -> None:
        self._db.execute(
            "UPDATE memories SET status = ?, status_changed_at = ? WHERE id = ?",
            (status, db_time(now), memory_id),
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
        """Record a subject/attribute slot `memory_id` fills (a memory may fill several;
        the same slot again replaces its row)."""
        self._db.execute(
            "INSERT OR REPLACE INTO slots"
            " (memory_id, subject, attribute, value, hedged, negated, live)"
            " SELECT ?, ?, ?, ?, ?, ?, status IN ('active', 'disputed') FROM memories WHERE id = ?",
            (memory_id, subject, attribute, value, int(hedged), int(negated), memory_id),
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
        (subject, attribute) slot, oldest first, `exclude` left out. With `value_prefix`,
        only those whose value begins with it or holds a comma (`conflicts.value_prefix`):
        a range of the `slots_value` index and the partial `slots_comma`, so a slot
        holding thousands of values (a person's many preferences) costs a lookup, not a
        scan, per new memory."""
        owner = (exclude, scope.agent, scope.user, scope.chat)
        join = (
            " JOIN memories m ON m.id = s.memory_id WHERE s.subject = ? AND s.attribute = ?"
            " AND s.live = 1 AND m.id != ? AND m.agent_id IS ? AND m.user_id IS ?"
            " AND m.chat_id IS ?"
        )
        if value_prefix is None:
            rows = self._db.execute(
                "SELECT s.memory_id, s.value, s.hedged, s.negated, m.observed_at"
                f" FROM slots s INDEXED BY slots_live{join}",
                (subject, attribute, *owner),
            ).fetchall()
        else:
            # Every string beginning with the prefix sorts in [prefix, prefix + U+10FFFF).
            rows = self._db.execute(
                "SELECT s.memory_id, s.value, s.hedged, s.negated, m.observed_at"
                f" FROM slots s INDEXED BY slots_value{join} AND s.value >= ? AND s.value < ?"
                " UNION SELECT s.memory_id, s.value, s.hedged, s.negated, m.observed_at"
                f" FROM slots s INDEXED BY slots_comma{join} AND instr(s.value, ',') > 0",
                (subject, attribute, *owner, value_prefix, value_prefix + "\U0010ffff")
                + (subject, attribute, *owner),
            ).fetchall()
        rows.sort(key=lambda row: (row[4], row[0]))
        return [(int(i), str(v), bool(h), bool(n)) for i, v, h, n, _ in rows]

    def seen_in_slot(self, subject: str, attribute: str, view: View, *, limit: int) -> list[int]:
        """Ids of the live memories in the (subject, attribute) slot that `view`'s
        requester may see (the visibility rule alone), newest first: what a claim about
        that slot is checked against."""
        clause, params = scope_clause(view, "m")
        rows = self._db.execute(
            "SELECT m.id FROM slots s INDEXED BY slots_live JOIN memories m ON m.id = s.memory_id"
            f" WHERE s.subject = ? AND s.attribute = ? AND s.live = 1 AND {clause}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT ?",
            (subject, attribute, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def slot_values(self, memory_ids: Sequence[int]) -> dict[int, dict[tuple[str, str], str]]:
        """For each of `memory_ids`, its slots: (subject, attribute) -> value."""
        found: dict[int, dict[tuple[str, str], str]] = {i: {} for i in memory_ids}
        if memory_ids:
            marks = ",".join("?" * len(memory_ids))
            for memory_id, subject, attribute, value in self._db.execute(
                "SELECT memory_id, subject, attribute, value FROM slots"
                f" WHERE memory_id IN ({marks})",
                tuple(memory_ids),
            ):
                found[int(memory_id)][(str(subject), str(attribute))] = str(value)
        return found

    def without_slot(self, *, limit: int) -> list[int]:
        """Ids of live memories whose slot was never looked for (imported before slots
        existed, or stored by an older version), oldest first."""
        rows = self._db.execute(
            "SELECT m.id FROM memories m WHERE m.status IN ('active', 'disputed')"
            " AND NOT EXISTS (SELECT 1 FROM slots s WHERE s.memory_id = m.id)"
            " ORDER BY m.id LIMIT ?",
            (limit,),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def supersede(self, memory_id: int, by: int, *, now: datetime) -> None:
        """`memory_id` no longer holds: `by` replaced it (kept, linked, timed). Its
        validity ends where `by`'s begins, or when `by` was said if that is earlier (a
        plan changed in May for August ended in May): `valid_to`, unless it had an
        earlier end (a plan for "this summer" changed in May ends in May, not in
        September; "until 2020" stays 2020)."""
        self._db.execute(
            "UPDATE memories SET status = 'superseded', superseded_by = ?, status_changed_at = ?,"
            " valid_to = (SELECT min(coalesce(memories.valid_to, e.at), e.at) FROM"
            " (SELECT min(coalesce(n.valid_from, n.observed_at), n.observed_at) AS at"
            " FROM memories n WHERE n.id = ?) e)"
            " WHERE id = ?",
            (by, db_time(now), by, memory_id),
        )

    def replaced_by(self, ids: Sequence[int]) -> list[int]:
        """The superseded memories that one of `ids` replaced, oldest first."""
        found: list[int] = []
        for chunk, marks in in_chunks(ids):
            found += [
                int(r[0])
                for r in self._db.execute(
                    "SELECT id FROM memories WHERE status = 'superseded'"
                    f" AND superseded_by IN ({marks}) ORDER BY id",
                    chunk,
                )
            ]
        return found

    def reinstate(
        self, memory_id: int, status: str, *, valid_to: datetime | None, now: datetime
    ) -> None:
        """Undo a supersession: `status` again, no longer replaced, `valid_to` as it was."""
        self._db.execute(
            "UPDATE memories SET status = ?, superseded_by = NULL, valid_to = ?,"
            " status_changed_at = ? WHERE id = ?",
            (status, db_time(valid_to), db_time(now), memory_id),
        )

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        self._db.execute("UPDATE memories SET pinned = ? WHERE id = ?", (int(pinned), memory_id))

    def confirm(self, memory_id: int, *, step: float) -> None:
        """Raise confidence by `step` (capped at 1): something said it again."""
        self._db.execute(
            "UPDATE memories SET confidence = min(1.0, confidence + ?) WHERE id = ?",
            (step, memory_id),
        )

    def set_details(self, memory_id: int, details: dict[str, Any]) -> None:
        self._db.execute(
            "UPDATE memories SET details = ? WHERE id = ?",
            (json.dumps(details, ensure_ascii=False, sort_keys=True), memory_id),
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
            "INSERT OR IGNORE INTO provenance (memory_id, episode_id, origin, added_at)"
            " VALUES (?, ?, ?, ?)",
            (memory_id, episode_id, origin, db_time(now)),
        )

    def has_origin(self, memory_id: int, origin: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM provenance WHERE memory_id = ? AND origin = ?", (memory_id, origin)
        ).fetchone()
        return row is not None

    def get(self, memory_id: int) -> Memory | None:
        found = self.get_many([memory_id])
        return found[0] if found else None

    def replaced_turns(self, episode_ids: Sequence[int]) -> dict[int, datetime]:
        """Of `episode_ids`, the turns whose every memory (one at least) was replaced by
        a newer one (superseded, archived since or not), each with when the last of them
        stopped being true: a turn that only states an old value."""
        found: dict[int, datetime] = {}
        for chunk, marks in in_chunks(episode_ids):
            rows = self._db.execute(
                "SELECT p.episode_id,"
                " max(coalesce(m.valid_to, n.valid_from, n.observed_at, m.status_changed_at))"
                " FROM provenance p JOIN memories m ON m.id = p.memory_id"
                " LEFT JOIN memories n ON n.id = m.superseded_by"
                f" WHERE p.episode_id IN ({marks}) GROUP BY p.episode_id"
                " HAVING min(m.superseded_by IS NOT NULL AND m.status != 'active') = 1",
                chunk,
            ).fetchall()
            found.update({int(e): from_db_time(t) for e, t in rows if t is not None})
        return found

    def get_many(self, ids: Sequence[int]) -> list[Memory]:
        """Memories by id, in the order asked; unknown ids are left out."""
        rows: dict[int, Any] = {}
        for chunk, marks in in_chunks(ids):
            for row in self._db.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE id IN ({marks})", chunk
            ):
                rows[row[0]] = row
        return self._with_provenance([rows[i] for i in dict.fromkeys(ids) if i in rows])

    def owners(self, ids: Sequence[int]) -> list[tuple[int, str, str, str | None, Scope]]:
        """(id, kind, text, subject, scope) of `ids`, in the order asked: what the
        capture-time duplicate check compares, without reading whole memories and their
        provenance for every turn."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = {
            int(r[0]): r
            for r in self._db.execute(
                "SELECT id, kind, text, subject, agent_id, user_id, chat_id, visibility"
                f" FROM memories WHERE id IN ({marks})",
                tuple(ids),
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
        """(id, text, content_hash, scope) of the newest live memories of `subject` and
        `kind` that `view` may see: the few a new memory is compared with by meaning at
        capture (`memories_subject` keeps it a short range, whatever the store's size)."""
        clause, params = memory_clause(view, "m")
        rows = self._db.execute(
            "SELECT m.id, m.text, m.content_hash, m.agent_id, m.user_id, m.chat_id,"
            " m.visibility FROM memories m INDEXED BY memories_subject"
            f" WHERE m.subject IS ? AND m.kind = ? AND {clause} ORDER BY m.id DESC LIMIT ?",
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
        """Memories newest first, of `kind` and `status` when given, and only what
        `view`'s requester may see when given."""
        clauses: list[str] = []
        params: list[Any] = []
        if view is not None:
            clause, params = scope_clause(view, "memories")
            clauses.append(clause)
        if kind:
            clauses.append("kind = ?")
            params.append(kind)
        if status:
            clauses.append("status = ?")
            params.append(status)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM memories {where} ORDER BY observed_at DESC, id DESC"
            " LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return self._with_provenance(rows)

    def max_id(self) -> int:
        """The highest memory id given so far (0 for none)."""
        return int(self._db.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0])

    def id_before_newest(self, count: int, statuses: Sequence[str]) -> int:
        """The id just below the `count` newest memories with one of `statuses` (0 when
        there are no more than `count`)."""
        marks = ",".join("?" * len(statuses))
        row = self._db.execute(
            f"SELECT id FROM memories WHERE status IN ({marks}) ORDER BY id DESC LIMIT 1 OFFSET ?",
            (*statuses, count),
        ).fetchone()
        return 0 if row is None else int(row[0])

    def count_after(self, after: int, statuses: Sequence[str]) -> int:
        """How many memories with an id above `after` have one of `statuses`."""
        marks = ",".join("?" * len(statuses))
        row = self._db.execute(
            f"SELECT count(*) FROM memories WHERE id > ? AND status IN ({marks})",
            (after, *statuses),
        ).fetchone()
        return int(row[0])

    def created_since(self, since: datetime, statuses: Sequence[str]) -> list[Memory]:
        """Memories created at or after `since` that have one of `statuses`, oldest first."""
        marks = ",".join("?" * len(statuses))
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE created_at >= ? AND status IN ({marks})"
            " ORDER BY created_at, id",
            (db_time(since), *statuses),
        ).fetchall()
        return self._with_provenance(rows)

    def pages(
        self, status: str, *, after: int = 0, size: int = 2000, view: View | None = None
    ) -> Iterator[list[Memory]]:
        """Every memory with `status` (and an id above `after`; with `view`, that its
        requester may see), a page at a time in id order. Each page starts where the
        last ended (by rowid, not OFFSET), so reading a million rows costs one pass over
        the table."""
        visible, more = scope_clause(view, "memories") if view else ("1", [])
        last = after
        while rows := self._db.execute(
            f"SELECT {_COLUMNS} FROM memories NOT INDEXED WHERE id > ? AND status = ?"
            f" AND {visible} ORDER BY id LIMIT ?",
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
        """Ids of memories containing every word of `query`, best BM25 first; with
        `scope`, only that agent/user/chat's; with `view`, only what its requester may
        see (the rule is in the query, so a row they cannot see is never read); with
        `subject`, only those about it."""
        words = every_word(query)
        if words is None:
            return []
        wanted = tuple(statuses)
        clauses = [f"m.status IN ({','.join('?' * len(wanted))})"]
        params: list[Any] = [match_expression(words), *wanted]
        if view is not None:
            visible, more = scope_clause(view, "m")
            clauses.append(visible)
            params += more
        if scope is not None:
            clauses.append("m.agent_id IS ? AND m.user_id IS ? AND m.chat_id IS ?")
            params += [scope.agent, scope.user, scope.chat]
        if subject is not None:
            clauses.append("m.subject IS ?")
            params.append(subject)
        # FTS5's `rank` is its BM25 (no other rank is configured): ordered by it, FTS5
        # hands the matches over sorted, so a LIMIT stops reading memories' rows early
        # (`bm25()` would read every match's row, then sort them).
        rows = self._db.execute(
            "SELECT m.id FROM memories_fts f JOIN memories m ON m.id = f.rowid"
            f" WHERE memories_fts MATCH ? AND {' AND '.join(clauses)}"
            " ORDER BY f.rank LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def count_capped(self) -> int:
        """Active memories that count against `lifecycle.max_facts`: not pinned, not of
        a kind in `CAP_EXEMPT_KINDS` — the ones the nightly archive may cut to the cap."""
        marks = ",".join("?" * len(CAP_EXEMPT_KINDS))
        row = self._db.execute(
            "SELECT count(*) FROM memories WHERE status = 'active' AND pinned = 0"
            f" AND kind NOT IN ({marks})",
            tuple(sorted(CAP_EXEMPT_KINDS)),
        ).fetchone()
        return int(row[0])

    def counts(self, view: View | None = None) -> dict[tuple[str, str], int]:
        """(status, kind) -> number of memories (that `view`'s requester may see)."""
        where, params = scope_clause(view, "memories") if view else ("1", [])
        rows = self._db.execute(
            f"SELECT status, kind, count(*) FROM memories WHERE {where} GROUP BY status, kind",
            params,
        ).fetchall()
        return {(str(s), str(k)): int(n) for s, k, n in rows}

    def _with_provenance(self, rows: Sequence[Any]) -> list[Memory]:
        if not rows:
            return []
        ids = [r[0] for r in rows]
        marks = ",".join("?" * len(ids))
        episodes: dict[int, list[int]] = {i: [] for i in ids}
        origins: dict[int, list[str]] = {i: [] for i in ids}
        for memory_id, episode_id, origin in self._db.execute(
            f"SELECT memory_id, episode_id, origin FROM provenance WHERE memory_id IN ({marks})"
            " ORDER BY rowid",
            tuple(ids),
        ):
            if episode_id is not None:
                episodes[memory_id].append(episode_id)
            if origin is not None:
                origins[memory_id].append(origin)
        return [
            row_to.memory(SQLITE_ROWS, r, tuple(episodes[r[0]]), tuple(origins[r[0]])) for r in rows
        ]
