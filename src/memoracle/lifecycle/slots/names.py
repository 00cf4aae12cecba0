"""Keys for names and values, so "Anna", "my wife Anna" and "Anna's" meet and "Postgres 16"
and "PostgreSQL 16" compare: case, accents, stems, versions and categories folded.
"""

from __future__ import annotations

import re
import unicodedata

from memoracle.lifecycle.slots.model import ANY_VALUE, DEFAULT_SUBJECT, Vocabulary
from memoracle.text import for_index

_TOKEN = re.compile(r"\d+(?:[.:]\d+)*|[^\W_]+[+#]*")


_SEGMENT = re.compile(r"\s*[,;]\s+|\s+[-–—]\s+")


_NAME_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


_TRIM = re.compile(r"^[\s\"'«“(:\-–—]+|[\s\"'»”).,:;!?…\-–—]+$")


# "Postgres 16", "Python v3.12", "Ubuntu version 22.04": a tool, then its version.
_VERSIONED = re.compile(
    r"^(?P<tool>.*?[^\W\d_]\S*)\s+(?:v|version\s+|versión\s+|версии\s+|версия\s+)?"
    r"(?P<version>\d+(?:\.\d+)*[a-z]?)$",
    re.IGNORECASE,
)


_VERSION_PREFIX = re.compile(r"^(?:v|version|versión|версия|версии)\s*", re.IGNORECASE)


_DIGITS = re.compile(r"\d")


_MAX_ALIAS_WORDS = 4


_MIN_STEM = 3  # letters a word keeps when a suffix is stripped ("лионе" -> "лион")


_MIN_STEMMED = 4  # shorter words keep their ending


_ACCENTS = frozenset({"Mn"})


def _name_key(name: str, vocabulary: Vocabulary) -> str:
    """A person's name as a subject: folded and stemmed like a value, stop words kept
    ("Anna" -> "anna", "Анны" -> "анн"); ``"user"`` for a name with no letters."""
    words = _TOKEN.findall(_casefold(name))
    return _unaccent(" ".join(_stem(word, vocabulary.suffixes) for word in words)) or (
        DEFAULT_SUBJECT
    )


def _casefold(text: str) -> str:
    """NFKC, ё→е, case-folded; accents kept."""
    return for_index(text).casefold()


def _unaccent(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) not in _ACCENTS)
    return unicodedata.normalize("NFC", stripped)


def _fold_words(text: str) -> str:
    """NFKC, ё→е, case-folded, accents removed: how subjects and names compare."""
    return _unaccent(_casefold(text))


def _tokens(folded: str, vocabulary: Vocabulary) -> list[str]:
    tokens = _TOKEN.findall(folded)
    kept = [token for token in tokens if token not in vocabulary.stopwords] or tokens
    return [_stem(token, vocabulary.suffixes) for token in kept]


def _stem(token: str, suffixes: tuple[str, ...]) -> str:
    if len(token) < _MIN_STEMMED:
        return token
    for suffix in suffixes:
        if token.endswith(suffix) and len(token) - len(suffix) >= _MIN_STEM:
            return token[: -len(suffix)]
    return token


def _segment_key(folded: str, vocabulary: Vocabulary) -> str:
    """Tokens of one comma-separated part: stop words out, stems, aliases, then accents
    off (`folded` is `_casefold` text)."""
    tokens = _tokens(folded, vocabulary)
    aliases = vocabulary.aliases
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for size in range(min(_MAX_ALIAS_WORDS, len(tokens) - i), 0, -1):
            canonical = aliases.get(tuple(tokens[i : i + size]))
            if canonical is not None:
                out.append(canonical)
                i += size
                break
        else:
            out.append(tokens[i])
            i += 1
    return _unaccent(" ".join(out))


def _category(value: str, vocabulary: Vocabulary) -> str | None:
    """The category of a value: of the whole, else of its last word (English heads come
    last: "mint tea" is a drink), else of its first word that has one ("window seats",
    "thé vert")."""
    categories = vocabulary.categories
    if value in categories:
        return categories[value]
    words = value.replace(",", " ").split()
    for word in (*words[-1:], *words):
        if word in categories:
            return categories[word]
    return None


def _comparable(attribute: str, said: str, vocabulary: Vocabulary) -> str:
    """The value in the form `conflicts.same_value` compares."""
    if said == ANY_VALUE:
        return ANY_VALUE
    if attribute == "phone":
        digits = "".join(_DIGITS.findall(said))
        return digits.lstrip("0")
    if attribute == "email":
        return said.strip().casefold()
    if attribute == "age":
        return "".join(_DIGITS.findall(said))
    if attribute.startswith("version_of"):
        return _VERSION_PREFIX.sub("", said.strip()).casefold()
    return key_of(said, vocabulary)


def key_of(text: str, vocabulary: Vocabulary) -> str:
    """`value_key` with the vocabulary given."""
    parts = [_segment_key(part, vocabulary) for part in _SEGMENT.split(_casefold(text))]
    return ", ".join(part for part in parts if part)
