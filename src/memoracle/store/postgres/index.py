"""Search in PostgreSQL: full-text lookups ranked by `ts_rank_cd`, the items behind
vector hits, and the vectors themselves in pgvector with an HNSW index per model.

Every method of `store.index.Index` is here with its signature; the lexical ones score
by `-ts_rank_cd` so that, as with FTS5's BM25, lower is better (`recall.lexical` merges
scores with `min`). `nearest_memories` and `nearest_episodes` are new: the vector search
runs in the database here instead of over vectors loaded into the process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from pgvector import Vector
from psycopg import sql

from memoracle.storage_types import LexicalQuery, View
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.lexical import Lexical
from memoracle.store.postgres.visibility import episode_clause, memory_clause

_TABLES = {"memories": "memories", "episodes": "episodes"}  # never interpolate input
# A vector of the model (the parameter) whose text a search can return: a memory not
# archived, or a message turn.
_SEARCHABLE = (
    "v.model_id = %s AND (EXISTS (SELECT 1 FROM memories m WHERE m.content_hash ="
    " v.content_hash AND m.status != 'archived') OR EXISTS (SELECT 1 FROM episodes e"
    " WHERE e.content_hash = v.content_hash AND e.kind = 'message'))"
)
# Candidates the HNSW index hands over per wanted hit before the visibility rule and
# status filter them (pgvector filters after the index scan); when too few survive,
# the search is done exactly over what the rule lets through.
OVERFETCH = 10
# `ts_rank_cd`'s normalisation 1: the rank divided by 1 + log(the text's length in
# words), so that, as with FTS5's BM25, of two texts that say the query's words equally
# the shorter ranks first (without it they tie, and the older wins).
RANK_BY_LENGTH = 1
EF_SEARCH_MIN = 40
# pgvector's largest `hnsw.ef_search`: an index scan hands over at most this many
# candidates, so a larger pool is searched exactly when the rule leaves too few.
EF_SEARCH_MAX = 1000


def _tsquery(query: LexicalQuery) -> tuple[str, list[Any]] | None:
    return Lexical.of(query).sql()


def _blob_vector(blob: bytes) -> Vector:
    return Vector(np.frombuffer(blob, dtype=np.float32))


class PgIndex:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    # -- lexical ---------------------------------------------------------------------

    def lexical_memories(
        self, query: LexicalQuery, view: View, *, limit: int, min_id: int = 0
    ) -> list[tuple[int, float]]:
        """(memory id, -ts_rank_cd) matching `query`, best first."""
        where, params = memory_clause(view, "m")
        return self._lexical("memories m", "m", query, where, params, limit, min_id)

    def lexical_episodes(
        self, query: LexicalQuery, view: View, *, limit: int, min_id: int = 0
    ) -> list[tuple[int, float]]:
        """(episode id, -ts_rank_cd) matching `query`, best first; message turns."""
        where, params = episode_clause(view, "e")
        return self._lexical(
            "episodes e", "e", query, f"e.kind = 'message' AND {where}", params, limit, min_id
        )

    def _lexical(
        self,
        table: str,
        alias: str,
        query: LexicalQuery,
        where: str,
        params: list[Any],
        limit: int,
        min_id: int,
    ) -> list[tuple[int, float]]:
        found = _tsquery(query)
        if found is None:
            return []
        tsquery, query_params = found
        rows = self._db.execute(
            f"SELECT {alias}.id, -ts_rank_cd({alias}.tsv, q.q, {RANK_BY_LENGTH}) AS score"
            f" FROM {table}, (SELECT {tsquery} AS q) q WHERE {alias}.tsv @@ q.q"
            f" AND {alias}.id > %s AND {where} ORDER BY score, {alias}.id LIMIT %s",
            (*query_params, min_id, *params, limit),
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def _matching(self, table: str, query: LexicalQuery) -> tuple[str, list[Any]] | None:
        """FROM-and-WHERE SQL of the rows of `table` matching `query` (the archived
        memories left out, as FTS5 leaves them out of its index)."""
        found = _tsquery(query)
        if found is None:
            return None
        tsquery, params = found
        name = _TABLES[table]
        archived = " AND status != 'archived'" if name == "memories" else ""
        return f"FROM {name} WHERE tsv @@ {tsquery}{archived}", params

    def match_count(self, table: str, query: LexicalQuery, *, cap: int) -> int:
        """How many rows of `table` match `query`, counting no further than
        `cap` + 1. Scope is not applied: this sizes the work of a query."""
        found = self._matching(table, query)
        if found is None:
            return 0
        where, params = found
        row = self._db.execute(
            f"SELECT count(*) FROM (SELECT 1 {where} LIMIT %s) t", (*params, cap + 1)
        ).fetchone()
        return int(row[0]) if row else 0

    def match_counts(self, table: str, queries: Sequence[LexicalQuery], *, cap: int) -> list[int]:
        return [self.match_count(table, q, cap=cap) for q in queries]

    def matches(self, table: str, query: LexicalQuery, item_id: int) -> bool:
        found = self._matching(table, query)
        if found is None:
            return False
        where, params = found
        row = self._db.execute(f"SELECT 1 {where} AND id = %s", (*params, item_id)).fetchone()
        return row is not None

    def newest_matches_from(self, table: str, query: LexicalQuery, *, count: int) -> int | None:
        found = self._matching(table, query)
        if found is None:
            return None
        where, params = found
        row = self._db.execute(
            f"SELECT id {where} ORDER BY id DESC LIMIT 1 OFFSET %s", (*params, count)
        ).fetchone()
        return None if row is None else int(row[0])

    # -- items behind hits -----------------------------------------------------------

    def memories_with_hashes(self, hashes: Sequence[str], view: View) -> list[tuple[int, str]]:
        where, params = memory_clause(view, "m")
        rows = self._db.execute(
            f"SELECT m.id, m.content_hash FROM memories m WHERE m.content_hash = ANY(%s)"
            f" AND {where}",
            (list(hashes), *params),
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def episodes_with_hashes(self, hashes: Sequence[str], view: View) -> list[tuple[int, str]]:
        where, params = episode_clause(view, "e")
        rows = self._db.execute(
            "SELECT e.id, e.content_hash FROM episodes e WHERE e.content_hash = ANY(%s)"
            f" AND e.kind = 'message' AND {where}",
            (list(hashes), *params),
        ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def visible_episodes(self, ids: Sequence[int], view: View) -> list[int]:
        where, params = episode_clause(view, "e")
        rows = self._db.execute(
            f"SELECT e.id FROM episodes e WHERE e.id = ANY(%s) AND e.kind = 'message'"
            f" AND {where} ORDER BY e.id",
            (list(ids), *params),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def guardrails(self, view: View) -> list[int]:
        where, params = memory_clause(view, "m")
        rows = self._db.execute(
            f"SELECT m.id FROM memories m WHERE m.kind = 'guardrail' AND {where}"
            " ORDER BY m.importance DESC, m.observed_at DESC",
            params,
        ).fetchall()
        return [int(r[0]) for r in rows]

    def fresh(self, view: View, *, since: datetime, limit: int) -> list[int]:
        where, params = memory_clause(view, "m")
        rows = self._db.execute(
            "SELECT m.id FROM memories m WHERE m.kind != 'guardrail' AND m.observed_at >= %s"
            f" AND {where} ORDER BY m.importance DESC, m.observed_at DESC LIMIT %s",
            (since, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def holding(self, subject: str, attribute: str, view: View, *, limit: int) -> list[int]:
        """Ids of the memories `view` may see holding a sure value of the slot, said by
        the asking user, newest first."""
        where, params = memory_clause(view, "m")
        user = view.scope.user or view.own.user
        rows = self._db.execute(
            "SELECT m.id FROM slots s JOIN memories m ON m.id = s.memory_id"
            " WHERE s.subject = %s AND s.attribute = %s AND s.live AND NOT s.negated"
            f" AND NOT s.hedged AND m.user_id IS NOT DISTINCT FROM %s AND {where}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT %s",
            (subject, attribute, user, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def in_window(
        self, view: View, start: datetime, end: datetime, *, limit: int
    ) -> tuple[list[int], list[int]]:
        """What `view` may see of [start, end): the memories dated then (undated: said
        then; guardrails aside) and the turns said then, each in time order."""
        where, params = memory_clause(view, "m")
        memories = self._db.execute(
            "SELECT m.id FROM memories m WHERE m.kind != 'guardrail'"
            " AND ((m.valid_from >= %s AND m.valid_from < %s)"
            " OR (m.valid_from IS NULL AND m.observed_at >= %s AND m.observed_at < %s))"
            f" AND {where} ORDER BY coalesce(m.valid_from, m.observed_at), m.id LIMIT %s",
            (start, end, start, end, *params, limit),
        ).fetchall()
        where, params = episode_clause(view, "e")
        episodes = self._db.execute(
            "SELECT e.id FROM episodes e WHERE e.at >= %s AND e.at < %s"
            f" AND e.kind = 'message' AND {where} ORDER BY e.at, e.id LIMIT %s",
            (start, end, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in memories], [int(r[0]) for r in episodes]

    # -- vectors ---------------------------------------------------------------------

    def missing_vectors(
        self, model_id: str, *, after: tuple[int, int] = (0, 0), limit: int
    ) -> tuple[list[tuple[str, str]], tuple[int, int]]:
        """(content_hash, text) of live memories and message turns with no vector for
        `model_id`, past the mark `after` = (memory id, episode id), and the mark
        reached (as `store.index.Index.missing_vectors`)."""
        found: dict[str, str] = {}
        marks = list(after)
        for slot, (table, status) in enumerate(
            (("memories", "m.status IN ('active', 'disputed')"), ("episodes", "m.kind = 'message'"))
        ):
            requested = limit - len(found)
            end_row = self._db.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()
            end = int(end_row[0]) if end_row else 0
            rows = self._db.execute(
                f"SELECT m.id, m.content_hash, m.text FROM {table} m"
                f" WHERE m.id > %s AND m.id <= %s AND {status} AND NOT EXISTS (SELECT 1"
                " FROM vectors v WHERE v.content_hash = m.content_hash AND v.model_id = %s)"
                " ORDER BY m.id LIMIT %s",
                (marks[slot], end, model_id, requested),
            ).fetchall()
            for row_id, content_hash, text in rows:
                if len(found) >= limit:
                    break
                found.setdefault(str(content_hash), str(text))
                marks[slot] = int(row_id)
            if len(found) >= limit or len(rows) == requested:
                return list(found.items()), (marks[0], marks[1])  # more may remain
            marks[slot] = max(marks[slot], end)
        return list(found.items()), (marks[0], marks[1])

    def put_vectors(self, rows: Iterable[tuple[str, str, int, bytes]], *, now: datetime) -> None:
        """Store (content_hash, model_id, dim, blob) rows (float32 blobs, as the SQLite
        store keeps them); existing ones are kept. A model and dimension seen for the
        first time get their HNSW index first."""
        batch = [(h, m, d, _blob_vector(b), now) for h, m, d, b in rows]
        # Every owner's rows: two writers inserting the same hashes in other orders
        # would wait on each other's rows; behind this lock they take turns.
        self._db.shared_rows()
        for model_id, dim in sorted({(m, d) for _, m, d, _, _ in batch}):
            self._ensure_hnsw(model_id, dim)
        self._db.executemany(
            "INSERT INTO vectors (content_hash, model_id, dim, vector, created_at)"
            " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            batch,
        )

    def _ensure_hnsw(self, model_id: str, dim: int) -> str:
        """The name of the HNSW index (cosine) over `model_id`'s vectors of `dim`,
        created with its row in `vector_indexes` the first time."""
        row = self._db.execute(
            "SELECT index_name FROM vector_indexes WHERE model_id = %s AND dim = %s",
            (model_id, dim),
        ).fetchone()
        if row is not None:
            return str(row[0])
        with self._db.transaction(()):  # a nested write joins an owners' write
            self._db.execute("LOCK TABLE vector_indexes IN EXCLUSIVE MODE")
            row = self._db.execute(
                "SELECT index_name FROM vector_indexes WHERE model_id = %s AND dim = %s",
                (model_id, dim),
            ).fetchone()
            if row is not None:
                return str(row[0])
            count = self._db.execute("SELECT count(*) FROM vector_indexes").fetchone()
            name = f"vectors_hnsw_{int(count[0]) + 1 if count else 1}"
            self._db.execute(
                sql.SQL(
                    "CREATE INDEX {} ON vectors USING hnsw ((vector::vector({})) vector_cosine_ops)"
                    " WHERE model_id = {} AND dim = {}"
                ).format(
                    sql.Identifier(name), sql.Literal(dim), sql.Literal(model_id), sql.Literal(dim)
                )
            )
            self._db.execute(
                "INSERT INTO vector_indexes (model_id, dim, index_name) VALUES (%s, %s, %s)",
                (model_id, dim, name),
            )
        return name

    def nearest_memories(
        self, model_id: str, query: Sequence[float], view: View, *, limit: int
    ) -> list[tuple[int, float]]:
        """(memory id, cosine distance) of the memories `view` may see whose text's
        vector of `model_id` is nearest `query`, nearest first."""
        where, params = memory_clause(view, "m")
        return self._nearest("memories m", "m", where, params, model_id, query, limit)

    def nearest_episodes(
        self, model_id: str, query: Sequence[float], view: View, *, limit: int
    ) -> list[tuple[int, float]]:
        """As `nearest_memories`, over the message turns `view` may see."""
        where, params = episode_clause(view, "e")
        where = f"e.kind = 'message' AND {where}"
        return self._nearest("episodes e", "e", where, params, model_id, query, limit)

    def _nearest(
        self,
        table: str,
        alias: str,
        where: str,
        params: list[Any],
        model_id: str,
        query: Sequence[float],
        limit: int,
    ) -> list[tuple[int, float]]:
        distance, model = _vector_terms(model_id, len(query))
        candidates = sql.SQL(
            "SELECT v.content_hash, {d} AS distance FROM vectors v WHERE {m} ORDER BY {d} LIMIT %s"
        ).format(d=distance, m=model)
        near = sql.SQL(
            "SELECT {a}.id, c.distance FROM ({c}) c JOIN {t} ON {a}.content_hash = c.content_hash"
            " WHERE {w} ORDER BY c.distance, {a}.id LIMIT %s"
        ).format(a=sql.SQL(alias), c=candidates, t=sql.SQL(table), w=sql.SQL(where))
        exact = sql.SQL(
            "SELECT {a}.id, {d} AS distance FROM {t} JOIN vectors v"
            " ON v.content_hash = {a}.content_hash AND {m} WHERE {w}"
            " ORDER BY distance, {a}.id LIMIT %s"
        ).format(a=sql.SQL(alias), d=distance, t=sql.SQL(table), m=model, w=sql.SQL(where))
        rows = self._near_then_exact(near, exact, query, params, limit)
        return [(int(r[0]), float(r[1])) for r in rows]

    def _near_then_exact(
        self,
        near: sql.Composed,
        exact: sql.Composed,
        query: Sequence[float],
        params: list[Any],
        limit: int,
    ) -> list[tuple[Any, ...]]:
        """`near`'s rows (the HNSW index's candidates, then the rule), or `exact`'s when
        the rule left fewer than `limit` of them; both read in one snapshot."""
        vector = Vector(np.asarray(query, dtype=np.float32))
        pool = min(max(limit * OVERFETCH, EF_SEARCH_MIN), EF_SEARCH_MAX)
        with self._db.snapshot():  # a read: no writer lock, SET LOCAL ends with it
            self._db.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(pool)))
            rows = self._db.execute(near, (vector, vector, pool, *params, limit)).fetchall()
            if len(rows) < limit:  # the rule left too few of the index's candidates: exact
                rows = self._db.execute(exact, (vector, *params, limit)).fetchall()
        return rows

    def nearest_texts(
        self, model_id: str, query: Sequence[float], view: View | None, *, limit: int
    ) -> list[tuple[str, float]]:
        """(content hash, cosine distance) of the texts whose vector of `model_id` is
        nearest `query`, nearest first, each the text of a memory or message turn `view`
        may see (without a view: of any a search can return, `_SEARCHABLE`'s). Asks the
        HNSW index for candidates as `nearest_memories` does, then searches exactly over
        what the rule lets through when too few survive."""
        if view is None:
            seen = (
                "(EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = {h}"
                " AND m.status != 'archived') OR EXISTS (SELECT 1 FROM episodes e"
                " WHERE e.content_hash = {h} AND e.kind = 'message'))"
            )
            params: list[Any] = []
        else:
            memories, m_params = memory_clause(view, "m")
            episodes, e_params = episode_clause(view, "e")
            seen = (
                f"(EXISTS (SELECT 1 FROM memories m WHERE m.content_hash = {{h}} AND {memories})"
                " OR EXISTS (SELECT 1 FROM episodes e WHERE e.content_hash = {h}"
                f" AND e.kind = 'message' AND {episodes}))"
            )
            params = [*m_params, *e_params]
        distance, model = _vector_terms(model_id, len(query))
        near = sql.SQL(
            "SELECT c.content_hash, c.distance FROM (SELECT v.content_hash, {d} AS distance"
            " FROM vectors v WHERE {m} ORDER BY {d} LIMIT %s) c WHERE {s}"
            " ORDER BY c.distance, c.content_hash LIMIT %s"
        ).format(d=distance, m=model, s=sql.SQL(seen.replace("{h}", "c.content_hash")))
        exact = sql.SQL(
            "SELECT v.content_hash, {d} AS distance FROM vectors v WHERE {m} AND {s}"
            " ORDER BY distance, v.content_hash LIMIT %s"
        ).format(d=distance, m=model, s=sql.SQL(seen.replace("{h}", "v.content_hash")))
        rows = self._near_then_exact(near, exact, query, params, limit)
        return [(str(r[0]), float(r[1])) for r in rows]

    def has_vectors(self, model_id: str, dim: int) -> bool:
        """Whether any vector of `model_id` and `dim` is stored."""
        row = self._db.execute(
            "SELECT EXISTS (SELECT 1 FROM vectors WHERE model_id = %s AND dim = %s)",
            (model_id, dim),
        ).fetchone()
        return bool(row and row[0])

    # -- what an in-process vector index is fed with (recall's InProcessIndex) ---------

    def searchable_vectors(self, model_id: str) -> Iterator[tuple[str, int, bytes]]:
        """(content_hash, dim, float32 blob) of `model_id` for every searchable text (a
        memory not archived, a message turn)."""
        for h, dim, vector in self._db.execute(
            f"SELECT v.content_hash, v.dim, v.vector FROM vectors v WHERE {_SEARCHABLE}",
            (model_id,),
        ):
            yield str(h), int(dim), np.asarray(vector.to_numpy(), dtype=np.float32).tobytes()

    def searchable_vector_hashes(self, model_id: str) -> list[str]:
        rows = self._db.execute(
            f"SELECT v.content_hash FROM vectors v WHERE {_SEARCHABLE}", (model_id,)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def searchable_vector_count(self, model_id: str) -> int:
        row = self._db.execute(
            f"SELECT count(*) FROM vectors v WHERE {_SEARCHABLE}", (model_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def marks(self) -> tuple[int, int, int]:
        """The newest (memory id, episode id, audit id): pass them to `searchable_since`."""
        row = self._db.execute(
            "SELECT (SELECT coalesce(max(id), 0) FROM memories),"
            " (SELECT coalesce(max(id), 0) FROM episodes),"
            " (SELECT coalesce(max(id), 0) FROM audit)"
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

    def searchable_since(
        self, after: tuple[int, int, int]
    ) -> tuple[list[str], tuple[int, int, int]]:
        """Content hashes of texts that may have become searchable after `after` (stored
        since, or restored from the cold tier since), and the marks reached."""
        memory_mark, episode_mark, audit_mark = marks = self.marks()
        rows = self._db.execute(
            "SELECT content_hash FROM memories WHERE id > %s AND id <= %s"
            " AND status != 'archived'"
            " UNION SELECT content_hash FROM episodes WHERE id > %s AND id <= %s"
            " AND kind = 'message' AND content_hash IS NOT NULL"
            " UNION SELECT m.content_hash FROM audit a JOIN memories m ON m.id = a.memory_id"
            " WHERE a.id > %s AND a.id <= %s AND a.action = 'restore' AND m.status != 'archived'",
            (after[0], memory_mark, after[1], episode_mark, after[2], audit_mark),
        ).fetchall()
        return [str(r[0]) for r in rows], marks

    def vectors_for(self, model_id: str, hashes: Sequence[str]) -> Iterator[tuple[str, int, bytes]]:
        """(content_hash, dim, float32 blob) of `model_id` for each of `hashes` that has one."""
        for h, dim, vector in self._db.execute(
            "SELECT content_hash, dim, vector FROM vectors WHERE model_id = %s"
            " AND content_hash = ANY(%s)",
            (model_id, list(hashes)),
        ):
            yield str(h), int(dim), np.asarray(vector.to_numpy(), dtype=np.float32).tobytes()

    def vector_count(self, model_id: str) -> int:
        row = self._db.execute(
            "SELECT count(*) FROM vectors WHERE model_id = %s", (model_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def vector_models(self) -> dict[str, tuple[int, int]]:
        rows = self._db.execute(
            "SELECT model_id, max(dim), count(*) FROM vectors GROUP BY model_id"
        ).fetchall()
        return {str(m): (int(d), int(n)) for m, d, n in rows}

    def count_missing(self, model_id: str) -> int:
        """How many distinct live texts have no vector for `model_id`."""
        row = self._db.execute(
            "SELECT count(DISTINCT content_hash) FROM ("
            " SELECT content_hash FROM memories WHERE status IN ('active', 'disputed')"
            " UNION ALL SELECT content_hash FROM episodes WHERE kind = 'message'"
            ") AS t WHERE NOT EXISTS (SELECT 1 FROM vectors v"
            " WHERE v.content_hash = t.content_hash AND v.model_id = %s)",
            (model_id,),
        ).fetchone()
        return int(row[0]) if row else 0


def _vector_terms(model_id: str, dim: int) -> tuple[sql.Composed, sql.Composed]:
    """The cosine distance to the query (its one `%s`) and the rows of `model_id` and
    `dim`. The model and dimension as literals: the partial HNSW index is only chosen
    when the planner sees them (a generic plan with parameters would not)."""
    distance = sql.SQL("(v.vector::vector({dim})) <=> %s::vector({dim})").format(
        dim=sql.Literal(dim)
    )
    model = sql.SQL("v.model_id = {} AND v.dim = {}").format(
        sql.Literal(model_id), sql.Literal(dim)
    )
    return distance, model
