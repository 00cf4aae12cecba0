"""Reading the slot rule files (``language/rules/slots/<lang>.toml`` and the shared
``values.toml``) into a `SlotBook`, each language compiled on first use; and the
module-level shortcuts over the packaged book (`slots_of`, `slot_of`, `value_key`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memoracle.language import datafiles
from memoracle.language.kit import read_kind
from memoracle.language.prefilter import GateIndex, Matcher
from memoracle.lifecycle.slots.matcher import SlotBook
from memoracle.lifecycle.slots.model import (
    _GROUPS,
    ATTRIBUTES,
    LanguageSlots,
    Slot,
    SlotFileError,
    SlotRule,
    Vocabulary,
)
from memoracle.lifecycle.slots.names import (
    _MAX_ALIAS_WORDS,
    _casefold,
    _fold_words,
    _segment_key,
    _tokens,
    key_of,
)

_TOP_KEYS = frozenset(
    {"language", "macros", "markers", "subjects", "normalise", "aliases", "topics", "categories"}
    | {"meaning"}  # lifecycle/meaning.py reads it
    | {"prototypes"}  # lifecycle/attributes.py reads it
    | {"slot"}
)


_SHARED_KEYS = frozenset({"aliases", "topics", "categories", "normalise"})


_MARKER_KEYS = frozenset({"hedge", "negation", "negation_after"})


_SUBJECT_KEYS = frozenset({"self", "skip", "kin"})


_NORMALISE_KEYS = frozenset({"stopwords", "suffixes"})


_SLOT_KEYS = frozenset(
    {
        "id",
        "attribute",
        "pattern",
        "value",
        "negated",
        "negatable",
        "fallback",
        "versioned",
        "uncategorised",
        "unless",
        "not_values",
    }
)


_SHARED_FILE = "values.toml"


_RULE_ID = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*")


_ATTRIBUTE = re.compile(r"([a-z_]+)(?::(\{(?:topic|thing)\}|[a-z_]+))?")


def slots_of(text: str, *, lang: str | None = None, speaker: str | None = None) -> tuple[Slot, ...]:
    """Every slot stated in `text`, sentence by sentence, in rule order.

    `lang` forces the language (default: detected, then the others if it finds
    nothing); a language without a slot file yields nothing. `speaker` names who said it
    ("I" is them; default ``"user"``).
    """
    return default_slots().slots_of(text, lang=lang, speaker=speaker)


def slot_of(text: str, *, lang: str | None = None, speaker: str | None = None) -> Slot | None:
    """The first slot stated in `text`, or None (see `slots_of`).

    "I moved to Lyon" -> ``Slot("user", "lives_in", "lyon")``; "We use Postgres 16" ->
    ``Slot("user", "uses:db", "postgresql")`` (and `slots_of` adds
    ``version_of:postgresql`` = "16"); "Do you live in Lyon?" -> None.
    """
    found = slots_of(text, lang=lang, speaker=speaker)
    return found[0] if found else None


def value_key(text: str, vocabulary: Vocabulary | None = None) -> str:
    """`text` in comparable form: case, accents and NFKC folded, stop words dropped,
    Russian endings stripped, aliases merged; comma-separated parts kept apart by ", ".

    ``value_key("Lyon, France") == "lyon, france"``; ``value_key("в Париже") == "париж"``;
    ``value_key("Postgres") == "postgresql"``.
    """
    return key_of(text, vocabulary if vocabulary is not None else default_slots().vocabulary)


def load_slots(directory: Traversable | Path | None = None, *, eager: bool = True) -> SlotBook:
    """Every ``<lang>.toml`` and ``values.toml`` in `directory` (default: the packaged
    files), uncached. With `eager` (the default) every language is compiled now, so a
    malformed file raises `SlotFileError` here; otherwise on its first use."""
    files, common = read_kind(
        "slots", directory, error=SlotFileError, shared=_SHARED_FILE, what="slot"
    )
    shared: list[tuple[Mapping[str, Any], str]] = []
    if common is not None:
        datafiles.no_unknown(
            common.data, _SHARED_KEYS, common.source, "top-level table", SlotFileError
        )
        shared.append((common.data, common.source))
    languages = [(f.data, f.source) for f in files.values()]
    for data, source in languages:
        datafiles.no_unknown(data, _TOP_KEYS, source, "top-level table", SlotFileError)
    vocabulary = _vocabulary([*shared, *languages])
    book = SlotBook(files, vocabulary, lambda f, v: _compile(f.data, f.source, v))
    if eager:
        book.compile_all()
    return book


@functools.cache
def default_slots() -> SlotBook:
    """The packaged slot files, read once per process (they are immutable package data);
    each language compiles on first use."""
    return load_slots(eager=False)


def _vocabulary(files: Sequence[tuple[Mapping[str, Any], str]]) -> Vocabulary:
    stopwords: set[str] = set()
    suffixes: set[str] = set()
    for data, source in files:
        normalise = datafiles.table(data, "normalise", source, SlotFileError, required=False)
        datafiles.no_unknown(normalise, _NORMALISE_KEYS, source, "[normalise]", SlotFileError)
        stopwords.update(
            map(
                _casefold,
                datafiles.strings(normalise.get("stopwords"), source, "stop", SlotFileError),
            )
        )
        suffixes.update(
            map(
                _casefold,
                datafiles.strings(normalise.get("suffixes"), source, "suffixes", SlotFileError),
            )
        )
    # Aliases and topics are keyed by words in value form, which needs the lists above.
    partial = Vocabulary(
        aliases={},
        topics={},
        categories={},
        stopwords=frozenset(stopwords),
        suffixes=tuple(sorted(suffixes, key=len, reverse=True)),
    )
    aliases: dict[tuple[str, ...], str] = {}
    for data, source in files:
        for canonical, words in _word_table(data, "aliases", source):
            target = _segment_key(_casefold(canonical), partial)
            for word in (canonical, *words):
                tokens = tuple(_tokens(_casefold(word), partial))
                if tokens and len(tokens) <= _MAX_ALIAS_WORDS:
                    aliases[tokens] = target
    partial = Vocabulary(
        aliases,
        {},
        {},
        partial.stopwords,
        partial.suffixes,
    )
    topics: dict[str, str] = {}
    categories: dict[str, str] = {}
    for data, source in files:
        for topic, words in _word_table(data, "topics", source):
            for word in (topic, *words):
                topics[value_key(word, partial)] = topic
        for category, words in _word_table(data, "categories", source):
            for word in words:
                categories[value_key(word, partial)] = category
    return Vocabulary(
        aliases=MappingProxyType(aliases),
        topics=MappingProxyType(topics),
        categories=MappingProxyType(categories),
        stopwords=partial.stopwords,
        suffixes=partial.suffixes,
    )


def _word_table(data: Mapping[str, Any], key: str, source: str) -> Iterator[tuple[str, list[str]]]:
    table = datafiles.table(data, key, source, SlotFileError, required=False)
    for name, words in table.items():
        yield name, datafiles.strings(words, source, f"[{key}] {name}", SlotFileError)


def _compile(data: Mapping[str, Any], source: str, vocabulary: Vocabulary) -> LanguageSlots:
    code: str = data["language"]["code"]
    macros = datafiles.macros(
        datafiles.table(data, "macros", source, SlotFileError, required=False),
        source,
        SlotFileError,
    )
    markers = datafiles.table(data, "markers", source, SlotFileError, required=False)
    datafiles.no_unknown(markers, _MARKER_KEYS, source, "[markers]", SlotFileError)

    def matcher(items: Iterable[str], where: str, flags: int = re.IGNORECASE) -> Matcher | None:
        compiled = [
            datafiles.pattern(item, macros, flags, source, where, SlotFileError) for item in items
        ]
        return Matcher.of(compiled) if compiled else None

    subjects = datafiles.table(data, "subjects", source, SlotFileError, required=False)
    datafiles.no_unknown(subjects, _SUBJECT_KEYS, source, "[subjects]", SlotFileError)
    kin: dict[str, str] = {}
    for canonical, words in _word_table(subjects, "kin", source):
        for word in (canonical, *words):
            kin[_fold_words(word)] = canonical
    raw_rules = datafiles.tables(data, "slot", source, SlotFileError)
    rules = list(
        datafiles.unique(
            (
                _rule(raw, index, code, macros, source, matcher)
                for index, raw in enumerate(raw_rules)
            ),
            "slot",
            source,
            SlotFileError,
        )
    )
    entries = tuple(
        (number, pattern, gate)
        for number, rule in enumerate(rules)
        for pattern, gate in zip(rule.patterns.patterns, rule.patterns.gates, strict=True)
    )
    return LanguageSlots(
        code=code,
        source=source,
        rules=tuple(rules),
        entries=entries,
        gates=GateIndex.of(gate for _, _, gate in entries),
        hedge=matcher(
            datafiles.strings(markers.get("hedge"), source, "hedge", SlotFileError), "markers.hedge"
        ),
        negation=matcher(
            datafiles.strings(markers.get("negation"), source, "negation", SlotFileError),
            "negation",
        ),
        negation_after=matcher(
            datafiles.strings(
                markers.get("negation_after"), source, "negation_after", SlotFileError
            ),
            "negation_after",
        ),
        self_words=frozenset(
            map(_fold_words, datafiles.strings(subjects.get("self"), source, "self", SlotFileError))
        ),
        skip=frozenset(
            map(_fold_words, datafiles.strings(subjects.get("skip"), source, "skip", SlotFileError))
        ),
        kin=MappingProxyType(kin),
    )


def _rule(
    raw: object,
    index: int,
    lang: str,
    macros: Mapping[str, str],
    source: str,
    matcher: Callable[[Iterable[str], str], Matcher | None],
) -> SlotRule:
    if not isinstance(raw, dict):
        raise SlotFileError(f"{source}: slot #{index + 1} is not a table.")
    rid = raw.get("id")
    if not isinstance(rid, str) or not _RULE_ID.fullmatch(rid):
        raise SlotFileError(f"{source}: slot #{index + 1}: id must be snake_case, got {rid!r}.")
    where = f"slot {rid!r}"
    datafiles.no_unknown(raw, _SLOT_KEYS, source, where, SlotFileError)
    attribute = raw.get("attribute")
    shape = _ATTRIBUTE.fullmatch(attribute) if isinstance(attribute, str) else None
    if shape is None or shape.group(1) not in ATTRIBUTES:
        raise SlotFileError(
            f"{source}: {where}: attribute must be one of {', '.join(ATTRIBUTES)} "
            f"(optionally :<param>, :{{topic}} or :{{thing}}), got {attribute!r}."
        )
    assert isinstance(attribute, str)
    texts = datafiles.strings(raw.get("pattern"), source, f"{where} pattern", SlotFileError)
    if not texts:
        raise SlotFileError(f"{source}: {where}: pattern is required.")
    patterns = [
        datafiles.pattern(text, macros, re.IGNORECASE, source, where, SlotFileError)
        for text in texts
    ]
    value = raw.get("value")
    if value is not None and not isinstance(value, str):
        raise SlotFileError(f"{source}: {where}: value must be a string.")
    for pattern in patterns:
        groups = set(pattern.groupindex)
        stray = groups - _GROUPS
        if stray:
            raise SlotFileError(
                f"{source}: {where}: unknown named group(s) {', '.join(sorted(stray))}. "
                f"Use {', '.join(sorted(_GROUPS))}."
            )
        if value is None and "value" not in groups:
            raise SlotFileError(f"{source}: {where}: a pattern needs a (?P<value>...) group.")
        if ("{thing}" in attribute or "{topic}" in attribute and value is not None) and (
            "topic" not in groups
        ):
            raise SlotFileError(f"{source}: {where}: {attribute} needs a (?P<topic>...) group.")
    flags = {
        name: datafiles.flag(raw, name, default, source, where, SlotFileError)
        for name, default in (
            ("negated", False),
            ("negatable", True),
            ("versioned", False),
            ("uncategorised", False),
        )
    }
    fallback = raw.get("fallback")
    if fallback is not None and (not isinstance(fallback, str) or "{topic}" not in attribute):
        raise SlotFileError(f"{source}: {where}: fallback is a word, for a {{topic}} attribute.")
    return SlotRule(
        id=f"{lang}.{rid}",
        attribute=attribute,
        patterns=Matcher.of(patterns),
        value=value,
        negated=flags["negated"],
        negatable=flags["negatable"],
        fallback=fallback,
        versioned=flags["versioned"],
        uncategorised=flags["uncategorised"],
        unless=matcher(
            datafiles.strings(raw.get("unless"), source, f"{where} unless", SlotFileError), where
        ),
        not_values=matcher(
            (
                "^(?:" + text + ")"
                for text in datafiles.strings(raw.get("not_values"), source, where, SlotFileError)
            ),
            f"{where} not_values",
        ),
    )
