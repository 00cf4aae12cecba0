"""Lookups for retrieval: FTS5 BM25 over memories and episodes, and stored vectors.

Owns the SQL of search: which rows a requester may see (scope), which memories count
(status, or what was active at a past time), and the `vectors` table keyed by
(content hash, model). Ranking, fusion and embedding are `recall`'s and `embed`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import LexicalQuery, View
from memoracle.store.db import Database, db_time, in_chunks
from memoracle.store.fts import match_expression
from memoracle.types import STATUSES, Condition, visible_to


def unexpired(alias: str, at: datetime | None, params: list[Any]) -> str:
    """The SQL condition "`alias`'s memory has not expired at `at`" (its time to live,
    `expires_at`, is unset or later), its parameter appended to `params`; "1" when `at`
    is None. Search and recall add it to their live-memory clause, so an item leaves
    them the moment the engine's clock passes its expiry, before any nightly run."""
    if at is None:
        return "1"
    params.append(db_time(at))
    return f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)"


def scope_clause(view: View, alias: str) -> tuple[str, list[Any]]:
    """The visibility rule alone (what `view`'s requester may see: `types.visible_to`,
    docs/scopes.md), as SQL over the table behind `alias`."""
    clauses, params = _scope_clauses(visible_to(view.scope, view.own), alias)
    return " AND ".join(clauses), params


def memory_clause(view: View, alias: str = "m") -> tuple[str, list[Any]]:
    """The memories `view` may see and asks for, as SQL over `alias`: the rule, its
    kinds, what is active now (or was at `as_of`), unexpired."""
    clauses, params = _scope_clauses(visible_to(view.scope, view.own), alias)
    if view.kinds:
        clauses.append(f"{alias}.kind IN ({','.join('?' * len(view.kinds))})")
        params += list(view.kinds)
    if view.as_of is None:
        clauses.append(f"{alias}.status = 'active'")
    else:
        # Active then: said by then, and either still live or changed only later;
        # archived ones live in the cold tier (`memoracle restore` brings one back).
        clauses.append(
            f"{alias}.observed_at <= ? AND {alias}.status != 'archived'"
            f" AND ({alias}.status IN ('active', 'disputed') OR {alias}.status_changed_at > ?)"
        )
        params += [db_time(view.as_of), db_time(view.as_of)]
    clauses.append(unexpired(alias, view.as_of or view.now, params))
    return " AND ".join(clauses), params


def episode_clause(view: View, alias: str = "e") -> tuple[str, list[Any]]:
    """The turns `view` may see, as SQL over `alias`: the rule, no held turn, no turn a
    forgotten memory came from, said by `as_of`."""
    clauses, params = _scope_clauses(visible_to(view.scope, view.own), alias)
    # A turn the write audit held back stays out until a person confirms it, and so
    # does every turn of the same scope saying the same text: one hold per text.
    clauses.append(
        f"NOT EXISTS (SELECT 1 FROM held h WHERE (h.episode_id = {alias}.id"
        f" OR (h.episode_id IS NOT NULL AND h.text = {alias}.text"
        f" AND h.agent_id IS {alias}.agent_id AND h.user_id IS {alias}.user_id"
        f" AND h.chat_id IS {alias}.chat_id AND h.visibility = {alias}.visibility))"
        " AND (h.decision IS NULL OR h.decision = 'reject'))"
    )
    # Forget means forget: a turn a forgotten memory came from (its source, a later
    # turn that only repeated it, the turn that said the forget with its words:
    # `engine.forgetting`) leaves search and recall with it, and `restore` brings it
    # back by bringing the memory back. The audit keeps the record.
    # (Not correlated: SQLite gathers the few hidden ids once per statement.)
    clauses.append(
        f"{alias}.id NOT IN (SELECT fp.episode_id FROM memories fm"
        " JOIN provenance fp ON fp.memory_id = fm.id"
        " WHERE fm.status = 'forgotten' AND fp.episode_id IS NOT NULL)"
    )
    if view.as_of is not None:
        clauses.append(f"{alias}.at <= ?")
        params.append(db_time(view.as_of))
    return " AND ".join(clauses) or "1", params


