"""Near-duplicate scoring and grouping: text in, scores and groups out. Pure, no database.

Owns what "the same memory" means (SPEC §6): the signals, how they combine (`FORMULA`),
the threshold (`THRESHOLD`, 0.65), the entities that tell look-alike texts apart, and
how candidates are found among many memories without comparing every pair in Python.
Leaves to others: reading memories and vectors (`store`), merging a group into one
memory with every provenance and an audit entry (`engine` + `store`), the `memoracle
dedup` flags and exit codes (`cli`), and embedding (`embed`: vectors come in ready, one
model for all).

Words are `language.words.content_words` (NFKC, ё→е, case and accents folded, EN/RU/FR/ES
stop words dropped) cut to six letters, one plural "s" and one vowel ending dropped:
"квартиру"/"квартира" and "meeting"/"meetings" meet (so do "data"/"date": crude and
cheap, and every other signal has to agree too). Each entity (below) becomes one word
for its value: "€1,200" and "1200 €" are both "amount:eur:1200", "May 3" and
"2024-05-03" both "date:05-03". Segments are split at sentence ends, semicolons,
newlines, bullets, pipes and spaced dashes. The signals, each in [0, 1]:

- ``jaccard`` = |A∩B| / |A∪B|;
- ``containment`` = |A∩B| / min(|A|, |B|);
- ``segments``: each segment of one text is matched with its best segment of the other;
  the words so covered, over all its words + ½ (`SMOOTHING`: 2 words of 2 are weaker
  evidence than 10 of 10), in the direction that covers more, and never above
  |A∩B| / (min + ½). Containment that holds segment by segment: "Anna prefers Lyon" is
  not inside "Anna called. Tom prefers Lyon." though all three words are there;
- ``entities``: for each kind found in BOTH texts, the share of one text's entities
  that agree with one of the other's, in the better direction; the least over kinds;
  None when no kind is on both sides. A kind on one side only is neutral ("Anna lives in
  Lyon since 2021" still contains "Anna lives in Lyon"). Kinds (`ENTITY_KINDS`): URLs;
  emails; dates by `capture.dates.find_dates` (so "3 мая" is "May 3"), agreeing when
  their ranges overlap, a date without a year taking the other's year, relative ones
  ("yesterday") compared only with relative ones; ids (UUIDs, "ABC-123", "#123", hex
  of 7+ with a digit and a letter -- a short git hash agrees with its long form -- and
  runs of 10+ digits); amounts with a currency symbol or word; phone numbers, by their
  last nine digits ("+33 6 12 34 56 78" is "06 12 34 56 78"); versions ("v2.3",
  "16.1"; "4.2" agrees with "4.2.7"); other numbers; names: capitalised words of a text
  that has case, agreeing when the other text has the word at all, so a sentence-initial
  "Call" does not clash with "... to call ...";
- ``vector``: the caller's cosine of the two unit vectors; None without.

Combination (`FORMULA` "dedup/v1"), with E = ``entities`` and v' = the cosine mapped
linearly from [`VECTOR_LOW`, `VECTOR_HIGH`] onto [0, 1]::

    lexical = max(jaccard, 0.45·jaccard + 0.55·segments)
    text    = max(lexical, (lexical + v') / 2)     # lexical without a vector
    lifted  = text + 0.2·E·(1 − text)              # only if an identifying kind (not a
                                                   # number or a name) is in both
    score   = lifted · (0.3 + 0.7·E)               # no factor when E is None
                     · (0.3 if exactly one text is negated else 1)
                     · (0.85 if each text has a word the other lacks and no vector
                        reaches VECTOR_LOW: a swapped word is more often another value —
                        "the main database" / "the backup database" — than a
                        paraphrase, which only a vector can tell)

and 1.0 when the texts are equal after `memoracle.text.for_hash`. Why: ``segments``
(containment, segment by segment) carries most of the weight because a memory repeated
inside a longer one is the common duplicate; jaccard's share keeps a short text from
matching every text that mentions its words: wholly inside another, a text is a
duplicate when it holds about a third of the pair's words (two fifths for three words;
"Python" alone never). Jaccard alone is a floor, so the same words in another order
score 1. Vectors only raise the lexical score, at half weight: with the default encoder
paraphrases score 0.80-0.97 but so do "likes tea" / "likes coffee" (0.77) and "May 3" /
"May 5" (0.86), so a vector alone never makes a duplicate. Entities come last because
words and vectors are blind to them: agreeing identifiers lift the score a little,
differing values ("Postgres 15" / "16", "May 3" / "May 5", "Olga" / "Sofia") cut it to
at most 0.3 of itself. Negation ("not", "never", "n't", "не", "pas", "jamais", "nunca")
is a stop word for search, so it is checked apart, the same way. What words cannot
tell: one word swapped in a five-word text ("likes green tea" / "black tea" scores
0.64, a longer one more) reads as a paraphrase unless the word is a name or a value.

`find_duplicates` is NOT transitive: it takes keepers in `rank` order (lowest id first
by default) and gives each the not-yet-grouped memories that score at least the
threshold against that keeper itself, so every merged memory was compared with what it
is merged into, and a chain A~B~C never drags C in through B. No id is in two groups.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.capture.dates import find_dates
from memoracle.capture.lang import detect_language
from memoracle.language.words import content_words, fold
from memoracle.text import for_hash, for_index
from memoracle.types import DateMention

__all__ = [
    "ENTITY_KINDS",
    "FORMULA",
    "THRESHOLD",
    "VECTOR_HIGH",
    "VECTOR_LOW",
    "DedupIndex",
    "DedupScore",
    "DuplicateGroup",
    "find_duplicates",
    "is_duplicate",
    "query",
    "similarity",
]

FORMULA = "dedup/v1"
THRESHOLD = 0.65

W_JACCARD = 0.45
W_SEGMENTS = 0.55
SUBSTITUTION = 0.85  # when each text has a word the other lacks and no vector says alike
SMOOTHING = 0.5  # words added to the smaller side of containment: 2 of 2 is weak evidence
ENTITY_LIFT = 0.2  # how far agreeing identifiers move the score towards 1
CONFLICT_FLOOR = 0.3  # what is left of a score whose entities all differ
# The default encoder (USE multilingual v3) gives unrelated texts < 0.35 and paraphrases
# 0.80-0.97; below VECTOR_LOW a vector adds nothing, from VECTOR_HIGH on it counts fully.
VECTOR_LOW = 0.6
VECTOR_HIGH = 0.95

ENTITY_KINDS = ("url", "email", "date", "id", "amount", "phone", "version", "number", "name")
# Kinds that identify something: agreeing on one lifts the score. Numbers and capitalised
# words ("name") are too common to lift; differing ones still count against.
_LIFTING = frozenset(("url", "email", "date", "id", "amount", "phone", "version"))
# Kinds compared through the words that stand for their values (`_value_word`): one
# agrees when its word is among the other text's words. For all but names that is key
# equality (a hex id by its first seven digits, so a short git hash agrees with its long
# form); a name ("Olga", sentence-initial "Call" too) agrees with the same word anywhere
# in the other text, so "Call the dentist" is no conflict with "Remind me to call the
# dentist". Dates and versions are compared pair by pair (`_agree`).
_KEYED_KINDS = frozenset(("url", "email", "id", "amount", "phone", "number", "name"))

Vector = npt.NDArray[np.float32]


# -- scores ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DedupScore:
    """How alike two texts are: each signal, the combined `score` and why, in a few words.

    `entities` and `vector` are None when they had nothing to say (no entity kind in both
    texts; no vectors). `conflicts` names the entity kinds that differ ("date", ...),
    plus "negation" when only one text is negated.
    """

    score: float
    jaccard: float
    containment: float
    segments: float
    entities: float | None
    vector: float | None
    conflicts: tuple[str, ...]
    reason: str


def is_duplicate(score: DedupScore, threshold: float = THRESHOLD) -> bool:
    """Whether `score` says duplicate: at least `threshold` (0.65 by default)."""
    return score.score >= threshold


@dataclass(frozen=True)
class DuplicateGroup:
    """Memories to merge into `keep`: each id in `merge` with its score against `keep`,
    best first. `keep` comes first in `rank` order (by default it is the lowest id)."""

    keep: int
    merge: tuple[tuple[int, DedupScore], ...]

    @property
    def merge_ids(self) -> tuple[int, ...]:
        return tuple(i for i, _ in self.merge)


# -- entities -----------------------------------------------------------------------------

# Dates resolve against a fixed anchor: a date written with a year is that date, one
# without ("May 3") is compared by month and day, and relative ones ("yesterday", "next
# week") only with each other, since the day they were said is not in the text.
_ANCHOR = datetime(1904, 7, 1, 12, tzinfo=UTC)  # a leap year, so "Feb 29" resolves
_ABSOLUTE_RULES = ("abs.iso", "abs.ymd", "abs.numeric", ".month_year", ".year")
_CALENDAR_RULES = (".date", ".month")
_YEAR = re.compile(r"\d{4}")
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class _Entity:
    kind: str
    text: str  # as written, for the reason
    at: int  # where it starts in the text
    key: str = ""
    parts: tuple[int, ...] = ()  # version numbers
    start: datetime | None = None  # dates: [start, end)
    end: datetime | None = None
    dated: str = ""  # dates: "absolute", "yearless" or "relative"


_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"'«»)\]]+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_UUID = re.compile(
    r"(?<![\w-])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![\w-])",
    re.IGNORECASE,
)
# Codes like ABC-123, build a-5, COVID-19: letters, a hyphen, digits (any case).
_TICKET = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]{0,9}-\d{1,7}(?![\w-])")
_ISSUE = re.compile(r"(?<![\w&#])#\d{1,7}(?!\w)")
_HEX = re.compile(
    r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![\w-])", re.IGNORECASE
)
_NUM = r"\d{1,3}(?:[ \u00a0\u202f,.]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?"
_SYMBOLS = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₽": "rub", "₹": "inr"}
_CURRENCY_WORDS = {
    "usd": "usd", "dollar": "usd", "dollars": "usd", "доллар": "usd", "доллара": "usd",
    "долларов": "usd", "dolar": "usd", "dolares": "usd", "dólar": "usd", "dólares": "usd",
    "eur": "eur", "euro": "eur", "euros": "eur", "евро": "eur",
    "gbp": "gbp", "pound": "gbp", "pounds": "gbp", "libra": "gbp", "libras": "gbp",
    "rub": "rub", "руб": "rub", "рубль": "rub", "рубля": "rub", "рублей": "rub",
    "ruble": "rub", "rubles": "rub", "rouble": "rub", "roubles": "rub",
    "chf": "chf", "jpy": "jpy", "cad": "cad", "aud": "aud", "inr": "inr",
}  # fmt: skip
_SYMBOL_RE = "[" + re.escape("".join(_SYMBOLS)) + "]"
_WORD_RE = "|".join(sorted(map(re.escape, _CURRENCY_WORDS), key=len, reverse=True))
_AMOUNT = re.compile(
    rf"(?<![\w.,])(?:(?P<s1>{_SYMBOL_RE})\s?(?P<n1>{_NUM})"
    rf"|(?P<n2>{_NUM})\s?(?:(?P<s2>{_SYMBOL_RE})|(?P<w2>{_WORD_RE})\.?(?!\w))"
    rf"|(?P<w1>usd|eur|gbp|rub|chf|jpy|cad|aud|inr)\s?(?P<n3>{_NUM}))(?![\d])",
    re.IGNORECASE,
)
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().\-]{6,20}\d(?!\w)")
_DIGIT_GROUP = re.compile(r"\d+")
_ANY_DIGIT = re.compile(r"\d")
_LONG_ID = re.compile(r"(?<![\w-])-?\d{10,}(?!\w)")
_VERSION = re.compile(
    r"(?<![\w.])(?:v(?P<a>\d+(?:\.\d+)*)|(?P<b>\d+(?:\.\d+)+))"
    r"(?P<suffix>-[0-9a-z]+(?:\.[0-9a-z]+)*)?(?!\w|\.\d)",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?!\w)")
_LIST_MARK = re.compile(r"^[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _decimal(raw: str) -> str:
    """'1 200,50' / '1,200.50' / '1.200' -> '1200.5' / '1200.5' / '1200'."""
    s = re.sub(r"[ \u00a0\u202f]", "", raw)
    if "," in s and "." in s:
        cut = max(s.rfind(","), s.rfind("."))
        s = re.sub(r"[,.]", "", s[:cut]) + "." + s[cut + 1 :]
    elif "," in s or "." in s:
        sep = "," if "," in s else "."
        parts = s.split(sep)
        # One separator before exactly two digits or fewer is a decimal point.
        s = "".join(parts) if len(parts) > 2 or len(parts[-1]) == 3 else ".".join(parts)
    try:
        return format(Decimal(s).normalize(), "f")
    except InvalidOperation:
        return s


def _mask(text: str, span: tuple[int, int]) -> str:
    start, end = span
    return text[:start] + " " * (end - start) + text[end:]


def _version_parts(number: str) -> tuple[int, ...]:
    parts = [int(p) for p in number.split(".")]
    while len(parts) > 1 and parts[-1] == 0:  # "2.3.0" is "2.3"
        parts.pop()
    return tuple(parts)


def _dated(rule: str, written: str, start: datetime) -> str:
    rules = rule.split("+")
    if any(r.startswith("abs.") or r.endswith(_ABSOLUTE_RULES) for r in rules):
        return "absolute"
    if any(r.endswith(_CALENDAR_RULES) for r in rules):
        return "absolute" if str(start.year) in _YEAR.findall(written) else "yearless"
    return "relative"


def _date_entity(mention: DateMention) -> _Entity:
    """A date, keyed without its year so "May 3" and "2024-05-03" share a word (the
    entity check still tells 2023 from 2024); a relative date by its words."""
    start, length = mention.start, mention.end - mention.start
    dated = _dated(mention.rule, mention.text, start)
    if dated == "relative":
        key = for_hash(mention.text)
    elif length <= _DAY:  # a time of day too: the entity check tells 15:00 from 16:00
        key = f"{start:%m-%d}"
    elif start.day == 1 and 28 <= length.days <= 31:
        key = f"{start:%m}"
    elif start.month == start.day == 1 and length.days in (365, 366):
        key = f"{start:%Y}"
    else:
        key = f"{start:%Y-%m-%d}+{length.days}"
    return _Entity(
        "date", mention.text, mention.span[0], key, start=start, end=mention.end, dated=dated
    )


def _extract(text: str) -> tuple[list[_Entity], str]:
    """Entities of `text`, and the text with each of them blanked out.

    Each found piece is blanked before the next kind looks, so a date's digits are not
    also a number and a URL's path is not a date.
    """
    found: list[_Entity] = []
    masked = text

    def take(pattern: re.Pattern[str], make: Callable[[re.Match[str]], _Entity | None]) -> None:
        nonlocal masked
        for m in list(pattern.finditer(masked)):
            entity = make(m)
            if entity is not None:
                found.append(entity)
                masked = _mask(masked, m.span())

    def url(m: re.Match[str]) -> _Entity:
        raw = m[0].rstrip(".,;:!?")
        key = re.sub(r"^(?:https?://)?(?:www\.)?", "", raw.casefold()).rstrip("/")
        return _Entity("url", raw, m.start(), key)

    if "://" in text or "www." in text.lower():
        take(_URL, url)
    if "@" in text:
        take(_EMAIL, lambda m: _Entity("email", m[0], m.start(), m[0].casefold()))
    for mention in find_dates(masked, _ANCHOR, detect_language(masked)):
        found.append(_date_entity(mention))
        masked = _mask(masked, mention.span)
    if not _ANY_DIGIT.search(masked):
        return found, masked
    take(_UUID, lambda m: _Entity("id", m[0], m.start(), m[0].lower()))
    take(_TICKET, lambda m: _Entity("id", m[0], m.start(), m[0].upper()))
    take(_ISSUE, lambda m: _Entity("id", m[0], m.start(), m[0]))
    take(_HEX, lambda m: _Entity("id", m[0], m.start(), m[0].lower()))

    def amount(m: re.Match[str]) -> _Entity:
        symbol = m["s1"] or m["s2"]
        currency = _SYMBOLS[symbol] if symbol else _CURRENCY_WORDS[(m["w1"] or m["w2"]).lower()]
        value = _decimal(m["n1"] or m["n2"] or m["n3"])
        return _Entity("amount", m[0], m.start(), f"{currency}:{value}")

    take(_AMOUNT, amount)

    def phone(m: re.Match[str]) -> _Entity | None:
        raw = m[0]
        digits = "".join(_DIGIT_GROUP.findall(raw))
        if raw.startswith("+"):
            ok = 8 <= len(digits) <= 15
        else:  # without "+", grouped like a phone number: "06 12 34 56 78", "(555) 123-4567"
            ok = 9 <= len(digits) <= 15 and len(_DIGIT_GROUP.findall(raw)) >= 3
        # The last nine digits: "+33 6 12 34 56 78" is "06 12 34 56 78".
        return _Entity("phone", raw, m.start(), digits[-9:]) if ok else None

    take(_PHONE, phone)
    take(_LONG_ID, lambda m: _Entity("id", m[0], m.start(), m[0]))

    def version(m: re.Match[str]) -> _Entity:
        parts = _version_parts(m["a"] or m["b"])
        suffix = (m["suffix"] or "").lower()
        return _Entity("version", m[0], m.start(), ".".join(map(str, parts)) + suffix, parts)

    take(_VERSION, version)
    take(_NUMBER, lambda m: _Entity("number", m[0], m.start(), _decimal(m[0])))
    return found, masked


def _shift_year(moment: datetime, year: int) -> datetime:
    try:
        return moment.replace(year=year)
    except ValueError:  # 29 February
        return moment.replace(year=year, day=28)


def _dates_agree(a: _Entity, b: _Entity) -> bool:
    if (a.dated == "relative") != (b.dated == "relative"):
        return True  # "yesterday" vs "May 3": unknown, so no evidence either way
    if a.dated == "yearless" and b.dated == "absolute":
        a, b = b, a
    assert a.start is not None and a.end is not None
    assert b.start is not None and b.end is not None
    b_start, b_end = b.start, b.end
    if b.dated == "yearless" and a.dated == "absolute":
        # A yearless day or month never spans a new year: take the other's year.
        b_start = _shift_year(b.start, a.start.year)
        b_end = b_start + (b.end - b.start)
    return a.start < b_end and b_start < a.end


def _agree(a: _Entity, b: _Entity) -> bool:
    """Whether two dates or two versions can be the same value."""
    if a.kind == "date":
        return _dates_agree(a, b)
    n = min(len(a.parts), len(b.parts))  # "4.2" is "4.2.7" said less precisely
    suffix_a, suffix_b = a.key.partition("-")[2], b.key.partition("-")[2]
    return a.parts[:n] == b.parts[:n] and suffix_a == suffix_b


def _covered(xs: tuple[_Entity, ...], ys: tuple[_Entity, ...]) -> tuple[float, _Entity | None]:
    """Share of `xs` that agree with some entity of `ys`, and the first one that does not."""
    missing = [x for x in xs if not any(_agree(x, y) for y in ys)]
    return 1 - len(missing) / len(xs), (missing[0] if missing else None)


def _keyed_agreement(kind: str, a: _Profile, b: _Profile) -> float:
    """For `_KEYED_KINDS`: the share of one text's values whose words the other text has,
    in the better direction (as `_covered`, without comparing pairs)."""
    mine, theirs = a.keys[kind], b.keys[kind]
    return max(len(mine & b.tokens) / len(mine), len(theirs & a.tokens) / len(theirs))


def _entity_agreement(a: _Profile, b: _Profile) -> tuple[float | None, tuple[str, ...], str]:
    """(E, kinds that differ, an example "X / Y") for the kinds found in both."""
    shared = [k for k in ENTITY_KINDS if k in a.entities and k in b.entities]
    if not shared:
        return None, (), ""
    worst = 1.0
    conflicts: list[str] = []
    example = ""
    for kind in shared:
        xs, ys = a.entities[kind], b.entities[kind]
        if kind in _KEYED_KINDS:
            agreement = _keyed_agreement(kind, a, b)
            miss_a = next((x for x in xs if _value_word(x) not in b.tokens), None)
            miss_b = next((y for y in ys if _value_word(y) not in a.tokens), None)
        else:
            ab, miss_a = _covered(xs, ys)
            ba, miss_b = _covered(ys, xs)
            agreement = max(ab, ba)
        worst = min(worst, agreement)
        if agreement < 1:
            conflicts.append(kind)
            if not example:
                pair = sorted([(miss_a or xs[0]).text.strip(), (miss_b or ys[0]).text.strip()])
                example = f"{kind}: {pair[0]} / {pair[1]}"
    return worst, tuple(conflicts), example


# -- words --------------------------------------------------------------------------------

_SEGMENT_SPLIT = re.compile(r"(?<=[.!?…])\s+|[;\n|•]+|\s[—–-]\s")
_CYRILLIC_ENDINGS = frozenset("аеиоуыэюяйь")
_LATIN_ENDINGS = frozenset("aeiouy")
_STEM_LENGTH = 6
_NEGATIONS = frozenset(
    """
    not no never nor neither nobody nothing nowhere cannot without
    не нет никогда ни нельзя никто ничего
    ne n pas jamais aucun aucune rien sans
    nunca jamas ni tampoco nada nadie sin
    """.split()
)
_NT = re.compile(r"\w(?:n't|n’t)\b", re.IGNORECASE)
_TERM = re.compile(r"\w+")  # as `memoracle.text.fts_terms`, on text already in index form
_MAX_WORDS = 10_000


def _stem(word: str) -> str:
    """Folded word cut to six letters, one plural "s" and one vowel ending dropped."""
    if not word.isalpha():
        return word
    word = word[:_STEM_LENGTH]
    if len(word) > 3:
        cyrillic = "а" <= word[0] <= "я"
        if not cyrillic and word.endswith("s"):
            word = word[:-1]
        if len(word) > 3 and word[-1] in (_CYRILLIC_ENDINGS if cyrillic else _LATIN_ENDINGS):
            word = word[:-1]
    return word


def _segment_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    last = 0
    for cut in _SEGMENT_SPLIT.finditer(text):
        spans.append((last, cut.start()))
        last = cut.end()
    spans.append((last, len(text)))
    return spans


@dataclass(frozen=True, slots=True)
class _Profile:
    """Everything about one text that pair scoring needs, computed once."""

    exact: str
    tokens: frozenset[str]
    segments: tuple[frozenset[str], ...]
    entities: Mapping[str, tuple[_Entity, ...]]
    keys: Mapping[str, frozenset[str]]  # `_KEYED_KINDS`: the words of their values
    negated: bool


def _entity_word(entity: _Entity) -> str:
    """The word an entity stands for, coarse where `_agree` accepts a coarser form:
    "4.2" and "4.2.7" are both "version:4.2", a git hash is its first seven digits."""
    key = entity.key
    if entity.kind == "version":
        key = ".".join(map(str, entity.parts[:2]))
    elif entity.kind == "id" and _HEX.fullmatch(key):
        key = key[:7]
    return f"{entity.kind}:{key}"


def _value_word(entity: _Entity) -> str:
    """The word of a keyed entity among its text's words: a name's stem, else its
    `_entity_word`."""
    return entity.key if entity.kind == "name" else _entity_word(entity)


def _profile(text: str) -> _Profile:
    """Words per segment, each entity replaced by one word for its value
    ("amount:eur:1200" for "€1,200" and "1200 €"), entities by kind, negation.

    Content words are `language.words.content_words` of the whole text (one stop-word
    language for all its segments), stemmed (`_stem`); capitalised ones are also names
    when the text has case to read (neither all lower nor all upper case).
    """
    plain = _LIST_MARK.sub("", _COMMENT.sub(" ", for_index(text)))
    found, masked = _extract(plain)
    cased = plain != plain.lower() and plain != plain.upper()
    folded: dict[str, str] = {}  # a text repeats its words

    def key(term: str) -> str:
        k = folded.get(term)
        if k is None:
            # ASCII needs no NFKC or accent folding: `fold` would only lower it.
            k = folded[term] = term.lower() if term.isascii() else fold(term)
        return k

    content = {key(w) for w in content_words(masked, max_terms=_MAX_WORDS)}
    names: list[_Entity] = []
    segments: list[frozenset[str]] = []
    negated = _NT.search(masked) is not None
    for start, end in _segment_spans(plain):
        words: set[str] = set()
        for term in _TERM.findall(masked, start, end):
            k = key(term)
            if k in _NEGATIONS:  # stop words or not ("never" is kept for search)
                negated = True
            if k in content:
                stem = _stem(k)
                words.add(stem)
                if cased and term[0].isupper():
                    names.append(_Entity("name", term, start, stem))
        words.update(_entity_word(e) for e in found if start <= e.at < end)
        if words:
            segments.append(frozenset(words))
    if not segments:
        # Only stop words ("it is what it is"): keep them rather than compare nothing.
        every = frozenset(_stem(key(w)) for w in _TERM.findall(plain))
        segments = [every] if every else []
    entities: dict[str, dict[object, _Entity]] = defaultdict(dict)
    for entity in found + names:  # once per value
        value = entity.key if entity.kind in _KEYED_KINDS else entity
        entities[entity.kind].setdefault(value, entity)
    return _Profile(
        for_hash(text),
        frozenset().union(*segments),
        tuple(segments),
        {kind: tuple(found.values()) for kind, found in entities.items()},
        {
            kind: frozenset(_value_word(e) for e in entities[kind].values())
            for kind in _KEYED_KINDS & entities.keys()
        },
        negated,
    )


def _coverage(xs: tuple[frozenset[str], ...], ys: tuple[frozenset[str], ...]) -> float:
    """Words of `xs` found in their best segment of `ys`, over all of `xs`'s words + ½."""
    total = sum(len(x) for x in xs)
    if not total:
        return 0.0
    return sum(max(len(x & y) for y in ys) for x in xs) / (total + SMOOTHING)


