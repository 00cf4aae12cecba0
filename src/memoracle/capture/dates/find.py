"""`find_dates` over the packaged time words: each language's grammar built once, on
first use, through the language kit; an unknown language falls back to English.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache, lru_cache

from memoracle.capture.dates.grammar import _Grammar
from memoracle.capture.dates.words import FALLBACK_LANG
from memoracle.capture.dates.words_file import timewords_from
from memoracle.errors import InvalidInput
from memoracle.language.kit import PerLanguage, read_kind
from memoracle.types import DateMention


@cache
def _grammars() -> PerLanguage[_Grammar]:
    # Package data never changes while running: read once, each language compiled once.
    files, _ = read_kind("timewords", error=InvalidInput, what="time words", code_at=("lang",))
    return PerLanguage(files, lambda f: _Grammar(timewords_from(f.data, f.source)))


@lru_cache(maxsize=64)
def _language(lang: str) -> str:
    code = re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]
    return code if code in _grammars().codes else FALLBACK_LANG


def _grammar(lang: str) -> _Grammar:
    grammar = _grammars().get(lang)
    assert grammar is not None, lang  # `_language` only names languages that have a file
    return grammar


def find_dates(
    text: str,
    anchor: datetime,
    lang: str,
    *,
    day_first: bool = True,
    ahead: bool = False,
    behind: bool = False,
) -> list[DateMention]:
    """Time expressions in `text`, resolved against `anchor` (the turn's time), in text order.

    `lang` picks the vocabulary ("en", "ru", "fr", "es"; "en-GB" is "en"); an unknown one
    falls back to English, and numeric forms work in every language. `day_first` reads
    8/5/2023 as 8 May (False: 5 August). Results are in the anchor's timezone; `end` is
    exclusive. `ahead`: what is said is a task or a plan, so a month, season or weekday
    named without "last/next" is the next one whatever the tense. `behind`: `text` is a
    question asked of memory ("camping in May?"), so one named with no tense is the last
    one (a future tense still looks ahead: "what is planned for March?"). A date past the
    calendar's end (year 9999) is no date. See the module docstring for how ambiguous
    expressions are read.
    """
    return _grammar(_language(lang)).find(text, anchor, day_first, ahead, behind)
