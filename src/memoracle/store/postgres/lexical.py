"""Full-text search in PostgreSQL: what is indexed, and the tsquery a search asks.

A row's `search_text` is its words normalised but not stemmed (`search_words`: NFKC,
ё→е, case-folded, accents dropped from non-Cyrillic words, as `text.stem` prepares a
word); the generated `tsv` column stems them in the row's language's text-search
configuration (schema.py). A query word is looked up in every configuration a row can
have been indexed with, so the query needs no language of its own: each word becomes
`english(w) | russian(w) | french(w) | spanish(w) | simple(w)`, and the words are
joined by AND or OR. A prefix word is `w:*` in each.

Callers hand over a `LexicalQuery` (`memoracle.storage_types`); `of` reads it. Its words
are already Snowball stems (`text.stem`); stemming a stem again gives the same stem for
almost every word, which the tests check on the cases they use.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from memoracle.storage_types import LexicalQuery
from memoracle.text import fts_terms

# Every configuration a row can be indexed with (schema.py; memoracle_mixed stems as
# memoracle_russian does).
CONFIGS = (
    "memoracle_english",
    "memoracle_russian",
    "memoracle_french",
    "memoracle_spanish",
    "simple",
)
_CYRILLIC = re.compile("[\u0400-\u04ff]")
_WORD = re.compile(r"\w+")


def _plain(word: str) -> str:
    word = word.casefold()
    if not _CYRILLIC.search(word) and not word.isascii():
        decomposed = unicodedata.normalize("NFD", word)
        word = "".join(c for c in decomposed if not unicodedata.combining(c))
    return word


def search_words(text: str) -> str:
    """What `tsv` is built from: `text`'s words (`text.fts_terms`), each normalised."""
    return " ".join(_plain(w) for w in fts_terms(text))


@dataclass(frozen=True)
class Lexical:
    """A full-text query: all of `terms` (AND) or any of them (OR); each term a word and
    whether it is a prefix."""

    terms: tuple[tuple[str, bool], ...]
    any: bool = False

    @classmethod
    def words(cls, text: str, *, any: bool = False) -> Lexical:
        """Every word of free `text`, once."""
        found = dict.fromkeys(_plain(w) for w in fts_terms(text))
        return cls(tuple((w, False) for w in found), any)

    @classmethod
    def of(cls, query: LexicalQuery) -> Lexical:
        """The words of `query`'s terms, each normalised (a term of several words gives
        each of them), once each, with the term's prefix flag; all or any as asked."""
        terms = [
            (part, term.prefix) for term in query.terms for part in _WORD.findall(_plain(term.text))
        ]
        return cls(tuple(dict.fromkeys(terms)), query.any)

    def sql(self) -> tuple[str, list[Any]] | None:
        """The tsquery as SQL and its parameters; None for a query with no words."""
        if not self.terms:
            return None
        parts: list[str] = []
        params: list[Any] = []
        for word, prefix in self.terms:
            if prefix:
                one = [f"to_tsquery('{c}', %s)" for c in CONFIGS]
                params += [f"{word}:*"] * len(CONFIGS)
            else:
                one = [f"plainto_tsquery('{c}', %s)" for c in CONFIGS]
                params += [word] * len(CONFIGS)
            parts.append("(" + " || ".join(one) + ")")
        return ("(" + (" || " if self.any else " && ").join(parts) + ")"), params