def _vector_weight(cosine: float) -> float:
    return min(1.0, max(0.0, (cosine - VECTOR_LOW) / (VECTOR_HIGH - VECTOR_LOW)))


def _score(a: _Profile, b: _Profile, vector_similarity: float | None) -> DedupScore:
    if a.exact == b.exact:
        return DedupScore(1.0, 1.0, 1.0, 1.0, None, vector_similarity, (), "same text")
    shared = len(a.tokens & b.tokens)
    smaller = min(len(a.tokens), len(b.tokens))
    jaccard = shared / (len(a.tokens) + len(b.tokens) - shared) if shared else 0.0
    containment = shared / smaller if shared else 0.0
    segments = 0.0
    if shared:
        both_ways = max(_coverage(a.segments, b.segments), _coverage(b.segments, a.segments))
        segments = min(shared / (smaller + SMOOTHING), both_ways)
    lexical = max(jaccard, W_JACCARD * jaccard + W_SEGMENTS * segments)
    text = lexical
    if vector_similarity is not None:
        text = max(lexical, (lexical + _vector_weight(vector_similarity)) / 2)
    entities, conflicts, example = _entity_agreement(a, b)
    score = text
    if entities is not None:
        if not _LIFTING.isdisjoint(a.entities.keys() & b.entities.keys()):
            score = text + ENTITY_LIFT * entities * (1 - text)
        score *= CONFLICT_FLOOR + (1 - CONFLICT_FLOOR) * entities
    if a.negated != b.negated:
        score *= CONFLICT_FLOOR
        conflicts += ("negation",)
    if (vector_similarity is None or vector_similarity < VECTOR_LOW) and _swapped(a, b):
        # Each says a word the other does not ("the main database" / "the backup
        # database"): without a vector to call it a paraphrase, likely another value.
        score *= SUBSTITUTION
    score = min(1.0, max(0.0, score))
    reason = _reason(score, jaccard, containment, segments, lexical, text, conflicts, example)
    return DedupScore(
        score, jaccard, containment, segments, entities, vector_similarity, conflicts, reason
    )


