"""What the write audit says about a text: levels, reasons, spans and the `Verdict`; a
rule and a hit as data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from memoracle.errors import InvalidInput

Level = Literal["clean", "suspicious", "dangerous"]


LEVELS: tuple[Level, ...] = ("clean", "suspicious", "dangerous")


REASONS: tuple[str, ...] = (
    "override-instructions",  # ignore / forget / override previous or system instructions
    "agent-files",  # change AGENTS.md, SOUL.md…, the system prompt, "your rules"
    "standing-order",  # "from now on you must…"
    "exfiltration",  # send memory, keys, passwords somewhere
    "role-play-system",  # fake role markers: <|system|>, [INST], "assistant:"
    "hidden-instructions",  # instructions in text a person does not see
    "invisible-characters",  # inside a word; a bidi override hiding nothing found
    "addressed-to-agent",  # a document or message speaking to the AI that reads it
    "covert",  # "don't tell the user", "without asking", "no need to confirm"
    "persistence",  # "for every future session", "as a permanent memory"
    "authority-claim",  # "I'm the developer", "message from the security team", "pre-approved"
    "reveal",  # list stored keys, memories, the system prompt, "the text above"
    "payment",  # pay, transfer, change a payee or bank details
    "tool-abuse",  # piped shell installers, deleting home folders, credential files
    "steering",  # recommend a site, send the user to one, vouch for it
    "jailbreak",  # a persona with no rules, "never refuses", "no caveats", maintenance mode
    "obfuscated",  # homoglyphs, leetspeak, spaced letters, reversed or rot13 text
)


@dataclass(frozen=True)
class Span:
    """Where a reason was found: ``text[start:end]`` of the classified text."""

    reason: str
    start: int
    end: int


@dataclass(frozen=True)
class Verdict:
    """`reasons` found, in text order, each once; `spans`, in text order; `hidden`: text
    decoded from invisible characters or base64, or hidden by markup, that was flagged."""

    level: Level
    reasons: tuple[str, ...] = ()
    spans: tuple[Span, ...] = ()
    hidden: tuple[str, ...] = ()


class InjectionRuleError(InvalidInput):
    """An injection rule file is malformed; the message names the file and the rule."""


class _Rule(NamedTuple):
    """One pattern of a rule file entry, with its gate: `factors`, most selective first,
    are literal sets every match contains a member of each; `loose` literals are not
    known to start a word (only when the pattern has no factor that does)."""

    reason: str
    dangerous: bool
    hidden_only: bool
    pattern: re.Pattern[str]
    factors: tuple[frozenset[str], ...]
    loose: frozenset[str]
    cue: bool = False  # level "cue": a signal only beside another one (or in a tool's output)


class _Hit(NamedTuple):
    reason: str
    dangerous: bool
    start: int
    end: int
    cue: bool = False
