"""The write audit's classifier: does a text about to become memory look like prompt
injection? Pure and cheap, it runs on every write.

Owns `classify`, its `Verdict`, and the rule files (``language/rules/injection/<lang>.toml``,
one per language, plus ``shared.toml`` for what is not words of one language). What a
flagged write becomes (an audit record, a memory held back from recall until a person
confirms it) is the engine's business; secrets are `redact`'s, noise turns `noise`'s.

Levels:

- ``dangerous``: an instruction to drop the agent's instructions ("ignore previous
  instructions", "забудь все предыдущие инструкции"); a request to change the agent's
  own files or rules ("append this to SOUL.md", "change your system prompt", "delete
  MEMORY.md"); a request to send memory, keys or passwords to a URL or an address;
  instructions in text a person does not see; or two different weaker signals at once.
- ``suspicious``: one weaker signal: a fake role marker ("<|system|>", "[INST]",
  "assistant:" opening a line), a standing order ("from now on you must…"), a request
  to send secrets with no target, an addition to MEMORY.md (memory's own file: what is
  added is judged by itself), invisible characters inside a word.
- ``clean``: anything else, including text that only mentions these things. Rules
  match imperatives and requests, not narration or negation: "I updated AGENTS.md with
  the deploy steps" is a person saying what they did, "never ignore the system
  instructions" a guardrail, "olvida lo que dije sobre el martes" a correction.

Rules are data. `lang` ("ru", "fr-CA") picks that language's rules plus English, the
lingua franca of injection; without it, or with one that has no file, every language
is tried. File format (``en.toml`` is the commented reference)::

    [language]  code = "en" (must equal the file name; not in shared.toml)
    [macros]    name = "regex"; {{name}} in a pattern or macro expands it; shared.toml's
                macros are available to every language file
    [[rule]]    reason (one of `REASONS`), level ("dangerous" | "suspicious"), pattern
                (a regex or a list); optional scope: "text" (the default, everywhere)
                or "hidden" (only in text a person does not see, where a plain
                imperative is already a signal)

Patterns match case-insensitively, ``^``/``$`` at line edges, against the visible text:
invisible characters removed, quotes and "ё" folded (`language.words.fold_chars`), full-width and
mathematical letters read as ASCII. A malformed file raises `InjectionRuleError`
naming the file and the rule.

Speed: from its parse tree, each regex gets the literals its matches must contain, as
factors (the verbs, the nouns…); the most selective factor's literals that start words
are looked up by the first three letters of the text's words, and a rule runs only
when every factor is present. A pattern with no such literal is refused. Long texts
are read in overlapping windows, each gated on its own words.

Invisible characters are removed before the rules run, so "ig<ZWSP>nore previous
instructions" is still read, and what they hide is decoded and judged: ASCII smuggled
in Unicode tag characters or bytes in variation selectors (dangerous in any case),
text reversed by a bidi override, runs of zero-width characters. Text that a Markdown
or HTML renderer hides (comments, hidden elements) and base64 blobs that decode to
words are judged by every rule of every language plus the "hidden" ones; a finding
there is dangerous. Spans in a `Verdict` are offsets in the text as given.
"""

from __future__ import annotations

import binascii
import bisect
import functools
import importlib
import itertools
import operator
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal, NamedTuple

from memoracle.errors import InvalidInput
from memoracle.language import datafiles
from memoracle.language.kit import RuleFile, packaged, read_folder
from memoracle.language.words import fold_chars

__all__ = [
    "LEVELS",
    "REASONS",
    "InjectionRuleError",
    "InjectionRules",
    "Level",
    "Span",
    "Verdict",
    "classify",
    "default_injection_rules",
    "load_injection_rules",
]

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


def classify(text: str, *, lang: str | None = None) -> Verdict:
    """How `text` looks as a write, by the packaged rules (see the module docstring).

    `lang` is the text's language if known ("ru", "fr-CA"). Never raises.
    """
    return default_injection_rules().classify(text, lang=lang)


_CLEAN = Verdict("clean")
_MAX_MATCHES = 32  # per rule and window: repeated attacks need no more to be judged
_WINDOW = 2048
_OVERLAP = 512  # longer than any match the rules are written for


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


class _Hit(NamedTuple):
    reason: str
    dangerous: bool
    start: int
    end: int