def _reason(
    score: float,
    jaccard: float,
    containment: float,
    segments: float,
    lexical: float,
    text: float,
    conflicts: tuple[str, ...],
    example: str,
) -> str:
    """A few words on the deciding signal, judged against the default threshold."""
    if conflicts and score < THRESHOLD:
        if example:
            return "different " + example
        return "one of them is negated"
    if text > lexical and lexical < THRESHOLD <= score:
        return "same meaning in other words (vector)"
    if jaccard >= 0.9:
        return "same words"
    if containment >= 0.9 and segments >= 0.75:
        return "one contains the other"
    if score >= THRESHOLD:
        return "mostly the same words"
    if jaccard == 0:
        return "no words in common"
    return "different wording"


def _swapped(a: _Profile, b: _Profile) -> bool:
    """Whether each text has a word the other lacks (entities, compared on their own,
    left out: "2021" and "May 2021" agree)."""
    only_a = {t for t in a.tokens - b.tokens if ":" not in t}
    only_b = {t for t in b.tokens - a.tokens if ":" not in t}
    return bool(only_a and only_b)


def similarity(a: str, b: str, *, vector_similarity: float | None = None) -> DedupScore:
    """How alike `a` and `b` are (see the module docstring for the formula).

    `vector_similarity` is the cosine of the two texts' unit vectors, when they have
    them. Symmetric: similarity(a, b) == similarity(b, a).
    """
    return _score(_profile(a), _profile(b), vector_similarity)


