"""The knowledge graph's log format: lines in, a graph state out, and back (docs/graph.md).

`knowledge-graph/graph-log.jsonl` in the workspace holds one JSON operation a line:

    {"op":"format","version":1}
    {"op":"entity","key":"anna","name":"Anna","type":"Person","aliases":["Anna","Annie"]}
    {"op":"relation","source":"anna","relation":"works_at","target":"acme"}
    {"op":"link","entity":"anna","memory":"m_12"}
    {"op":"link","relation":["anna","works_at","acme"],"memory":"m_12"}
    {"op":"unlink","entity":"anna","memory":"m_12"}
    {"op":"remove","relation":["anna","works_at","acme"]}
    {"op":"remove","entity":"anna"}

`format` opens a new log. `entity` states everything known about a key (a later line
for the same key replaces it); `relation` and `link` must follow the entities they name.
`unlink` is written when a memory stops being live (forgotten, archived, superseded);
`remove` when the store no longer has an entity or relation at all (a database restored
from an older copy) and takes its links, and an entity's relations, along.

`replay` folds the lines into a `GraphState`: every stored entity and relation, and the
links to live memories. A line counts once its newline is written: a last line without
one (a writer killed midway) is ignored by `replay` and cut off by the next `append`.

Pure: `Fold` folds parsed lines (`parse_line`) into a `GraphState`, `diff` gives the
lines that turn one state into another, `encode_ops` writes them, `differences` says how
two states differ. The file — appending, reading back, compacting, the lock — is the
job's (`memoracle.jobs.graph_log`); the graph itself is the store's (the log is a view
of its tables, like entities.jsonl), reading entities from text is `extract`'s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memoracle.errors import InvalidInput

FORMAT_VERSION = 1
MORE_NEXT = (
    " The store is the truth and the log only a view of it: move the file aside and the"
    " next append writes it again from the store."
)

EntityRow = tuple[str, str, str, tuple[str, ...]]  # key, name, type, aliases
RelationKey = tuple[str, str, str]  # source key, relation, target key
EntityLink = tuple[str, int]  # entity key, memory id
RelationLink = tuple[str, str, str, int]  # source key, relation, target key, memory id


@dataclass(frozen=True)
class EntityRecord:
    """An entity as the log says it: canonical key, first name, type, every name."""

    key: str
    name: str
    type: str
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class GraphState:
    """The graph a log replays to (or the store holds): entities by key, relations, and
    which live memories name each entity or state each relation. Two states are equal
    when these are; `lines` and `cut_line` only say how the log read."""

    entities: Mapping[str, EntityRecord]
    relations: frozenset[RelationKey]
    entity_links: frozenset[EntityLink]
    relation_links: frozenset[RelationLink]
    lines: int = field(default=0, compare=False)  # complete lines read
    cut_line: int | None = field(default=None, compare=False)  # unterminated last line


EMPTY = GraphState({}, frozenset(), frozenset(), frozenset())


# -- reading ------------------------------------------------------------------------


def differences(
    a: GraphState, b: GraphState, *, a_name: str = "the log", b_name: str = "the store"
) -> list[str]:
    """How `a` and `b` differ, one sentence per kind of record with a few examples;
    empty when they are the same graph."""
    found: list[str] = []

    def say(what: str, only: Sequence[str], where: str, other: str) -> None:
        if only:
            shown = ", ".join(only[:5]) + (f" and {len(only) - 5} more" if len(only) > 5 else "")
            found.append(f"{len(only)} {what} in {where} but not in {other}: {shown}")

    for x, y, x_name, y_name in ((a, b, a_name, b_name), (b, a, b_name, a_name)):
        say("entities", sorted(set(x.entities) - set(y.entities)), x_name, y_name)
        say("relations", [_rel(r) for r in sorted(x.relations - y.relations)], x_name, y_name)
        say(
            "entity links",
            [f"{k} ← m_{m}" for k, m in sorted(x.entity_links - y.entity_links)],
            x_name,
            y_name,
        )
        say(
            "relation links",
            [f"{_rel(r[:3])} ← m_{r[3]}" for r in sorted(x.relation_links - y.relation_links)],
            x_name,
            y_name,
        )
    changed = sorted(k for k in set(a.entities) & set(b.entities) if a.entities[k] != b.entities[k])
    for key in changed[:5]:
        found.append(
            f"entity {key!r} is {_entity_text(a.entities[key])} in {a_name} but"
            f" {_entity_text(b.entities[key])} in {b_name}"
        )
    if len(changed) > 5:
        found.append(f"and {len(changed) - 5} more entities differ")
    return found


# -- appending ----------------------------------------------------------------------


def diff(logged: GraphState, current: GraphState) -> list[dict[str, Any]]:
    """The operations that take a log replaying to `logged` to `current`, in an order
    that names nothing before it exists: unlinks and removals, then entities,
    relations and links. From an empty state, this is a compact log's body."""
    ops: list[dict[str, Any]] = []
    for key, memory in sorted(logged.entity_links - current.entity_links):
        ops.append({"op": "unlink", "entity": key, "memory": f"m_{memory}"})
    for s, r, t, memory in sorted(logged.relation_links - current.relation_links):
        ops.append({"op": "unlink", "relation": [s, r, t], "memory": f"m_{memory}"})
    for rel in sorted(logged.relations - current.relations):
        ops.append({"op": "remove", "relation": list(rel)})
    for key in sorted(set(logged.entities) - set(current.entities)):
        ops.append({"op": "remove", "entity": key})
    for key in sorted(current.entities):
        entity = current.entities[key]
        if logged.entities.get(key) != entity:
            ops.append(
                {
                    "op": "entity",
                    "key": key,
                    "name": entity.name,
                    "type": entity.type,
                    "aliases": list(entity.aliases),
                }
            )
    for source, relation, target in sorted(current.relations - logged.relations):
        ops.append({"op": "relation", "source": source, "relation": relation, "target": target})
    for key, memory in sorted(current.entity_links - logged.entity_links):
        ops.append({"op": "link", "entity": key, "memory": f"m_{memory}"})
    for s, r, t, memory in sorted(current.relation_links - logged.relation_links):
        ops.append({"op": "link", "relation": [s, r, t], "memory": f"m_{memory}"})
    return ops