# The columns of the rule's fields (never interpolate input).
_COLUMNS = {
    "agent": "agent_id",
    "user": "user_id",
    "chat": "chat_id",
    "visibility": "visibility",
}


def _scope_clauses(conditions: Sequence[Condition], alias: str) -> tuple[list[str], list[Any]]:
    """The visibility rule's conditions (`types.visible_to`) as SQL over `alias`."""
    clauses: list[str] = ["1"]
    params: list[Any] = []
    for c in conditions:
        column = f"{alias}.{_COLUMNS[c.field]}"
        marks = ",".join("?" * len(c.values))
        test = f"{column} IN ({marks})"
        clauses.append(f"({column} IS NULL OR {test})" if c.or_unset else test)
        params += list(c.values)
    return clauses, params


_TABLES = {"memories": "memories", "episodes": "episodes"}  # never interpolate input

# Statuses a search can return (`memory_clause`): every one but archived (a
# cold-tier memory is found again only by `restore`).
_LIVE = "(" + ", ".join(f"'{s}'" for s in STATUSES if s != "archived") + ")"
# The distinct texts a search can return: live memories and message turns.
_SEARCHABLE = (
    f"SELECT content_hash FROM memories WHERE status IN {_LIVE}"
    " UNION SELECT content_hash FROM episodes"
    " WHERE kind = 'message' AND content_hash IS NOT NULL"
)
_HAS_VECTOR = (
    "EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_model_hash"
    " WHERE v.model_id = ? AND v.content_hash = t.content_hash)"
)
# Texts only archived memories hold, with a vector of the model: archived vectors stay
# stored (for a restore) but search has no use for them.
_ARCHIVED_ONLY = (
    "SELECT DISTINCT m.content_hash FROM memories m WHERE m.status = 'archived'"
    " AND EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_model_hash"
    " WHERE v.model_id = ? AND v.content_hash = m.content_hash)"
    " AND NOT EXISTS (SELECT 1 FROM memories o INDEXED BY memories_hash"
    f" WHERE o.content_hash = m.content_hash AND o.status IN {_LIVE})"
    " AND NOT EXISTS (SELECT 1 FROM episodes e INDEXED BY episodes_hash"
    " WHERE e.content_hash = m.content_hash AND e.kind = 'message')"
)


