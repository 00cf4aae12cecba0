"""Text helpers of the reader: folding, phrases, proper names, what follows a match, and
whether a sentence claims, negates or fits a language's script.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from memoracle.capture.rules import LanguageRules, default_rules
from memoracle.language.words import fold_chars

# A word of a name: letters and digits, with inner dots, dashes, & + # ("Node.js",
# "Jean-Luc", "AT&T", "C++").
_TOKEN = re.compile(r"[^\W_](?:[\w&+#.-]*[\w+#])?")


_OPENING = re.compile(r"[\s\"'«“(\[]*")


_CLAUSE_BREAK = re.compile(r"[,;:]|\s[-–—]\s")


_POSSESSIVE = re.compile(r"(?<=[^\W\d_])'s?$")


_ACCENTS = frozenset({"Mn"})


def _lower(word: str) -> str:
    """How word lists compare: folded (ё, quotes) and case-folded, accents kept."""
    return fold_chars(word).casefold()


def _plain(word: str) -> str:
    """`_lower` without accents: how not-names compare ("désolé", "Desole")."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", _lower(word))
    return "".join(c for c in decomposed if unicodedata.category(c) not in _ACCENTS)


def _phrase(text: str) -> str:
    """A role word as looked up: `_lower`, spaces collapsed."""
    return " ".join(_lower(text).split())


def _alternation(words: Iterable[str]) -> str:
    """A regex for any of `words`, longest first (so "жених" wins over "жен")."""
    ordered = sorted(set(words), key=lambda word: (-len(word), word))
    return "|".join(r"\s+".join(map(re.escape, word.split())) for word in ordered) or "(?!)"


def _proper(word: str) -> bool:
    """Whether a word can be (part of) a name: it has a capital ("Anna", "iPhone")."""
    return any(char.isupper() for char in word)


def _spaced(text: str, tokens: list[re.Match[str]], first: int, last: int) -> bool:
    """Whether only spaces separate tokens[first - 1] … tokens[last]."""
    return all(
        text[tokens[at - 1].end() : tokens[at].start()].isspace() for at in range(first, last + 1)
    )


def _took_part(match: re.Match[str], group: str) -> bool:
    return group in match.re.groupindex and match.start(group) >= 0


def _claims(folded: str, lowered: str, capture: LanguageRules | None) -> bool:
    """Whether a sentence states something: not a question, a hypothetical or a hedge
    (capture's markers decide)."""
    stripped = folded.strip()
    if stripped.endswith("?") or stripped.startswith("¿"):
        return False
    if capture is None:
        return True
    for markers in (capture.hypothetical, capture.hedge):
        if markers is not None and markers.search(folded, lowered) is not None:
            return False
    return not (
        capture.question is not None
        and capture.question.match(folded, lowered) is not None
        and not stripped.endswith((".", "!", "…"))
    )


def _script_fits(code: str, text: str) -> bool:
    """Whether a language is worth trying on `text`: one with its own script (Russian)
    only when that script occurs in it."""
    detection = default_rules().detection.get(code)
    script = detection.script if detection is not None else None
    return script is None or script.search(text) is not None
