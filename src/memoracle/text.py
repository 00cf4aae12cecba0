"""Text normalisation shared by the store (indexed text), queries and content hashes.

SQLite's unicode61 tokenizer folds case and, with remove_diacritics 2, accents; it does
not apply NFKC or fold Russian ё into е. Both sides of a match (what is indexed and what
is asked) go through `for_index` so full-width digits, ligatures and ё behave, and
through `stem` (Snowball: Russian for Cyrillic words, English for the others), so
"квартиру" meets "квартира" and "birthdays" meets "birthday" — FTS5 cannot stem Russian,
so the store indexes `search_form`, the stemmed words, and queries ask for stems. Also
the one Markdown comment stripper (`drop_comments`) the file readers share.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from datetime import datetime

import snowballstemmer

_YO = str.maketrans({"ё": "е", "Ё": "Е"})
_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = " \t\n.,;:!?…\"'«»“”‘’()[]"


def for_index(text: str) -> str:
    """NFKC + ё→е: what FTS indexes and what queries are matched with."""
    return unicodedata.normalize("NFKC", text).translate(_YO)


def for_hash(text: str) -> str:
    """Index form, case-folded, whitespace collapsed, edge punctuation dropped."""
    return _SPACE.sub(" ", for_index(text).casefold()).strip(_EDGE_PUNCT)


def content_hash(text: str) -> str:
    """Stable id of a memory's normalised text (exact dedup, vector cache key)."""
    return hashlib.sha256(for_hash(text).encode("utf-8")).hexdigest()[:32]


_WORD = re.compile(r"\w+", re.UNICODE)


def fts_terms(text: str) -> list[str]:
    """Words of `text` in index form, for building lexical queries (`storage_types`)."""
    return _WORD.findall(for_index(text))


_CYRILLIC = re.compile("[\u0400-\u04ff]")
_STEMMERS = {
    "ru": snowballstemmer.stemmer("russian"),
    "en": snowballstemmer.stemmer("english"),
}


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A word's stem, case-folded (after `for_index`): Russian Snowball for a Cyrillic
    word, English for any other alphabetic one; digits, mixed tokens and words of two
    letters or less as they are; accents are dropped from a non-Cyrillic word first (as
    the tokenizer's remove_diacritics would), so "fermé" and "ferme" agree. A word is
    stemmed alone, with no guess of the text's language, so a stored text and a question
    asking about it always agree."""
    word = for_index(word).casefold()
    cyrillic = _CYRILLIC.search(word) is not None
    if not cyrillic and not word.isascii():  # accents go first, as FTS5 drops them
        decomposed = unicodedata.normalize("NFD", word)
        word = "".join(c for c in decomposed if not unicodedata.combining(c))
    if len(word) <= 2 or not word.isalpha():
        return word
    stemmed = _STEMMERS["ru" if cyrillic else "en"].stemWord(word)
    return stemmed if isinstance(stemmed, str) and stemmed else word


MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)  # English month names, in order: the date grammar's keys, LoCoMo's dates, `date_words`


def date_words(at: datetime) -> str:
    """A day as a question names it: "7 May 2023" (so "in May 2023" meets the turns of
    that day's session)."""
    return f"{at.day} {MONTHS[at.month - 1].capitalize()} {at.year}"


def search_form(text: str) -> str:
    """What FTS5 indexes for `text`: its words, each stemmed (`stem`), space-separated."""
    return " ".join(stem(w) for w in fts_terms(text))


def clean(text: str) -> str:
    """Text safe to store and hash: lone surrogates (a cut emoji, undecodable bytes passed
    through) become U+FFFD and NUL characters are dropped; valid pairs are joined."""
    if text.isascii():
        return text.replace("\x00", "")
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace").replace("\x00", "")


# A bullet's expiry in MEMORY.md: ``<!-- until 2026-12-11 -->`` (`clock.parse_until`
# reads what it gives; MEMORY.md's block writes it and the Markdown importer reads it).
UNTIL_COMMENT = re.compile(r"<!--\s*until\b:?\s*(.*?)\s*-->", re.IGNORECASE)


def drop_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """`line` of a Markdown file without its HTML comments (``<!-- … -->``, which may
    span lines), and whether a comment is still open at its end: pass that back in with
    the next line."""
    out: list[str] = []
    pos = 0
    while pos < len(line):
        if in_comment:
            end = line.find("-->", pos)
            if end < 0:
                return "".join(out), True
            pos = end + 3
            in_comment = False
        else:
            start = line.find("<!--", pos)
            if start < 0:
                out.append(line[pos:])
                break
            out.append(line[pos:start])
            pos = start + 4
            in_comment = True
    return "".join(out), in_comment
