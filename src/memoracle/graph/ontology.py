"""The ontology: which types an entity may have and which relations may join two entities.

Owns `Ontology` (its `EntityType` and `RelationType` entries), the default ontology
shipped as ``graph/ontology.yaml``, the YAML shape a user file shares with it, and
`load_ontology`, which reads the default and extends it with a user file. Typing the
entities found in a text is `extract`'s business; storing them is the store's.

File shape (``ontology.yaml`` is the commented reference)::

    entity_types:
      Name:                       CamelCase
        description: one line
    relation_types:
      name:                       snake_case
        description: one line
        source: Type or [Types]   optional; left out, any entity type
        target: Type or [Types]   optional; left out, any entity type

A user file adds types: redefining one (of the default or of its own) is an error, never
a silent replacement, and so is anything else malformed. Every error is an
`OntologyError` (an `InvalidInput`) naming the file and the line: YAML syntax (the mark
PyYAML gives), an unknown key, a missing description, a relation whose source or target
names an unknown entity type, a duplicate. Only PyYAML's safe loader reads the files.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import yaml

from memoracle.errors import InvalidInput

__all__ = [
    "DEFAULT_SOURCE",
    "EntityType",
    "Ontology",
    "OntologyError",
    "RelationType",
    "default_ontology",
    "load_ontology",
]

DEFAULT_SOURCE = "graph/ontology.yaml"

_TOP_KEYS = ("entity_types", "relation_types")
_ENTITY_KEYS = ("description",)
_RELATION_KEYS = ("description", "source", "target")
_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_ENTITY_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
_RELATION_NAME = re.compile(r"[a-z][a-z0-9_]*")


class OntologyError(InvalidInput):
    """An ontology file is malformed; the message names the file and the line."""


@dataclass(frozen=True)
class EntityType:
    """One entity type; `origin` is where it is defined (``"file:line"``)."""

    name: str
    description: str
    origin: str


@dataclass(frozen=True)
class RelationType:
    """One relation type. `sources` / `targets` are the entity types allowed on each
    side, empty when any type goes; `origin` is where it is defined."""

    name: str
    description: str
    sources: tuple[str, ...]
    targets: tuple[str, ...]
    origin: str

    def allows(self, source: str, target: str) -> bool:
        """Whether an entity of type `source` may have this relation to one of `target`."""
        return (not self.sources or source in self.sources) and (
            not self.targets or target in self.targets
        )


@dataclass(frozen=True)
class Ontology:
    """Entity and relation types by name, in definition order (default first)."""

    entity_types: Mapping[str, EntityType]
    relation_types: Mapping[str, RelationType]

    def allows(self, relation: str, source: str, target: str) -> bool:
        """Whether `relation` exists and may join an entity of type `source` to one of
        type `target`, both known types."""
        kind = self.relation_types.get(relation)
        return (
            kind is not None
            and source in self.entity_types
            and target in self.entity_types
            and kind.allows(source, target)
        )


def load_ontology(user_file: Path | None = None) -> Ontology:
    """The default ontology, extended by the types of `user_file` when one is given.

    Raises `OntologyError` naming the file and line when the user file is missing,
    unreadable or malformed, or redefines a type.
    """
    base = default_ontology()
    if user_file is None:
        return base
    try:
        text = user_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OntologyError(
            f"{user_file}: no such ontology file. Fix the path or remove the setting."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OntologyError(f"{user_file}: cannot read the ontology file: {exc}.") from None
    return _extend(base, text, str(user_file))


@functools.cache
def default_ontology() -> Ontology:
    """The packaged ``graph/ontology.yaml``, read once per process (immutable package data)."""
    text = (resources.files(__package__) / "ontology.yaml").read_text(encoding="utf-8")
    return _extend(Ontology(MappingProxyType({}), MappingProxyType({})), text, DEFAULT_SOURCE)


# --- reading ----------------------------------------------------------------------------
# The YAML is composed, not constructed: nodes keep their line, so every error can name
# it, and a key given twice in one mapping is caught (safe_load keeps the last silently).


def _extend(base: Ontology, text: str, source: str) -> Ontology:
    root = _compose(text, source)
    if root is None:
        return base
    sections = {key: value for key, _, value in _entries(root, _TOP_KEYS, source, "the file")}
    entities = dict(base.entity_types)
    for name, key, value in _mapping(sections.get("entity_types"), source, "entity_types"):
        where = f"entity type {name!r}"
        _check_name(name, _ENTITY_NAME, "an entity type", "CamelCase", key, source)
        _check_new(name, entities.get(name), where, key, source)
        fields = {k: v for k, _, v in _entries(value, _ENTITY_KEYS, source, where)}
        entities[name] = EntityType(
            name, _description(fields, value, where, source), _at(source, key)
        )
    relations = dict(base.relation_types)
    for name, key, value in _mapping(sections.get("relation_types"), source, "relation_types"):
        where = f"relation {name!r}"
        _check_name(name, _RELATION_NAME, "a relation type", "snake_case", key, source)
        _check_new(name, relations.get(name), where, key, source)
        fields = {k: v for k, _, v in _entries(value, _RELATION_KEYS, source, where)}
        relations[name] = RelationType(
            name,
            _description(fields, value, where, source),
            _types(fields.get("source"), entities, f"{where} source", source),
            _types(fields.get("target"), entities, f"{where} target", source),
            _at(source, key),
        )
    return Ontology(MappingProxyType(entities), MappingProxyType(relations))


def _compose(text: str, source: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or exc.context or "syntax error"
        raise OntologyError(f"{source}{line}: not valid YAML: {problem}.") from None
    except yaml.YAMLError as exc:
        raise OntologyError(f"{source}: not valid YAML: {exc}.") from None


def _at(source: str, node: yaml.Node) -> str:
    return f"{source}:{node.start_mark.line + 1}"


def _entries(
    node: yaml.Node, known: tuple[str, ...], source: str, where: str
) -> list[tuple[str, yaml.Node, yaml.Node]]:
    """A mapping's (key, key node, value node) triples, keys checked against `known`."""
    entries = _mapping(node, source, where)
    for key, key_node, _ in entries:
        if key not in known:
            raise OntologyError(
                f"{_at(source, key_node)}: unknown key {key!r} in {where}. "
                f"Known: {', '.join(known)}."
            )
    return entries


