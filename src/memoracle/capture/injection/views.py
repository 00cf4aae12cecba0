"""The views of a text the rules read: invisible characters removed, quotes and "ё"
folded, full-width and mathematical letters made plain, tag characters and hidden
HTML/Markdown or base64 content brought out, with spans mapped back to the original.
"""

from __future__ import annotations

import binascii
import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from memoracle.capture.injection.model import _Hit
from memoracle.language.words import fold_chars

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
