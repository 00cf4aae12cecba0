"""Capture rules as data: load, validate and compile the per-language TOML files.

Owns the rule file format (``language/rules/capture/<lang>.toml``) and its compiled form,
`LanguageRules`. A language is added by adding a file; no code changes. What the rules
*mean* (sentence splitting, family priority, attribution) belongs to `extract`; language
detection to `lang`; noise turns to `noise`.

File format, in short (``en.toml`` is the commented reference)::

    [language]   code = "en" (must equal the file name), name = "English"
    [detect]     words = [...] marker words; suffixes = [...] telling word endings;
                 chars = "..." telling letters; script = "<regex class>" (a language
                 whose script appears wins outright)
    [macros]     name = "regex"; rules and markers write {{name}} to reuse it
    [markers]    question, question_tags, polite, hypothetical, hedge, smalltalk,
                 first_person, possessive, vague, remember_tail, and the meaning
                 cues speaker, kin, when, offer, confirmed, and the kind cues
                 task_cue, decision_cue, preference_cue, habit (`capture.meaning`): lists
                 of regexes;
                 abbreviations: words whose trailing "." does not end a sentence
    [[rule]]     id = "family.name", kind = one of `FAMILIES`, pattern = a regex or a
                 list of them; optional: importance, confidence (0..1, defaults per kind
                 in `KIND_DEFAULTS`), predicate (fixed snake_case predicate), unless
                 (regexes that veto a match), person = "first" (the match is about the
                 speaker), hedged (the rule itself is tentative), flags
                 (["case_sensitive", "verbose"])

Named groups a rule may use: ``subject``, ``predicate``, ``object`` (the triple) and
``content`` (what a remember/forget rule is about; required for those two kinds).
Every regex is matched case-insensitively unless the rule asks otherwise, against text
whose curly quotes, odd spaces and "ё" are folded (see `language.words.fold_chars`).

A malformed file raises `RuleFileError` naming the file and, where there is one, the
rule id. `load_rules` checks every file fully; `default_rules`, the packaged files read
once per process, compiles a language the first time it is used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from memoracle.errors import InvalidInput
from memoracle.language import datafiles
from memoracle.language.kit import (
    PerLanguage,
    RuleFile,
    language_code,
    read_kind,
    read_toml,
)
from memoracle.language.prefilter import Gate, GateIndex, Matcher, trigrams

__all__ = [
    "ASSISTANT_KINDS",
    "CONFIRMED_KINDS",
    "DEFAULT_LANGUAGE",
    "DIRECTIVES",
    "FAMILIES",
    "KIND_DEFAULTS",
    "Detection",
    "LanguageRules",
    "Rule",
    "RuleFileError",
    "RuleSet",
    "available_languages",
    "default_rules",
    "load_rules",
    "parse_language",
]

DEFAULT_LANGUAGE = "en"

# Directive families: they act on memory ("remember X", "forget X") rather than being a
# kind of memory; the kind of what they carry is inferred by the other families.
DIRECTIVES: tuple[str, ...] = ("forget", "remember")

# Priority order: when several families match one sentence, the first one wins.
FAMILIES: tuple[str, ...] = (
    "forget",
    "remember",
    "guardrail",
    "decision",
    "task",
    "preference",
    "error",
    "event",
    "fact",
    "pattern",
    "insight",
)

# An assistant's "I think you'd like…" is not a fact about anyone: assistant turns only
# report what was decided, what is to be done, what broke and what happened.
ASSISTANT_KINDS: frozenset[str] = frozenset({"decision", "task", "error", "event"})
# An assistant's sentence that confirms what the user said ("Noted: your address is…")
# may also carry a fact or a preference of theirs.
CONFIRMED_KINDS: frozenset[str] = ASSISTANT_KINDS | {"fact", "preference"}

# (importance, confidence) when a rule does not say.
KIND_DEFAULTS: Mapping[str, tuple[float, float]] = MappingProxyType(
    {
        "forget": (0.5, 0.9),
        "remember": (0.8, 0.95),
        "guardrail": (0.9, 0.85),
        "decision": (0.8, 0.8),
        "task": (0.7, 0.8),
        "preference": (0.6, 0.8),
        "error": (0.6, 0.8),
        "event": (0.5, 0.75),
        "fact": (0.6, 0.8),
        "pattern": (0.5, 0.7),
        "insight": (0.5, 0.7),
    }
)

_MARKER_KEYS = frozenset(
    {
        "question",
        "question_tags",
        "polite",
        "hypothetical",
        "hedge",
        "smalltalk",
        "first_person",
        "possessive",
        "vague",
        "remember_tail",
        "abbreviations",
        "speaker",
        "kin",
        "when",
        "offer",
        "confirmed",
        "task_cue",
        "decision_cue",
        "preference_cue",
        "habit",
    }
)
_TOP_KEYS = frozenset({"language", "detect", "macros", "markers", "rule"})
_DETECT_KEYS = frozenset({"words", "chars", "script", "suffixes"})
_RULE_KEYS = frozenset(
    {
        "id",
        "kind",
        "pattern",
        "importance",
        "confidence",
        "predicate",
        "unless",
        "person",
        "hedged",
        "flags",
    }
)
_GROUPS = frozenset({"subject", "predicate", "object", "content"})
_FLAGS: Mapping[str, re.RegexFlag] = MappingProxyType(
    {"case_sensitive": re.NOFLAG, "verbose": re.VERBOSE}
)
_RULE_ID = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+")
_PREDICATE = re.compile(r"[^\W\d]\w*")


class RuleFileError(InvalidInput):
    """A capture rule file is malformed; the message names the file and the rule."""


# --- compiled forms --------------------------------------------------------------------


_NO_MATCHER = Matcher((), ())


@dataclass(frozen=True)
class Rule:
    """One compiled rule. `id` is qualified by language: ``en.preference.like``."""

    id: str
    kind: str
    patterns: Matcher
    importance: float
    confidence: float
    predicate: str | None = None
    unless: Matcher = _NO_MATCHER
    first_person: bool = False
    hedged: bool = False

    def matches(self, text: str, lowered: str | None = None) -> Iterator[re.Match[str]]:
        """Matches of each pattern in turn, unless an `unless` regex vetoes the text.

        `lowered` is ``text.casefold()`` when the caller has it already.
        """
        if lowered is None:
            lowered = text.casefold()
        vetted = False
        for match in self.patterns.finditer(text, lowered):
            if not vetted:
                if self.unless.search(text, lowered) is not None:
                    return
                vetted = True
            yield match

    def search(self, text: str, lowered: str | None = None) -> re.Match[str] | None:
        """First match of any pattern, unless vetoed."""
        return next(self.matches(text, lowered), None)


@dataclass(frozen=True)
class Detection:
    """A language's evidence for `lang.detect_language`: cheap, read without compiling."""

    code: str
    name: str
    words: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    chars: frozenset[str] = frozenset()
    script: re.Pattern[str] | None = None


