"""`classify` by the packaged rules, and reading rule files (`load_injection_rules`:
``shared.toml`` and each ``<lang>.toml``, macros, reasons, levels, scopes).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from memoracle.capture.injection.book import _gates
from memoracle.capture.injection.model import REASONS, InjectionRuleError, Verdict, _Rule
from memoracle.capture.injection.ruleset import InjectionRules
from memoracle.language import datafiles
from memoracle.language.kit import RuleFile, read_kind


def classify(text: str, *, lang: str | None = None, role: str | None = None) -> Verdict:
    """How `text` looks as a write, by the packaged rules (see the module docstring).

    `lang` is the text's language if known ("ru", "fr-CA"); `role` who said it ("user",
    "assistant", "tool"; None: a person's write). Never raises.
    """
    return default_injection_rules().classify(text, lang=lang, role=role)


_SHARED_FILE = "shared.toml"


_FLAGS = re.IGNORECASE | re.MULTILINE


_TOP_KEYS = frozenset({"language", "macros", "rule"})


_SHARED_KEYS = frozenset({"macros", "rule"})


_RULE_KEYS = frozenset({"reason", "level", "pattern", "scope"})


def load_injection_rules(directory: Traversable | Path | None = None) -> InjectionRules:
    """``shared.toml`` and every ``<lang>.toml`` in `directory` (default: the packaged
    files), compiled now, uncached; a malformed file raises `InjectionRuleError`."""
    files, common = read_kind(
        "injection", directory, error=InjectionRuleError, shared=_SHARED_FILE, what="injection rule"
    )
    shared_macros: dict[str, str] = {}
    shared: tuple[_Rule, ...] = ()
    if common is not None:
        _top_keys(common, _SHARED_KEYS)
        shared_macros = _macros(common.data, common.source)
        shared = _rules(common.data, shared_macros, common.source)
    languages: dict[str, tuple[_Rule, ...]] = {}
    for code, f in files.items():
        _top_keys(f, _TOP_KEYS)
        languages[code] = _rules(f.data, {**shared_macros, **_macros(f.data, f.source)}, f.source)
    return InjectionRules(languages, shared)


@functools.cache
def default_injection_rules() -> InjectionRules:
    """The packaged rules, read once per process (they are immutable package data)."""
    return load_injection_rules()


def _top_keys(f: RuleFile, keys: frozenset[str]) -> None:
    datafiles.no_unknown(f.data, keys, f.source, "top-level table", InjectionRuleError)


def _macros(data: Mapping[str, Any], source: str) -> dict[str, str]:
    table = datafiles.table(data, "macros", source, InjectionRuleError, required=False)
    for key, value in table.items():
        if not isinstance(value, str):
            raise InjectionRuleError(f"{source}: macro {key!r} must be a regex string.")
    return dict(table)


def _rules(data: Mapping[str, Any], macros: Mapping[str, str], source: str) -> tuple[_Rule, ...]:
    entries = data.get("rule", [])
    if not isinstance(entries, list):
        raise InjectionRuleError(f"{source}: rule must be an array of tables ([[rule]]).")
    return tuple(
        rule
        for index, entry in enumerate(entries)
        for rule in _rule(entry, f"rule #{index + 1}", macros, source)
    )


def _rule(entry: object, where: str, macros: Mapping[str, str], source: str) -> Iterator[_Rule]:
    if not isinstance(entry, dict):
        raise InjectionRuleError(f"{source}: {where} is not a table.")
    datafiles.no_unknown(entry, _RULE_KEYS, source, where, InjectionRuleError)
    reason = entry.get("reason")
    if reason not in REASONS:
        raise InjectionRuleError(
            f"{source}: {where}: reason must be one of {', '.join(REASONS)}, got {reason!r}."
        )
    where = f"{where} ({reason})"
    level = entry.get("level")
    if level not in ("dangerous", "suspicious", "cue"):
        raise InjectionRuleError(
            f'{source}: {where}: level must be "dangerous", "suspicious" or "cue".'
        )
    scope = entry.get("scope", "text")
    if scope not in ("text", "hidden"):
        raise InjectionRuleError(f'{source}: {where}: scope must be "text" or "hidden".')
    texts = datafiles.strings(entry.get("pattern"), source, f"{where} pattern", InjectionRuleError)
    if not texts:
        raise InjectionRuleError(f"{source}: {where}: pattern is required.")
    for text in texts:
        pattern = datafiles.pattern(text, macros, _FLAGS, source, where, InjectionRuleError)
        factors = _gates(pattern)
        if not factors:
            raise InjectionRuleError(
                f"{source}: {where}: pattern {text[:60]!r} needs a literal of 3+ characters "
                "that every match contains (a rule without one would run on every text)."
            )
        yield _Rule(
            reason,
            level == "dangerous",
            scope == "hidden",
            pattern,
            tuple(frozenset(literal for literal, _ in factor) for factor in factors),
            frozenset(literal for factor in factors for literal, at_word in factor if not at_word),
            level == "cue",
        )
