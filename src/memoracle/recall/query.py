"""From what the user asked to what the full-text index is asked: lexical queries, and
whether the question asks "when".

Owns `lexical_queries`, which turns free text into the `LexicalQuery` values to try in
order (the store renders them in its index's syntax), and `is_when_question`. The words
themselves (index form, stop words, content words, when-phrases) are
`memoracle.language.words`'. Running the queries, and what a when-question does to
ranking, is `hybrid`'s business.
"""

from __future__ import annotations

import functools
import re

from memoracle.language.words import MAX_TERMS, content_words, fold, query_words
from memoracle.lifecycle.scripts import other_script
from memoracle.storage_types import LexicalQuery, Term, any_of
from memoracle.text import for_index, stem

__all__ = [
    "lexical_queries",
    "cut_ending",
    "is_when_question",
]


_NAME = re.compile(r"[A-Z][a-z]{4,}")  # "Hamburg", "Paris": a name in Latin letters

_CUT_MIN = 7  # letters a word needs before its ending is cut for the prefix fallback
_CUT = 2
_CUT_KEEP = 5


def cut_ending(word: str) -> str | None:
    """The prefix fallback's cut, not a stem (that is `memoracle.text.stem`): `word`
    without its last two letters, at least five kept ("apartment" -> "apartme"); None
    for a word of fewer than seven letters or one that is not all letters."""
    if len(word) < _CUT_MIN or not word.isalpha():
        return None
    return word[: max(_CUT_KEEP, len(word) - _CUT)]


def lexical_queries(
    text: str, *, max_terms: int = MAX_TERMS, prefixes: bool = True
) -> list[LexicalQuery]:
    """Lexical queries for `text`, to try in order until enough rows come back.

    1. every content word (a and b);
    2. any of them (a or b), only when there are two or more;
    3. with `prefixes`, any of them with the endings of long words cut (the prefix
       term кварти, so "квартиру" finds "квартира", "birthdays" finds "birthday"), and
       the words' first letters in the other script (`lifecycle.scripts.other_script`:
       "Гамбург" finds "Hamburg", and a capitalised Latin name "Paris" finds "Париже"),
       only when that differs from 2.

    Terms are content words (`content_words`), stemmed as the index is
    (`memoracle.text.stem`; two words of one stem are one term). They are values: the
    store quotes them in its index's syntax, so no input can produce a syntax error
    there. A text with no content word gives [].
    """
    said = content_words(text, max_terms=max_terms)
    words = list(dict.fromkeys(stem(w) for w in said))
    if not words:
        return []
    terms = tuple(Term(w) for w in words)
    queries = [LexicalQuery(terms, any=False)]
    if len(terms) > 1:
        queries.append(any_of(terms))
    if prefixes:
        cuts = [cut_ending(w) for w in words]
        spelled = [  # of Latin words, names only
            Term(s, prefix=True)
            for w in dict.fromkeys(said)
            if not w.isascii() or _NAME.fullmatch(w)
            for s in other_script(w)
        ]
        if spelled or any(cut is not None for cut in cuts):
            queries.append(
                any_of(
                    [
                        Term(cut, prefix=True) if cut is not None else Term(word)
                        for cut, word in zip(cuts, words, strict=True)
                    ]
                    + spelled
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
    languages = query_words().values()
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
