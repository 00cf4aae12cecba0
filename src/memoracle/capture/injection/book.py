"""The literal gates in front of the rules: each rule's regex reduced to literals one of
which every match contains, indexed by word, so a text runs only the rules it might
match.
"""

from __future__ import annotations

import importlib
import itertools
import operator
import re
from collections.abc import Iterable, Iterator
from typing import Any

from memoracle.capture.injection.model import _Rule
from memoracle.language import compiled

_MAX_MATCHES = 32  # per rule and window: repeated attacks need no more to be judged


_WINDOW = 2048


_OVERLAP = 512  # longer than any match the rules are written for


class _Book:
    """Rules behind their gates. Each rule is filed under the literals of its first
    (most selective) factor; a text's candidate literals are those keyed by the first
    three characters of its words, so it costs one pass over its words and a few
    substring checks. A rule whose literal is present runs if its other factors are."""

    def __init__(self, rules: Iterable[_Rule]) -> None:
        self.rules = tuple(rules)
        users: dict[str, set[int]] = {}
        loose: set[str] = set()
        for index, rule in enumerate(self.rules):
            for literal in rule.factors[0]:
                users.setdefault(literal, set()).add(index)
            loose |= rule.factors[0] & rule.loose
        by_key: dict[str, set[str]] = {}
        for literal in users.keys() - loose:
            by_key.setdefault(_key(literal), set()).add(literal)
        self._by_key = {key: tuple(literals) for key, literals in by_key.items()}
        self._keys = frozenset(by_key)
        self._loose = tuple(loose)
        self._users = {literal: tuple(sorted(ids)) for literal, ids in users.items()}
        # A factor none of whose keys starts a word of the text is absent, no search needed.
        self._others = tuple(
            tuple((frozenset(map(_key, factor)), tuple(factor)) for factor in rule.factors[1:])
            for rule in self.rules
        )

    def scan(self, text: str) -> Iterator[tuple[_Rule, int, int]]:
        """(rule, start, end) of the matches in `text`, up to `_MAX_MATCHES` per rule and
        window. A long text is read in windows of `_WINDOW` characters overlapping by
        `_OVERLAP`, each gated on its own words: a rule the document's words open runs
        where they are, not over the whole text. Each window keeps the matches that
        start before the next one does (the regex sees the text before the window, so
        lookbehinds and "^" are exact); a match longer than the overlap that straddles
        a window's end may be missed."""
        start = 0
        while True:
            end = min(len(text), start + _WINDOW)
            keep = end if end == len(text) else end - _OVERLAP
            for found in self._window(text, start, end):
                if found[1] < keep:
                    yield found
            if end == len(text):
                return
            start = keep

    def _window(self, text: str, start: int, end: int) -> Iterator[tuple[_Rule, int, int]]:
        lowered = text[start:end].casefold()
        keys = _word_keys(lowered)
        present = [literal for literal in self._loose if literal in lowered]
        for key in keys & self._keys:
            present += (literal for literal in self._by_key[key] if literal in lowered)
        if not present:
            return
        for index in sorted({index for literal in present for index in self._users[literal]}):
            if all(
                not factor_keys.isdisjoint(keys) and any(lit in lowered for lit in literals)
                for factor_keys, literals in self._others[index]
            ):
                rule = self.rules[index]
                matches = rule.pattern.finditer(text, start, end)
                for match in itertools.islice(matches, _MAX_MATCHES):
                    yield rule, match.start(), match.end()


_WORD = re.compile(r"\w+")


_FIRST_THREE = operator.itemgetter(slice(0, 3))


# ASCII bytes that are not word characters, to spaces: the words of ASCII text, in C.
_ASCII_WORDS = bytes(c if chr(c).isalnum() or c == 0x5F else 0x20 for c in range(256))


def _word_keys(lowered: str) -> set[str]:
    """The first three characters of every word (run of word characters) of `lowered`."""
    if lowered.isascii():
        words = lowered.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    else:
        words = _WORD.findall(lowered)
    return set(map(_FIRST_THREE, words))


def _key(literal: str) -> str:
    """Where a literal that starts a word is filed: the first three characters of that
    word ("ignore" -> "ign", "do not follow" -> "do")."""
    head = literal[:3]
    return next((head[:i] for i, char in enumerate(head) if not _is_word(char)), head)


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # what `\w` and `\b` call a word character


_parser: Any = importlib.import_module("re._parser")


_ops: Any = importlib.import_module("re._constants")


_Literal = tuple[str, bool]  # casefolded literal, and whether every match has it start a word


_MIN_LITERAL = 3


_WORD_STARTS = frozenset(
    {_ops.AT_BOUNDARY, _ops.AT_BEGINNING, _ops.AT_BEGINNING_LINE, _ops.AT_BEGINNING_STRING}
)


_NON_WORD_CATEGORIES = frozenset(
    {_ops.CATEGORY_SPACE, _ops.CATEGORY_UNI_SPACE, _ops.CATEGORY_NOT_WORD}
    | {_ops.CATEGORY_UNI_NOT_WORD}
)


