"""Words, one way for every package: the index form of a word (`fold`), the stop words
and when-phrases of each language (``language/rules/querywords/<lang>.toml``, data), and the
content words of a text (`content_words`) that search and dedup both compare.

Text is normalised like the index (`memoracle.text.for_index`: NFKC, ё→е); `fold` also
folds case and accents as FTS5's ``remove_diacritics`` does. Character-level folding for
rule matching (curly quotes, odd spaces; same length as the text) is `fold_chars`.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from memoracle.errors import InvalidInput
from memoracle.language.kit import read_kind
from memoracle.text import for_index, fts_terms

__all__ = [
    "MAX_TERMS",
    "QueryWords",
    "content_words",
    "fold",
    "fold_chars",
    "query_words",
]

MAX_TERMS = 32
_MIN_HITS = 2  # stop words a query needs before it counts as French or Spanish
_SCAN_CHARS = 20_000
_GUESS_WORDS = 200
_DEFAULT = "en"
_CYRILLIC = re.compile("[\u0400-\u04ff]")


@dataclass(frozen=True)
class QueryWords:
    """One language's query words, folded (see `fold`)."""

    lang: str
    stop: frozenset[str]
    when: tuple[str, ...]
    when_start: tuple[str, ...]
    window: frozenset[str] = frozenset()  # words a question about a time alone may hold


def fold(word: str) -> str:
    """Case-folded, ё→е, accents dropped (as FTS5's remove_diacritics does) except on
    Cyrillic, where й must stay й."""
    word = for_index(word).casefold()
    if word.isascii() or _CYRILLIC.search(word):
        return word
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@functools.cache
def query_words() -> Mapping[str, QueryWords]:
    # Package data never changes while running: one parse per process.
    files, _ = read_kind("querywords", error=InvalidInput, what="query words", code_at=("lang",))
    found: dict[str, QueryWords] = {}
    for lang, f in files.items():
        found[lang] = QueryWords(
            lang=lang,
            stop=frozenset(fold(w) for w in f.data.get("stop", ())),
            when=tuple(f.data.get("when", ())),
            when_start=tuple(f.data.get("when_start", ())),
            window=frozenset(fold(w) for w in f.data.get("window", ())),
        )
    return found


def _stop_words(folded: list[str]) -> frozenset[str]:
    """The stop words to drop from a query whose words are `folded`.

    Cyrillic words are checked against Russian. For Latin-script words the language is
    guessed from stop-word hits: a language with at least two hits wins (tied winners
    pool their lists); otherwise English. So "son birthday" keeps "son", while
    "quand est-ce que son fils..." reads as French and drops it.
    """
    languages = query_words()
    stop: set[str] = set(languages["ru"].stop) if "ru" in languages else set()
    latin = [w for w in folded if not _CYRILLIC.search(w)]
    hits = {
        lang: sum(w in words.stop for w in latin)
        for lang, words in languages.items()
        if lang != "ru"
    }
    best = max(hits.values(), default=0)
    if best >= _MIN_HITS:
        for lang, count in hits.items():
            if count == best:
                stop |= languages[lang].stop
    elif _DEFAULT in languages:
        stop |= languages[_DEFAULT].stop
    return frozenset(stop)


def content_words(text: str, *, max_terms: int = MAX_TERMS) -> list[str]:
    """The words of `text` worth searching for, in index form, first occurrence order.

    Stop words (see `_stop_words`) and single letters go; numbers stay ("Postgres 16");
    a word repeated in another case or accent counts once. At most `max_terms` (the
    first ones), read from the first `_SCAN_CHARS` characters, with the language guessed
    from the first `_GUESS_WORDS` words, so a 100 KB message costs what a short one does.
    """
    words = fts_terms(text[:_SCAN_CHARS])
    stop = _stop_words([fold(w) for w in words[:_GUESS_WORDS]])
    kept: list[str] = []
    seen: set[str] = set()
    folded: dict[str, str] = {}  # long messages repeat their words
    for word in words:
        if len(word) == 1 and not word.isdigit():
            continue
        key = folded.get(word)
        if key is None:
            key = folded[word] = fold(word)
        if key in seen or key in stop:
            continue
        seen.add(key)
        kept.append(word)
        if len(kept) >= max_terms:
            break
    return kept


# Same-length folds, so spans found in folded text are spans of the original.
_FOLD = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u02bc": "'",
        "\u00b4": "'",
        "`": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
        "\u202f": " ",
        "\u2009": " ",
        "\u0451": "\u0435",
        "\u0401": "\u0415",
    }
)


def fold_chars(text: str) -> str:
    """Curly quotes to straight, odd spaces to " ", ё to е; same length as `text`."""
    return text.translate(_FOLD)
