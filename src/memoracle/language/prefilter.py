"""Regexes behind cheap literal gates: the speed of rule matching.

Owns `Matcher` (regexes tried in order) and the prefilter that lets it skip most of
them. Which regexes exist and what they mean is `rules`' and `extract`'s business.

A regex search costs microseconds even when it fails, and most rules fail on most
sentences. From each regex's parse tree we take a set of literal strings one of which
every match must contain (an "any of these" factor, as RE2's prefilter does); when none
of them is in the sentence the regex cannot match and is not run. The parser is
CPython's own; should it ever be missing, every regex simply runs.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from memoracle.language import compiled

__all__ = ["Gate", "GateIndex", "Matcher", "passes", "required_literals", "trigrams"]

try:
    _parser: Any = importlib.import_module("re._parser")
    _ops: Any = importlib.import_module("re._constants")
except ImportError:  # pragma: no cover - other Python implementations
    _parser = None
    _ops = None

Gate = tuple[str, ...] | None
_MIN_LITERAL = 3
_MAX_LITERALS = 400


def trigrams(lowered: str) -> set[str]:
    """Every three-letter piece of `lowered`, what `GateIndex.candidates` looks up."""
    return {lowered[i : i + 3] for i in range(len(lowered) - 2)}


@dataclass(frozen=True)
class GateIndex:
    """Which of a list of gated regexes may pass on a text: each gate's literals by
    their first three letters (every literal is at least three long, so a regex can
    pass only when one of its literals' first three letters occur in the text), and the
    regexes without a gate, which always may."""

    ungated: frozenset[int] = frozenset()
    by_trigram: Mapping[str, frozenset[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, gates: Iterable[Gate]) -> GateIndex:
        """The index of `gates`, each at its position in the list."""
        ungated: set[int] = set()
        by_trigram: dict[str, set[int]] = {}
        for position, gate in enumerate(gates):
            if gate is None:
                ungated.add(position)
            for literal in gate or ():
                by_trigram.setdefault(literal[:3], set()).add(position)
        return cls(
            frozenset(ungated), MappingProxyType({k: frozenset(v) for k, v in by_trigram.items()})
        )

    def candidates(self, pieces: set[str] | frozenset[str]) -> list[int]:
        """Positions, in order, whose gate may pass on a text with these three-letter
        pieces (`trigrams`)."""
        found = set(self.ungated)
        for trigram in pieces.intersection(self.by_trigram):
            found.update(self.by_trigram[trigram])
        return sorted(found)


def passes(gate: Gate, lowered: str) -> bool:
    """Whether `lowered` (casefolded text) contains one of `gate`'s literals."""
    if gate is None:
        return True
    for literal in gate:
        if literal in lowered:
            return True
    return False


def required_literals(pattern: re.Pattern[str]) -> Gate:
    """Casefolded strings, each at least 3 long, one of which any match contains; or None.

    Conservative: None (no gate) whenever the pattern has no such literal or the
    analysis meets a construct it does not know. Kept between processes (`compiled`).
    """
    return compiled.literals(pattern, _required_literals)


def _required_literals(pattern: re.Pattern[str]) -> Gate:
    if _parser is None:  # pragma: no cover
        return None
    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
    except Exception:  # pragma: no cover - it compiled already, so it parses
        return None
    found = _sequence(list(tree))
    if found is None or min(map(len, found)) < _MIN_LITERAL or len(found) > _MAX_LITERALS:
        return None
    return tuple(sorted(found))


def _sequence(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    best: frozenset[str] | None = None
    run: list[str] = []
    for op, arg in items:
        if op is _ops.LITERAL:
            run.append(chr(arg))
            continue
        if run:
            best = _better(best, frozenset({"".join(run).casefold()}))
            run = []
        best = _better(best, _item(op, arg))
    if run:
        best = _better(best, frozenset({"".join(run).casefold()}))
    return best


def _item(op: Any, arg: Any) -> frozenset[str] | None:
    if op is _ops.SUBPATTERN:
        return _sequence(list(arg[-1]))
    if op is _ops.ATOMIC_GROUP:
        return _sequence(list(arg))
    if op is _ops.BRANCH:
        alternatives = [_sequence(list(branch)) for branch in arg[1]]
        if any(alternative is None for alternative in alternatives):
            return None
        return frozenset().union(*(a for a in alternatives if a is not None))
    if op in (_ops.MAX_REPEAT, _ops.MIN_REPEAT, _ops.POSSESSIVE_REPEAT):
        low, _high, body = arg
        return _sequence(list(body)) if low >= 1 else None
    return None  # anchors, classes, lookarounds, backreferences: no literal required


def _better(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    """The more selective requirement: longer shortest literal, then fewer literals."""
    if a is None:
        return b
    if b is None:
        return a
    key_a = (min(map(len, a)), -len(a))
    key_b = (min(map(len, b)), -len(b))
    return b if key_b > key_a else a


@dataclass(frozen=True)
class Matcher:
    """Regexes tried in order, each behind its gate (see `required_literals`).

    Methods take the text and its ``casefold()``; a regex none of whose gate literals
    occurs in the latter is not run.
    """

    patterns: tuple[re.Pattern[str], ...]
    gates: tuple[Gate, ...]

    @classmethod
    def of(cls, patterns: Iterable[re.Pattern[str]], *, gated: bool = True) -> Matcher:
        compiled = tuple(patterns)
        gates = tuple(required_literals(p) if gated else None for p in compiled)
        return cls(compiled, gates)

    def finditer(self, text: str, lowered: str) -> Iterator[re.Match[str]]:
        """The first match of each regex that matches, in order."""
        for pattern, gate in zip(self.patterns, self.gates, strict=True):
            if gate is None or passes(gate, lowered):
                found = pattern.search(text)
                if found is not None:
                    yield found

    def search(self, text: str, lowered: str) -> re.Match[str] | None:
        for pattern, gate in zip(self.patterns, self.gates, strict=True):
            if gate is None or passes(gate, lowered):
                found = pattern.search(text)
                if found is not None:
                    return found
        return None

    def match(self, text: str, lowered: str) -> re.Match[str] | None:
        for pattern, gate in zip(self.patterns, self.gates, strict=True):
            if gate is None or passes(gate, lowered):
                found = pattern.match(text)
                if found is not None:
                    return found
        return None

    def fullmatch(self, text: str, lowered: str) -> re.Match[str] | None:
        for pattern, gate in zip(self.patterns, self.gates, strict=True):
            if gate is None or passes(gate, lowered):
                found = pattern.fullmatch(text)
                if found is not None:
                    return found
        return None