def _gates(pattern: re.Pattern[str]) -> list[frozenset[_Literal]]:
    """Factors of `pattern`, most selective first: literal sets (each literal at least
    three characters) of which every match contains one member each. `prefilter` keeps
    the single best factor; the gate here keeps all whose literals start words, or, if
    none do, the best one. Kept between processes (`compiled`)."""
    return compiled.derived("injection-gates", pattern, _compute_gates)


def _compute_gates(pattern: re.Pattern[str]) -> list[frozenset[_Literal]]:
    factors, _ = _walk(list(_parser.parse(pattern.pattern, pattern.flags)), False)
    at_words = [factor for factor in factors if all(at_word for _, at_word in factor)]
    if at_words:
        return sorted(at_words, key=_selectivity, reverse=True)
    return [_best(factors)] if factors else []


def _walk(
    items: list[tuple[Any, Any]], at_word: bool, run: str = "", run_at_word: bool = False
) -> tuple[list[frozenset[_Literal]], bool]:
    """Factors of a parsed regex sequence entered after the literal `run` with `at_word`
    (a word character next would start a word); and `at_word` at its end."""
    factors: list[frozenset[_Literal]] = []
    for op, arg in items:
        if op is _ops.LITERAL:
            if not run:
                run_at_word = at_word
            run += chr(arg)
            at_word = not _is_word(chr(arg))
            continue
        if op is _ops.BRANCH:
            # The literal before a branch joins each alternative: the parser moves a
            # common prefix out ("pr(?:ior|evious)"), which must not cut the literal.
            walked = [_walk(list(branch), at_word, run, run_at_word) for branch in arg[1]]
            if all(inner for inner, _ in walked):
                factors.append(frozenset().union(*(_best(inner) for inner, _ in walked)))
            at_word = all(end for _, end in walked)
            run = ""
            continue
        if run:
            factors += _run_factor(run, run_at_word)
            run = ""
        if op is _ops.AT:
            if arg in _WORD_STARTS:
                at_word = True
            elif arg is _ops.AT_NON_BOUNDARY:
                at_word = False
        elif op is _ops.IN:
            at_word = _non_word_class(arg)
        elif op is _ops.ASSERT or op is _ops.ASSERT_NOT:
            direction, body = arg
            if direction < 0 and _after_non_word(op is _ops.ASSERT, list(body)):
                at_word = True
        elif op is _ops.SUBPATTERN or op is _ops.ATOMIC_GROUP:
            inner, at_word = _walk(list(arg[-1] if op is _ops.SUBPATTERN else arg), at_word)
            factors += inner
        elif op in (_ops.MAX_REPEAT, _ops.MIN_REPEAT, _ops.POSSESSIVE_REPEAT):
            low, _high, body = arg
            inner, end = _walk(list(body), at_word)
            if low >= 1:
                factors += inner
                at_word = end
            else:
                at_word = at_word and end
        else:
            at_word = False
    if run:
        factors += _run_factor(run, run_at_word)
    return factors, at_word


def _run_factor(run: str, at_word: bool) -> list[frozenset[_Literal]]:
    """The factor a literal run gives: all of it if it starts a word, else its part from
    its first word start ("<|im_start|>" -> "im_start|>"), else all of it, loose."""
    start = 0 if _is_word(run[0]) and at_word else -1
    if start < 0:
        start = next(
            (i for i in range(1, len(run)) if _is_word(run[i]) and not _is_word(run[i - 1])), -1
        )
    if start >= 0 and len(run) - start >= _MIN_LITERAL:
        return [frozenset({(run[start:].casefold(), True)})]
    if len(run) >= _MIN_LITERAL:
        return [frozenset({(run.casefold(), False)})]
    return []


def _after_non_word(positive: bool, body: list[tuple[Any, Any]]) -> bool:
    """Whether a lookbehind proves the previous character is not a word character:
    ``(?<=[.!?])``, ``(?<=')``, ``(?<![\\w-])``."""
    if positive:
        return _walk(body, False)[1]
    return (
        len(body) == 1
        and body[0][0] is _ops.IN
        and any(
            op is _ops.CATEGORY and arg in (_ops.CATEGORY_WORD, _ops.CATEGORY_UNI_WORD)
            for op, arg in body[0][1]
        )
    )


def _non_word_class(items: list[tuple[Any, Any]]) -> bool:
    """Whether a character class matches only non-word characters (``\\s``, ``[,.:]``)."""
    for op, arg in items:
        if op is _ops.CATEGORY:
            if arg not in _NON_WORD_CATEGORIES:
                return False
        elif op is _ops.LITERAL:
            if _is_word(chr(arg)):
                return False
        elif op is _ops.RANGE:
            low, high = arg
            if high - low > 0xFF or any(_is_word(chr(c)) for c in range(low, high + 1)):
                return False
        else:
            return False
    return True


def _best(factors: list[frozenset[_Literal]]) -> frozenset[_Literal]:
    """The cheapest factor to check: literals that start words first, then selectivity."""
    return max(factors, key=lambda f: (all(at_word for _, at_word in f), _selectivity(f)))


def _selectivity(factor: frozenset[_Literal]) -> tuple[int, int]:
    """Longer shortest literal, then fewer literals: rarer in ordinary text."""
    return min(len(literal) for literal, _ in factor), -len(factor)