# -- many memories --------------------------------------------------------------------------


def _lexical_floor(threshold: float, lift: bool) -> float:
    """The lowest lexical score that can still end at `threshold`: with every entity
    agreeing (`lift`), score = lexical + 0.2·(1 − lexical); without entities, lexical."""
    if not lift:
        return threshold
    return max(0.0, (threshold - ENTITY_LIFT) / (1 - ENTITY_LIFT))


_LIFTING_BITS = sum(1 << n for n, kind in enumerate(ENTITY_KINDS) if kind in _LIFTING)


def _bits(entities: Mapping[str, object]) -> int:
    return sum(1 << n for n, kind in enumerate(ENTITY_KINDS) if kind in entities)


def _needed(floor: float, size: int) -> int:
    """Fewest shared words s with which a text of `size` words (the smaller of a pair)
    can reach lexical `floor`: jaccard <= s / (2·size − s) and the formula is <= s·(0.45
    / size + 0.55 / (size + ½)); lexical is the larger of the two."""
    by_jaccard = 2 * floor * size / (1 + floor)
    by_formula = floor / (W_JACCARD / size + W_SEGMENTS / (size + SMOOTHING))
    return max(1, math.ceil(min(by_jaccard, by_formula) - 1e-9))


def _upper_bound(a: _Profile, b: _Profile, vector_similarity: float | None) -> float:
    """A cheap score no lower than `_score(a, b, ...)`: segments <= containment."""
    if a.exact == b.exact:
        return 1.0
    shared = len(a.tokens & b.tokens)
    if not shared:
        bound = 0.0
    else:
        union = len(a.tokens) + len(b.tokens) - shared
        smaller = min(len(a.tokens), len(b.tokens))
        jaccard = shared / union
        bound = max(jaccard, W_JACCARD * jaccard + W_SEGMENTS * shared / (smaller + SMOOTHING))
    if vector_similarity is not None:
        bound = max(bound, (bound + _vector_weight(vector_similarity)) / 2)
    if not _LIFTING.isdisjoint(a.entities.keys() & b.entities.keys()):
        bound += ENTITY_LIFT * (1 - bound)
    # E is the least agreement over kinds; kinds compared pair by pair may all agree.
    agreement = min((_keyed_agreement(k, a, b) for k in a.keys.keys() & b.keys.keys()), default=1.0)
    bound *= CONFLICT_FLOOR + (1 - CONFLICT_FLOOR) * agreement
    if a.negated != b.negated:
        bound *= CONFLICT_FLOOR
    return bound


