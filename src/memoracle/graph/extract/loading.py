"""Reading the graph rule files (``language/rules/graph/<lang>.toml`` and the shared
``values.toml``) into `GraphRules`, each language compiled on first use; and the
module-level shortcuts over the packaged rules (`extract`, `canonical_key`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memoracle.capture.dates import timewords_from
from memoracle.errors import InvalidInput
from memoracle.graph.extract.model import (
    SPEAKER_TYPE,
    Entry,
    Extraction,
    GraphRule,
    GraphRuleError,
    Known,
    LanguageGraph,
    Role,
)
from memoracle.graph.extract.reader import GraphRules
from memoracle.graph.extract.words import _alternation, _lower, _phrase, _plain
from memoracle.graph.ontology import Ontology, default_ontology
from memoracle.language import datafiles
from memoracle.language.kit import read_kind
from memoracle.language.prefilter import Gate, GateIndex, Matcher, required_literals
from memoracle.lifecycle.slots import default_slots

_SHARED_FILE = "values.toml"


_TOP_KEYS = frozenset({"language", "macros", "words", "markers", "roles", "role", "rule"})


_WORD_KEYS = frozenset(
    {"self", "mine", "determiners", "connectors", "lists", "clause", "not_names"}
)


_ROLE_KEYS = frozenset({"relation", "type", "words"})


_RULE_KEYS = frozenset({"id", "relation", "source", "target", "many", "pattern"})


_KNOWN_KEYS = frozenset({"software", "never", "types"})


_ROLE_GROUPS = frozenset({"role", "source", "owner"})


_RULE_GROUPS = frozenset({"role", "source", "target"})


_RULE_ID = re.compile(r"[a-z][a-z0-9_]*")


def extract(
    text: str, *, lang: str | None = None, speaker: str | None = None, ontology: Ontology
) -> Extraction:
    """The entities `text` names and the relations it states between them.

    `lang` forces the language (default: detected, then the others if it finds
    nothing); a language without a rule file yields nothing. `speaker` names who said it
    ("I" is them; default ``"user"``). Types and relations not in `ontology` are left
    out. "My wife Anna works at Acme." -> Person anna, Organization acme, ``anna
    family_of user`` (role "wife"), ``anna works_at acme``.
    """
    return default_graph_rules().extract(text, lang=lang, speaker=speaker, ontology=ontology)


def canonical_key(name: str) -> str:
    """The key every spelling of `name` shares: "Anna", "my wife Anna" and "Anna's" ->
    ``"anna"``; "Анной" -> ``"анн"``; "Postgres" -> ``"postgresql"``; "the Louvre" ->
    ``"louvre"``. Case and accents folded, a trailing possessive and the words before a
    name dropped, then `lifecycle.slots.value_key`."""
    return default_graph_rules().key(name)


def load_graph_rules(
    directory: Traversable | Path | None = None, *, eager: bool = True
) -> GraphRules:
    """Every ``<lang>.toml`` and ``values.toml`` in `directory` (default: the packaged
    files), uncached. With `eager` (the default) every language is compiled now, so a
    malformed file raises `GraphRuleError` here; otherwise on its first use."""
    languages, common = read_kind(
        "graph", directory, error=GraphRuleError, shared=_SHARED_FILE, what="graph rule"
    )
    known = Known(MappingProxyType({}), frozenset(), frozenset())
    if common is not None:
        known = _known(common.data, common.source)
    for f in languages.values():
        datafiles.no_unknown(f.data, _TOP_KEYS, f.source, "top-level table", GraphRuleError)
    book = GraphRules(
        languages, known, _date_words(), lambda f, dates: _compile(f.data, f.source, dates)
    )
    if eager:
        book.compile_all()
    return book


@functools.cache
def default_graph_rules() -> GraphRules:
    """The packaged rule files, read once per process (immutable package data); each
    language compiles on first use."""
    return load_graph_rules(eager=False)


def _known(data: Mapping[str, Any], source: str) -> Known:
    datafiles.no_unknown(data, {"known"}, source, "top-level table", GraphRuleError)
    table = datafiles.table(data, "known", source, GraphRuleError)
    datafiles.no_unknown(table, _KNOWN_KEYS, source, "[known]", GraphRuleError)
    entity_types = default_ontology().entity_types

    def type_names(value: object, where: str) -> frozenset[str]:
        names = datafiles.strings(value, source, where, GraphRuleError)
        for name in names:
            if name not in entity_types:
                raise GraphRuleError(f"{source}: {where}: unknown entity type {name!r}.")
        return frozenset(names)

    by_category: dict[str, str] = {}
    types = datafiles.table(table, "types", source, GraphRuleError, required=False)
    for kind, categories in types.items():
        type_names(kind, "[known.types]")
        for category in datafiles.strings(
            categories, source, f"[known.types] {kind}", GraphRuleError
        ):
            by_category[category] = kind
    vocabulary = default_slots().vocabulary
    return Known(
        types=MappingProxyType(
            {
                value: by_category[category]
                for value, category in vocabulary.categories.items()
                if category in by_category
            }
        ),
        software=type_names(table.get("software"), "[known] software"),
        never=type_names(table.get("never"), "[known] never"),
    )


def _date_words() -> frozenset[str]:
    """Month, weekday and day words of every language capture knows ("May", "lundi",
    "сегодня"): capitalised, they still name nobody."""
    files, _ = read_kind("timewords", error=InvalidInput, what="time words", code_at=("lang",))
    words: set[str] = set()
    for f in files.values():
        vocabulary = timewords_from(f.data, f.source)
        for table in (vocabulary.months, vocabulary.weekdays, vocabulary.relative_days):
            words.update(_plain(word) for word in table if " " not in word)
    return frozenset(words)


def _compile(data: Mapping[str, Any], source: str, dates: frozenset[str]) -> LanguageGraph:
    code: str = data["language"]["code"]
    ontology = default_ontology()
    words = datafiles.table(data, "words", source, GraphRuleError)
    datafiles.no_unknown(words, _WORD_KEYS, source, "[words]", GraphRuleError)

    def word_list(key: str) -> frozenset[str]:
        return frozenset(
            map(_lower, datafiles.strings(words.get(key), source, f"[words] {key}", GraphRuleError))
        )

    lists = {key: word_list(key) for key in _WORD_KEYS}
    roles = _roles(data, source, ontology)
    macros = _macros(data, source, lists["self"], lists["mine"], roles)

    def compiled(text: str, where: str, groups: frozenset[str]) -> re.Pattern[str]:
        pattern = datafiles.pattern(text, macros, re.IGNORECASE, source, where, GraphRuleError)
        stray = set(pattern.groupindex) - groups
        if stray:
            raise GraphRuleError(
                f"{source}: {where}: unknown named group(s) {', '.join(sorted(stray))}. "
                f"Use {', '.join(sorted(groups))}."
            )
        return pattern

    role_table = datafiles.table(data, "roles", source, GraphRuleError, required=False)
    datafiles.no_unknown(role_table, {"pattern"}, source, "[roles]", GraphRuleError)
    role_patterns = [
        compiled(text, "[roles] pattern", _ROLE_GROUPS)
        for text in datafiles.strings(role_table.get("pattern"), source, "[roles]", GraphRuleError)
    ]
    for pattern in role_patterns:
        if not {"role", "source"} <= set(pattern.groupindex):
            raise GraphRuleError(f"{source}: [roles] pattern needs (?P<role>…) and (?P<source>…).")
    raw_rules = datafiles.tables(data, "rule", source, GraphRuleError)
    rules = list(
        datafiles.unique(
            (
                _rule(raw, index, code, source, ontology, compiled)
                for index, raw in enumerate(raw_rules)
            ),
            "rule",
            source,
            GraphRuleError,
        )
    )
    markers = datafiles.table(data, "markers", source, GraphRuleError, required=False)
    datafiles.no_unknown(markers, {"negation"}, source, "[markers]", GraphRuleError)
    negation = [
        datafiles.pattern(text, macros, re.IGNORECASE, source, "negation", GraphRuleError)
        for text in datafiles.strings(markers.get("negation"), source, "negation", GraphRuleError)
    ]
    not_names = frozenset(
        _plain(word)
        for word in (*lists["not_names"], *lists["mine"], *(w for w in roles if " " not in w))
    )
    gates: dict[Gate, Gate] = {}  # equal gates as one object, checked once per sentence
    entries: list[Entry] = []
    owned: list[tuple[GraphRule | None, re.Pattern[str]]] = [(None, p) for p in role_patterns]
    owned.extend((rule, p) for rule in rules for p in rule.patterns)
    for owner, pattern in owned:
        gate = required_literals(pattern)
        entries.append((owner, pattern, gates.setdefault(gate, gate)))
    return LanguageGraph(
        code=code,
        source=source,
        roles=MappingProxyType(roles),
        rules=tuple(rules),
        entries=tuple(entries),
        gates=GateIndex.of(gate for _, _, gate in entries),
        self_words=lists["self"],
        mine=lists["mine"],
        determiners=lists["determiners"],
        connectors=lists["connectors"],
        lists=lists["lists"],
        clause=lists["clause"],
        not_names=not_names | dates,
        negation=Matcher.of(negation) if negation else None,
    )


def _roles(data: Mapping[str, Any], source: str, ontology: Ontology) -> dict[str, Role]:
    raw_roles = datafiles.tables(data, "role", source, GraphRuleError)
    roles: dict[str, Role] = {}
    for index, raw in enumerate(raw_roles):
        where = f"role #{index + 1}"
        if not isinstance(raw, dict):
            raise GraphRuleError(f"{source}: {where} is not a table.")
        datafiles.no_unknown(raw, _ROLE_KEYS, source, where, GraphRuleError)
        relation, kind = raw.get("relation"), raw.get("type")
        if not isinstance(relation, str) or not isinstance(kind, str):
            raise GraphRuleError(f"{source}: {where}: relation and type are required.")
        if not ontology.allows(relation, kind, SPEAKER_TYPE):
            raise GraphRuleError(
                f"{source}: {where}: the ontology has no relation {relation!r} from a "
                f"{kind} to a {SPEAKER_TYPE}."
            )
        labels = datafiles.table(raw, "words", source, GraphRuleError)
        for label, spellings in labels.items():
            for word in datafiles.strings(spellings, source, f"{where} {label}", GraphRuleError):
                phrase = _phrase(word)
                if phrase in roles:
                    raise GraphRuleError(f"{source}: {where}: role word {word!r} given twice.")
                roles[phrase] = Role(relation, kind, label)
    return roles


def _macros(
    data: Mapping[str, Any],
    source: str,
    self_words: Iterable[str],
    mine: Iterable[str],
    roles: Mapping[str, Role],
) -> dict[str, str]:
    """The file's macros and the built-in ones: self, mine, role, role_<relation>."""
    built_in = {
        "self": _alternation(self_words),
        "mine": _alternation(mine),
        "role": _alternation(roles),
    }
    for relation in {role.relation for role in roles.values()}:
        built_in[f"role_{relation}"] = _alternation(
            word for word, role in roles.items() if role.relation == relation
        )
    table = datafiles.table(data, "macros", source, GraphRuleError, required=False)
    macros = dict(built_in)
    for key, value in table.items():
        if not isinstance(value, str):
            raise GraphRuleError(f"{source}: macro {key!r} must be a regex string.")
        if key in built_in:
            raise GraphRuleError(f"{source}: macro {key!r} is built in; pick another name.")
        macros[key] = value
    for key in table:  # every macro must expand, used or not
        datafiles.expand(macros[key], macros, source, f"macro {key!r}", GraphRuleError)
    return macros