def _mapping(
    node: yaml.Node | None, source: str, where: str
) -> list[tuple[str, yaml.Node, yaml.Node]]:
    """A mapping's (key, key node, value node) triples; nothing for a missing or empty
    (null) one."""
    if node is None or (isinstance(node, yaml.ScalarNode) and node.tag == _NULL):
        return []
    if not isinstance(node, yaml.MappingNode):
        raise OntologyError(f"{_at(source, node)}: {where} must be a mapping of names.")
    entries: list[tuple[str, yaml.Node, yaml.Node]] = []
    seen: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
            raise OntologyError(f"{_at(source, key_node)}: a key in {where} must be a name.")
        key = key_node.value
        if key in seen:
            raise OntologyError(
                f"{_at(source, key_node)}: {key!r} is given twice in {where} "
                f"(first at line {seen[key].start_mark.line + 1}). Keep one."
            )
        seen[key] = key_node
        entries.append((key, key_node, value_node))
    return entries


def _check_name(
    name: str, shape: re.Pattern[str], what: str, style: str, node: yaml.Node, source: str
) -> None:
    if not shape.fullmatch(name):
        raise OntologyError(f"{_at(source, node)}: {name!r} is not {what} name; use {style}.")


def _check_new(
    name: str, existing: EntityType | RelationType | None, where: str, node: yaml.Node, source: str
) -> None:
    if existing is not None:
        raise OntologyError(
            f"{_at(source, node)}: {where} is already defined ({existing.origin}). "
            "An ontology file adds types; it cannot redefine one. Pick another name."
        )


def _description(fields: Mapping[str, yaml.Node], node: yaml.Node, where: str, source: str) -> str:
    value = fields.get("description")
    if value is None:
        raise OntologyError(f"{_at(source, node)}: {where} needs a description.")
    if not isinstance(value, yaml.ScalarNode) or value.tag != _STR or not value.value.strip():
        raise OntologyError(f"{_at(source, value)}: {where} description must be a line of text.")
    return " ".join(value.value.split())


def _types(
    node: yaml.Node | None, entities: Mapping[str, EntityType], where: str, source: str
) -> tuple[str, ...]:
    """Entity type names of a relation side: one name or a list; () when left out."""
    if node is None:
        return ()
    items = node.value if isinstance(node, yaml.SequenceNode) else [node]
    names: list[str] = []
    for item in items:
        if not isinstance(item, yaml.ScalarNode) or item.tag != _STR:
            raise OntologyError(
                f"{_at(source, item)}: {where} must be an entity type or a list of them."
            )
        if item.value not in entities:
            raise OntologyError(
                f"{_at(source, item)}: {where} names unknown entity type {item.value!r}. "
                "Define it under entity_types or use one of: "
                f"{', '.join(entities)}."
            )
        if item.value not in names:
            names.append(item.value)
    if not names:
        raise OntologyError(f"{_at(source, node)}: {where} is an empty list; leave it out.")
    return tuple(names)