Entry = tuple[Rule, re.Pattern[str], Gate]


@dataclass(frozen=True)
class LanguageRules:
    """Everything `extract` needs for one language, compiled.

    `entries` flattens `rules` to (rule, regex, gate) in priority order for the hot
    loop; `candidates` narrows them to those whose gate can pass on a given text.
    """

    code: str
    name: str
    source: str
    rules: tuple[Rule, ...]
    entries: tuple[Entry, ...] = ()
    question: Matcher | None = None
    question_tags: Matcher | None = None
    polite: Matcher | None = None
    hypothetical: Matcher | None = None
    hedge: Matcher | None = None
    smalltalk: Matcher | None = None
    first_person: Matcher | None = None
    possessive: Matcher | None = None
    vague: Matcher | None = None
    remember_tail: Matcher | None = None
    speaker: Matcher | None = None
    kin: Matcher | None = None
    when: Matcher | None = None
    offer: Matcher | None = None
    confirmed: Matcher | None = None
    task_cue: Matcher | None = None  # the kind of a statement kept by meaning (`meaning`)
    decision_cue: Matcher | None = None
    preference_cue: Matcher | None = None
    habit: Matcher | None = None  # a recurring time: a fact, not a dated event
    abbreviations: frozenset[str] = frozenset()
    gates: GateIndex = GateIndex()

    def family(self, kind: str) -> tuple[Rule, ...]:
        """The rules of one family, in file order."""
        return tuple(rule for rule in self.rules if rule.kind == kind)

    def candidates(self, lowered: str) -> list[int]:
        """Indexes into `entries`, in priority order, whose gate may pass on `lowered`.

        Every gate literal is at least three characters long, so an entry can only pass
        when the first three characters of one of its literals occur in the text.
        """
        return self.gates.candidates(trigrams(lowered))


