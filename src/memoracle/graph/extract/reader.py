"""Reading one text: its sentences split into pieces, names and known things found, each
rule's roles filled, entities keyed so that aliases meet (`GraphRules`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memoracle.capture.extract import MAX_SENTENCE_CHARS, split_sentences
from memoracle.capture.lang import detect_language
from memoracle.capture.rules import default_rules
from memoracle.graph.extract.model import (
    _KEY_CACHE,
    _MAX_CONNECTORS,
    _MAX_DESCRIPTOR_WORDS,
    _MAX_KNOWN_WORDS,
    _MAX_NAME_WORDS,
    SPEAKER_TYPE,
    EntityMention,
    Extraction,
    GraphRule,
    GraphRuleError,
    Known,
    LanguageGraph,
    RelationMention,
    _Name,
    _Piece,
    _Sentence,
)
from memoracle.graph.extract.words import (
    _CLAUSE_BREAK,
    _OPENING,
    _POSSESSIVE,
    _TOKEN,
    _lower,
    _phrase,
    _plain,
    _proper,
    _script_fits,
    _spaced,
    _took_part,
)
from memoracle.graph.ontology import Ontology
from memoracle.language import datafiles
from memoracle.language.kit import PerLanguage, RuleFile
from memoracle.language.prefilter import passes
from memoracle.language.words import fold_chars
from memoracle.lifecycle.slots import DEFAULT_SUBJECT, Vocabulary, default_slots, value_key


class GraphRules:
    """Every language's graph rules, each compiled on first use, and what they share:
    the known software names, the date words, and every language's connectors (which
    `key` needs whatever the language)."""

    def __init__(
        self,
        files: Mapping[str, RuleFile],
        known: Known,
        dates: frozenset[str],
        compile: Callable[[RuleFile, frozenset[str]], LanguageGraph],
    ) -> None:
        self._languages = PerLanguage(files, lambda f: compile(f, dates))
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
        # A statement's label ("Caroline: I love hiking", capture/statement.py) names the
        # speaker, who is `speaker` here: the sentence is read after it.
        label = _LABEL.match(text)
        skip = label.end() if label is not None else 0
        pieces = [
            _Piece.of(text[max(start, skip) : end], max(start, skip))
            for start, end in split_sentences(text, abbreviations)
            if end - start <= MAX_SENTENCE_CHARS  # longer: a paste (log, code), not said
            and end > skip
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
        # "L'utilisateur", "El usuario": a statement's speaker after a determiner.
        while first is not None and _lower(first.group()) in sentence.language.determiners:
            first = _TOKEN.search(sentence.text, first.end(), end)
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
# "Caroline: ", "L'utilisateur : ", "El usuario: ": one to three words and a colon.
_LABEL = re.compile(r"[^\W\d_][\w'’-]*(?:\s[^\W\d_][\w'’-]*){0,2}\s?:\s+")


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
