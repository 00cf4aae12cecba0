"""The SQL of the web page (`memoracle ui`): memories filtered and paged for a person to
browse, what a memory superseded, and the pinned flag set by hand.

Every read takes the requester's `View`, so a row they may not see is never read
(docs/scopes.md); the page asks one more row than it shows to know whether a next page
exists, instead of counting the whole store.

Fast at 100k memories: a page is first looked for among the newest `NEWEST_WALK`
memories, read in the order of `memories_observed` and stopped at its last row (words
asked for are matched by FTS5 once, then tested by id as the walk goes); only a rarer
filter asks for a sort. A subject is looked up in `memories_subject` under each of
its stored spellings (found by a skip scan of that index); the subjects the filter
offers are counted among the newest `SUBJECTS_SAMPLE` memories, not all.
"""

from __future__ import annotations

from typing import Any

from memoracle.storage_types import GRAPH_SAMPLE, Filter, View, every_word
from memoracle.store.db import Database, db_time
from memoracle.store.fts import match_expression
from memoracle.store.index import scope_clause
from memoracle.types import Entity, Relation

SUBJECTS_SAMPLE = 2000  # the newest memories whose subjects the filter offers
# The memories page first walks at most this many memories newest first (by
# `memories_observed`, in order, no sort; within the dates asked): when that was all of
# them or the page is full, it is the answer; a rarer filter then asks the planner (a
# kind or status index and a sort).
NEWEST_WALK = 20_000
# The distinct subjects in [?1, ?2), one index seek each (a skip scan of
# `memories_subject`), those equal to ?3 in any case kept.
_SPELLINGS = (
    "WITH RECURSIVE s(v) AS ("
    " SELECT (SELECT min(subject) FROM memories INDEXED BY memories_subject"
    " WHERE subject >= ?1 AND subject < ?2)"
    " UNION ALL SELECT (SELECT min(subject) FROM memories INDEXED BY memories_subject"
    " WHERE subject > s.v AND subject < ?2) FROM s WHERE s.v IS NOT NULL)"
    " SELECT v FROM s WHERE v = ?3 COLLATE NOCASE"
)


def _said_between(wanted: Filter) -> tuple[list[str], list[Any]]:
    clauses, params = [], []
    for column, value in (
        ("m.observed_at >= ?", wanted.since),
        ("m.observed_at < ?", wanted.until),
    ):
        if value:
            clauses.append(column)
            params.append(db_time(value))
    return clauses, params


def _after(first: str) -> str | bytes:
    """The least value above every text starting with `first` in SQLite's BINARY order
    (UTF-8's, code points'): the next character, or past the last one a BLOB, which
    sorts above every text."""
    code = ord(first) + 1
    if code > 0x10FFFF:
        return b"\xff"
    return chr(0xE000 if 0xD800 <= code < 0xE000 else code)  # no surrogate is a text


