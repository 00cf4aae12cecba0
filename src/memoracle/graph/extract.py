"""Entities and relations named in a text, by rules: the knowledge graph's extraction.

Owns `extract` and what it returns (`Extraction`, `EntityMention`, `RelationMention`),
`canonical_key` (the one key every spelling of a name shares), and the rule files:
``language/rules/graph/<lang>.toml`` per language (``en.toml`` is the commented reference) and
``language/rules/graph/values.toml``, shared. Types come from an `ontology.Ontology`; storing
mentions, merging them across memories and querying the graph are the store's and the
engine's. Pure: no I/O but reading the packaged files once per process.

Reused, not repeated: sentence splitting, language detection and the question,
hypothetical and hedge markers (`capture`); the normal form of names and the known
software names (`lifecycle.slots.value_key` and its vocabulary); month, weekday and day
words (capture's time words), which are never names.

What a sentence yields, in English, Russian, French and Spanish:

- Roles: a role word between the speaker's possessive and a name, "my wife Anna",
  "Anna, my wife", "Anna is my wife", "our dog Rex", "моя жена Анна", "mi jefe Marc",
  make the name's relation to the speaker: ``anna family_of user`` (role "wife"),
  ``rex has_owner user``, ``marc manages user``; "Anna's husband Marc" makes
  ``marc family_of anna``. A role phrase presupposes its relation, so it holds even in
  a question ("Did my wife Anna call?").
- Rules: a pattern per relation family, "I work at Acme", "Anna lives in Lyon", "we use
  Postgres, Redis and Kafka", "I report to Marc", "Apollo depends on Redis", "the Apollo
  project", "I met Anna", with their translations ("travaille chez", "trabaja en",
  "работает в", "habite à", "vive en", "живет в", "utilisons", "usamos", "используем").
  A rule's relation holds only in a claim: not in a question, a hypothetical or a hedged
  sentence (capture's markers), nor after a negation in its clause ("ya no trabajo en
  Google"); the names it types still count.

Precision over recall:

- A name is a run of capitalised words ("Anna", "Acme Corp", "Bank of America",
  "iPhone"), never a pronoun, sentence opener or other word of the file's ``not_names``,
  a month, weekday or day word, or a role word ("Mom").
- A name read where a pattern's target starts never starts the sentence: there a common
  word is capitalised too ("Side project" names no project).
- What follows a name must end its clause (a ``clause`` word, a number, punctuation):
  "I work at Acme as a designer" names Acme, "I work at Acme headquarters" nothing, "I
  emailed Acme support" no person.
- "Anna's" is a possessor, not the thing: "I work at Anna's bakery" names no employer.
- Known software names (slots' values) take their category's type where a rule types
  software ("we use Postgres": Infrastructure) and may then be lower case ("we use
  docker"); where a rule types places or projects they are no name ("we moved to
  Postgres").
- The first type a name gets in a text is its type; rules run in file order, those that
  type most surely first. A relation whose types the ontology does not allow is dropped.

Speaker: "I", "we", "me", "je", "nous", "yo", "я", "мы", … are the `speaker` (its key
`canonical_key(speaker)`), else ``"user"``, as in `lifecycle.slots`; "he", "she" and
"they" name nobody, so their relations are dropped. The speaker is an entity (a Person)
only when a relation names it.

Keys: `canonical_key` folds case and accents, drops a trailing possessive ("Anna's")
and the words before a name ("my wife Anna"), and then is `slots.value_key`: stop words
dropped, Russian case endings stripped ("Анной" -> "анн"), known aliases merged
("Postgres" -> "postgresql"). So "Anna", "my wife Anna" and "Anna's" share ``"anna"``.

Language: given, or detected; short texts fool detection, so when the detected language
finds no entity the others are tried (Russian only on Cyrillic text).

File format (``en.toml`` is the commented reference)::

    [language]   code = "en" (must equal the file name)
    [macros]     name = "regex"; {{name}} expands it. Built in: {{self}}, {{mine}} (the
                 word lists), {{role}} (every role word), {{role_<relation>}}
    [words]      self (the speaker), mine (the speaker's), determiners (skipped before
                 a name), connectors (lower-case words inside a name), lists (joining
                 names), clause (may follow a name), not_names
    [markers]    negation: regexes; one in the clause before a rule's target cancels it
    [roles]      pattern: regexes with groups role, source (the name), owner (whose;
                 absent: the speaker)
    [[role]]     relation, type (of the named entity), [role.words] label = [words]
    [[rule]]     id, pattern (regex or list), target (type); relation and source (type)
                 to make a relation; many (read a list of names)

    values.toml  [known] software, never: entity types; [known.types] Type = [slot
                 value categories]

Rule groups: ``source`` and ``target`` (a side with no group is the speaker) and
``role`` (its English label goes on the relation). A malformed file raises
`GraphRuleError` naming the file and the entry.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memoracle.capture.dates import parse_timewords
from memoracle.capture.extract import MAX_SENTENCE_CHARS, split_sentences
from memoracle.capture.lang import detect_language
from memoracle.capture.rules import LanguageRules, default_rules
from memoracle.errors import InvalidInput
from memoracle.graph.ontology import Ontology, default_ontology
from memoracle.language import datafiles
from memoracle.language.kit import PerLanguage, RuleFile, packaged, read_folder
from memoracle.language.prefilter import Gate, Matcher, passes, required_literals
from memoracle.language.words import fold_chars
from memoracle.lifecycle.slots import DEFAULT_SUBJECT, Vocabulary, default_slots, value_key

__all__ = [
    "SPEAKER_TYPE",
    "EntityMention",
    "Extraction",
    "GraphRuleError",
    "GraphRules",
    "RelationMention",
    "canonical_key",
    "default_graph_rules",
    "extract",
    "load_graph_rules",
]

SPEAKER_TYPE = "Person"

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

# A word of a name: letters and digits, with inner dots, dashes, & + # ("Node.js",
# "Jean-Luc", "AT&T", "C++").
_TOKEN = re.compile(r"[^\W_](?:[\w&+#.-]*[\w+#])?")
_OPENING = re.compile(r"[\s\"'«“(\[]*")
_CLAUSE_BREAK = re.compile(r"[,;:]|\s[-–—]\s")
_POSSESSIVE = re.compile(r"(?<=[^\W\d_])'s?$")
_MAX_NAME_WORDS = 5
_MAX_KNOWN_WORDS = 3  # "docker compose", "sublime text"
_MAX_DESCRIPTOR_WORDS = 3  # between "my" and a name: "my best friend Anna"
_MAX_CONNECTORS = 2  # "Ministère de la Culture"
_KEY_CACHE = 8192
_ACCENTS = frozenset({"Mn"})


class GraphRuleError(InvalidInput):
    """A graph rule file is malformed; the message names the file and the entry."""


# --- what extraction returns ------------------------------------------------------------


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


# --- compiled forms ---------------------------------------------------------------------


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
    ungated: frozenset[int]
    by_trigram: Mapping[str, frozenset[int]]
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
        found = set(self.ungated)
        for trigram in trigrams.intersection(self.by_trigram):
            found.update(self.by_trigram[trigram])
        return sorted(found)


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


class GraphRules:
    """Every language's graph rules, each compiled on first use, and what they share:
    the known software names, the date words, and every language's connectors (which
    `key` needs whatever the language)."""

    def __init__(self, files: Mapping[str, RuleFile], known: Known, dates: frozenset[str]) -> None:
        self._languages = PerLanguage(files, lambda f: _compile(f.data, f.source, dates))
        self.known = known
        self.dates = dates
        self.vocabulary: Vocabulary = default_slots().vocabulary
        # Names recur across memories (the nightly run reads them all), and a key costs
        # tens of microseconds.
        self._cached_key = functools.lru_cache(maxsize=_KEY_CACHE)(self._key)
        self.connectors = frozenset(
            _lower(word)
            for f in files.values()
            for word in datafiles.strings(
                datafiles.table(f.data, "words", f.source, GraphRuleError).get("connectors"),
                f.source,
                "[words] connectors",
                GraphRuleError,
            )
        )

    @property
    def codes(self) -> tuple[str, ...]:
        """Language codes, sorted."""
        return self._languages.codes

    def language(self, code: str) -> LanguageGraph | None:
        """The compiled rules of `code`, or None if there is no such file."""
        return self._languages.get(code)

    def compile_all(self) -> None:
        """Compile every language now, so that a malformed file fails here."""
        self._languages.compile_all()

    def key(self, name: str) -> str:
        """See the module function `canonical_key`."""
        return self._cached_key(name)

    def _key(self, name: str) -> str:
        words = _POSSESSIVE.sub("", fold_chars(name).strip()).split()
        start = 0
        for index, word in enumerate(words[:-1]):
            if (
                not _proper(word)
                and _lower(word) not in self.connectors
                and any(_proper(later) for later in words[index + 1 :])
            ):
                start = index + 1
        return value_key(" ".join(words[start:]), self.vocabulary)

    def extract(
        self, text: str, *, lang: str | None = None, speaker: str | None = None, ontology: Ontology
    ) -> Extraction:
        """See the module function `extract`."""
        owner = self.key(speaker) if speaker else DEFAULT_SUBJECT
        owner_name = speaker or DEFAULT_SUBJECT
        detected = lang if lang is not None else detect_language(text)
        capture_rules = default_rules()
        capture = capture_rules.get(detected) if detected in capture_rules.codes else None
        abbreviations = capture.abbreviations if capture is not None else frozenset()
        pieces = [
            _Piece.of(text[start:end], start)
            for start, end in split_sentences(text, abbreviations)
            if end - start <= MAX_SENTENCE_CHARS  # longer: a paste (log, code), not said
        ]
        codes = (detected,) if lang is not None else (detected, *self.codes)
        for code in dict.fromkeys(codes):
            if code != detected and not _script_fits(code, text):
                continue
            found = self._text(pieces, code, owner, owner_name)
            if found is not None:
                return found.result(ontology)
        return Extraction()

    # --- per text and sentence --------------------------------------------------------

    def _text(self, pieces: list[_Piece], code: str, owner: str, owner_name: str) -> _Found | None:
        """What the sentences name, read in language `code`; None if nothing."""
        language = self.language(code)
        if language is None:
            return None
        capture_rules = default_rules()
        capture = capture_rules.get(code) if code in capture_rules.codes else None
        found = _Found(owner, owner_name)
        for piece in pieces:
            self._sentence(_Sentence(piece, language, capture), found)
        return found if found.entities else None

    def _sentence(self, sentence: _Sentence, found: _Found) -> None:
        language = sentence.language
        verdicts: dict[int, bool] = {}  # patterns of one rule or of the roles share a gate
        for index in language.candidates(sentence.trigrams):
            rule, pattern, gate = language.entries[index]
            verdict = verdicts.get(id(gate))
            if verdict is None:
                verdict = verdicts[id(gate)] = passes(gate, sentence.lowered)
            if not verdict:
                continue
            if rule is None:
                for role_match in pattern.finditer(sentence.text):
                    self._role(sentence, role_match, found)
                continue
            position = 0
            while (match := pattern.search(sentence.text, position)) is not None:
                position = self._rule(sentence, rule, match, found)

    def _role(self, sentence: _Sentence, match: re.Match[str], found: _Found) -> None:
        role = sentence.language.roles.get(_phrase(match.group("role")))
        if role is None:
            return
        named = self._read(sentence, *match.span("source"), role.type, many=False, target=False)
        if not named:
            return
        found.add(named[0], sentence.offset)
        owners = self._side(sentence, match, "owner", SPEAKER_TYPE, many=False, target=False)
        for owner in owners:
            found.add(owner, sentence.offset)
            found.relate(
                named[0], role.relation, owner, role.label, f"{sentence.language.code}.role"
            )

    def _rule(
        self, sentence: _Sentence, rule: GraphRule, match: re.Match[str], found: _Found
    ) -> int:
        """Apply one match of `rule`; returns where to search for the next one."""
        sources = self._side(
            sentence, match, "source", rule.source or SPEAKER_TYPE, many=False, target=False
        )
        targets = self._side(
            sentence, match, "target", rule.target or SPEAKER_TYPE, many=rule.many, target=True
        )
        for name in (*sources, *targets):
            found.add(name, sentence.offset)
        if rule.relation is not None and sentence.claims and not _negated(sentence, match):
            role = _role_label(sentence.language, match)
            for source in sources:
                for target in targets:
                    found.relate(source, rule.relation, target, role, rule.id)
        # A group running to the end of the match (".+") is read only as far as its
        # names go: the rest of the sentence may hold another match ("I work at Acme and
        # Anna works at Globex").
        resume = match.end()
        for group, names in (("source", sources), ("target", targets)):
            if _took_part(match, group) and match.end(group) == match.end():
                readable = [name for name in names if name.end >= 0]
                resume = readable[-1].end if readable else match.start(group)
        return max(resume, match.start() + 1)

    def _side(
        self,
        sentence: _Sentence,
        match: re.Match[str],
        group: str,
        kind: str,
        *,
        many: bool,
        target: bool,
    ) -> list[_Name]:
        """The names a group holds: the speaker when the pattern has no such group or
        the group starts with a self word ("I", "me", "nous"), else those read."""
        if not _took_part(match, group):
            return [_SPEAKER]
        start, end = match.span(group)
        first = _TOKEN.search(sentence.text, start, end)
        if first is not None and _lower(first.group()) in sentence.language.self_words:
            return [_SPEAKER]
        return self._read(sentence, start, end, kind, many=many, target=target)

    # --- reading names ----------------------------------------------------------------

    def _read(
        self, sentence: _Sentence, start: int, end: int, kind: str, *, many: bool, target: bool
    ) -> list[_Name]:
        """The names `text[start:end]` starts with, typed `kind` (or a known name's
        type); one, or with `many` a list ("Postgres, Redis and Kafka")."""
        text = sentence.text
        language = sentence.language
        tokens = list(_TOKEN.finditer(text, start, end))
        if not tokens or not _OPENING.fullmatch(text, start, tokens[0].start()):
            return []
        index = 0
        if _lower(tokens[0].group()) in language.mine:  # "my wife Anna" -> Anna
            found_at = next(
                (
                    at
                    for at in range(1, min(len(tokens), _MAX_DESCRIPTOR_WORDS + 2))
                    if _proper(tokens[at].group())
                ),
                None,
            )
            if found_at is None or not _spaced(text, tokens, 1, found_at):
                return []
            index = found_at
        names: list[_Name] = []
        while True:
            while (
                index + 1 < len(tokens)
                and _lower(tokens[index].group()) in language.determiners
                and text[tokens[index].end() : tokens[index + 1].start()] in (" ", "'")
            ):
                index += 1
            span = self._name_at(text, tokens, index, language, kind)
            if span is None:
                break
            first, stop = span
            ends_clause, following = _follows(text, tokens, stop, language)
            begin = tokens[first].start()
            if not ends_clause or (target and begin == sentence.first_word):
                break
            name = self._typed(text[begin : tokens[stop - 1].end()], kind, begin)
            if name is None:
                break
            names.append(name)
            if not many or following is None:
                break
            index = following
        return names

    def _name_at(
        self,
        text: str,
        tokens: list[re.Match[str]],
        index: int,
        language: LanguageGraph,
        kind: str,
    ) -> tuple[int, int] | None:
        """Token span of the name starting at `index`: capitalised words and inner
        connectors, leading not-names dropped ("Yesterday Anna"); or, where the rule
        types software, the longest known name (which may be lower case)."""
        count = len(tokens)
        if index >= count:
            return None
        if _proper(tokens[index].group()):
            stop = index + 1
            while (
                stop < count
                and stop - index < _MAX_NAME_WORDS
                and _spaced(text, tokens, stop, stop)
            ):
                if _proper(tokens[stop].group()):
                    stop += 1
                    continue
                after = stop
                while (
                    after < count
                    and after - stop < _MAX_CONNECTORS
                    and _lower(tokens[after].group()) in language.connectors
                    and _spaced(text, tokens, after, after)
                ):
                    after += 1
                if after == stop or after >= count or not _proper(tokens[after].group()):
                    break
                if not _spaced(text, tokens, after, after):
                    break
                stop = after + 1
            words = [token.group() for token in tokens[index:stop]]
            while words and _plain(words[0]) in language.not_names:
                words.pop(0)
                index += 1
            if not words or any(_proper(w) and _plain(w) in language.not_names for w in words):
                return None
            return index, stop
        if kind in self.known.software:
            for size in range(min(_MAX_KNOWN_WORDS, count - index), 0, -1):
                stop = index + size
                if not _spaced(text, tokens, index + 1, stop - 1):
                    continue
                phrase = text[tokens[index].start() : tokens[stop - 1].end()]
                if value_key(phrase, self.vocabulary) in self.known.types:
                    return index, stop
        return None

    def _typed(self, surface: str, kind: str, start: int) -> _Name | None:
        key = self.key(surface)
        known = self.known.types.get(key)
        if known is not None:
            if kind in self.known.never:
                return None
            if kind in self.known.software:
                kind = known
        return _Name(surface, key, kind, start, start + len(surface))


# The speaker, whoever that is: `_Found` knows the text's owner key.
_SPEAKER = _Name("", "", SPEAKER_TYPE, -1, -1)


@dataclass
class _Entity:
    type: str
    position: int
    spellings: list[str]


class _Found:
    """What one text names, as it is found: entities by key (the first type wins) and
    relations without repeats."""

    def __init__(self, owner: str, owner_name: str) -> None:
        self.owner = owner
        self.owner_name = owner_name
        self.entities: dict[str, _Entity] = {}
        self.relations: dict[tuple[str, str, str], RelationMention] = {}

    def add(self, name: _Name, offset: int) -> None:
        if not name.surface:
            return
        entity = self.entities.get(name.key)
        if entity is None:
            self.entities[name.key] = _Entity(name.type, offset + name.start, [name.surface])
        elif name.surface not in entity.spellings:
            entity.spellings.append(name.surface)

    def relate(
        self, source: _Name, relation: str, target: _Name, role: str | None, rule: str
    ) -> None:
        source_key = source.key if source.surface else self.owner
        target_key = target.key if target.surface else self.owner
        if source_key != target_key:
            self.relations.setdefault(
                (source_key, relation, target_key),
                RelationMention(source_key, relation, target_key, role, rule),
            )

    def result(self, ontology: Ontology) -> Extraction:
        types = {key: entity.type for key, entity in self.entities.items()}
        types.setdefault(self.owner, SPEAKER_TYPE)
        relations = tuple(
            mention
            for mention in self.relations.values()
            if ontology.allows(mention.relation, types[mention.source], types[mention.target])
        )
        entities = [
            EntityMention(entity.spellings[0], key, entity.type, tuple(entity.spellings[1:]))
            for key, entity in sorted(self.entities.items(), key=lambda item: item[1].position)
            if entity.type in ontology.entity_types
        ]
        if self.owner not in self.entities and any(
            self.owner in (mention.source, mention.target) for mention in relations
        ):
            entities.insert(0, EntityMention(self.owner_name, self.owner, SPEAKER_TYPE))
        return Extraction(tuple(entities), relations)


# --- the public functions -----------------------------------------------------------------


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


# --- loading ----------------------------------------------------------------------------------


def load_graph_rules(
    directory: Traversable | Path | None = None, *, eager: bool = True
) -> GraphRules:
    """Every ``<lang>.toml`` and ``values.toml`` in `directory` (default: the packaged
    files), uncached. With `eager` (the default) every language is compiled now, so a
    malformed file raises `GraphRuleError` here; otherwise on its first use."""
    folder = directory if directory is not None else packaged("graph")
    label = "language/rules/graph" if directory is None else ""
    languages, common = read_folder(
        folder, label=label, error=GraphRuleError, shared=_SHARED_FILE, what="graph rule"
    )
    known = Known(MappingProxyType({}), frozenset(), frozenset())
    if common is not None:
        known = _known(common.data, common.source)
    for f in languages.values():
        datafiles.no_unknown(f.data, _TOP_KEYS, f.source, "top-level table", GraphRuleError)
    book = GraphRules(languages, known, _date_words())
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
    folder = packaged("timewords")
    words: set[str] = set()
    for entry in folder.iterdir():
        if entry.name.endswith(".toml"):
            vocabulary = parse_timewords(
                entry.read_text(encoding="utf-8"), f"language/rules/timewords/{entry.name}"
            )
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
        expanded = datafiles.expand(text, macros, source, where, GraphRuleError)
        pattern = datafiles.regex(expanded, re.IGNORECASE, source, where, GraphRuleError)
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
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list):
        raise GraphRuleError(f"{source}: [[rule]] must be an array of tables.")
    rules: list[GraphRule] = []
    for index, raw in enumerate(raw_rules):
        rule = _rule(raw, index, code, source, ontology, compiled)
        if any(rule.id == other.id for other in rules):
            raise GraphRuleError(f"{source}: rule {rule.id!r}: duplicate id.")
        rules.append(rule)
    markers = datafiles.table(data, "markers", source, GraphRuleError, required=False)
    datafiles.no_unknown(markers, {"negation"}, source, "[markers]", GraphRuleError)
    negation = [
        datafiles.regex(
            datafiles.expand(text, macros, source, "negation", GraphRuleError),
            re.IGNORECASE,
            source,
            "negation",
            GraphRuleError,
        )
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
    by_trigram: dict[str, set[int]] = {}
    for position, (_, _, gate) in enumerate(entries):
        for literal in gate or ():
            by_trigram.setdefault(literal[:3], set()).add(position)
    return LanguageGraph(
        code=code,
        source=source,
        roles=MappingProxyType(roles),
        rules=tuple(rules),
        entries=tuple(entries),
        ungated=frozenset(i for i, entry in enumerate(entries) if entry[2] is None),
        by_trigram=MappingProxyType({k: frozenset(v) for k, v in by_trigram.items()}),
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
    raw_roles = data.get("role", [])
    if not isinstance(raw_roles, list):
        raise GraphRuleError(f"{source}: [[role]] must be an array of tables.")
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
    many = raw.get("many", False)
    if not isinstance(many, bool):
        raise GraphRuleError(f"{source}: {where}: many must be true or false.")
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


# --- small helpers ------------------------------------------------------------------------


def _lower(word: str) -> str:
    """How word lists compare: folded (ё, quotes) and case-folded, accents kept."""
    return fold_chars(word).casefold()


def _plain(word: str) -> str:
    """`_lower` without accents: how not-names compare ("désolé", "Desole")."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", _lower(word))
    return "".join(c for c in decomposed if unicodedata.category(c) not in _ACCENTS)


