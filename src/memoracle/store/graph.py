"""The knowledge graph's tables: entities, their aliases, relations, and the memories
that state each (docs/graph.md).

An entity is a canonical key ("anna") with a display name, a type from the ontology
and the names it was seen under; a relation is (source entity, type, target entity).
Both are linked to every memory that states them, so a memory forgotten or archived
stops counting, and `memoracle graph show` can always cite its sources. Which entities a
text names is `graph.extract`'s; this module only stores and reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import GraphRows, View
from memoracle.store.db import Database, db_time, in_chunks
from memoracle.store.index import memory_clause, scope_clause
from memoracle.types import Entity, Relation

LIVE_SQL = "('active', 'disputed')"
# The same test kept off the status index (unary +), so a count over the graph walks its
# links to their memories, not every live memory of the store to its links.
UNINDEXED_LIVE = f"+m.status IN {LIVE_SQL}"


class Graph:
    def __init__(self, db: Database) -> None:
        self._db = db

    def entity(self, key: str, name: str, type_: str, *, now: datetime) -> int:
        """The id of the entity `key`, created with `name` and `type_` if new (a known
        entity keeps its first type); `name` is recorded as one of its aliases."""
        self._db.execute(
            "INSERT INTO entities (key, name, type, first_seen) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (key) DO NOTHING",
            (key, name, type_, db_time(now)),
        )
        entity_id = int(
            self._db.execute("SELECT id FROM entities WHERE key = ?", (key,)).fetchone()[0]
        )
        self._db.execute(
            "INSERT OR IGNORE INTO entity_aliases (entity_id, alias) VALUES (?, ?)",
            (entity_id, name),
        )
        return entity_id

    def relation(self, source: int, relation: str, target: int, *, now: datetime) -> int:
        """The id of the relation (source, relation, target), created if new."""
        self._db.execute(
            "INSERT INTO relations (source_id, relation, target_id, first_seen)"
            " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (source, relation, target, db_time(now)),
        )
        row = self._db.execute(
            "SELECT id FROM relations WHERE source_id = ? AND relation = ? AND target_id = ?",
            (source, relation, target),
        ).fetchone()
        return int(row[0])

    def link(
        self, memory_id: int, *, entities: Iterable[int] = (), relations: Iterable[int] = ()
    ) -> None:
        """Record that `memory_id` names `entities` and states `relations`, and that its
        text was read for the graph (even when it named nothing)."""
        self._db.executemany(
            "INSERT OR IGNORE INTO entity_memories (entity_id, memory_id) VALUES (?, ?)",
            [(e, memory_id) for e in entities],
        )
        self._db.executemany(
            "INSERT OR IGNORE INTO relation_memories (relation_id, memory_id) VALUES (?, ?)",
            [(r, memory_id) for r in relations],
        )
        self._db.execute("INSERT OR IGNORE INTO graph_read (memory_id) VALUES (?)", (memory_id,))

    def unread(self, *, limit: int) -> list[int]:
        """Live memories whose text was never read for the graph, oldest first."""
        rows = self._db.execute(
            f"SELECT m.id FROM memories m WHERE m.status IN {LIVE_SQL}"
            " AND NOT EXISTS (SELECT 1 FROM graph_read g WHERE g.memory_id = m.id)"
            " ORDER BY m.id LIMIT ?",
            (limit,),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def entities(
        self, *, type_: str | None = None, limit: int = 1_000_000, view: View | None = None
    ) -> list[Entity]:
        """Entities named by at least one live memory (that `view`'s requester may see,
        when given; the counts too), most named first."""
        seen, params = _seen(view)
        rows = self._db.execute(
            "SELECT e.id, e.key, e.name, e.type, count(DISTINCT m.id) AS n FROM entities e"
            " JOIN entity_memories em ON em.entity_id = e.id"
            f" JOIN memories m ON m.id = em.memory_id AND {UNINDEXED_LIVE} AND {seen}"
            " WHERE (? IS NULL OR e.type = ?) GROUP BY e.id ORDER BY n DESC, e.key LIMIT ?",
            (*params, type_, type_, limit),
        ).fetchall()
        aliases = self._aliases([int(r[0]) for r in rows])
        return [
            Entity(int(i), str(k), str(n), str(t), aliases.get(int(i), ()), int(c))
            for i, k, n, t, c in rows
        ]

    def relations(
        self, *, entity: int | None = None, limit: int = 1_000_000, view: View | None = None
    ) -> list[Relation]:
        """Relations stated by at least one live memory (that `view`'s requester may see,
        when given), touching `entity`, if given."""
        seen, params = _seen(view)
        rows = self._db.execute(
            "SELECT r.id, s.key, r.relation, t.key, count(DISTINCT m.id) AS n FROM relations r"
            " JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id"
            " JOIN relation_memories rm ON rm.relation_id = r.id"
            f" JOIN memories m ON m.id = rm.memory_id AND {UNINDEXED_LIVE} AND {seen}"
            " WHERE (? IS NULL OR r.source_id = ? OR r.target_id = ?)"
            " GROUP BY r.id ORDER BY n DESC, s.key, r.relation, t.key LIMIT ?",
            (*params, entity, entity, entity, limit),
        ).fetchall()
        return [Relation(int(i), str(s), str(r), str(t), int(n)) for i, s, r, t, n in rows]

    def find(self, key: str, *, view: View | None = None) -> Entity | None:
        """The entity whose canonical key is `key` (every alias of it has that key); with
        `view`, only if a live memory its requester may see names it."""
        row = self._db.execute(
            "SELECT id, key, name, type FROM entities WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        i, k, n, t = row
        seen, params = _seen(view)
        count = self._db.execute(
            "SELECT count(DISTINCT m.id) FROM entity_memories em JOIN memories m"
            f" ON m.id = em.memory_id AND m.status IN {LIVE_SQL} AND {seen}"
            " WHERE em.entity_id = ?",
            (*params, i),
        ).fetchone()[0]
        if view is not None and not count:
            return None
        return Entity(
            int(i), str(k), str(n), str(t), self._aliases([int(i)]).get(int(i), ()), int(count)
        )

    def memories_of(
        self, entity_ids: Sequence[int], *, limit: int, view: View | None = None
    ) -> list[int]:
        """Live memories naming any of `entity_ids` (that `view`'s requester may see,
        when given), newest first."""
        if not entity_ids:
            return []
        marks = ",".join("?" * len(entity_ids))
        seen, params = _seen(view)
        rows = self._db.execute(
            "SELECT DISTINCT m.id FROM entity_memories em JOIN memories m ON m.id = em.memory_id"
            f" WHERE em.entity_id IN ({marks}) AND m.status IN {LIVE_SQL} AND {seen}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT ?",
            (*entity_ids, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def entities_of(self, memory_ids: Sequence[int]) -> dict[int, list[int]]:
        """For each of `memory_ids`, the entities it names."""
        found: dict[int, list[int]] = {i: [] for i in memory_ids}
        if memory_ids:
            marks = ",".join("?" * len(memory_ids))
            for entity_id, memory_id in self._db.execute(
                f"SELECT entity_id, memory_id FROM entity_memories WHERE memory_id IN ({marks})",
                tuple(memory_ids),
            ):
                found[int(memory_id)].append(int(entity_id))
        return found

    # -- the whole graph, for its log (graph.log) ---------------------------------------

    def snapshot(self) -> GraphRows:
        """The whole graph as of one read snapshot (or the caller's open transaction):
        every stored entity and relation, named by live memories or not, and the links
        of live memories. Unsorted. Joined here rather than in SQL: reading each table
        once is several times faster on a large graph."""
        opened = not self._db.conn.in_transaction
        if opened:
            self._db.execute("BEGIN")  # deferred: a read snapshot, no write lock
        try:
            keys: dict[int, str] = {}
            entities: dict[int, tuple[str, str, str, list[str]]] = {}
            for i, key, name, type_ in self._db.execute("SELECT id, key, name, type FROM entities"):
                keys[int(i)] = str(key)
                entities[int(i)] = (str(key), str(name), str(type_), [])
            for entity_id, alias in self._db.execute(
                "SELECT entity_id, alias FROM entity_aliases ORDER BY rowid"
            ):
                entities[int(entity_id)][3].append(str(alias))
            relations: dict[int, tuple[str, str, str]] = {
                int(i): (keys[int(s)], str(r), keys[int(t)])
                for i, s, r, t in self._db.execute(
                    "SELECT id, source_id, relation, target_id FROM relations"
                )
            }
            live = {
                int(r[0])
                for r in self._db.execute(f"SELECT id FROM memories WHERE status IN {LIVE_SQL}")
            }
            entity_links = [
                (keys[int(e)], int(m))
                for e, m in self._db.execute("SELECT entity_id, memory_id FROM entity_memories")
                if m in live
            ]
            relation_links = [
                (*relations[int(r)], int(m))
                for r, m in self._db.execute("SELECT relation_id, memory_id FROM relation_memories")
                if m in live
            ]
        finally:
            if opened:
                self._db.execute("COMMIT")  # nothing was written: this ends the snapshot
        return GraphRows(
            [(k, n, t, tuple(a)) for k, n, t, a in entities.values()],
            list(relations.values()),
            entity_links,
            relation_links,
        )

    # -- read by search (entity expansion) ---------------------------------------------

    def ids_of(self, keys: Sequence[str]) -> dict[str, int]:
        """Entity id by canonical key, for those of `keys` that are entities."""
        found: dict[str, int] = {}
        for chunk, marks in in_chunks(keys):
            for entity_id, key in self._db.execute(
                f"SELECT id, key FROM entities WHERE key IN ({marks})", tuple(chunk)
            ):
                found[str(key)] = int(entity_id)
        return found

    def longer_keys(self, first_words: Sequence[str], *, limit: int) -> list[str]:
        """Keys of several words whose first word is one of `first_words` ("bank" ->
        "bank america"): the names a query may spell out over several words. Each is an
        index range, so a store of any size answers in microseconds."""
        found: list[str] = []
        for word in first_words:
            found += [
                str(r[0])
                for r in self._db.execute(
                    "SELECT key FROM entities WHERE key >= ? AND key < ? LIMIT ?",
                    (f"{word} ", f"{word}!", limit),
                )
            ]
        return found

    def related(self, entity_ids: Sequence[int], others: Sequence[int], view: View) -> set[int]:
        """Those of `others` one relation away from any of `entity_ids`, through a
        relation that a memory `view` may see states."""
        if not entity_ids or not others:
            return set()
        where, params = memory_clause(view)
        a, b = ",".join("?" * len(entity_ids)), ",".join("?" * len(others))
        rows = self._db.execute(
            "SELECT r.source_id, r.target_id FROM relations r"
            f" WHERE ((r.source_id IN ({a}) AND r.target_id IN ({b}))"
            f" OR (r.source_id IN ({b}) AND r.target_id IN ({a})))"
            " AND EXISTS (SELECT 1 FROM relation_memories rm CROSS JOIN memories m"
            f" ON m.id = rm.memory_id WHERE rm.relation_id = r.id AND {where})",
            (*entity_ids, *others, *others, *entity_ids, *params),
        ).fetchall()
        wanted = set(others)
        return {int(e) for row in rows for e in row if int(e) in wanted}

    def memory_texts(self, memory_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """(text, content hash) of each of `memory_ids` that exists: what search reads of
        the memories the graph proposes, without their whole rows and provenance."""
        found: dict[int, tuple[str, str]] = {}
        for chunk, marks in in_chunks(memory_ids):
            for memory_id, text, content_hash in self._db.execute(
                f"SELECT id, text, content_hash FROM memories WHERE id IN ({marks})", chunk
            ):
                found[int(memory_id)] = (str(text), str(content_hash))
        return found

    def newest_memories(self, entity_id: int, view: View, *, limit: int, scan: int) -> list[int]:
        """The newest (highest id) memories naming `entity_id` that `view` may see, at
        most `limit`, among its `scan` newest links (so a name in a million memories
        costs no more than a rare one)."""
        where, params = memory_clause(view)
        rows = self._db.execute(
            "SELECT m.id FROM (SELECT memory_id FROM entity_memories WHERE entity_id = ?"
            " ORDER BY memory_id DESC LIMIT ?) em JOIN memories m ON m.id = em.memory_id"
            f" WHERE {where} ORDER BY m.id DESC LIMIT ?",
            (entity_id, scan, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def counts(self) -> dict[str, int]:
        """Entities and relations stored, and the orphans among the entities: those no
        live memory names any more (kept, so a restored memory finds its entities)."""
        entities, orphans = self._db.execute(
            "SELECT count(*), sum(NOT EXISTS (SELECT 1 FROM entity_memories em"
            f" JOIN memories m ON m.id = em.memory_id AND m.status IN {LIVE_SQL}"
            " WHERE em.entity_id = e.id)) FROM entities e"
        ).fetchone()
        relations = self._db.execute("SELECT count(*) FROM relations").fetchone()[0]
        return {
            "entities": int(entities),
            "orphans": int(orphans or 0),
            "relations": int(relations),
        }

    def _aliases(self, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        found: dict[int, list[str]] = {}
        for entity_id, alias in self._db.execute(
            f"SELECT entity_id, alias FROM entity_aliases WHERE entity_id IN ({marks})"
            " ORDER BY rowid",
            tuple(ids),
        ):
            found.setdefault(int(entity_id), []).append(str(alias))
        return {i: tuple(a) for i, a in found.items()}


def _seen(view: View | None) -> tuple[str, list[Any]]:
    """The visibility rule over memories aliased `m`, or no condition without `view`."""
    return scope_clause(view, "m") if view is not None else ("1", [])
