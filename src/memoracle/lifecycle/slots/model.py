"""Slots as data: a `Slot` (subject, attribute, value, hedged, negated), a compiled rule
and a language's rules, the shared vocabulary, the attributes and their arity.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memoracle.errors import InvalidInput
from memoracle.language.prefilter import Gate, GateIndex, Matcher, trigrams

DEFAULT_SUBJECT = "user"
# The value of a denial that names none ("we broke up", "I quit my job"): whatever the
# attribute held no longer holds (`conflicts.judge`).
ANY_VALUE = "*"


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
        "manager": "who someone reports to",
        "studies_at": "school or university",
        "device": "device:<phone|laptop> — the one in use",
        "partner": "who someone's partner is (girlfriend, husband, …)",
        "pet": "a pet's name (several at once; one that died or ran away is denied)",
        "project_status": "project_status:<project> — on hold, in beta, live, cancelled, …",
    }
)


_GROUPS = frozenset({"subject", "value", "topic", "other"})


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
    # A place, not a tool: no slot when the value or the alternative is a known tool
    # ("we moved from MySQL to Postgres" is a `uses`, "I moved from Paris to Lyon" a home).
    uncategorised: bool = False
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
    gates: GateIndex = GateIndex()

    def candidates(self, lowered: str) -> list[int]:
        """Indexes into `entries`, in order, whose gate may pass on `lowered`."""
        return self.gates.candidates(trigrams(lowered))


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