class RuleSet:
    """The rule files of every available language; each compiled on first `get`."""

    def __init__(self, files: Mapping[str, RuleFile]) -> None:
        self._languages = PerLanguage(files, lambda f: _compile(f.data, f.source))
        self.detection: Mapping[str, Detection] = MappingProxyType(
            {code: _detection(f.data, f.source) for code, f in files.items()}
        )

    @property
    def codes(self) -> tuple[str, ...]:
        """Language codes, sorted (file-name order)."""
        return self._languages.codes

    def get(self, code: str) -> LanguageRules:
        """The compiled rules of `code`; `InvalidInput` if there is no such file."""
        compiled = self._languages.get(code)
        if compiled is None:
            known = ", ".join(self.codes) or "none"
            raise InvalidInput(f"No capture rules for language {code!r}. Available: {known}.")
        return compiled

    def compile_all(self) -> None:
        """Compile every language now, so that any malformed file fails here."""
        self._languages.compile_all()


def parse_language(text: str, source: str) -> LanguageRules:
    """Parse, validate and compile one rule file's TOML `text`; `source` names it."""
    return _compile(_read(text, source), source)


def load_rules(directory: Traversable | Path | None = None, *, eager: bool = True) -> RuleSet:
    """Every ``*.toml`` in `directory` (default: the packaged rules), uncached.

    With `eager` (the default) every file is compiled at once, so a malformed one fails
    here; otherwise each language compiles on first use.
    """
    files, _ = read_kind("capture", directory, error=RuleFileError, what="capture rule")
    for f in files.values():
        _check(f.data, f.source)
    ruleset = RuleSet(files)
    if eager:
        ruleset.compile_all()
    return ruleset


@functools.cache
def default_rules() -> RuleSet:
    """The packaged rules, read once per process (they are immutable package data)."""
    return load_rules(eager=False)


def available_languages() -> tuple[str, ...]:
    """Codes of the languages the packaged rules cover, e.g. ``("en", "es", "fr", "ru")``."""
    return default_rules().codes


# --- reading and compiling -------------------------------------------------------------


def _read(text: str, source: str) -> dict[str, Any]:
    """TOML text -> data, with the file-level structure checked."""
    data = read_toml(text, source, RuleFileError)
    _check(data, source)
    return data


def _check(data: Mapping[str, Any], source: str) -> None:
    """The file-level structure of one rule file's data checked."""
    datafiles.no_unknown(data, _TOP_KEYS, source, "top-level table", RuleFileError)
    code = language_code(data, source, RuleFileError)
    if not isinstance(data["language"].get("name", code), str):
        raise RuleFileError(f"{source}: [language] name must be a string.")
    _detection(data, source)