def _rule(
    raw: object,
    index: int,
    lang: str,
    source: str,
    ontology: Ontology,
    compiled: Callable[[str, str, frozenset[str]], re.Pattern[str]],
) -> GraphRule:
    if not isinstance(raw, dict):
        raise GraphRuleError(f"{source}: rule #{index + 1} is not a table.")
    rid = raw.get("id")
    if not isinstance(rid, str) or not _RULE_ID.fullmatch(rid):
        raise GraphRuleError(f"{source}: rule #{index + 1}: id must be snake_case, got {rid!r}.")
    where = f"rule {rid!r}"
    datafiles.no_unknown(raw, _RULE_KEYS, source, where, GraphRuleError)
    texts = datafiles.strings(raw.get("pattern"), source, f"{where} pattern", GraphRuleError)
    if not texts:
        raise GraphRuleError(f"{source}: {where}: pattern is required.")
    patterns: list[re.Pattern[str]] = [compiled(text, where, _RULE_GROUPS) for text in texts]
    relation = raw.get("relation")
    many = datafiles.flag(raw, "many", False, source, where, GraphRuleError)
    sides: dict[str, str | None] = {}
    for side in ("source", "target"):
        kind = raw.get(side)
        present = any(side in pattern.groupindex for pattern in patterns)
        if kind is not None and (not isinstance(kind, str) or kind not in ontology.entity_types):
            raise GraphRuleError(f"{source}: {where}: {side} must be an entity type, got {kind!r}.")
        if present and kind is None:
            raise GraphRuleError(
                f"{source}: {where}: the pattern has a {side} group: give its type."
            )
        if kind is not None and not present:
            raise GraphRuleError(
                f"{source}: {where}: {side} is typed but no pattern has a (?P<{side}>…) group."
            )
        sides[side] = kind
    if relation is None:
        if sides["source"] is not None or sides["target"] is None:
            raise GraphRuleError(
                f"{source}: {where}: a rule without a relation types a target group only."
            )
    elif not isinstance(relation, str) or relation not in ontology.relation_types:
        raise GraphRuleError(f"{source}: {where}: unknown relation {relation!r}.")
    else:
        for pattern in patterns:
            source_type = sides["source"] if "source" in pattern.groupindex else SPEAKER_TYPE
            target_type = sides["target"] if "target" in pattern.groupindex else SPEAKER_TYPE
            if not ontology.allows(
                relation, source_type or SPEAKER_TYPE, target_type or SPEAKER_TYPE
            ):
                raise GraphRuleError(
                    f"{source}: {where}: the ontology has no {relation!r} from a "
                    f"{source_type} to a {target_type}."
                )
    return GraphRule(
        id=f"{lang}.{rid}",
        relation=relation,
        source=sides["source"],
        target=sides["target"],
        many=many,
        patterns=tuple(patterns),
    )