_VECTORISE = 16  # partners from which the bound is cheaper in numpy than pair by pair
_VECTOR_NEIGHBOURS = 20  # nearest vectors per memory considered as candidates
_VECTOR_BLOCK = 512  # rows per matrix product: 512 x 10,000 float32 is 20 MB


class DedupIndex:
    """Memories prepared once for many comparisons (`query`, `find_duplicates`).

    `items` are (id, text); `vectors`, optional, map ids to unit vectors of one model
    (ids without one are compared on words only). Preparing costs about 0.3 ms per
    memory (dates, entities, content words), so `--query-batch` builds one index, and a
    check at capture time is cheaper on a few candidates (say, FTS hits) than on all.
    Memories with the same normalised text are prepared and compared once. Measured on
    a busy two-core machine: 10,000 short memories take 3-4 s of CPU to prepare and 1-3 s
    to group.
    """

    def __init__(
        self, items: Sequence[tuple[int, str]], *, vectors: Mapping[int, Vector] | None = None
    ) -> None:
        by_text: dict[str, list[int]] = defaultdict(list)
        for memory_id, text in items:
            by_text[text].append(memory_id)
        members: dict[str, list[int]] = defaultdict(list)
        profiles: dict[str, _Profile] = {}
        for text, ids in by_text.items():
            profile = _profile(text)
            profiles.setdefault(profile.exact, profile)
            members[profile.exact].extend(ids)
        # One entry per normalised text: its profile, the ids that have it, a vector.
        self._profiles = list(profiles.values())
        self._members = [members[p.exact] for p in self._profiles]
        self._vectors: list[Vector | None] = [
            next((vectors[i] for i in ids if i in vectors), None) if vectors else None
            for ids in self._members
        ]
        self._entry = {p.exact: n for n, p in enumerate(self._profiles)}
        self._sizes = [len(p.tokens) for p in self._profiles]
        postings: dict[str, list[int]] = defaultdict(list)
        for entry, profile in enumerate(self._profiles):
            for token in profile.tokens:
                postings[token].append(entry)
        self._postings = dict(postings)
        # The same postings as one sorted int64 array of word·stride + size·n + entry, so
        # the texts of one word within a range of sizes are one slice (see `_word_edges`).
        span = max(1, len(self._profiles))
        self._stride = (max(self._sizes, default=0) + 1) * span
        self._word_ids = {token: n for n, token in enumerate(self._postings)}
        ordered = [list(p.tokens) for p in self._profiles]
        self._words = [
            np.fromiter((self._word_ids[t] for t in words), dtype=np.int64, count=len(words))
            for words in ordered
        ]
        # For the bound in numpy: which of an entry's words stand for its values of each
        # exact kind ("number:16", a name's stem), how many values of each kind every
        # entry has, which kinds it has (bits), whether it is negated, its vector.
        self._kind_words = [
            {
                kind: np.fromiter((w in keys for w in words), dtype=bool, count=len(words))
                for kind, keys in p.keys.items()
            }
            for p, words in zip(self._profiles, ordered, strict=True)
        ]
        self._kind_counts = {
            kind: np.array([len(p.keys.get(kind, ())) for p in self._profiles])
            for kind in _KEYED_KINDS
        }
        # Every entry's name words, end to end (entry n's are [starts[n], starts[n + 1])).
        names = [[self._word_ids[w] for w in p.keys.get("name", ())] for p in self._profiles]
        self._name_starts = np.cumsum([0] + [len(ids) for ids in names])
        self._name_words = np.fromiter(
            (i for ids in names for i in ids), dtype=np.int64, count=int(self._name_starts[-1])
        )
        self._kind_bits = np.array([_bits(p.entities) for p in self._profiles], dtype=np.int64)
        self._negated = np.array([p.negated for p in self._profiles], dtype=bool)
        self._size_array = np.array(self._sizes, dtype=np.float64)
        dim = next((len(v) for v in self._vectors if v is not None), 0)
        self._vector_rows = np.zeros((len(self._profiles), dim), dtype=np.float32)
        for n, v in enumerate(self._vectors):
            if v is not None:
                self._vector_rows[n] = v
        # The entries that have a vector, and those vectors as rows.
        self._with_vectors = [n for n, v in enumerate(self._vectors) if v is not None]
        self._matrix = self._vector_rows[self._with_vectors]
        self._keys = np.sort(
            np.fromiter(
                (
                    self._word_ids[token] * self._stride + self._sizes[e] * span + e
                    for token, entries in self._postings.items()
                    for e in entries
                ),
                dtype=np.int64,
            )
        )

    def __len__(self) -> int:
        return sum(len(ids) for ids in self._members)

    def _cosine(self, a: int, b: int) -> float | None:
        va, vb = self._vectors[a], self._vectors[b]
        if va is None or vb is None:
            return None
        return float(np.dot(va, vb))

    def query(
        self, text: str, *, vector: Vector | None = None, limit: int = 5
    ) -> list[tuple[int, DedupScore]]:
        """The `limit` memories closest to `text`, best first, duplicates or not.

        Compared: every memory sharing a content word (or an entity) with `text` or its
        normalised text, and, given `vector`, the memories whose vectors are nearest.
        The first result decides `memoracle dedup --query` (`is_duplicate`); [] means
        nothing is even close.
        """
        if limit <= 0:
            return []
        profile = _profile(text)
        candidates: set[int] = set()
        if profile.exact in self._entry:
            candidates.add(self._entry[profile.exact])
        for token in profile.tokens:
            candidates.update(self._postings.get(token, ()))
        cosines: dict[int, float] = {}
        with_vectors = self._with_vectors
        if vector is not None and with_vectors:
            sims = self._matrix @ np.asarray(vector, dtype=np.float32)
            for k in np.argsort(-sims)[:_VECTOR_NEIGHBOURS]:
                candidates.add(with_vectors[int(k)])
            cosines = {n: float(s) for n, s in zip(with_vectors, sims, strict=True)}
        # Best bounds first; stop once no bound can beat the `limit`-th score found.
        bounded = sorted(
            ((_upper_bound(profile, self._profiles[n], cosines.get(n)), n) for n in candidates),
            key=lambda pair: (-pair[0], pair[1]),
        )
        scored: list[tuple[int, DedupScore]] = []
        for bound, n in bounded:
            if len(scored) >= limit and bound < scored[limit - 1][1].score:
                break
            score = _score(profile, self._profiles[n], cosines.get(n))
            scored.extend((memory_id, score) for memory_id in self._members[n])
            scored.sort(key=lambda pair: (-pair[1].score, pair[0]))
        return scored[:limit]

    def _word_edges(self, threshold: float) -> dict[tuple[int, int], DedupScore]:
        """Entry pairs at or above `threshold` on words. Lossless, and no pair of texts
        without enough words in common is ever looked at in Python.

        A pair reaches `threshold` only if its lexical score reaches L (`_lexical_floor`:
        lower when identifiers may lift it), so the smaller text x (|x| <= |y|) shares
        at least `_needed` words with y, and jaccard <= |x|/|y| caps y's size. For each
        x, numpy gathers the postings of x's words restricted to texts after x in
        (size, entry) order and within that cap (one slice per word of the sorted
        `_keys`) and counts the words each text shares with x (ScanCount). Only texts
        sharing enough go on, to a cheap bound (`_upper_bound`) and then `_score`.
        """
        span = max(1, len(self._profiles))
        keys, stride = self._keys, self._stride
        edges: dict[tuple[int, int], DedupScore] = {}
        for x, profile in enumerate(self._profiles):
            size = self._sizes[x]
            if not size:
                continue
            floor = _lexical_floor(threshold, lift=not _LIFTING.isdisjoint(profile.entities))
            need = _needed(floor, size)
            # jaccard <= |x|/|y|, so lexical <= max(|x|/|y|, 0.45·|x|/|y| + 0.55·|x|/(|x|
            # + ½)) bounds the partner's size.
            rest = floor - W_SEGMENTS * size / (size + SMOOTHING)
            largest = max(size / floor, W_JACCARD * size / rest) if rest > 0 else math.inf
            words = self._words[x]
            biggest = stride // span - 1
            limit = biggest if largest >= biggest else int(largest)
            low = words * stride + (size * span + x + 1)
            high = words * stride + (limit + 1) * span
            starts = np.searchsorted(keys, low)
            lengths = np.searchsorted(keys, high) - starts
            total = int(lengths.sum())
            if total < need:
                continue
            # Concatenated ranges [start, start + length) of every word, in one array.
            offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
            partners = keys[offsets + np.arange(total)] % span
            shared = np.bincount(partners)
            ys = np.flatnonzero(shared >= need)
            bounded = len(ys) > _VECTORISE
            if bounded:
                ys = self._bounded(x, ys, shared, partners, lengths, threshold)
            for y in ys.tolist():
                other = self._profiles[y]
                cosine = self._cosine(x, y)
                if not bounded and _upper_bound(profile, other, cosine) < threshold:
                    continue
                score = _score(profile, other, cosine)
                if score.score >= threshold:
                    edges[(x, y) if x < y else (y, x)] = score
        return edges

    def _bounded(
        self,
        x: int,
        ys: npt.NDArray[np.intp],
        shared: npt.NDArray[np.intp],
        partners: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.intp],
        threshold: float,
    ) -> npt.NDArray[np.intp]:
        """The `ys` whose `_upper_bound` against x reaches `threshold`, all at once.

        `shared[y]` is how many words y shares with x; `partners`, the texts met word by
        word (`lengths` per word of x), give the values of each keyed kind of x that y
        shares. Each kind can only lower the bound, so ys are dropped as soon as it fails.
        """
        size = self._sizes[x]
        common = shared[ys]
        jaccard = common / (size + self._size_array[ys] - common)
        bound = np.maximum(jaccard, W_JACCARD * jaccard + W_SEGMENTS * common / (size + SMOOTHING))
        if self._vector_rows.shape[1] and self._vectors[x] is not None:
            cosine = self._vector_rows[ys] @ self._vector_rows[x]
            weight = np.clip((cosine - VECTOR_LOW) / (VECTOR_HIGH - VECTOR_LOW), 0.0, 1.0)
            bound = np.maximum(bound, (bound + weight) / 2)  # no vector: weight 0
        lifted = (self._kind_bits[ys] & self._kind_bits[x] & _LIFTING_BITS) != 0
        bound = np.where(lifted, bound + ENTITY_LIFT * (1 - bound), bound)
        bound = np.where(self._negated[ys] != self._negated[x], bound * CONFLICT_FLOOR, bound)
        keep = bound >= threshold - 1e-9
        ys, bound = ys[keep], bound[keep]
        # Names last: their way back (y's names among x's words) costs the most.
        kinds = sorted(self._kind_words[x].items(), key=lambda item: item[0] == "name")
        agreement = np.ones(len(ys))
        for kind, mask in kinds:
            if not len(ys):
                break
            theirs = self._kind_counts[kind][ys]
            found = np.bincount(partners[np.repeat(mask, lengths)], minlength=len(shared))[ys]
            # Values of x found in y; of y found in x: the same count but for names.
            back = self._names_found(x, ys) if kind == "name" else found
            share = np.maximum(found / self._kind_counts[kind][x], back / np.maximum(1, theirs))
            agreement = np.minimum(agreement, np.where(theirs > 0, share, 1))
            keep = bound * (CONFLICT_FLOOR + (1 - CONFLICT_FLOOR) * agreement) >= threshold - 1e-9
            ys, bound, agreement = ys[keep], bound[keep], agreement[keep]
        return ys

    def _names_found(self, x: int, ys: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """How many of each y's name words are among x's words."""
        starts = self._name_starts[ys]
        lengths = self._name_starts[ys + 1] - starts
        total = int(lengths.sum())
        if not total:
            return np.zeros(len(ys), dtype=np.intp)
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
        found = np.isin(self._name_words[offsets + np.arange(total)], self._words[x])
        owner = np.repeat(np.arange(len(ys)), lengths)
        return np.bincount(owner[found], minlength=len(ys))

    def _vector_edges(
        self, threshold: float, known: Mapping[tuple[int, int], DedupScore]
    ) -> dict[tuple[int, int], DedupScore]:
        """Entry pairs at or above `threshold` among each vector's nearest neighbours
        (blocked matrix products: O(n²), but in numpy, ~0.1 s for 10,000 vectors)."""
        entries, matrix = self._with_vectors, self._matrix
        if len(entries) < 2:
            return {}
        # (lexical + v') / 2 must reach the lexical floor with lexical >= 0.
        weight = max(0.0, 2 * _lexical_floor(threshold, lift=True) - 1)
        minimum = VECTOR_LOW + weight * (VECTOR_HIGH - VECTOR_LOW)
        k = min(_VECTOR_NEIGHBOURS, len(entries) - 1)
        edges: dict[tuple[int, int], DedupScore] = {}
        for start in range(0, len(entries), _VECTOR_BLOCK):
            sims = matrix[start : start + _VECTOR_BLOCK] @ matrix.T
            for row in range(sims.shape[0]):
                sims[row, start + row] = -np.inf
            nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            for row, cols in enumerate(nearest):
                for col in cols:
                    if sims[row, col] < minimum:
                        continue
                    a, b = entries[start + row], entries[int(col)]
                    pair = (a, b) if a < b else (b, a)
                    if pair in known or pair in edges:
                        continue
                    score = _score(self._profiles[a], self._profiles[b], float(sims[row, col]))
                    if score.score >= threshold:
                        edges[pair] = score
        return edges

    def find_duplicates(
        self, *, threshold: float = THRESHOLD, rank: Callable[[int], Any] | None = None
    ) -> list[DuplicateGroup]:
        """Groups of near-duplicates, each to merge into its keeper (see the module
        docstring: not transitive, no id twice). `rank` orders ids for keeper, smallest
        first (e.g. ``lambda i: (not pinned[i], created[i])``); by default the id itself,
        so the oldest memory is kept. Groups come in keeper order.

        `threshold` is in (0, 1]. Every pair at or above it that shares a word is found;
        pairs that share none are found only through vectors, among each memory's
        `_VECTOR_NEIGHBOURS` nearest."""
        edges = self._word_edges(threshold)
        edges.update(self._vector_edges(threshold, edges))
        neighbours: dict[int, list[tuple[int, DedupScore]]] = defaultdict(list)
        for (a, b), score in edges.items():
            neighbours[a].append((b, score))
            neighbours[b].append((a, score))

        def key(memory_id: int) -> Any:
            return (rank(memory_id), memory_id) if rank else memory_id

        # An entry (one normalised text) ranks as its best-ranked id.
        best = {n: min(ids, key=key) for n, ids in enumerate(self._members)}
        same = DedupScore(1.0, 1.0, 1.0, 1.0, None, None, (), "same text")
        taken: set[int] = set()
        groups: list[DuplicateGroup] = []
        for n in sorted(range(len(self._members)), key=lambda e: key(best[e])):
            if n in taken:
                continue
            absorbed = [(m, s) for m, s in neighbours.get(n, ()) if m not in taken]
            if len(self._members[n]) == 1 and not absorbed:
                continue
            taken.add(n)
            taken.update(m for m, _ in absorbed)
            keep = best[n]
            merge = [(i, same) for i in self._members[n] if i != keep]
            merge += [(i, s) for m, s in absorbed for i in self._members[m]]
            merge.sort(key=lambda pair: (-pair[1].score, key(pair[0])))
            groups.append(DuplicateGroup(keep, tuple(merge)))
        return groups


def find_duplicates(
    items: Sequence[tuple[int, str]],
    *,
    vectors: Mapping[int, Vector] | None = None,
    threshold: float = THRESHOLD,
    rank: Callable[[int], Any] | None = None,
) -> list[DuplicateGroup]:
    """Near-duplicate groups among `items` (id, text); see `DedupIndex.find_duplicates`."""
    return DedupIndex(items, vectors=vectors).find_duplicates(threshold=threshold, rank=rank)


def query(
    text: str,
    items: Sequence[tuple[int, str]],
    *,
    vector: Vector | None = None,
    vectors: Mapping[int, Vector] | None = None,
    limit: int = 5,
) -> list[tuple[int, DedupScore]]:
    """The memories of `items` closest to `text`, best first; see `DedupIndex.query`."""
    return DedupIndex(items, vectors=vectors).query(text, vector=vector, limit=limit)
