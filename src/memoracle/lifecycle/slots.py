"""Subject + attribute slots: which single fact a sentence states, as comparable data.

Owns `Slot`, the closed set of attributes (`ATTRIBUTES`), the slot pattern files
(``language/rules/slots/<lang>.toml`` per language plus ``values.toml``, shared) and the
normalisation that makes two values comparable (`value_key`). Judging a new slot against
an old one (contradiction, redundancy) is `conflicts`; storing the verdict is the
engine's. Sentence splitting, language detection and the question / hypothetical
markers are reused from `capture`.

"I live in Paris" said by the user is ``Slot("user", "lives_in", "paris")``; "My wife
Anna moved to Lyon" is ``Slot("anna", "lives_in", "lyon")``. A slot is a claim that an
attribute holds one value *now*, so questions ("Do you live in Lyon?") and hypotheticals
("If I lived in Lyon…") yield none, and neither do sentences about an unknown referent
("She lives in Lyon": whose?) or too vague to compare ("I work at a startup").

Subjects: the speaker's words ("I", "my", "we", "je", "я", "yo", …) are the `speaker`
(folded like a name), else ``"user"``; a name ("Anna", "Anna's", "my wife Anna") is the
name case-folded without accents (``"anna"``), Russian names also without their case
ending ("Анна", "телефон Анны" -> ``"анн"``); a relative without a name is
``"<speaker>'s <kin>"`` with kin in English whatever the language (``"user's wife"``).
"He", "she", "you" and "they" name nobody we can pin down: no slot.

Attributes (`ATTRIBUTES`; which are single-valued is `conflicts.MULTI_VALUED`'s
complement): lives_in, works_at, job_title, name, age, birthday, phone, email, address,
timezone, relationship_status, diet, and the parametrised pet_name:<animal>,
prefers:<topic>, favourite:<topic>, likes:<thing>, uses:<category>, version_of:<tool>,
decision:<topic>, due:<task>. A topic or category comes, in this order, from the value
("vim" is an ``editor`` by ``values.toml``), from the words naming it ("my favourite
colour"), from the alternative ("tabs over spaces": ``indentation``), from the pair of
alternatives (``prefers:cats|dogs``), else from the rule's `fallback` (``other``) or no
slot at all. ``likes:<thing>`` holds ``like`` or ``dislike``.

Hedges ("I might move to Lyon", "возможно", "peut-être", "quizás", plans and intentions)
set ``hedged``: a weak claim that disputes rather than supersedes. Negation ("I no longer
live in Paris", "я больше не работаю в …", "je n'habite plus à …", "ya no vivo en …")
keeps the slot with ``negated=True``: it contradicts the same value and says nothing
about any other (see `conflicts.judge`). "I don't like sushi" is not a negation but the
value ``dislike``.

Values are compared in `value_key` form: NFKC, ё→е, case and accents folded, articles
and prepositions dropped, Russian case endings stripped ("в Париже" → "париж"), known
aliases merged ("Postgres" → "postgresql", "marié" → "married", "vendredi" →
"friday"). Phone numbers keep digits only. A trailing version number ("Postgres 16")
yields a ``version_of:<tool>`` slot besides the ``uses:<category>`` one; a tool with no
known category yields only its version slot ("We use Frobnicator 2.3"), and none at all
without a version. Dates stay words: "Friday" and "next Friday" differ, and "May 17" is
not resolved to a day (the lead may resolve them with `capture.dates`).

Language: given, or detected; short texts fool detection, so when the detected language
finds no slot the other languages are tried. The packaged files are read once per
process (`default_slots`, like `capture.rules.default_rules`).

File format (``en.toml`` is the commented reference)::

    [language]   code = "en" (must equal the file name)
    [macros]     name = "regex"; {{name}} in a pattern or macro expands it
    [markers]    hedge, negation (before the value, in its clause), negation_after (right
                 after the value): lists of regexes
    [subjects]   self = words meaning the speaker; skip = capitalised words that are not
                 names ("She", "Now"); [subjects.kin] english = [words]
    [normalise]  stopwords (dropped from values and topics), suffixes (endings stripped
                 from words of 4+ letters)
    [aliases]    canonical = [words]        merged with values.toml's
    [topics]     topic = [words naming it]  merged with values.toml's
    [categories] category = [values in it] merged with values.toml's
    [[slot]]     id, attribute ("lives_in", "prefers:{topic}", "due:{thing}"), pattern
                 (regex or list); optional: value (fixed), negated (the pattern itself
                 says "no longer"), negatable (false: negation words are part of the
                 value), fallback (topic when none is found), versioned (a trailing
                 version adds version_of:<tool>), unless (regexes vetoing the sentence),
                 not_values (regexes vetoing a value that starts with them)

Named groups: ``value`` (required unless the rule fixes it), ``subject`` (absent: the
speaker), ``topic`` ("{topic}" / "{thing}" in the attribute), ``other`` (the rejected
alternative). Patterns match case-insensitively one sentence whose quotes and ё are
folded (`language.words.fold_chars`); write case-sensitive parts as ``(?-i:…)``. Rules run in
file order and every rule may add slots, but a value already claimed by an earlier rule
is not claimed again ("we moved to Postgres 16" is a tool, not a home).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memoracle.capture.extract import split_sentences
from memoracle.capture.lang import detect_language
from memoracle.capture.rules import LanguageRules, default_rules
from memoracle.errors import InvalidInput
from memoracle.language import datafiles
from memoracle.language.kit import PerLanguage, RuleFile, packaged, read_folder
from memoracle.language.prefilter import Gate, Matcher, passes
from memoracle.language.words import fold_chars
from memoracle.text import for_index

__all__ = [
    "ATTRIBUTES",
    "DEFAULT_SUBJECT",
    "Slot",
    "SlotBook",
    "SlotFileError",
    "default_slots",
    "load_slots",
    "slot_of",
    "slots_of",
    "value_key",
]

DEFAULT_SUBJECT = "user"

# The closed set of attributes; a parametrised one is "<base>:<parameter>".
ATTRIBUTES: Mapping[str, str] = MappingProxyType(
    {
        "lives_in": "where someone lives (city, country)",
        "works_at": "employer",
        "job_title": "occupation or role",
        "name": "what someone is called",
        "age": "age in years",
        "birthday": "date of birth or birthday",
        "phone": "phone number (digits)",
        "email": "e-mail address",
        "address": "postal address",
        "timezone": "time zone",
        "relationship_status": "single, dating, engaged, married, divorced, widowed",
        "diet": "vegan, vegetarian, pescatarian, …",
        "pet_name": "pet_name:<animal> — a pet's name",
        "prefers": "prefers:<topic> — the preferred option",
        "favourite": "favourite:<topic> — the favourite one",
        "likes": "likes:<thing> — like or dislike",
        "uses": "uses:<category> — tool in use (editor, db, os, language, …)",
        "version_of": "version_of:<tool> — version in use",
        "decision": "decision:<topic> — the option chosen",
        "due": "due:<task> — when a task or appointment is due",
    }
)

_GROUPS = frozenset({"subject", "value", "topic", "other"})
_TOP_KEYS = frozenset(
    {"language", "macros", "markers", "subjects", "normalise", "aliases", "topics", "categories"}
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
        "unless",
        "not_values",
    }
)
_SHARED_FILE = "values.toml"
_RULE_ID = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*")
_ATTRIBUTE = re.compile(r"([a-z_]+)(?::(\{(?:topic|thing)\}|[a-z_]+))?")

_TOKEN = re.compile(r"\d+(?:[.:]\d+)*|[^\W_]+[+#]*")
_SEGMENT = re.compile(r"\s*[,;]\s+|\s+[-–—]\s+")
_NAME_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_TRIM = re.compile(r"^[\s\"'«“(:\-–—]+|[\s\"'»”).,:;!?…\-–—]+$")
# "Postgres 16", "Python v3.12", "Ubuntu version 22.04": a tool, then its version.
_VERSIONED = re.compile(
    r"^(?P<tool>.*?[^\W\d_]\S*)\s+(?:v|version\s+|versión\s+|версии\s+|версия\s+)?"
    r"(?P<version>\d+(?:\.\d+)*[a-z]?)$",
    re.IGNORECASE,
)
_VERSION_PREFIX = re.compile(r"^(?:v|version|versión|версия|версии)\s*", re.IGNORECASE)
_DIGITS = re.compile(r"\d")
_CLAUSE = re.compile(r"[,;:]|\s[-–—]\s")
_MAX_ALIAS_WORDS = 4
_MIN_STEM = 3  # letters a word keeps when a suffix is stripped ("лионе" -> "лион")
_MIN_STEMMED = 4  # shorter words keep their ending
_ACCENTS = frozenset({"Mn"})


class SlotFileError(InvalidInput):
    """A slot pattern file is malformed; the message names the file and the rule."""


@dataclass(frozen=True)
class Slot:
    """One attribute of one subject, with its value in comparable form.

    `said` is the value as written and `rule` the pattern that found it; neither takes
    part in equality. `negated`: the sentence says the value no longer holds.
    """

    subject: str
    attribute: str
    value: str
    hedged: bool = False
    negated: bool = False
    said: str = field(default="", compare=False)
    rule: str = field(default="", compare=False)

    @property
    def key(self) -> tuple[str, str]:
        """What a slot is about: (subject, attribute)."""
        return (self.subject, self.attribute)


# --- compiled forms ---------------------------------------------------------------------


@dataclass(frozen=True)
class SlotRule:
    """One compiled ``[[slot]]`` entry; `id` is qualified by language (``en.lives_in``)."""

    id: str
    attribute: str
    patterns: Matcher
    value: str | None = None
    negated: bool = False
    negatable: bool = True
    fallback: str | None = None
    versioned: bool = False
    unless: Matcher | None = None
    not_values: Matcher | None = None


@dataclass(frozen=True)
class LanguageSlots:
    """One language's rules, markers and subject words.

    `entries` flattens the rules' patterns to (rule index, regex, gate) in rule order;
    `candidates` narrows them, by the first three letters of each gate literal, to those
    that can match a sentence (the language prefilter, as in `capture.rules`).
    """

    code: str
    source: str
    rules: tuple[SlotRule, ...]
    hedge: Matcher | None
    negation: Matcher | None
    negation_after: Matcher | None
    self_words: frozenset[str]
    skip: frozenset[str]
    kin: Mapping[str, str]
    entries: tuple[tuple[int, re.Pattern[str], Gate], ...] = ()
    ungated: frozenset[int] = frozenset()
    by_trigram: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def candidates(self, lowered: str) -> list[int]:
        """Indexes into `entries`, in order, whose gate may pass on `lowered`."""
        trigrams = {lowered[i : i + 3] for i in range(len(lowered) - 2)}
        found = set(self.ungated)
        for trigram in trigrams.intersection(self.by_trigram):
            found.update(self.by_trigram[trigram])
        return sorted(found)


@dataclass(frozen=True)
class Vocabulary:
    """Words shared by every language: aliases, topic names, value categories and the
    normalisation lists. Lists and alias keys keep their accents (French "thé" is not
    English "the", "Marie" is not "marié"); accents go last, in `_segment_key`."""

    aliases: Mapping[tuple[str, ...], str]
    topics: Mapping[str, str]
    categories: Mapping[str, str]
    stopwords: frozenset[str]
    suffixes: tuple[str, ...]


class SlotBook:
    """Every language's slot rules, each compiled on first use, and the shared
    vocabulary. (Compiling a language's patterns takes a few hundred milliseconds.)"""

    def __init__(self, files: Mapping[str, RuleFile], vocabulary: Vocabulary) -> None:
        self._languages = PerLanguage(files, lambda f: _compile(f.data, f.source, vocabulary))
        self.vocabulary = vocabulary

    @property
    def codes(self) -> tuple[str, ...]:
        """Language codes, sorted."""
        return self._languages.codes

    def language(self, code: str) -> LanguageSlots | None:
        """The compiled rules of `code`, or None if there is no such file."""
        return self._languages.get(code)

    def compile_all(self) -> None:
        """Compile every language now, so that a malformed file fails here."""
        self._languages.compile_all()

    def slots_of(
        self, text: str, *, lang: str | None = None, speaker: str | None = None
    ) -> tuple[Slot, ...]:
        """See the module function `slots_of`."""
        owner = _name_key(speaker, self.vocabulary) if speaker else DEFAULT_SUBJECT
        if lang is not None:
            return self._text(text, lang, owner)
        # Short texts fool language detection ("Mom lives in Florida" looks Spanish), so
        # when the detected language finds nothing the others are tried; their patterns
        # hardly ever fire on a foreign sentence, and literal gates keep this cheap.
        detected = detect_language(text)
        for code in (detected, *(code for code in self.codes if code != detected)):
            if code != detected and not _script_fits(code, text):
                continue
            found = self._text(text, code, owner)
            if found:
                return found
        return ()

    def _text(self, text: str, code: str, owner: str) -> tuple[Slot, ...]:
        language = self.language(code)
        if language is None:
            return ()
        capture = default_rules().get(code) if code in default_rules().codes else None
        found: list[Slot] = []
        abbreviations = capture.abbreviations if capture is not None else frozenset()
        for start, end in split_sentences(text, abbreviations):
            found.extend(self._sentence(text[start:end], language, capture, owner))
        return tuple(found)

    def _sentence(
        self, sentence: str, language: LanguageSlots, capture: LanguageRules | None, owner: str
    ) -> Iterator[Slot]:
        folded = fold_chars(sentence)
        lowered = folded.casefold()
        if _not_a_claim(folded, lowered, capture):
            return
        hedged = language.hedge is not None and language.hedge.search(folded, lowered) is not None
        claimed: list[tuple[int, int]] = []
        done: set[int] = set()  # rules that yielded, or were vetoed
        for index in language.candidates(lowered):
            number, pattern, gate = language.entries[index]
            if number in done or not passes(gate, lowered):
                continue
            match = pattern.search(folded)
            if match is None:
                continue
            rule = language.rules[number]
            if rule.unless is not None and rule.unless.search(folded, lowered) is not None:
                done.add(number)
                continue
            made = self._slots(rule, match, folded, language, capture, owner, hedged, claimed)
            if made:
                done.add(number)
                yield from made

    def _slots(
        self,
        rule: SlotRule,
        match: re.Match[str],
        folded: str,
        language: LanguageSlots,
        capture: LanguageRules | None,
        owner: str,
        hedged: bool,
        claimed: list[tuple[int, int]],
    ) -> list[Slot]:
        span = _span(match, "value") or _span(match, "topic") or match.span()
        if any(start < span[1] and span[0] < end for start, end in claimed):
            return []
        said = rule.value if rule.value is not None else _group(match, "value")
        topic_said = _group(match, "topic")
        # A rule that fixes the value ("dislike") vets what the sentence is about instead.
        vetted = said if rule.value is None else topic_said
        if not said or (vetted is not None and _vetoed(rule.not_values, vetted)):
            return []
        if any(text is not None and _vague(text, capture) for text in (vetted, topic_said)):
            return []
        if _group(match, "subject") is not None:
            subject = _subject(_group(match, "subject") or "", language, owner, self.vocabulary)
            if subject is None:
                return []
        else:
            subject = owner
        negated = rule.negated or (rule.negatable and _negated(match, folded, language))
        vocabulary = self.vocabulary
        slots: list[Slot] = []
        base = rule.attribute
        value_said = said
        if rule.versioned:
            versioned = _VERSIONED.match(said)
            if versioned is not None:
                tool = value_key(versioned.group("tool"), vocabulary)
                version = versioned.group("version").casefold()
                slots.append(
                    Slot(subject, f"version_of:{tool}", version, hedged, negated, said, rule.id)
                )
                value_said = versioned.group("tool")
        value = _comparable(base, value_said, vocabulary)
        if not value:
            return []
        attribute = self._attribute(base, value, topic_said, _group(match, "other"), rule)
        if attribute is not None:
            slots.insert(0, Slot(subject, attribute, value, hedged, negated, said, rule.id))
        if slots:
            claimed.append(span)
        return slots

    def _attribute(
        self,
        template: str,
        value: str,
        topic_said: str | None,
        other_said: str | None,
        rule: SlotRule,
    ) -> str | None:
        vocabulary = self.vocabulary
        if "{thing}" in template:
            if topic_said is None:
                return None
            thing = value_key(topic_said, vocabulary)
            return template.replace("{thing}", thing) if thing else None
        if "{topic}" not in template:
            return template
        topic = _category(value, vocabulary)
        if topic is None and topic_said is not None:
            key = value_key(topic_said, vocabulary)
            topic = vocabulary.topics.get(key, key) or None
        other = value_key(other_said, vocabulary) if other_said is not None else None
        if topic is None and other:
            topic = _category(other, vocabulary) or "|".join(sorted({value, other}))
        if topic is None:
            topic = rule.fallback
        return template.replace("{topic}", topic) if topic else None


# --- the public functions -----------------------------------------------------------------


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
    vocabulary = vocabulary if vocabulary is not None else default_slots().vocabulary
    parts = [_segment_key(part, vocabulary) for part in _SEGMENT.split(_casefold(text))]
    return ", ".join(part for part in parts if part)


# --- loading ----------------------------------------------------------------------------------


def load_slots(directory: Traversable | Path | None = None, *, eager: bool = True) -> SlotBook:
    """Every ``<lang>.toml`` and ``values.toml`` in `directory` (default: the packaged
    files), uncached. With `eager` (the default) every language is compiled now, so a
    malformed file raises `SlotFileError` here; otherwise on its first use."""
    folder = directory if directory is not None else packaged("slots")
    label = "language/rules/slots" if directory is None else ""
    files, common = read_folder(
        folder, label=label, error=SlotFileError, shared=_SHARED_FILE, what="slot"
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
    book = SlotBook(files, vocabulary)
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
    macros = _macros(datafiles.table(data, "macros", source, SlotFileError, required=False), source)
    markers = datafiles.table(data, "markers", source, SlotFileError, required=False)
    datafiles.no_unknown(markers, _MARKER_KEYS, source, "[markers]", SlotFileError)

    def matcher(items: Iterable[str], where: str, flags: int = re.IGNORECASE) -> Matcher | None:
        compiled = [
            datafiles.regex(
                datafiles.expand(item, macros, source, where, SlotFileError),
                flags,
                source,
                where,
                SlotFileError,
            )
            for item in items
        ]
        return Matcher.of(compiled) if compiled else None

    subjects = datafiles.table(data, "subjects", source, SlotFileError, required=False)
    datafiles.no_unknown(subjects, _SUBJECT_KEYS, source, "[subjects]", SlotFileError)
    kin: dict[str, str] = {}
    for canonical, words in _word_table(subjects, "kin", source):
        for word in (canonical, *words):
            kin[_fold_words(word)] = canonical
    raw_rules = data.get("slot", [])
    if not isinstance(raw_rules, list):
        raise SlotFileError(f"{source}: [[slot]] must be an array of tables.")
    rules: list[SlotRule] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_rules):
        rule = _rule(raw, index, code, macros, source, matcher)
        if rule.id in seen:
            raise SlotFileError(f"{source}: slot {rule.id!r}: duplicate id.")
        seen.add(rule.id)
        rules.append(rule)
    entries = tuple(
        (number, pattern, gate)
        for number, rule in enumerate(rules)
        for pattern, gate in zip(rule.patterns.patterns, rule.patterns.gates, strict=True)
    )
    by_trigram: dict[str, set[int]] = {}
    for position, (_, _, gate) in enumerate(entries):
        for literal in gate or ():
            by_trigram.setdefault(literal[:3], set()).add(position)
    return LanguageSlots(
        code=code,
        source=source,
        rules=tuple(rules),
        entries=entries,
        ungated=frozenset(i for i, entry in enumerate(entries) if entry[2] is None),
        by_trigram=MappingProxyType({k: frozenset(v) for k, v in by_trigram.items()}),
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
        datafiles.regex(
            datafiles.expand(text, macros, source, where, SlotFileError),
            re.IGNORECASE,
            source,
            where,
            SlotFileError,
        )
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
    flags: dict[str, bool] = {}
    for name, default in (("negated", False), ("negatable", True), ("versioned", False)):
        flag = raw.get(name, default)
        if not isinstance(flag, bool):
            raise SlotFileError(f"{source}: {where}: {name} must be true or false.")
        flags[name] = flag
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


def _macros(table: Mapping[str, Any], source: str) -> dict[str, str]:
    for key, value in table.items():
        if not isinstance(value, str):
            raise SlotFileError(f"{source}: macro {key!r} must be a regex string.")
    return {
        key: datafiles.expand(value, table, source, f"macro {key!r}", SlotFileError)
        for key, value in table.items()
    }


# --- matching helpers -----------------------------------------------------------------------


def _script_fits(code: str, text: str) -> bool:
    """Whether a language worth trying on `text`: one with its own script (Russian) only
    when that script occurs in it."""
    detection = default_rules().detection.get(code)
    script = detection.script if detection is not None else None
    return script is None or script.search(text) is not None


def _not_a_claim(folded: str, lowered: str, capture: LanguageRules | None) -> bool:
    """Questions and hypotheticals state nothing (capture's markers decide)."""
    stripped = folded.strip()
    if stripped.endswith("?") or stripped.startswith("¿"):
        return True
    if capture is None:
        return False
    if capture.hypothetical is not None and capture.hypothetical.search(folded, lowered):
        return True
    return (
        capture.question is not None
        and capture.question.match(folded, lowered) is not None
        and not stripped.endswith((".", "!", "…"))
    )


def _span(match: re.Match[str], group: str) -> tuple[int, int] | None:
    if group not in match.re.groupindex or match.group(group) is None:
        return None
    return match.span(group)


def _group(match: re.Match[str], group: str) -> str | None:
    if group not in match.re.groupindex or match.group(group) is None:
        return None
    trimmed = _TRIM.sub("", match.group(group))
    return trimmed or None


def _vague(said: str, capture: LanguageRules | None) -> bool:
    if capture is None or capture.vague is None:
        return False
    lowered = said.casefold()
    return capture.vague.fullmatch(lowered, lowered) is not None


def _vetoed(not_values: Matcher | None, said: str) -> bool:
    return not_values is not None and not_values.search(said, said.casefold()) is not None


def _negated(match: re.Match[str], folded: str, language: LanguageSlots) -> bool:
    """A negation word in the value's clause before it, or one right after it."""
    start, end = _span(match, "value") or _span(match, "topic") or match.span()
    clause_start = 0
    for separator in _CLAUSE.finditer(folded, 0, match.start()):
        clause_start = separator.end()
    before = folded[clause_start:start]
    if language.negation is not None and language.negation.search(before, before.casefold()):
        return True
    after = folded[end:]
    return (
        language.negation_after is not None
        and language.negation_after.match(after, after.casefold()) is not None
    )


def _subject(said: str, language: LanguageSlots, owner: str, vocabulary: Vocabulary) -> str | None:
    """ "I" -> owner, "Anna's" / "my wife Anna" -> "anna", "my wife" -> "user's wife",
    "She" -> None (who?). Names lose case endings like values do ("Анны" -> "анн")."""
    words = _NAME_WORD.findall(fold_chars(said))
    if words and words[-1].casefold() in ("s", "'s"):
        words = words[:-1]
    lowered = [_fold_words(word) for word in words]
    if not lowered or lowered[0] in language.skip:
        return None
    if all(word in language.self_words for word in lowered):
        return owner
    possessive = lowered[0] in language.self_words
    rest = list(zip(words, lowered, strict=True))[1 if possessive else 0 :]
    kin = next((language.kin[low] for _, low in rest if low in language.kin), None)
    names = [low for word, low in rest if word[:1].isupper() and low not in language.kin]
    if any(name in language.skip or name in language.self_words for name in names):
        return None
    if names:
        return _name_key(" ".join(names), vocabulary)
    if kin is not None:  # "my wife", or "Mom" said as a name
        return f"{owner}'s {kin}"
    return None


# --- values ---------------------------------------------------------------------------------


def _name_key(name: str, vocabulary: Vocabulary) -> str:
    """A person's name as a subject: folded and stemmed like a value, stop words kept
    ("Anna" -> "anna", "Анны" -> "анн"); ``"user"`` for a name with no letters."""
    words = _TOKEN.findall(_casefold(name))
    return _unaccent(" ".join(_stem(word, vocabulary.suffixes) for word in words)) or (
        DEFAULT_SUBJECT
    )


def _casefold(text: str) -> str:
    """NFKC, ё→е, case-folded; accents kept."""
    return for_index(text).casefold()


def _unaccent(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) not in _ACCENTS)
    return unicodedata.normalize("NFC", stripped)


def _fold_words(text: str) -> str:
    """NFKC, ё→е, case-folded, accents removed: how subjects and names compare."""
    return _unaccent(_casefold(text))


def _tokens(folded: str, vocabulary: Vocabulary) -> list[str]:
    tokens = _TOKEN.findall(folded)
    kept = [token for token in tokens if token not in vocabulary.stopwords] or tokens
    return [_stem(token, vocabulary.suffixes) for token in kept]


def _stem(token: str, suffixes: tuple[str, ...]) -> str:
    if len(token) < _MIN_STEMMED:
        return token
    for suffix in suffixes:
        if token.endswith(suffix) and len(token) - len(suffix) >= _MIN_STEM:
            return token[: -len(suffix)]
    return token


def _segment_key(folded: str, vocabulary: Vocabulary) -> str:
    """Tokens of one comma-separated part: stop words out, stems, aliases, then accents
    off (`folded` is `_casefold` text)."""
    tokens = _tokens(folded, vocabulary)
    aliases = vocabulary.aliases
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for size in range(min(_MAX_ALIAS_WORDS, len(tokens) - i), 0, -1):
            canonical = aliases.get(tuple(tokens[i : i + size]))
            if canonical is not None:
                out.append(canonical)
                i += size
                break
        else:
            out.append(tokens[i])
            i += 1
    return _unaccent(" ".join(out))


def _category(value: str, vocabulary: Vocabulary) -> str | None:
    """The category of a value: of the whole, else of its last word (English heads come
    last: "mint tea" is a drink), else of its first word that has one ("window seats",
    "thé vert")."""
    categories = vocabulary.categories
    if value in categories:
        return categories[value]
    words = value.replace(",", " ").split()
    for word in (*words[-1:], *words):
        if word in categories:
            return categories[word]
    return None


def _comparable(attribute: str, said: str, vocabulary: Vocabulary) -> str:
    """The value in the form `conflicts.same_value` compares."""
    if attribute == "phone":
        digits = "".join(_DIGITS.findall(said))
        return digits.lstrip("0")
    if attribute == "email":
        return said.strip().casefold()
    if attribute == "age":
        return "".join(_DIGITS.findall(said))
    if attribute.startswith("version_of"):
        return _VERSION_PREFIX.sub("", said.strip()).casefold()
    return value_key(said, vocabulary)
