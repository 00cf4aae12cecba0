"""From what the user asked to what FTS5 is asked: content words, MATCH expressions,
and whether the question asks "when".

Owns the query words of each language (``recall/querywords/*.toml``: stop words and
when-phrases, data, one file per language) and `fts_queries`, which turns free text into
safely quoted FTS5 expressions to try in order. Running them, and what a when-question
does to ranking, is `hybrid`'s business. Text is normalised like the index
(`memoracle.text.for_index`: NFKC, ё→е); FTS5 folds case and accents itself.
"""

from __future__ import annotations

import functools
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

from memoracle.text import for_index, fts_terms

__all__ = [
    "MAX_TERMS",
    "FtsQuery",
    "QueryWords",
    "Term",
    "any_of",
    "content_words",
    "fold",
    "fts_queries",
    "is_when_question",
    "stem",
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


def fold(word: str) -> str:
    """Case-folded, ё→е, accents dropped (as FTS5's remove_diacritics does) except on
    Cyrillic, where й must stay й."""
    word = for_index(word).casefold()
    if word.isascii() or _CYRILLIC.search(word):
        return word
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@functools.cache
def _languages() -> Mapping[str, QueryWords]:
    # Package data never changes while running: one parse per process.
    folder = resources.files(__package__) / "querywords"
    found: dict[str, QueryWords] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".toml"):
            continue
        data = tomllib.loads(entry.read_text(encoding="utf-8"))
        lang = str(data["lang"])
        found[lang] = QueryWords(
            lang=lang,
            stop=frozenset(fold(w) for w in data.get("stop", ())),
            when=tuple(data.get("when", ())),
            when_start=tuple(data.get("when_start", ())),
        )
    return found


def _stop_words(folded: list[str]) -> frozenset[str]:
    """The stop words to drop from a query whose words are `folded`.

    Cyrillic words are checked against Russian. For Latin-script words the language is
    guessed from stop-word hits: a language with at least two hits wins (tied winners
    pool their lists); otherwise English. So "son birthday" keeps "son", while
    "quand est-ce que son fils..." reads as French and drops it.
    """
    languages = _languages()
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


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


_STEM_MIN = 7  # letters a word needs before its ending is cut for the prefix fallback
_STEM_CUT = 2
_STEM_KEEP = 5


def stem(word: str) -> str | None:
    if len(word) < _STEM_MIN or not word.isalpha():
        return None
    return word[: max(_STEM_KEEP, len(word) - _STEM_CUT)]


@dataclass(frozen=True)
class Term:
    """One searched word in index form; a prefix term also matches longer words."""

    text: str
    prefix: bool = False

    def quoted(self) -> str:
        return _quote(self.text) + ("*" if self.prefix else "")


@dataclass(frozen=True)
class FtsQuery:
    """One FTS5 MATCH expression to try: all of `terms` (AND) or any of them (OR)."""

    terms: tuple[Term, ...]
    any: bool

    @property
    def expression(self) -> str:
        return (" OR " if self.any else " AND ").join(t.quoted() for t in self.terms)


def any_of(terms: Iterable[Term]) -> FtsQuery:
    return FtsQuery(tuple(terms), any=True)


def fts_queries(text: str, *, max_terms: int = MAX_TERMS, prefixes: bool = True) -> list[FtsQuery]:
    """FTS5 queries for `text`, to try in order until enough rows come back.

    1. every content word (``"a" AND "b"``);
    2. any of them (``"a" OR "b"``), only when there are two or more;
    3. with `prefixes`, any of them with the endings of long words cut (``"кварти"*``,
       so "квартиру" finds "квартира", "birthdays" finds "birthday"), only when that
       differs from 2.

    Terms are content words (`content_words`) in index form, each double-quoted with
    inner quotes doubled in the expression, so no input can produce an FTS5 syntax
    error. A text with no content word gives [].
    """
    words = content_words(text, max_terms=max_terms)
    if not words:
        return []
    terms = tuple(Term(w) for w in words)
    queries = [FtsQuery(terms, any=False)]
    if len(terms) > 1:
        queries.append(any_of(terms))
    if prefixes:
        stems = [stem(w) for w in words]
        if any(stem is not None for stem in stems):
            queries.append(
                any_of(
                    Term(stem, prefix=True) if stem is not None else Term(word)
                    for stem, word in zip(stems, words, strict=True)
                )
            )
    return queries


# -- when-questions --------------------------------------------------------------------

_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")
_LEAD = re.compile(r"^[\s¿¡\"'«“(\-–—]+")


def _phrase_pattern(phrases: list[str]) -> re.Pattern[str] | None:
    if not phrases:
        return None
    alternatives = sorted({re.escape(p).replace(r"\ ", r"\s+") for p in phrases}, key=len)
    return re.compile(r"(?<!\w)(?:" + "|".join(reversed(alternatives)) + r")(?!\w)")


@functools.cache
def _when_patterns() -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    languages = _languages().values()
    anywhere = [_fold_phrase(p) for words in languages for p in words.when]
    start = [_case_phrase(p) for words in languages for p in words.when_start]
    return _phrase_pattern(anywhere), _phrase_pattern(start)


def _fold_phrase(text: str) -> str:
    return " ".join(fold(w) for w in text.split())


def _case_phrase(text: str) -> str:
    return for_index(text).casefold().replace("’", "'")


def is_when_question(text: str) -> bool:
    """Whether `text` asks when something happened: "when did …", "когда …", "quand …",
    "cuándo …", "what year …", "в каком году …".

    True when the text starts with a when-opening (``when_start`` in the data: "when
    did", "когда", "¿cuándo", "depuis quand" ...), with or without a question mark, or
    when a sentence ending in "?" contains a when-phrase anywhere ("and when was that?",
    "¿cuando fue la boda?": accents optional there). "Remind me when I get home" is not
    a when-question. The caller uses it to boost dated items.
    """
    anywhere, start = _when_patterns()
    head = _LEAD.sub("", _case_phrase(text[:200]))
    if start is not None and start.match(head):
        return True
    if anywhere is None or "?" not in text:
        return False
    for sentence in _SENTENCE.findall(text):
        if sentence.rstrip().endswith("?") and anywhere.search(_fold_phrase(sentence)):
            return True
    return False