class Index:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- lexical ---------------------------------------------------------------------

    def lexical_memories(
        self, query: LexicalQuery, view: View, *, limit: int, min_id: int = 0
    ) -> list[tuple[int, float]]:
        """(memory id, BM25) matching `query`, best first (FTS5's BM25 is negative:
        lower is better); with `min_id`, only rows with a larger id."""
        where, params = memory_clause(view)
        rows = self._db.execute(
            "SELECT m.id, bm25(memories_fts) AS score FROM memories_fts f"
            " JOIN memories m ON m.id = f.rowid"
            f" WHERE memories_fts MATCH ? AND f.rowid > ? AND {where} ORDER BY score LIMIT ?",
            (match_expression(query), min_id, *params, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def lexical_episodes(
        self, query: LexicalQuery, view: View, *, limit: int, min_id: int = 0
    ) -> list[tuple[int, float]]:
        """(episode id, BM25) matching `query`, best first; see `lexical_memories`."""
        where, params = episode_clause(view)
        rows = self._db.execute(
            "SELECT e.id, bm25(episodes_fts) AS score FROM episodes_fts f"
            " JOIN episodes e ON e.id = f.rowid"
            f" WHERE episodes_fts MATCH ? AND f.rowid > ? AND e.kind = 'message' AND {where}"
            " ORDER BY score LIMIT ?",
            (match_expression(query), min_id, *params, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def match_counts(self, table: str, queries: Sequence[LexicalQuery], *, cap: int) -> list[int]:
        """`match_count` of each of `queries`, in one statement (the write path sizes
        every word of a turn this way)."""
        if not queries:
            return []
        expressions = [match_expression(q) for q in queries]
        fts = f"{_TABLES[table]}_fts"
        one = f"(SELECT count(*) FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ? LIMIT ?))"
        row = self._db.execute(
            f"SELECT {', '.join([one] * len(expressions))}",
            [value for e in expressions for value in (e, cap + 1)],
        ).fetchone()
        return [int(n) for n in row]

    def match_count(self, table: str, query: LexicalQuery, *, cap: int) -> int:
        """How many rows of `table` ("memories" or "episodes") match `query`,
        counting no further than `cap` + 1 (so the cost stays bounded). Scope is not
        applied: this sizes the work of a query, it answers nothing."""
        fts = f"{_TABLES[table]}_fts"
        row = self._db.execute(
            f"SELECT count(*) FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
            (match_expression(query), cap + 1),
        ).fetchone()
        return int(row[0])

    def matches(self, table: str, query: LexicalQuery, item_id: int) -> bool:
        """Whether row `item_id` of `table` matches `query`: one row of the FTS5
        index looked at, not every match ranked (`explain` asks before ranking them).
        Scope is not applied: the caller's own item, already seen by its requester."""
        fts = f"{_TABLES[table]}_fts"
        row = self._db.execute(
            f"SELECT 1 FROM {fts} WHERE {fts} MATCH ? AND rowid = ?",
            (match_expression(query), item_id),
        ).fetchone()
        return row is not None

    def newest_matches_from(self, table: str, query: LexicalQuery, *, count: int) -> int | None:
        """The id below the `count` newest rows matching `query`, or None when
        fewer match: passed as `min_id`, it limits a search to those newest rows."""
        fts = f"{_TABLES[table]}_fts"
        row = self._db.execute(
            f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (match_expression(query), count),
        ).fetchone()
        return None if row is None else int(row[0])

    # -- items behind vector hits ----------------------------------------------------

    def memories_with_hashes(self, hashes: Sequence[str], view: View) -> list[tuple[int, str]]:
        """(id, content_hash) of the memories the view may see among `hashes`."""
        where, params = memory_clause(view)
        # The hashes narrow to a few rows; without statistics SQLite would rather walk
        # the status index over every active memory (140 ms at 40k): name the index.
        return self._with_hashes("memories m INDEXED BY memories_hash", "m", hashes, where, params)

    def episodes_with_hashes(self, hashes: Sequence[str], view: View) -> list[tuple[int, str]]:
        where, params = episode_clause(view)
        return self._with_hashes(
            "episodes e INDEXED BY episodes_hash",
            "e",
            hashes,
            f"e.kind = 'message' AND {where}",
            params,
        )

    def _with_hashes(
        self, table: str, alias: str, hashes: Sequence[str], where: str, params: list[Any]
    ) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        for chunk, marks in in_chunks(hashes):
            found += [
                (int(r[0]), str(r[1]))
                for r in self._db.execute(
                    f"SELECT {alias}.id, {alias}.content_hash FROM {table}"
                    f" WHERE {alias}.content_hash IN ({marks}) AND {where}",
                    (*chunk, *params),
                )
            ]
        return found

    def visible_episodes(self, ids: Sequence[int], view: View) -> list[int]:
        """Which of `ids` are turns (messages) `view` may see, in id order: for turns
        found by adjacency, not by a search that applied the rule already."""
        where, params = episode_clause(view)
        found: list[int] = []
        for chunk, marks in in_chunks(ids):
            found += [
                int(r[0])
                for r in self._db.execute(
                    f"SELECT e.id FROM episodes e WHERE e.id IN ({marks})"
                    f" AND e.kind = 'message' AND {where} ORDER BY e.id",
                    (*chunk, *params),
                )
            ]
        return found

    def holding(self, subject: str, attribute: str, view: View, *, limit: int) -> list[int]:
        """Ids of the memories `view` may see that hold a sure value of the (subject,
        attribute) slot (not hedged, not denied), said by the asking user (in a group,
        another member's "I live in Oslo" is not the asker's home), the newest first:
        the memory that answers "where do I live?"."""
        where, params = memory_clause(view)
        user = view.scope.user or view.own.user
        rows = self._db.execute(
            "SELECT m.id FROM slots s INDEXED BY slots_live JOIN memories m ON m.id = s.memory_id"
            " WHERE s.subject = ? AND s.attribute = ? AND s.live = 1 AND s.negated = 0"
            f" AND s.hedged = 0 AND m.user_id IS ? AND {where}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT ?",
            (subject, attribute, user, *params, limit),
        )
        return [int(r[0]) for r in rows]

    def guardrails(self, view: View) -> list[int]:
        where, params = memory_clause(view)
        rows = self._db.execute(
            f"SELECT m.id FROM memories m WHERE m.kind = 'guardrail' AND {where}"
            " ORDER BY m.importance DESC, m.observed_at DESC",
            params,
        ).fetchall()
        return [int(r[0]) for r in rows]

    def fresh(self, view: View, *, since: datetime, limit: int) -> list[int]:
        """Memories said since `since` (not guardrails), most important first."""
        where, params = memory_clause(view)
        rows = self._db.execute(
            # Named index: the last day's rows, not every active memory (70 ms at 40k).
            "SELECT m.id FROM memories m INDEXED BY memories_observed"
            f" WHERE m.kind != 'guardrail' AND m.observed_at >= ?"
            f" AND {where} ORDER BY m.importance DESC, m.observed_at DESC LIMIT ?",
            (db_time(since), *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def in_window(
        self, view: View, start: datetime, end: datetime, *, limit: int
    ) -> tuple[list[int], list[int]]:
        """What `view` may see of [start, end): the memories dated then (what happened
        then; undated, said then; guardrails aside) and the turns said then, each in
        time order, at most `limit` of each: the answer to "what did I do yesterday?"."""
        where, params = memory_clause(view)
        low, high = db_time(start), db_time(end)
        memories = self._db.execute(
            "SELECT m.id FROM memories m WHERE m.kind != 'guardrail'"
            " AND ((m.valid_from >= ? AND m.valid_from < ?)"
            " OR (m.valid_from IS NULL AND m.observed_at >= ? AND m.observed_at < ?))"
            f" AND {where} ORDER BY COALESCE(m.valid_from, m.observed_at), m.id LIMIT ?",
            (low, high, low, high, *params, limit),
        ).fetchall()
        where, params = episode_clause(view)
        episodes = self._db.execute(
            "SELECT e.id FROM episodes e INDEXED BY episodes_at WHERE e.at >= ? AND e.at < ?"
            f" AND e.kind = 'message' AND {where} ORDER BY e.at, e.id LIMIT ?",
            (low, high, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in memories], [int(r[0]) for r in episodes]

    # -- vectors ---------------------------------------------------------------------

    def missing_vectors(
        self, model_id: str, *, after: tuple[int, int] = (0, 0), limit: int
    ) -> tuple[list[tuple[str, str]], tuple[int, int]]:
        """(content_hash, text) of live memories and message episodes with no vector for
        `model_id`, looking only at rows after `after` = (memory id, episode id); and
        the (memory id, episode id) reached, to pass as `after` next time. Rows are
        append-only, so a caller that keeps that mark never scans a row twice."""
        found: dict[str, str] = {}
        last_memory, last_episode = after
        for table, status in (
            # "+": walk ids from the mark, not the status index over every live memory.
            ("memories", "AND +m.status IN ('active', 'disputed')"),
            ("episodes", "AND m.kind = 'message'"),
        ):
            start = last_memory if table == "memories" else last_episode
            requested = limit - len(found)
            # The end first: another connection may commit rows while this one looks
            # (a background worker beside captures), and the mark may only jump over
            # rows this scan saw; ids only grow, so what commits later lies past `end`.
            end = self._db.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
            rows = self._db.execute(
                f"SELECT m.id, m.content_hash, m.text FROM {table} m"
                f" WHERE m.id > ? AND m.id <= ? {status}"
                " AND NOT EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_model_hash"
                " WHERE v.content_hash = m.content_hash AND v.model_id = ?)"
                " ORDER BY m.id LIMIT ?",
                (start, end, model_id, requested),
            ).fetchall()
            for row_id, content_hash, text in rows:
                if len(found) >= limit:
                    break
                found.setdefault(str(content_hash), str(text))
                if table == "memories":
                    last_memory = int(row_id)
                else:
                    last_episode = int(row_id)
            if len(found) >= limit or len(rows) == requested:
                return list(found.items()), (last_memory, last_episode)  # more may remain
            # This table has nothing missing up to its end: jump the mark there.
            if table == "memories":
                last_memory = max(last_memory, int(end))
            else:
                last_episode = max(last_episode, int(end))
        return list(found.items()), (last_memory, last_episode)

    def count_missing(self, model_id: str) -> int:
        """How many distinct live texts have no vector for `model_id` (a full scan)."""
        row = self._db.execute(
            "SELECT count(DISTINCT content_hash) FROM ("
            " SELECT content_hash FROM memories WHERE status IN ('active', 'disputed')"
            " UNION ALL SELECT content_hash FROM episodes WHERE kind = 'message'"
            ") AS t WHERE NOT EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_model_hash"
            " WHERE v.content_hash = t.content_hash AND v.model_id = ?)",
            (model_id,),
        ).fetchone()
        return int(row[0])

    def put_vectors(self, rows: Iterable[tuple[str, str, int, bytes]], *, now: datetime) -> None:
        """Store (content_hash, model_id, dim, blob) rows; existing ones are kept."""
        stamp = db_time(now)
        self._db.executemany(
            "INSERT OR IGNORE INTO vectors (content_hash, model_id, dim, vector, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            [(h, m, d, b, stamp) for h, m, d, b in rows],
        )

    # Searchable vectors are found from whichever side is cheaper: walking the live
    # texts and probing for their vectors costs about 2 µs a text; reading every vector
    # and leaving out the texts only archived memories hold, about 8 µs an archived
    # memory (20 at 1M). Measured on a 100k-turn store with a share of its memories
    # archived, the walk was the faster below 4 live texts to an archived memory (215
    # against 347 ms at 2.7, 292 against 212 at 6.3): a store that has archived for
    # years walks its live texts, one rich in turns reads every vector. Both give the
    # same texts because every vector memoracle stores is some memory's or turn's
    # (texts never change, rows are never deleted); a vector of no text, which only a
    # hand-made import file could bring, is kept by the second and matches no row.

    def searchable_vectors(self, model_id: str) -> Iterator[tuple[str, int, bytes]]:
        """(content_hash, dim, blob) of `model_id` for every searchable text."""
        archived = self._archived_only(model_id)
        if archived is None:
            rows = self._db.execute(
                f"SELECT v.content_hash, v.dim, v.vector FROM ({_SEARCHABLE}) AS t"
                " JOIN vectors v ON v.content_hash = t.content_hash AND v.model_id = ?",
                (model_id,),
            )
        else:
            rows = self._db.execute(
                "SELECT content_hash, dim, vector FROM vectors WHERE model_id = ?", (model_id,)
            )
        for h, dim, blob in rows:
            if archived is None or h not in archived:
                yield str(h), int(dim), bytes(blob)

    def searchable_vector_hashes(self, model_id: str) -> list[str]:
        """The searchable texts' content hashes that have a vector for `model_id`."""
        archived = self._archived_only(model_id)
        if archived is None:
            query = f"SELECT t.content_hash FROM ({_SEARCHABLE}) AS t WHERE {_HAS_VECTOR}"
        else:
            query = (
                "SELECT content_hash FROM vectors INDEXED BY vectors_model_hash WHERE model_id = ?"
            )
        rows = self._db.execute(query, (model_id,))
        return [str(h) for (h,) in rows if archived is None or h not in archived]

    def searchable_vector_count(self, model_id: str) -> int:
        """How many searchable texts have a vector for `model_id`."""
        archived = self._archived_only(model_id)
        if archived is not None:
            return self.vector_count(model_id) - len(archived)
        row = self._db.execute(
            f"SELECT count(*) FROM ({_SEARCHABLE}) AS t WHERE {_HAS_VECTOR}", (model_id,)
        ).fetchone()
        return int(row[0])

    def _archived_only(self, model_id: str) -> set[str] | None:
        """The texts with a vector of `model_id` that only archived memories hold; None
        when there are fewer than 4 live texts to an archived memory (then the live side
        is walked)."""
        live, memories, turns = self._db.execute(
            f"SELECT (SELECT count(*) FROM memories WHERE status IN {_LIVE}),"
            " (SELECT coalesce(max(id), 0) FROM memories),"
            " (SELECT coalesce(max(id), 0) FROM episodes)"
        ).fetchone()
        if (memories - live) * 4 > live + turns:  # memories are never deleted: the rest archived
            return None
        return {str(r[0]) for r in self._db.execute(_ARCHIVED_ONLY, (model_id,))}

    def vector_count(self, model_id: str) -> int:
        """How many vectors are stored for `model_id`, searchable or not (an index count:
        a change since the last look means some process stored new ones)."""
        row = self._db.execute(
            "SELECT count(*) FROM vectors INDEXED BY vectors_model_hash WHERE model_id = ?",
            (model_id,),
        ).fetchone()
        return int(row[0])

    def marks(self) -> tuple[int, int, int]:
        """The newest (memory id, episode id, audit id): pass them to `searchable_since`."""
        row = self._db.execute(
            "SELECT (SELECT coalesce(max(id), 0) FROM memories),"
            " (SELECT coalesce(max(id), 0) FROM episodes),"
            " (SELECT coalesce(max(id), 0) FROM audit)"
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def searchable_since(
        self, after: tuple[int, int, int]
    ) -> tuple[list[str], tuple[int, int, int]]:
        """Content hashes of texts that may have become searchable after `after` =
        `marks()` of an earlier look: memories and message turns stored since, and
        memories restored from the cold tier since (their vector may already be stored,
        under an archived text); and the marks reached. Reads only rows past the marks."""
        memory_mark, episode_mark, audit_mark = marks = self.marks()
        # "+status": walk the ids past the marks, not the status index over every live
        # memory (5 ms against 32 at 100k turns).
        rows = self._db.execute(
            f"SELECT content_hash FROM memories WHERE id > ? AND id <= ? AND +status IN {_LIVE}"
            " UNION SELECT content_hash FROM episodes WHERE id > ? AND id <= ?"
            " AND kind = 'message' AND content_hash IS NOT NULL"
            " UNION SELECT m.content_hash FROM audit a JOIN memories m ON m.id = a.memory_id"
            f" WHERE a.id > ? AND a.id <= ? AND a.action = 'restore' AND +m.status IN {_LIVE}",
            (after[0], memory_mark, after[1], episode_mark, after[2], audit_mark),
        ).fetchall()
        return [str(r[0]) for r in rows], marks

    def vectors_for(self, model_id: str, hashes: Sequence[str]) -> Iterator[tuple[str, int, bytes]]:
        """(content_hash, dim, blob) of `model_id` for each of `hashes` that has one."""
        for chunk, marks in in_chunks(hashes):
            for h, dim, blob in self._db.execute(
                "SELECT content_hash, dim, vector FROM vectors"
                f" WHERE model_id = ? AND content_hash IN ({marks})",
                (model_id, *chunk),
            ):
                yield str(h), int(dim), bytes(blob)

    def vector_models(self) -> dict[str, tuple[int, int]]:
        """model_id -> (dim, number of vectors)."""
        rows = self._db.execute(
            "SELECT model_id, max(dim), count(*) FROM vectors GROUP BY model_id"
        ).fetchall()
        return {str(m): (int(d), int(n)) for m, d, n in rows}