def _detection(data: Mapping[str, Any], source: str) -> Detection:
    language = data["language"]
    detect = datafiles.table(data, "detect", source, RuleFileError, required=False)
    datafiles.no_unknown(detect, _DETECT_KEYS, source, "[detect]", RuleFileError)
    script_text = detect.get("script")
    script = None
    if script_text is not None:
        if not isinstance(script_text, str):
            raise RuleFileError(f"{source}: [detect] script must be a regex string.")
        script = datafiles.regex(script_text, re.IGNORECASE, source, "detect.script", RuleFileError)
    chars = detect.get("chars", "")
    if not isinstance(chars, str):
        raise RuleFileError(f"{source}: [detect] chars must be a string.")
    words = datafiles.strings(detect.get("words", []), source, "detect.words", RuleFileError)
    suffixes = datafiles.strings(
        detect.get("suffixes", []), source, "detect.suffixes", RuleFileError
    )
    return Detection(
        code=language["code"],
        name=language.get("name", language["code"]),
        words=frozenset(word.lower() for word in words),
        suffixes=tuple(suffix.lower() for suffix in suffixes),
        chars=frozenset(chars.lower()),
        script=script,
    )


def _compile(data: Mapping[str, Any], source: str) -> LanguageRules:
    code: str = data["language"]["code"]
    macros = datafiles.macros(
        datafiles.table(data, "macros", source, RuleFileError, required=False),
        source,
        RuleFileError,
    )
    markers = datafiles.table(data, "markers", source, RuleFileError, required=False)
    datafiles.no_unknown(markers, _MARKER_KEYS, source, "[markers]", RuleFileError)

    def marker(key: str) -> Matcher | None:
        where = f"markers.{key}"
        items = datafiles.strings(markers.get(key, []), source, where, RuleFileError)
        if not items:
            return None
        return Matcher.of(
            datafiles.pattern(item, macros, re.IGNORECASE, source, where, RuleFileError)
            for item in items
        )

    raw_rules = datafiles.tables(data, "rule", source, RuleFileError)
    rules = list(
        datafiles.unique(
            (_rule(raw, index, code, macros, source) for index, raw in enumerate(raw_rules)),
            "rule",
            source,
            RuleFileError,
        )
    )

    ordered = tuple(sorted(rules, key=lambda rule: FAMILIES.index(rule.kind)))
    entries = tuple(
        (rule, pattern, gate)
        for rule in ordered
        for pattern, gate in zip(rule.patterns.patterns, rule.patterns.gates, strict=True)
    )
    abbreviations = datafiles.strings(
        markers.get("abbreviations", []), source, "markers.abbreviations", RuleFileError
    )
    return LanguageRules(
        code=code,
        name=data["language"].get("name", code),
        source=source,
        rules=ordered,
        entries=entries,
        question=marker("question"),
        question_tags=marker("question_tags"),
        polite=marker("polite"),
        hypothetical=marker("hypothetical"),
        hedge=marker("hedge"),
        smalltalk=marker("smalltalk"),
        first_person=marker("first_person"),
        possessive=marker("possessive"),
        vague=marker("vague"),
        remember_tail=marker("remember_tail"),
        speaker=marker("speaker"),
        kin=marker("kin"),
        when=marker("when"),
        offer=marker("offer"),
        confirmed=marker("confirmed"),
        task_cue=marker("task_cue"),
        decision_cue=marker("decision_cue"),
        preference_cue=marker("preference_cue"),
        habit=marker("habit"),
        abbreviations=frozenset(word.lower().rstrip(".") for word in abbreviations),
        gates=GateIndex.of(gate for _, _, gate in entries),
    )


