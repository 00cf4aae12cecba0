"""The graph extraction's values: entity and relation mentions, an extraction, a rule and
its roles, a language's compiled rules, the known names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from memoracle.capture.rules import LanguageRules
from memoracle.errors import InvalidInput
from memoracle.graph.extract.words import _OPENING, _claims
from memoracle.language.prefilter import Gate, GateIndex, Matcher
from memoracle.language.words import fold_chars

SPEAKER_TYPE = "Person"


_MAX_NAME_WORDS = 5


_MAX_KNOWN_WORDS = 3  # "docker compose", "sublime text"


_MAX_DESCRIPTOR_WORDS = 3  # between "my" and a name: "my best friend Anna"


_MAX_CONNECTORS = 2  # "Ministère de la Culture"


_KEY_CACHE = 8192


class GraphRuleError(InvalidInput):
    """A graph rule file is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class EntityMention:
    """An entity a text names: `name` as first said, `key` the one every spelling shares
    (`canonical_key`), its ontology `type`, and the other spellings seen (`aliases`)."""

    name: str
    key: str
    type: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class RelationMention:
    """``source relation target`` between entity keys (``anna family_of user``).

    `role` is the English role word behind it ("wife", "dog"), if any; `rule` the rule
    that found it (``en.works_at``, ``fr.role``), not part of equality.
    """

    source: str
    relation: str
    target: str
    role: str | None = None
    rule: str = field(default="", compare=False)


@dataclass(frozen=True)
class Extraction:
    """The entities a text names, in order of first mention, and their relations."""

    entities: tuple[EntityMention, ...] = ()
    relations: tuple[RelationMention, ...] = ()


@dataclass(frozen=True)
class Role:
    """A role word's meaning: the named entity's `type` and its `relation` to the owner."""

    relation: str
    type: str
    label: str


@dataclass(frozen=True)
class GraphRule:
    """One compiled ``[[rule]]``; `id` is qualified by language (``en.works_at``).

    `source` / `target` are the types of the names read from those groups; without a
    `relation` the rule only types its target's names.
    """

    id: str
    relation: str | None
    source: str | None
    target: str | None
    many: bool
    patterns: tuple[re.Pattern[str], ...]


# A pattern in matching order: (its rule, or None for a role pattern; regex; gate).
Entry = tuple[GraphRule | None, re.Pattern[str], Gate]


@dataclass(frozen=True)
class LanguageGraph:
    """One language's roles, rules and word lists, compiled. Word lists are case-folded
    (accents kept: Spanish "mi" is mine, "mí" is me); `not_names` is also accent-free.

    `entries` holds the role patterns, then each rule's, in file order; `candidates`
    narrows them, by the first three letters of each gate literal, to those that can
    match a sentence (the language prefilter, as in `capture.rules`).
    """

    code: str
    source: str
    roles: Mapping[str, Role]
    rules: tuple[GraphRule, ...]
    entries: tuple[Entry, ...]
    gates: GateIndex
    self_words: frozenset[str]
    mine: frozenset[str]
    determiners: frozenset[str]
    connectors: frozenset[str]
    lists: frozenset[str]
    clause: frozenset[str]
    not_names: frozenset[str]
    negation: Matcher | None

    def candidates(self, trigrams: frozenset[str]) -> list[int]:
        """Indexes into `entries`, in order, whose gate may pass on a sentence with
        these three-letter pieces (of its casefold)."""
        return self.gates.candidates(trigrams)


@dataclass(frozen=True)
class Known:
    """Known software names (slot value form) -> entity type, and which rule types
    they override (`software`) or refuse (`never`)."""

    types: Mapping[str, str]
    software: frozenset[str]
    never: frozenset[str]


@dataclass(frozen=True)
class _Name:
    """A name read in a sentence (`start`, `end` in the sentence); the speaker has no
    `surface`."""

    surface: str
    key: str
    type: str
    start: int
    end: int


@dataclass(frozen=True)
class _Piece:
    """A sentence of the text, whatever the language: `text` folded
    (`language.words.fold_chars`, same length as said), `offset` where it starts in the whole
    text, `first_word` where its first word starts, its three-letter `trigrams`."""

    text: str
    lowered: str
    offset: int
    first_word: int
    trigrams: frozenset[str]

    @classmethod
    def of(cls, said: str, offset: int) -> _Piece:
        text = fold_chars(said)
        lowered = text.casefold()
        opening = _OPENING.match(text)
        return cls(
            text,
            lowered,
            offset,
            opening.end() if opening is not None else 0,
            frozenset({lowered[i : i + 3] for i in range(len(lowered) - 2)}),
        )


class _Sentence:
    """A sentence read in one language (see `_Piece` for the fields it shares)."""

    def __init__(
        self, piece: _Piece, language: LanguageGraph, capture: LanguageRules | None
    ) -> None:
        self.text = piece.text
        self.lowered = piece.lowered
        self.offset = piece.offset
        self.first_word = piece.first_word
        self.trigrams = piece.trigrams
        self.language = language
        self._capture = capture
        self._claims: bool | None = None

    @property
    def claims(self) -> bool:
        """Whether it states something (see `_claims`); asked only once a relation is
        found, as most sentences have none."""
        if self._claims is None:
            self._claims = _claims(self.text, self.lowered, self._capture)
        return self._claims