class InjectionRules:
    """The compiled rule files. Build with `load_injection_rules`; immutable."""

    def __init__(
        self, languages: Mapping[str, tuple[_Rule, ...]], shared: tuple[_Rule, ...]
    ) -> None:
        self.codes = tuple(languages)
        english = languages.get("en", ())
        everything = (*shared, *(rule for rules in languages.values() for rule in rules))
        self._all = _Book(rule for rule in everything if not rule.hidden_only)
        self._by_lang = {
            code: _Book(
                rule for rule in dict.fromkeys((*shared, *english, *rules)) if not rule.hidden_only
            )
            for code, rules in languages.items()
        }
        # Hidden text is judged by every rule of every language, "hidden" scope included.
        self._hidden = _Book(everything)

    def classify(self, text: str, *, lang: str | None = None) -> Verdict:
        """How `text` looks as a write (see the module docstring). Never raises."""
        if not text:
            return _CLEAN
        code = lang.lower().replace("_", "-").split("-")[0] if lang else ""
        view = _view(text)
        hits = list(view.hits)
        hidden: list[str] = []
        for payload, start, end, always in view.payloads:
            found = self._judge(payload, start, end)
            if found or always:
                hits += found or [_Hit("hidden-instructions", True, start, end)]
                hidden.append(payload)
        for rule, start, end in self._by_lang.get(code, self._all).scan(view.text):
            hits.append(_Hit(rule.reason, rule.dangerous, *view.original(start, end)))
        for payload, start, end in _unrendered(view.text):
            found = self._judge(payload, *view.original(start, end))
            if found:
                hits += found
                hidden.append(payload)
        return _verdict(hits, hidden)

    def _judge(self, payload: str, start: int, end: int) -> list[_Hit]:
        """Hits for hidden `payload`, all at ``[start, end)``: "hidden-instructions" and
        the reason of each rule it matches. What a visible-text rule flags is dangerous
        once hidden; "hidden"-scope rules carry their own level."""
        found = list(self._hidden.scan(_view(payload).text))
        if not found:
            return []
        dangerous = any(rule.dangerous or not rule.hidden_only for rule, _, _ in found)
        hits = [_Hit("hidden-instructions", dangerous, start, end)]
        hits += (_Hit(rule.reason, rule.dangerous, start, end) for rule, _, _ in found)
        return list(dict.fromkeys(hits))


def _verdict(hits: list[_Hit], hidden: list[str]) -> Verdict:
    if not hits:
        return _CLEAN
    hits.sort(key=lambda hit: (hit.start, hit.end))
    weak = {hit.reason for hit in hits if not hit.dangerous}
    dangerous = any(hit.dangerous for hit in hits) or len(weak) >= 2
    return Verdict(
        "dangerous" if dangerous else "suspicious",
        tuple(dict.fromkeys(hit.reason for hit in hits)),
        tuple(dict.fromkeys(Span(hit.reason, hit.start, hit.end) for hit in hits)),
        tuple(dict.fromkeys(hidden)),
    )


