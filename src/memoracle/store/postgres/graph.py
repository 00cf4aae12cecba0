"""The knowledge graph's tables in PostgreSQL: `store.graph.Graph`'s methods, same
signatures, the same `Entity`, `Relation` and `GraphRows` values."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import GraphRows, View
from memoracle.store.postgres.connection import PgDatabase
from memoracle.store.postgres.visibility import memory_clause, scope_clause
from memoracle.types import Entity, Relation

LIVE_SQL = "('active', 'disputed')"


def _seen(view: View | None) -> tuple[str, list[Any]]:
    """The visibility rule over memories aliased `m`, or no condition without `view`."""
    return scope_clause(view, "m") if view is not None else ("TRUE", [])


class PgGraph:
    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    def entity(self, key: str, name: str, type_: str, *, now: datetime) -> int:
        """The id of the entity `key`, created with `name` and `type_` if new (a known
        entity keeps its first type); `name` is recorded as one of its aliases."""
        self._db.shared_rows()  # every owner's: see `locks`
        self._db.execute(
            "INSERT INTO entities (key, name, type, first_seen) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (key) DO NOTHING",
            (key, name, type_, now),
        )
        row = self._db.execute("SELECT id FROM entities WHERE key = %s", (key,)).fetchone()
        assert row is not None
        self._db.execute(
            "INSERT INTO entity_aliases (entity_id, alias) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (row[0], name),
        )
        return int(row[0])

    def relation(self, source: int, relation: str, target: int, *, now: datetime) -> int:
        """The id of the relation (source, relation, target), created if new."""
        self._db.shared_rows()
        self._db.execute(
            "INSERT INTO relations (source_id, relation, target_id, first_seen)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (source, relation, target, now),
        )
        row = self._db.execute(
            "SELECT id FROM relations WHERE source_id = %s AND relation = %s AND target_id = %s",
            (source, relation, target),
        ).fetchone()
        assert row is not None
        return int(row[0])

    def link(
        self, memory_id: int, *, entities: Iterable[int] = (), relations: Iterable[int] = ()
    ) -> None:
        """Record that `memory_id` names `entities` and states `relations`, and that its
        text was read for the graph (even when it named nothing)."""
        self._db.executemany(
            "INSERT INTO entity_memories (entity_id, memory_id) VALUES (%s, %s)"
            " ON CONFLICT DO NOTHING",
            [(e, memory_id) for e in entities],
        )
        self._db.executemany(
            "INSERT INTO relation_memories (relation_id, memory_id) VALUES (%s, %s)"
            " ON CONFLICT DO NOTHING",
            [(r, memory_id) for r in relations],
        )
        self._db.execute(
            "INSERT INTO graph_read (memory_id) VALUES (%s) ON CONFLICT DO NOTHING", (memory_id,)
        )

    def unread(self, *, limit: int) -> list[int]:
        rows = self._db.execute(
            f"SELECT m.id FROM memories m WHERE m.status IN {LIVE_SQL}"
            " AND NOT EXISTS (SELECT 1 FROM graph_read g WHERE g.memory_id = m.id)"
            " ORDER BY m.id LIMIT %s",
            (limit,),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def entities(
        self, *, type_: str | None = None, limit: int = 1_000_000, view: View | None = None
    ) -> list[Entity]:
        """Entities named by at least one live memory (that `view` may see), most named
        first."""
        seen, params = _seen(view)
        rows = self._db.execute(
            "SELECT e.id, e.key, e.name, e.type, count(DISTINCT m.id) AS n FROM entities e"
            " JOIN entity_memories em ON em.entity_id = e.id"
            f" JOIN memories m ON m.id = em.memory_id AND m.status IN {LIVE_SQL} AND {seen}"
            " WHERE (%s::text IS NULL OR e.type = %s) GROUP BY e.id ORDER BY n DESC, e.key"
            " LIMIT %s",
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
        """Relations stated by at least one live memory (that `view` may see), touching
        `entity` if given."""
        seen, params = _seen(view)
        rows = self._db.execute(
            "SELECT r.id, s.key, r.relation, t.key, count(DISTINCT m.id) AS n FROM relations r"
            " JOIN entities s ON s.id = r.source_id JOIN entities t ON t.id = r.target_id"
            " JOIN relation_memories rm ON rm.relation_id = r.id"
            f" JOIN memories m ON m.id = rm.memory_id AND m.status IN {LIVE_SQL} AND {seen}"
            " WHERE (%s::bigint IS NULL OR r.source_id = %s OR r.target_id = %s)"
            " GROUP BY r.id, s.key, t.key ORDER BY n DESC, s.key, r.relation, t.key LIMIT %s",
            (*params, entity, entity, entity, limit),
        ).fetchall()
        return [Relation(int(i), str(s), str(r), str(t), int(n)) for i, s, r, t, n in rows]

    def find(self, key: str, *, view: View | None = None) -> Entity | None:
        row = self._db.execute(
            "SELECT id, key, name, type FROM entities WHERE key = %s", (key,)
        ).fetchone()
        if row is None:
            return None
        i, k, n, t = row
        seen, params = _seen(view)
        found = self._db.execute(
            "SELECT count(DISTINCT m.id) FROM entity_memories em JOIN memories m"
            f" ON m.id = em.memory_id AND m.status IN {LIVE_SQL} AND {seen}"
            " WHERE em.entity_id = %s",
            (*params, i),
        ).fetchone()
        count = int(found[0]) if found else 0
        if view is not None and not count:
            return None
        return Entity(
            int(i), str(k), str(n), str(t), self._aliases([int(i)]).get(int(i), ()), count
        )

    def memories_of(
        self, entity_ids: Sequence[int], *, limit: int, view: View | None = None
    ) -> list[int]:
        if not entity_ids:
            return []
        seen, params = _seen(view)
        rows = self._db.execute(
            "SELECT m.id FROM memories m WHERE m.id IN (SELECT em.memory_id FROM"
            " entity_memories em WHERE em.entity_id = ANY(%s))"
            f" AND m.status IN {LIVE_SQL} AND {seen}"
            " ORDER BY m.observed_at DESC, m.id DESC LIMIT %s",
            (list(entity_ids), *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def entities_of(self, memory_ids: Sequence[int]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {i: [] for i in memory_ids}
        if memory_ids:
            for entity_id, memory_id in self._db.execute(
                "SELECT entity_id, memory_id FROM entity_memories WHERE memory_id = ANY(%s)",
                (list(memory_ids),),
            ):
                found[int(memory_id)].append(int(entity_id))
        return found

    def snapshot(self) -> GraphRows:
        """The whole graph as of one moment: every entity and relation, and the links of
        live memories. Unsorted."""
        with self._db.snapshot():
            keys: dict[int, str] = {}
            entities: dict[int, tuple[str, str, str, list[str]]] = {}
            for i, key, name, type_ in self._db.execute("SELECT id, key, name, type FROM entities"):
                keys[int(i)] = str(key)
                entities[int(i)] = (str(key), str(name), str(type_), [])
            for entity_id, alias in self._db.execute(
                "SELECT entity_id, alias FROM entity_aliases ORDER BY seq"
            ):
                entities[int(entity_id)][3].append(str(alias))
            relations = {
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
        return GraphRows(
            [(k, n, t, tuple(a)) for k, n, t, a in entities.values()],
            list(relations.values()),
            entity_links,
            relation_links,
        )

    def ids_of(self, keys: Sequence[str]) -> dict[str, int]:
        return {
            str(key): int(entity_id)
            for entity_id, key in self._db.execute(
                "SELECT id, key FROM entities WHERE key = ANY(%s)", (list(keys),)
            )
        }

    def longer_keys(self, first_words: Sequence[str], *, limit: int) -> list[str]:
        """Keys of several words whose first word is one of `first_words`: a range of
        the key index (byte order: the column is COLLATE "C")."""
        found: list[str] = []
        for word in first_words:
            found += [
                str(r[0])
                for r in self._db.execute(
                    "SELECT key FROM entities WHERE key >= %s AND key < %s LIMIT %s",
                    (f"{word} ", f"{word}!", limit),
                )
            ]
        return found

    def related(self, entity_ids: Sequence[int], others: Sequence[int], view: View) -> set[int]:
        """Those of `others` one relation away from any of `entity_ids`, through a
        relation that a memory `view` may see states."""
        if not entity_ids or not others:
            return set()
        where, params = memory_clause(view, "m")
        a, b = list(entity_ids), list(others)
        rows = self._db.execute(
            "SELECT r.source_id, r.target_id FROM relations r"
            " WHERE ((r.source_id = ANY(%s) AND r.target_id = ANY(%s))"
            " OR (r.source_id = ANY(%s) AND r.target_id = ANY(%s)))"
            " AND EXISTS (SELECT 1 FROM relation_memories rm JOIN memories m"
            f" ON m.id = rm.memory_id WHERE rm.relation_id = r.id AND {where})",
            (a, b, b, a, *params),
        ).fetchall()
        wanted = set(others)
        return {int(e) for row in rows for e in row if int(e) in wanted}

    def memory_texts(self, memory_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        return {
            int(memory_id): (str(text), str(content_hash))
            for memory_id, text, content_hash in self._db.execute(
                "SELECT id, text, content_hash FROM memories WHERE id = ANY(%s)",
                (list(memory_ids),),
            )
        }

    def newest_memories(self, entity_id: int, view: View, *, limit: int, scan: int) -> list[int]:
        where, params = memory_clause(view, "m")
        rows = self._db.execute(
            "SELECT m.id FROM (SELECT memory_id FROM entity_memories WHERE entity_id = %s"
            " ORDER BY memory_id DESC LIMIT %s) em JOIN memories m ON m.id = em.memory_id"
            f" WHERE {where} ORDER BY m.id DESC LIMIT %s",
            (entity_id, scan, *params, limit),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def counts(self) -> dict[str, int]:
        row = self._db.execute(
            "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM entity_memories"
            f" em JOIN memories m ON m.id = em.memory_id AND m.status IN {LIVE_SQL}"
            " WHERE em.entity_id = e.id)), (SELECT count(*) FROM relations) FROM entities e"
        ).fetchone()
        assert row is not None
        return {"entities": int(row[0]), "orphans": int(row[1]), "relations": int(row[2])}

    def _aliases(self, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
        found: dict[int, list[str]] = {}
        for entity_id, alias in self._db.execute(
            "SELECT entity_id, alias FROM entity_aliases WHERE entity_id = ANY(%s) ORDER BY seq",
            (list(ids),),
        ):
            found.setdefault(int(entity_id), []).append(str(alias))
        return {i: tuple(a) for i, a in found.items()}
