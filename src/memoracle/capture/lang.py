"""Which language a text is in, among those that have capture rules. Cheap, no model.

Owns `detect_language` (a whole text) and `sentence_language` (one sentence of a turn).
The evidence is data, in each rule file's ``[detect]`` table. A language with a script
(Cyrillic -> "ru") scores 1 per word written in it; every other language scores 1 per
marker word, 1 per word with a telling ending ("-amos", "-aient") and 2 per telling
letter ("ñ", "ç"). The highest score wins, so a text mixing scripts goes by its dominant
words: "Deploy упал, посмотри логи" is Russian, "I love борщ" English. Ties go to a
scripted language, then to "en", then to file order; texts with no evidence go to "en".
Only the first `SAMPLE_CHARS` characters are read. What to do with the language is
`extract`'s business.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Mapping
from types import MappingProxyType

from memoracle.capture.rules import DEFAULT_LANGUAGE, Detection, default_rules

__all__ = ["SAMPLE_CHARS", "detect_language", "sentence_language"]

SAMPLE_CHARS = 2000
_WORD = re.compile(r"[^\W\d_]+")
_CHAR_WEIGHT = 2
_MIN_STEM = 3  # letters a word keeps before a telling ending


def detect_language(text: str) -> str:
    """Language code of `text`: "en", "ru", "fr" or "es" (whatever rule files exist)."""
    evidence = _default_evidence()
    return evidence.pick(evidence.scores(text[:SAMPLE_CHARS]), evidence.default)


def sentence_language(sentence: str, turn: str) -> str:
    """Language of one `sentence` of a turn whose language as a whole is `turn`.

    The sentence keeps the turn's language unless its own words point elsewhere: with
    no evidence, or when the turn's language ties for first, it is `turn`. So a
    single-language turn reads every sentence as before, and "Мой ник — Lexa. I moved
    to Berlin." reads its second sentence as English.
    """
    evidence = _default_evidence()
    scores = evidence.scores(sentence[:SAMPLE_CHARS])
    if scores.get(turn, 0) == max(scores.values(), default=0):
        return turn
    return evidence.pick(scores, turn)


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
        # Scripts that no ASCII letter belongs to (all of today's) need no look at "the".
        self.scripts_skip_ascii = not any(
            script.search(letter) for _, script in self.scripts for letter in string.ascii_letters
        )
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
        # Who wins a tie: a script is rarer evidence than a shared Latin word.
        rest = [code for code in self.order if code != self.default]
        self.ties: tuple[str, ...] = (
            *(code for code, _ in self.scripts),
            *((self.default,) if self.default in self.order else ()),
            *rest,
        )

    def scores(self, sample: str) -> dict[str, int]:
        """Each language's evidence in `sample`."""
        lowered = sample.lower()
        scores = dict.fromkeys(self.ties, 0)
        for word in _WORD.findall(lowered):
            scripted = None
            if self.scripts and not (self.scripts_skip_ascii and word.isascii()):
                scripted = next((c for c, script in self.scripts if script.search(word)), None)
            if scripted is not None:
                scores[scripted] += 1
                continue
            for code in self.words.get(word, ()):
                scores[code] += 1
            for code, suffixes in self.suffixes:
                if word.endswith(suffixes) and _telling_ending(word, suffixes):
                    scores[code] += 1
        for char, codes in self.chars.items():
            count = lowered.count(char)
            if count:
                for code in codes:
                    scores[code] += _CHAR_WEIGHT * count
        return scores

    def pick(self, scores: Mapping[str, int], fallback: str) -> str:
        """The best-scoring language, ties broken by `ties`; `fallback` with no evidence."""
        best = max(scores.values(), default=0)
        if best == 0:
            return fallback
        return next(code for code in self.ties if scores[code] == best)


@functools.cache
def _default_evidence() -> _Evidence:
    return _Evidence(default_rules().detection)