class Browse:
    def __init__(self, db: Database) -> None:
        self._db = db

    def page(self, view: View, wanted: Filter, *, limit: int, offset: int) -> list[int]:
        """Ids of the memories `view`'s requester may see that fit `wanted`, newest
        first (by the time they were said), `limit` of them from `offset`."""
        visible, params = scope_clause(view, "m")
        clauses = [visible]
        words = []  # the text asked, as FTS5 matches it
        if wanted.text and (query := every_word(wanted.text)) is not None:
            words = [match_expression(query)]
        if wanted.subject:  # as said, in any case: each spelling is a range of the index
            spellings = self._spellings(wanted.subject)
            if not spellings:
                return []
            clauses.append(f"m.subject IN ({','.join('?' * len(spellings))})")
            params += spellings
        for column, value in (("m.kind = ?", wanted.kind), ("m.status = ?", wanted.status)):
            if value:
                clauses.append(column)
                params.append(value)
        said, said_params = _said_between(wanted)
        where = " AND ".join(clauses + said)
        order = " ORDER BY m.observed_at DESC, m.id DESC LIMIT ? OFFSET ?"
        if not wanted.subject:
            within = " AND ".join(c.replace("m.", "") for c in said) or "1"
            cutoff = self._db.execute(
                f"SELECT observed_at FROM memories INDEXED BY memories_observed WHERE {within}"
                " ORDER BY observed_at DESC LIMIT 1 OFFSET ?",
                (*said_params, NEWEST_WALK - 1),
            ).fetchone()
            # the text's matches gathered once (FTS5), each memory walked tested by id
            matching = "m.id IN (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?)"
            rows = self._db.execute(
                "SELECT m.id FROM memories m INDEXED BY memories_observed"
                f" WHERE m.observed_at >= ? AND {matching if words else '1'} AND {where}{order}",
                (cutoff[0] if cutoff else "", *words, *params, *said_params, limit, offset),
            ).fetchall()
            if cutoff is None or len(rows) == limit:  # every one walked, or a full page
                return [int(r[0]) for r in rows]
        source = "memories_fts f JOIN memories m ON m.id = f.rowid" if words else "memories m"
        rows = self._db.execute(
            f"SELECT m.id FROM {source} WHERE {'memories_fts MATCH ?' if words else '1'}"
            f" AND {where}{order}",
            (*words, *params, *said_params, limit, offset),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def _spellings(self, subject: str) -> list[str]:
        """The subjects stored that are `subject` in any case (NOCASE: ASCII letters).
        Such a subject starts with the same first character in either case, so only
        those ranges of `memories_subject` are looked at, one seek per distinct subject
        in them (not a walk of every memory's subject: 30 ms at 100k)."""
        first = subject[:1]
        starts = dict.fromkeys((first.upper(), first.lower()) if first.isascii() else (first,))
        found: list[str] = []
        for start in filter(None, starts):
            rows = self._db.execute(_SPELLINGS, (start, _after(start), subject))
            found += [str(r[0]) for r in rows]
        return found

    def superseded(self, memory_id: int, *, limit: int = 50) -> list[int]:
        """Ids of the memories `memory_id` superseded (their `superseded_by`), newest first."""
        rows = self._db.execute(
            "SELECT id FROM memories WHERE superseded_by = ? ORDER BY id DESC LIMIT ?",
            (memory_id, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def set_pinned(self, memory_id: int, pinned: bool) -> None:
        """Pin a memory (kept through the archive's cap, like a guardrail) or unpin it."""
        self._db.execute("UPDATE memories SET pinned = ? WHERE id = ?", (int(pinned), memory_id))

    def subjects(self, view: View, *, limit: int = 40) -> list[tuple[str, int]]:
        """The subjects most of the newest `SUBJECTS_SAMPLE` active memories `view`'s
        requester sees are about, with counts among them."""
        visible, params = scope_clause(view, "m")
        rows: list[Any] = self._db.execute(
            "SELECT subject, count(*) AS n FROM (SELECT m.subject FROM memories m"
            f" INDEXED BY memories_observed WHERE m.status = 'active' AND {visible}"
            " ORDER BY m.observed_at DESC LIMIT ?) WHERE subject IS NOT NULL"
            " GROUP BY subject ORDER BY n DESC, subject LIMIT ?",
            (*params, SUBJECTS_SAMPLE, limit),
        ).fetchall()
        return [(str(r[0]), int(r[1])) for r in rows]

    def _newest_live(self, view: View) -> tuple[str, list[Any]]:
        """The newest `GRAPH_SAMPLE` live memories `view`'s requester sees, as SQL."""
        visible, params = scope_clause(view, "m")
        return (
            "(SELECT m.id FROM memories m INDEXED BY memories_observed"
            f" WHERE m.status IN ('active', 'disputed') AND {visible}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT ?)",
            [*params, GRAPH_SAMPLE],
        )

    def entities(self, view: View, *, type_: str | None, limit: int) -> list[Entity]:
        """The entities the newest `GRAPH_SAMPLE` live memories `view`'s requester sees
        name, most named among them first (the count is theirs)."""
        newest, params = self._newest_live(view)
        rows = self._db.execute(
            f"SELECT e.id, e.key, e.name, e.type, count(*) AS n FROM {newest} r"
            " JOIN entity_memories em ON em.memory_id = r.id"
            " JOIN entities e ON e.id = em.entity_id WHERE (? IS NULL OR e.type = ?)"
            " GROUP BY e.id ORDER BY n DESC, e.key LIMIT ?",
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
            " GROUP BY rel.id ORDER BY n DESC, s.key, rel.relation, t.key LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [Relation(int(i), str(s), str(r), str(t), int(n)) for i, s, r, t, n in rows]
