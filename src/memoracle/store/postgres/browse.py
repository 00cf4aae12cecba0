"""The web page's reads in PostgreSQL: `store.browse.Browse`'s methods, same signatures.

Plain queries for now: the planner's indexes (observed time, subject, the GIN text
index) instead of the SQLite store's bounded walk of the newest rows; the samples of
subjects and of the graph page are the same (`SUBJECTS_SAMPLE`, `GRAPH_SAMPLE`)."""

from __future__ import annotations

from typing import Any

from memoracle.storage_types import GRAPH_SAMPLE, Filter, View
from memoracle.store import browse as sqlite_browse
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.lexical import Lexical
from memoracle.store.postgres.visibility import scope_clause
from memoracle.types import Entity, Relation


class PgBrowse:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def page(self, view: View, wanted: Filter, *, limit: int, offset: int) -> list[int]:
        """Ids of the memories `view`'s requester may see that fit `wanted`, newest
        first (by the time they were said), `limit` of them from `offset`."""
        visible, params = scope_clause(view, "m")
        clauses = [visible]
        if wanted.text and (found := Lexical.words(wanted.text).sql()) is not None:
            tsquery, words = found
            # as FTS5 matches: archived memories are out of the text index
            clauses.append(f"m.tsv @@ {tsquery} AND m.status != 'archived'")
            params += words
        if wanted.subject:  # as said, in any case
            clauses.append("lower(m.subject) = lower(%s)")
            params.append(wanted.subject)
        for column, value in (
            ("m.kind = %s", wanted.kind),
            ("m.status = %s", wanted.status),
            ("m.observed_at >= %s", wanted.since),
            ("m.observed_at < %s", wanted.until),
        ):
            if value:
                clauses.append(column)
                params.append(value)
        rows = self._db.execute(
            f"SELECT m.id FROM memories m WHERE {' AND '.join(clauses)}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT %s OFFSET %s",
            (*params, limit, offset),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def superseded(self, memory_id: int, *, limit: int = 50) -> list[int]:
        rows = self._db.execute(
            "SELECT id FROM memories WHERE superseded_by = %s ORDER BY id DESC LIMIT %s",
            (memory_id, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        self._db.execute("UPDATE memories SET pinned = %s WHERE id = %s", (pinned, memory_id))

    def subjects(self, view: View, *, limit: int = 40) -> list[tuple[str, int]]:
        """The subjects most of the newest `SUBJECTS_SAMPLE` active memories `view`'s
        requester sees are about, with counts among them."""
        visible, params = scope_clause(view, "m")
        rows = self._db.execute(
            "SELECT subject, count(*) AS n FROM (SELECT m.subject FROM memories m"
            f" WHERE m.status = 'active' AND {visible} ORDER BY m.observed_at DESC LIMIT %s) s"
            " WHERE subject IS NOT NULL GROUP BY subject ORDER BY n DESC, subject LIMIT %s",
            (*params, sqlite_browse.SUBJECTS_SAMPLE, limit),
        ).fetchall()
        return [(str(r[0]), int(r[1])) for r in rows]

    def _newest_live(self, view: View) -> tuple[str, list[Any]]:
        visible, params = scope_clause(view, "m")
        return (
            "(SELECT m.id FROM memories m WHERE m.status IN ('active', 'disputed')"
            f" AND {visible} ORDER BY m.observed_at DESC, m.id DESC LIMIT %s)",
            [*params, GRAPH_SAMPLE],
        )

    def entities(self, view: View, *, type_: str | None, limit: int) -> list[Entity]:
        """The entities the newest `GRAPH_SAMPLE` live memories `view`'s requester sees
        name, most named among them first."""
        newest, params = self._newest_live(view)
        rows = self._db.execute(
            f"SELECT e.id, e.key, e.name, e.type, count(*) AS n FROM {newest} r"
            " JOIN entity_memories em ON em.memory_id = r.id"
            " JOIN entities e ON e.id = em.entity_id WHERE (%s::text IS NULL OR e.type = %s)"
            " GROUP BY e.id ORDER BY n DESC, e.key LIMIT %s",
            (*params, type_, type_, limit),
        ).fetchall()
        return [Entity(int(i), str(k), str(n), str(t), (), int(c)) for i, k, n, t, c in rows]

    def relations(self, view: View, *, limit: int) -> list[Relation]:
        """The relations those newest memories state, most stated among them first."""
        newest, params = self._newest_live(view)
        rows = self._db.execute(
            "SELECT rel.id, s.key, rel.relation, t.key, count(*) AS n"
            f" FROM {newest} r JOIN relation_memories rm ON rm.memory_id = r.id"
            " JOIN relations rel ON rel.id = rm.relation_id"
            " JOIN entities s ON s.id = rel.source_id JOIN entities t ON t.id = rel.target_id"
            " GROUP BY rel.id, s.key, t.key ORDER BY n DESC, s.key, rel.relation, t.key"
            " LIMIT %s",
            (*params, limit),
        ).fetchall()
        return [Relation(int(i), str(s), str(r), str(t), int(n)) for i, s, r, t, n in rows]