def _phrase(text: str) -> str:
    """A role word as looked up: `_lower`, spaces collapsed."""
    return " ".join(_lower(text).split())


def _alternation(words: Iterable[str]) -> str:
    """A regex for any of `words`, longest first (so "жених" wins over "жен")."""
    ordered = sorted(set(words), key=lambda word: (-len(word), word))
    return "|".join(r"\s+".join(map(re.escape, word.split())) for word in ordered) or "(?!)"


def _proper(word: str) -> bool:
    """Whether a word can be (part of) a name: it has a capital ("Anna", "iPhone")."""
    return any(char.isupper() for char in word)


def _spaced(text: str, tokens: list[re.Match[str]], first: int, last: int) -> bool:
    """Whether only spaces separate tokens[first - 1] … tokens[last]."""
    return all(
        text[tokens[at - 1].end() : tokens[at].start()].isspace() for at in range(first, last + 1)
    )


def _follows(
    text: str, tokens: list[re.Match[str]], stop: int, language: LanguageGraph
) -> tuple[bool, int | None]:
    """Whether the name ending before tokens[stop] ends its clause, and where the next
    name of a list would start."""
    if stop == len(tokens):
        return True, None
    gap = text[tokens[stop - 1].end() : tokens[stop].start()]
    word = _lower(tokens[stop].group())
    if gap.strip() == ",":
        return True, stop + 1 if word in language.lists else stop
    if gap == "'" and word == "s":  # "Anna's bakery": Anna is whose, not what
        return False, None
    if gap.isspace():
        if word in language.lists:
            return True, stop + 1
        return word in language.clause or word[0].isdigit(), None
    return True, None