# -- compacting ---------------------------------------------------------------------


# -- the fold -----------------------------------------------------------------------

FORMAT_OP: dict[str, Any] = {"op": "format", "version": FORMAT_VERSION}


def parse_line(raw: bytes) -> dict[str, Any]:
    try:
        op = json.loads(raw.decode("utf-8"))  # decoded here: json would guess the codec
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput("not JSON (nested too deeply)") from None
    if type(op) is not dict:
        raise InvalidInput('not an operation (a JSON object with "op")')
    return op


class Fold:
    """The state being replayed. Each operation is checked whole before it changes
    anything, so a bad line leaves the state as the lines before it made it. (Links are
    most of a log: their path is kept short.)"""

    def __init__(self) -> None:
        self.entities: dict[str, EntityRecord] = {}
        self.relations: set[RelationKey] = set()
        self.entity_links: set[EntityLink] = set()
        self.relation_links: set[RelationLink] = set()
        self._ops = {
            "link": self._link,
            "unlink": self._unlink,
            "entity": self._entity,
            "relation": self._relation,
            "remove": self._remove,
            "format": self._format,
        }

    def state(self, *, lines: int, cut_line: int | None) -> GraphState:
        return GraphState(
            dict(self.entities),
            frozenset(self.relations),
            frozenset(self.entity_links),
            frozenset(self.relation_links),
            lines=lines,
            cut_line=cut_line,
        )

    def apply(self, op: dict[str, Any], number: int) -> None:
        kind = op.get("op")
        handler = self._ops.get(kind) if type(kind) is str else None
        if handler is None:
            if type(kind) is not str:
                raise InvalidInput('not an operation (a JSON object with "op")')
            raise InvalidInput(f"unknown operation {kind!r}")
        handler(op, number)

    def _link(self, op: dict[str, Any], number: int) -> None:
        memory, target = _memory(op), self._target(op)
        if isinstance(target, str):
            if target not in self.entities:
                raise InvalidInput(_undefined(target))
            self.entity_links.add((target, memory))
        else:
            if target not in self.relations:
                raise InvalidInput(f"relation {_rel(target)} is linked before it is stated")
            self.relation_links.add((*target, memory))

    def _unlink(self, op: dict[str, Any], number: int) -> None:
        memory, target = _memory(op), self._target(op)
        if isinstance(target, str):
            self.entity_links.discard((target, memory))
        else:
            self.relation_links.discard((*target, memory))

    def _entity(self, op: dict[str, Any], number: int) -> None:
        key, name, type_ = _text(op, "key"), _text(op, "name"), _text(op, "type")
        aliases = op.get("aliases", [])
        if type(aliases) is not list or not all(type(a) is str for a in aliases):
            raise InvalidInput('"aliases" must be a list of names')
        self.entities[key] = EntityRecord(key, name, type_, tuple(aliases))

    def _relation(self, op: dict[str, Any], number: int) -> None:
        rel = (_text(op, "source"), _text(op, "relation"), _text(op, "target"))
        for key in (rel[0], rel[2]):
            if key not in self.entities:
                raise InvalidInput(_undefined(key))
        self.relations.add(rel)

    def _remove(self, op: dict[str, Any], number: int) -> None:
        target = self._target(op)
        if isinstance(target, str):
            self.entities.pop(target, None)
            self.entity_links = {e for e in self.entity_links if e[0] != target}
            gone = {r for r in self.relations if target in (r[0], r[2])}
        else:
            gone = {target}
        self.relations -= gone
        self.relation_links = {r for r in self.relation_links if r[:3] not in gone}

    def _format(self, op: dict[str, Any], number: int) -> None:
        version = op.get("version")
        if number != 1:
            raise InvalidInput('"format" may only be the first line')
        if type(version) is not int or version < 1:
            raise InvalidInput(f"unknown log format {version!r}")
        if version > FORMAT_VERSION:
            raise InvalidInput(
                f"log format {version} was written by a newer memoracle (this one reads "
                f"{FORMAT_VERSION}); upgrade memoracle"
            )

    @staticmethod
    def _target(op: dict[str, Any]) -> str | RelationKey:
        entity, rel = op.get("entity"), op.get("relation")
        if type(entity) is str and entity and rel is None:
            return entity
        if (
            entity is None
            and type(rel) is list
            and len(rel) == 3
            and all(type(x) is str and x for x in rel)
        ):
            return (rel[0], rel[1], rel[2])
        raise InvalidInput(
            f'"{op["op"]}" needs either "entity" (a key) or "relation" ([source, relation, target])'
        )


def _memory(op: dict[str, Any]) -> int:
    memory = op.get("memory")
    if type(memory) is str and memory[:2] == "m_" and memory[2:].isascii():
        digits = memory[2:]
        if digits.isdigit() and digits[0] != "0":
            return int(digits)
    raise InvalidInput(f'"memory" must be a memory id like "m_12" (got {memory!r})')


def _undefined(key: str) -> str:
    return f'entity {key!r} is used before an "entity" line defines it'


def _text(op: dict[str, Any], name: str) -> str:
    value = op.get(name)
    if type(value) is not str or not value:
        raise InvalidInput(f'"{name}" must be a non-empty string (got {value!r})')
    return value


def _rel(rel: RelationKey) -> str:
    return f"{rel[0]} {rel[1]} {rel[2]}"


def _entity_text(e: EntityRecord) -> str:
    return f"{e.name!r} ({e.type}, aliases {list(e.aliases)})"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one, not one a line


def encode_ops(ops: Sequence[dict[str, Any]]) -> bytes:
    encode = _ENCODER.encode
    return "".join([encode(op) + "\n" for op in ops]).encode("utf-8")


# -- files --------------------------------------------------------------------------
