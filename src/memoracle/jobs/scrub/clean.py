"""Today's redaction applied to stored text, and to every copy of what it removed.

`redact(text)` finds a secret where it is said ("password: hunter2"); a copy of it
elsewhere — a memory's object, an entity named after it, an audit entry, a line of a
JSONL export — may stand without the words that gave it away. So the cleaner learns,
from each primary text the redaction changed, what it removed (the span between what
stayed, word by word, as it was before and after: the "needle") and what replaced it,
and then replaces every needle wherever it stands, as a whole word, in any case.

Pure: strings in, strings out. Nothing here names the secret in a report; `kinds` are
the redaction's kinds, and a needle's kind is "copy".
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from memoracle.capture.redact import Redaction, redact

__all__ = ["Cleaned", "Cleaner"]

MIN_NEEDLE = 4  # shorter removed spans are not looked for elsewhere (too common)
PLAIN_NEEDLE = 8  # nor letters alone under this: "banana" after "token:" is not a key
CACHED = 1_000_000  # texts known clean, at most (about 90 MB of digests)
COPY = "copy"  # the kind reported for a needle replaced away from where it was found
_TOKENS = re.compile(r"\s+|\S+")
_WORDS = re.compile(r"[^\W_]+")
_TAIL = re.compile(r"^(?P<body>.*?)(?P<tail>(?:\s*<!--.*?-->)+\s*)$")


@dataclass(frozen=True)
class Cleaned:
    text: str
    kinds: tuple[str, ...]

    def changed(self, old: str) -> bool:
        return self.text != old


@dataclass
class Cleaner:
    """`clean(text)`: the redaction, then every needle learned so far."""

    redactor: Callable[[str], Redaction] = redact
    needles: dict[str, str] = field(default_factory=dict)  # casefolded needle -> replacement
    _pattern: re.Pattern[str] | None = None
    # Digests of texts the redaction leaves as they are, so a text met again (the same
    # row in each backup) is not redacted again; needles are still looked for.
    _clean: set[bytes] = field(default_factory=set)
    _keys: set[str] = field(default_factory=set)  # the longest word of each needle
    _wordless: bool = False  # a needle without a word: every text is looked at

    def learn(self, text: str) -> Cleaned:
        """Redact a primary text and learn its needles; the redacted text and kinds."""
        digest = _digest(text)
        if digest in self._clean:
            return Cleaned(text, ())
        done = self.redactor(text)
        if done.text == text:
            if len(self._clean) < CACHED:
                self._clean.add(digest)
        else:
            for needle, replacement in removed(text, done.text):
                if needle.casefold() not in self.needles:
                    self.needles[needle.casefold()] = replacement
                    self._pattern = None
        return Cleaned(done.text, done.kinds)

    def clean(self, text: str) -> Cleaned:
        """`text` redacted, and every needle in it replaced."""
        digest = _digest(text)
        if digest in self._clean:
            done = Redaction(text, ())
        else:
            done = self.redactor(text)
            if done.text == text and len(self._clean) < CACHED:
                self._clean.add(digest)
        out, kinds = done.text, list(done.kinds)
        pattern = self._compiled()
        if pattern is not None and self._may_hold(out):
            replaced = pattern.sub(lambda m: self.needles[m.group(0).casefold()], out)
            if replaced != out:
                out = replaced
                kinds.append(COPY)
        return Cleaned(out, tuple(dict.fromkeys(kinds)))

    def clean_line(self, line: str) -> Cleaned:
        """One line of Markdown: its text cleaned, a trailing `<!-- m_12 -->` tag (or
        `<!-- until … -->`) kept as it is, so MEMORY.md's items keep their ids."""
        match = _TAIL.match(line)
        if match is None or not match.group("body").strip():
            return self.clean(line)
        body = self.clean(match.group("body"))
        return Cleaned(body.text + match.group("tail"), body.kinds)

    def clean_markdown(self, text: str) -> Cleaned:
        lines = text.split("\n")
        kinds: list[str] = []
        out = []
        for line in lines:
            done = self.clean_line(line)
            out.append(done.text)
            kinds += done.kinds
        return Cleaned("\n".join(out), tuple(dict.fromkeys(kinds)))

    def clean_json(self, text: str) -> Cleaned:
        """A JSON document (one JSONL line): every string in it cleaned, the rest of the
        line byte for byte as it was; text that is not JSON is cleaned as text."""
        try:
            value = json.loads(text)
        except ValueError:
            return self.clean(text)
        kinds: list[str] = []
        swaps: dict[str, str] = {}
        cleaned = self._walk(value, kinds, swaps)
        if not swaps:
            return Cleaned(text, ())
        out = text
        for old, new in swaps.items():
            for ascii_ in (False, True):
                out = out.replace(
                    json.dumps(old, ensure_ascii=ascii_), json.dumps(new, ensure_ascii=ascii_)
                )
        try:
            if json.loads(out) == cleaned:
                return Cleaned(out, tuple(dict.fromkeys(kinds)))
        except ValueError:
            pass
        compact = '", "' not in text and '": ' not in text
        separators = (",", ":") if compact else None
        dumped = json.dumps(cleaned, ensure_ascii=False, separators=separators)
        return Cleaned(dumped, tuple(dict.fromkeys(kinds)))

    def _walk(self, value: Any, kinds: list[str], swaps: dict[str, str]) -> Any:
        if isinstance(value, str):
            done = self.clean(value)
            if done.text != value:
                swaps[value] = done.text
                kinds += done.kinds
            return done.text
        if isinstance(value, list):
            return [self._walk(v, kinds, swaps) for v in value]
        if isinstance(value, dict):
            return {k: self._walk(v, kinds, swaps) for k, v in value.items()}
        return value

    def _may_hold(self, text: str) -> bool:
        """Whether `text` may hold a needle: it has the longest word of one (a needle
        found as a whole word has each of its words whole in the text), or a needle has
        no word at all. A set lookup per word, where the pattern costs a try per needle
        at every character."""
        if self._wordless:
            return True
        return not self._keys.isdisjoint(_WORDS.findall(text.lower()))

    def _compiled(self) -> re.Pattern[str] | None:
        if self._pattern is None and self.needles:
            self._keys = set()
            self._wordless = False
            for needle in self.needles:
                words = _WORDS.findall(needle.lower())
                if words:
                    self._keys.add(max(words, key=len))
                else:
                    self._wordless = True
            parts = []
            for needle in sorted(self.needles, key=len, reverse=True):
                head = r"(?<![^\W_])" if _wordy(needle[0]) else ""
                tail = r"(?![^\W_])" if _wordy(needle[-1]) else ""
                parts.append(head + re.escape(needle) + tail)
            self._pattern = re.compile("|".join(parts), re.IGNORECASE)
        return self._pattern


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _wordy(char: str) -> bool:
    return char.isalnum()


def _distinctive(needle: str) -> bool:
    """Whether a removed span is worth looking for elsewhere: long enough, and either
    long or not letters alone (a word the redaction took for a value would otherwise go
    from every text that uses it)."""
    if len(needle) < MIN_NEEDLE:
        return False
    return len(needle) >= PLAIN_NEEDLE or not needle.isalpha()


def removed(old: str, new: str) -> list[tuple[str, str]]:
    """What the redaction of `old` into `new` took out, and what it put in its place:
    the spans of words that differ, less the characters both share at either end
    ("postgres://app:s3cret@db" → "s3cret"). Spans that are not `_distinctive` are
    left out."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    found: list[tuple[str, str]] = []
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "delete"):
            continue
        gone, put = "".join(a[i1:i2]), "".join(b[j1:j2])
        start = 0
        while start < min(len(gone), len(put)) and gone[start] == put[start]:
            start += 1
        end = 0
        while end < min(len(gone), len(put)) - start and gone[-1 - end] == put[-1 - end]:
            end += 1
        needle = gone[start : len(gone) - end].strip()
        replacement = put[start : len(put) - end].strip() or "[REDACTED]"
        if _distinctive(needle):
            found.append((needle, replacement))
    return found