def _took_part(match: re.Match[str], group: str) -> bool:
    return group in match.re.groupindex and match.start(group) >= 0


def _role_label(language: LanguageGraph, match: re.Match[str]) -> str | None:
    if not _took_part(match, "role"):
        return None
    role = language.roles.get(_phrase(match.group("role")))
    return role.label if role is not None else None


def _negated(sentence: _Sentence, match: re.Match[str]) -> bool:
    """A negation in the match's clause before its target ("ya no trabajo en …")."""
    negation = sentence.language.negation
    if negation is None:
        return False
    clause_start = 0
    for separator in _CLAUSE_BREAK.finditer(sentence.text, 0, match.start()):
        clause_start = separator.end()
    stop = match.start("target") if _took_part(match, "target") else match.end()
    piece = sentence.text[clause_start:stop]
    return negation.search(piece, piece.casefold()) is not None


def _claims(folded: str, lowered: str, capture: LanguageRules | None) -> bool:
    """Whether a sentence states something: not a question, a hypothetical or a hedge
    (capture's markers decide)."""
    stripped = folded.strip()
    if stripped.endswith("?") or stripped.startswith("¿"):
        return False
    if capture is None:
        return True
    for markers in (capture.hypothetical, capture.hedge):
        if markers is not None and markers.search(folded, lowered) is not None:
            return False
    return not (
        capture.question is not None
        and capture.question.match(folded, lowered) is not None
        and not stripped.endswith((".", "!", "…"))
    )


def _script_fits(code: str, text: str) -> bool:
    """Whether a language is worth trying on `text`: one with its own script (Russian)
    only when that script occurs in it."""
    detection = default_rules().detection.get(code)
    script = detection.script if detection is not None else None
    return script is None or script.search(text) is not None