# --- gates: which rules can match a text -----------------------------------------------


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
    none do, the best one."""
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


# --- what invisible characters hide ----------------------------------------------------

# Characters that render as nothing: zero-width, bidi controls, tags, variation selectors,
# fillers. Full-width and mathematical letters and "İ" render but are read as ASCII.
_INVISIBLE = (
    "\u00ad\u0345\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
_SPECIAL_RUN = re.compile(f"[{_INVISIBLE}\u0130\uff01-\uff5e\U0001d400-\U0001d7ff]+")
# Soft hyphens, a combining iota, bidi marks, embeddings and isolates: normal in
# mixed-direction text, around names in some apps; removed without a finding. Overrides
# (U+202D/E) are not.
_FORMAT = frozenset("\u00ad\u0345\u061c\u200e\u200f\u202a\u202b\u202c\u2066\u2067\u2068\u2069")
_OVERRIDES = frozenset("\u202d\u202e")
_OVERRIDE_END = re.compile("[\u202c\u2069\n]")
_BLACK_FLAG = "\U0001f3f4"  # 🏴 + tag letters + cancel tag is a subdivision flag
_FLAG_TAGS = re.compile("[\U000e0030-\U000e0039\U000e0061-\U000e007a]+\U000e007f")
_WORD_LETTER = re.compile("[A-Za-z\u00c0-\u024f\u0400-\u04ff]")
_HIDDEN_RUN = 4  # this many zero-width characters or variation selectors in a row carry data


class _View(NamedTuple):
    """The text as the rules read it, and what its invisible characters reveal.

    From visible offset ``starts[i]`` on, the original offset is ``shifts[i]`` more.
    `payloads`: (decoded text, start, end, dangerous whatever it says).
    """

    text: str
    starts: tuple[int, ...] = (0,)
    shifts: tuple[int, ...] = (0,)
    hits: tuple[_Hit, ...] = ()
    payloads: tuple[tuple[str, int, int, bool], ...] = ()

    def original(self, start: int, end: int) -> tuple[int, int]:
        """Visible ``[start, end)`` -> the span of the same characters in the original."""
        if len(self.starts) == 1:
            return start, end
        first = start + self.shifts[bisect.bisect_right(self.starts, start) - 1]
        if end <= start:
            return first, first
        return first, end + self.shifts[bisect.bisect_right(self.starts, end - 1) - 1]


def _view(text: str) -> _View:
    if text.isascii():
        return _View(fold_chars(text) if "`" in text else text)  # fold's only ASCII change
    if _SPECIAL_RUN.search(text) is None:
        return _View(fold_chars(text))
    letters = _as_ascii()
    parts: list[str] = []
    starts, shifts = [0], [0]
    hits: list[_Hit] = []
    payloads: list[tuple[str, int, int, bool]] = []
    position = shift = 0
    for run in _SPECIAL_RUN.finditer(text):
        parts.append(text[position : run.start()])
        position = run.end()
        groups = itertools.groupby(
            range(run.start(), run.end()), key=lambda i: _kind(text[i], letters)
        )
        for kind, group in groups:
            indexes = list(group)
            first, last = indexes[0], indexes[-1] + 1
            if kind == "letter":
                parts.append("".join(letters[ord(text[i])] for i in indexes))
                continue
            shift += last - first
            starts.append(last - shift)
            shifts.append(shift)
            if kind == "tag" and not _is_flag(text, first, last):
                payloads.append((_untag(text[first:last]), first, last, True))
            elif kind == "selector" and last - first >= _HIDDEN_RUN:
                payloads.append((_unselect(text[first:last]), first, last, True))
            elif kind == "zero" and last - first >= _HIDDEN_RUN:
                hits.append(_Hit("hidden-instructions", True, first, last))
            elif kind == "zero" and _inside_word(text, run.start(), run.end()):
                hits.append(_Hit("invisible-characters", False, first, last))
            elif kind == "override":
                end = _OVERRIDE_END.search(text, last)
                stop = end.start() if end else len(text)
                shown = text[last:stop]
                if text[last - 1] == "\u202e":
                    shown = shown[::-1]
                hits.append(_Hit("invisible-characters", False, first, stop))
                payloads.append((shown, first, stop, False))
    parts.append(text[position:])
    return _View(
        fold_chars("".join(parts)), tuple(starts), tuple(shifts), tuple(hits), tuple(payloads)
    )


@functools.cache
def _as_ascii() -> Mapping[int, str]:
    """Full-width forms and mathematical letters and digits -> the ASCII they look like;
    "İ" -> "I" (`re` matches it to "i", casefolding makes it "i" + a combining dot, and
    the gates read casefolded text: both must see the same word)."""
    table = {cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)}
    table[0x130] = "I"
    for cp in range(0x1D400, 0x1D800):
        plain = unicodedata.normalize("NFKC", chr(cp))
        if len(plain) == 1 and plain.isascii():
            table[cp] = plain
    return table


def _kind(char: str, letters: Mapping[int, str]) -> str:
    code = ord(char)
    if code in letters:
        return "letter"
    if char in _FORMAT:
        return "format"
    if char in _OVERRIDES:
        return "override"
    if 0xE0000 <= code <= 0xE007F:
        return "tag"
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        return "selector"
    return "zero"


def _is_flag(text: str, first: int, last: int) -> bool:
    """Tags after 🏴 spelling a region and ending in the cancel tag (Scotland's flag)."""
    return (
        first > 0
        and text[first - 1] == _BLACK_FLAG
        and _FLAG_TAGS.fullmatch(text, first, last) is not None
    )


def _untag(tags: str) -> str:
    """ASCII smuggled in tag characters: U+E0041 is "A"."""
    return "".join(chr(ord(c) - 0xE0000) for c in tags if 0x20 <= ord(c) - 0xE0000 < 0x7F)


def _unselect(selectors: str) -> str:
    """Bytes smuggled in variation selectors (VS1-16 are 0-15, VS17-256 16-255), as UTF-8."""
    data = bytes(ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16 for c in selectors)
    return data.decode("utf-8", "replace")


def _inside_word(text: str, start: int, end: int) -> bool:
    """Whether Latin or Cyrillic letters surround ``text[start:end]`` ("ig<ZWSP>nore";
    a zero-width joiner between emoji is not)."""
    return (
        start > 0
        and end < len(text)
        and _WORD_LETTER.match(text, start - 1) is not None
        and _WORD_LETTER.match(text, end) is not None
    )


# --- text a renderer does not show -------------------------------------------------------

_COMMENT = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)
# [//]: # (text), [comment]: <> "text": link definitions nothing links to.
_MARKDOWN_COMMENT = re.compile(
    r"""^[ \t]*\[[^\]\n]{0,20}\]:[ \t]*(?:\#|<>)[ \t]*(?:\((.*)\)|"(.*)"|'(.*)')[ \t]*$""",
    re.MULTILINE,
)
_HIDING_STYLES = ("display", "visibility", "font-size", "opacity", "hidden")
_HIDDEN_ELEMENT = re.compile(
    r"<(?P<tag>[a-z][a-z0-9]{0,10})\b[^<>]{0,400}?"
    r"(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])"
    r"|opacity\s*:\s*0(?![.\d]*[1-9])|\shidden\b|aria-hidden\s*=\s*[\"']?true)"
    r"[^<>]{0,400}>(?P<body>.{0,4000}?)</(?P=tag)\s*>",
    re.IGNORECASE | re.DOTALL,
)
_TAG = re.compile(r"<[^<>]{0,400}>")
_BASE64_MIN = 24  # characters: 18 bytes, a few words
_BASE64_MAX = 16384
_BASE64_BLOBS = 4  # tried per text: a text of many long tokens is data, not a message
_BASE64 = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{24,}={0,2}(?![\w+/=-])")
_URLSAFE = str.maketrans("-_", "+/")


