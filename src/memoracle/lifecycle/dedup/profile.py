"""One memory's profile — content words, stems, segments, negations, entities — whether
two profiles' values agree, and their score (`similarity`) with the reason it gives.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from memoracle.language.words import content_words, fold
from memoracle.lifecycle.dedup.entities import _COMMENT, _HEX, _LIST_MARK, _Entity, _extract
from memoracle.lifecycle.dedup.model import (
    _KEYED_KINDS,
    _LIFTING,
    CONFLICT_FLOOR,
    ENTITY_KINDS,
    ENTITY_LIFT,
    SMOOTHING,
    SUBSTITUTION,
    THRESHOLD,
    VECTOR_HIGH,
    VECTOR_LOW,
    W_JACCARD,
    W_SEGMENTS,
    DedupScore,
)
from memoracle.text import for_hash, for_index


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
    if b.dated == "yearless":
        # A yearless day or month never spans a new year: take the other's year. Two
        # yearless ones too: "le 3 mai" may look ahead in one sentence and not in another.
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