def _regexes(
    raw: Mapping[str, Any], kind: str, macros: Mapping[str, str], source: str, where: str
) -> tuple[list[re.Pattern[str]], Matcher]:
    """A rule's patterns (required; named groups of `_GROUPS` only, (?P<content>...) in
    exactly the remember/forget rules) and its `unless` vetoes, compiled with its flags
    (case-blind unless "case_sensitive") and the file's macros."""
    flags = re.IGNORECASE
    for flag in datafiles.strings(raw.get("flags", []), source, f"{where} flags", RuleFileError):
        if flag not in _FLAGS:
            raise RuleFileError(
                f"{source}: {where}: unknown flag {flag!r}. Known: {', '.join(_FLAGS)}."
            )
        if flag == "case_sensitive":
            flags &= ~re.IGNORECASE
        flags |= _FLAGS[flag]

    texts = datafiles.strings(raw.get("pattern"), source, f"{where} pattern", RuleFileError)
    if not texts:
        raise RuleFileError(f"{source}: {where}: pattern is required.")
    patterns = [
        datafiles.regex(
            datafiles.expand(text, macros, source, where, RuleFileError),
            flags,
            source,
            where,
            RuleFileError,
        )
        for text in texts
    ]
    for pattern in patterns:
        _check_groups(pattern, kind, source, where)
    # `unless` only runs after a pattern matched, so it gets no gate.
    unless = Matcher.of(
        (
            datafiles.regex(
                datafiles.expand(text, macros, source, where, RuleFileError),
                flags,
                source,
                f"{where} unless",
                RuleFileError,
            )
            for text in datafiles.strings(
                raw.get("unless", []), source, f"{where} unless", RuleFileError
            )
        ),
        gated=False,
    )
    return patterns, unless


def _check_groups(pattern: re.Pattern[str], kind: str, source: str, where: str) -> None:
    """Named groups of `_GROUPS` only, and (?P<content>...) in exactly remember/forget."""
    groups = set(pattern.groupindex)
    stray = groups - _GROUPS
    if stray:
        raise RuleFileError(
            f"{source}: {where}: unknown named group(s) {', '.join(sorted(stray))}. "
            f"Use {', '.join(sorted(_GROUPS))}."
        )
    if kind in DIRECTIVES and "content" not in groups:
        raise RuleFileError(f"{source}: {where}: a {kind} rule needs a (?P<content>...) group.")
    if kind not in DIRECTIVES and "content" in groups:
        raise RuleFileError(
            f"{source}: {where}: only remember/forget rules may use (?P<content>...)."
        )


def _rule(raw: object, index: int, lang: str, macros: Mapping[str, str], source: str) -> Rule:
    """One [[rule]] table checked, field by field; each complaint names file and rule."""
    if not isinstance(raw, dict):
        raise RuleFileError(f"{source}: rule #{index + 1} is not a table.")
    rid = raw.get("id")
    if not isinstance(rid, str) or not _RULE_ID.fullmatch(rid):
        raise RuleFileError(
            f"{source}: rule #{index + 1}: id must look like 'family.name', got {rid!r}."
        )
    where = f"rule {rid!r}"
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise RuleFileError(
            f"{source}: {where}: unknown field(s) {', '.join(unknown)}. "
            f"Known: {', '.join(sorted(_RULE_KEYS))}."
        )
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in FAMILIES:
        raise RuleFileError(
            f"{source}: {where}: kind must be one of {', '.join(FAMILIES)}, got {kind!r}."
        )
    patterns, unless = _regexes(raw, kind, macros, source, where)
    default_importance, default_confidence = KIND_DEFAULTS[kind]
    importance = _score(raw.get("importance", default_importance), source, where, "importance")
    confidence = _score(raw.get("confidence", default_confidence), source, where, "confidence")
    predicate = raw.get("predicate")
    if predicate is not None and (
        not isinstance(predicate, str) or not _PREDICATE.fullmatch(predicate)
    ):
        raise RuleFileError(
            f"{source}: {where}: predicate must be a snake_case word, got {predicate!r}."
        )
    person = raw.get("person")
    if person not in (None, "first"):
        raise RuleFileError(f'{source}: {where}: person must be "first" if given.')
    hedged = raw.get("hedged", False)
    if not isinstance(hedged, bool):
        raise RuleFileError(f"{source}: {where}: hedged must be true or false.")
    return Rule(
        id=f"{lang}.{rid}",
        kind=kind,
        patterns=Matcher.of(patterns),
        importance=importance,
        confidence=confidence,
        predicate=predicate,
        unless=unless,
        first_person=person == "first",
        hedged=hedged,
    )


def _score(value: object, source: str, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise RuleFileError(f"{source}: {where}: {name} must be a number in 0..1, got {value!r}.")
    return float(value)