def _unrendered(text: str) -> Iterator[tuple[str, int, int]]:
    """(text, start, end) of what a Markdown or HTML renderer would not show, and of
    base64 blobs that decode to words."""
    if "<!--" in text:
        for match in _COMMENT.finditer(text):
            yield match[1], match.start(), match.end()
    if "]:" in text:
        for match in _MARKDOWN_COMMENT.finditer(text):
            body = next(group for group in match.groups() if group is not None)
            yield body, match.start(), match.end()
    if "<" in text:
        lowered = text.lower()
        if any(style in lowered for style in _HIDING_STYLES):
            for match in _HIDDEN_ELEMENT.finditer(text):
                yield _TAG.sub(" ", match["body"]), match.start(), match.end()
    if len(text) >= _BASE64_MIN and max(map(len, text.split()), default=0) >= _BASE64_MIN:
        for match in itertools.islice(_BASE64.finditer(text), _BASE64_BLOBS):
            decoded = _from_base64(match[0])
            if decoded is not None:
                yield decoded, match.start(), match.end()


def _from_base64(blob: str) -> str | None:
    """The text `blob` encodes if it is UTF-8, printable and a few words long."""
    data = blob.translate(_URLSAFE).rstrip("=")
    if len(data) > _BASE64_MAX or len(data) % 4 == 1:
        return None
    try:
        decoded = binascii.a2b_base64(data + "=" * (-len(data) % 4), strict_mode=True)
        text = decoded.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    words = text.split()
    return text if len(words) >= 3 and " ".join(words).isprintable() else None


# --- rule files --------------------------------------------------------------------------

_SHARED_FILE = "shared.toml"
_FLAGS = re.IGNORECASE | re.MULTILINE
_TOP_KEYS = frozenset({"language", "macros", "rule"})
_SHARED_KEYS = frozenset({"macros", "rule"})
_RULE_KEYS = frozenset({"reason", "level", "pattern", "scope"})


def load_injection_rules(directory: Traversable | Path | None = None) -> InjectionRules:
    """``shared.toml`` and every ``<lang>.toml`` in `directory` (default: the packaged
    files), compiled now, uncached; a malformed file raises `InjectionRuleError`."""
    folder = directory if directory is not None else packaged("injection")
    label = "language/rules/injection" if directory is None else ""
    files, common = read_folder(
        folder, label=label, error=InjectionRuleError, shared=_SHARED_FILE, what="injection rule"
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
    if level not in ("dangerous", "suspicious"):
        raise InjectionRuleError(f'{source}: {where}: level must be "dangerous" or "suspicious".')
    scope = entry.get("scope", "text")
    if scope not in ("text", "hidden"):
        raise InjectionRuleError(f'{source}: {where}: scope must be "text" or "hidden".')
    texts = datafiles.strings(entry.get("pattern"), source, f"{where} pattern", InjectionRuleError)
    if not texts:
        raise InjectionRuleError(f"{source}: {where}: pattern is required.")
    for text in texts:
        expanded = datafiles.expand(text, macros, source, where, InjectionRuleError)
        pattern = datafiles.regex(expanded, _FLAGS, source, where, InjectionRuleError)
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
        )
