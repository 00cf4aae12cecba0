"""Which language a turn is in, among those that have capture rules. Cheap, no model.

Owns `detect_language`. The evidence is data, in each rule file's ``[detect]`` table: a
script (Cyrillic -> "ru") wins outright; otherwise each marker word scores 1, each word
with a telling ending ("-amos", "-aient") scores 1 and each telling letter ("ñ", "ç")
scores 2. Ties and texts with no evidence go to "en". Only the first `SAMPLE_CHARS`
characters are read. What to do with the language is `extract`'s business.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from types import MappingProxyType

from memoracle.capture.rules import DEFAULT_LANGUAGE, Detection, default_rules

__all__ = ["SAMPLE_CHARS", "detect_language"]

SAMPLE_CHARS = 2000
_WORD = re.compile(r"[^\W\d_]+")
_CHAR_WEIGHT = 2
_MIN_STEM = 3  # letters a word keeps before a telling ending


def detect_language(text: str) -> str:
    """Language code of `text`: "en", "ru", "fr" or "es" (whatever rule files exist)."""
    sample = text[:SAMPLE_CHARS]
    evidence = _default_evidence()
    for code, script in evidence.scripts:
        if script.search(sample):
            return code
    lowered = sample.lower()
    scores = dict.fromkeys(evidence.order, 0)
    for word in _WORD.findall(lowered):
        for code in evidence.words.get(word, ()):
            scores[code] += 1
        for code, suffixes in evidence.suffixes:
            if word.endswith(suffixes) and _telling_ending(word, suffixes):
                scores[code] += 1
    for char, codes in evidence.chars.items():
        count = lowered.count(char)
        if count:
            for code in codes:
                scores[code] += _CHAR_WEIGHT * count
    best = max(scores.values(), default=0)
    if best == 0 or scores.get(evidence.default) == best:
        return evidence.default
    return next(code for code in evidence.order if scores[code] == best)


def _telling_ending(word: str, suffixes: tuple[str, ...]) -> bool:
    return any(
        word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM for suffix in suffixes
    )


class _Evidence:
    """Marker words and letters inverted to "which languages does this point to"."""

    def __init__(self, languages: Mapping[str, Detection]) -> None:
        self.scripts = tuple(
            (code, info.script) for code, info in languages.items() if info.script is not None
        )
        scripted = {code for code, _ in self.scripts}
        self.order = tuple(code for code in languages if code not in scripted)
        words: dict[str, list[str]] = {}
        chars: dict[str, list[str]] = {}
        for code in self.order:
            for word in languages[code].words:
                words.setdefault(word, []).append(code)
            for char in languages[code].chars:
                chars.setdefault(char, []).append(code)
        self.words: Mapping[str, tuple[str, ...]] = MappingProxyType(
            {word: tuple(codes) for word, codes in words.items()}
        )
        self.chars: Mapping[str, tuple[str, ...]] = MappingProxyType(
            {char: tuple(codes) for char, codes in chars.items()}
        )
        self.suffixes = tuple(
            (code, languages[code].suffixes) for code in self.order if languages[code].suffixes
        )
        self.default = DEFAULT_LANGUAGE if DEFAULT_LANGUAGE in languages else next(iter(languages))


@functools.cache
def _default_evidence() -> _Evidence:
    return _Evidence(default_rules().detection)
