"""Near duplicates at write time: is a new memory something already said, in other
words? `near_duplicate` finds the candidates through FTS (only the rarer words once a
store grows: `near_query`), keeps those of the same owner, subject and kind that
hold half of the new words and give every shared slot the same value (`slots_agree`),
and scores them with `lifecycle.dedup`. `same_meaning` is the second look, by meaning:
the newest live memories of the same owner, subject and kind, compared by embedding
(in any language), merged only when nothing names another value."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from weakref import WeakKeyDictionary

import numpy as np

from memoracle.capture.dates import find_dates
from memoracle.capture.lang import detect_language
from memoracle.embed.core import Embedder, Vector, from_blob
from memoracle.engine.state import EngineState
from memoracle.errors import EngineError
from memoracle.lifecycle import dedup
from memoracle.lifecycle.conflicts import same_value
from memoracle.lifecycle.dedup import DedupScore
from memoracle.lifecycle.scripts import names_agree
from memoracle.lifecycle.slots import Slot
from memoracle.recall.fuse import token_set
from memoracle.recall.query import lexical_queries
from memoracle.storage_types import LexicalQuery, View, any_of
from memoracle.store.protocols import StoreBackend
from memoracle.types import NewMemory, Scope

__all__ = [
    "MEANING_COSINE",
    "NEAR_COMMON",
    "near_duplicate",
    "near_query",
    "same_meaning",
    "slots_agree",
    "vectors_of",
]

NEAR_CANDIDATES = 3  # memories FTS offers the capture-time dedup check (best BM25 first)
NEAR_OVERLAP = 0.5  # share of words a candidate must share before it is scored
# A word in more memories than this says nothing about which one a text repeats, and
# ranking every memory that holds it grows with the store: the near-duplicate lookup
# searches the rarer words only (each word's count stops at the cap, so it stays cheap).
NEAR_COMMON = 50
# By meaning: the newest live memories of the subject and kind a new memory is compared
# with, and how alike in meaning (cosine of the default model's unit vectors) the same
# statement in other words is. Chosen on bench/data/lifecycle-dev.jsonl and checked on
# LoCoMo's merges (BENCHMARKS.md: at 0.85 with no lexical floor, a quarter of them were
# false); "I live in Paris" / "Я живу в Париже" is 0.86-0.88 (another language: no
# lexical floor), "I live in Paris" / "I moved to Lyon" 0.47.
MEANING_CANDIDATES = 32
MEANING_COSINE = 0.88
# The dedup score with the vector is at most (lexical + 1) / 2 and lexical at most the
# containment of the words: below this no candidate in the same language can merge.
LEXICAL_FLOOR = 0.3
MEANING_ACROSS = 0.85  # across languages (the model puts translations a little apart)
_ANCHOR = datetime(2001, 1, 3, 12, tzinfo=UTC)  # any instant: both texts' times read from it
# Per open store, the words found over the cap: they stay over it (memories are never
# deleted, so the index only grows), and are not counted again.
_COMMON: WeakKeyDictionary[StoreBackend, set[str]] = WeakKeyDictionary()
EMBEDDED_KEPT = 10_000  # vectors kept per store (20 MB at 512 floats); then it starts again


def near_duplicate(
    st: EngineState, new: NewMemory, slots: Sequence[Slot]
) -> tuple[int, DedupScore] | None:
    """A live memory of the same owner, subject and kind that already says what `new`
    says, in other words (dedup score ≥ `lifecycle.dedup_threshold`), if any. A new
    text with more words than the old one is news, not a repeat, and so is one that
    gives a slot another value ("I prefer tea over coffee" after "I prefer coffee
    over tea": the same words, the opposite choice). Only the few memories FTS finds
    and that hold half of the new words are scored (fast)."""
    words = token_set(new.text)
    if not words:
        return None
    query = near_query(st, new.text)
    if query is None:
        return None
    found = st._store.index.lexical_memories(
        query, View(new.scope, now=st.clock.now()), limit=NEAR_CANDIDATES
    )
    owner = (new.scope.agent, new.scope.user, new.scope.chat)
    rows = st._store.memories.owners([i for i, _ in found])
    others = {r[3] for r in rows if r[3] != new.subject}
    predicates = (
        {m.id: m.predicate for m in st._store.memories.get_many([r[0] for r in rows])}
        if others
        else {}
    )
    candidates = [
        (memory_id, text)
        for memory_id, kind, text, subject, scope in rows
        if kind == new.kind
        and same_subject(new.subject, new.predicate, subject, predicates.get(memory_id))
        and (scope.agent, scope.user, scope.chat) == owner
        and len(words) <= len(other := token_set(text))  # saying more is news
        and len(words & other) >= NEAR_OVERLAP * len(words)
    ]
    if candidates and slots:
        held = st._store.memories.slot_values([i for i, _ in candidates])
        said = {(s.subject, s.attribute): s.value for s in slots}
        candidates = [(i, text) for i, text in candidates if slots_agree(said, held[i])]
    if not candidates:
        return None
    best = dedup.query(new.text, candidates, limit=1)  # the new text prepared once
    threshold = st.settings.lifecycle.dedup_threshold
    return best[0] if best and dedup.is_duplicate(best[0][1], threshold) else None


def same_subject(a: str | None, a_said: str | None, b: str | None, b_said: str | None) -> bool:
    """Whether two memories are about one subject: the same, or one the user's own
    attribute and the other that attribute as a subject ("My dog is called Toby": the
    user, attribute dog; "Toby is my dog.": the user's dog)."""
    if a == b:
        return True
    return (a == "user" and b == f"user's {a_said}") or (b == "user" and a == f"user's {b_said}")


def near_query(st: EngineState, text: str) -> LexicalQuery | None:
    """The lexical query that finds a text's near-duplicate candidates.

    Small stores: any of its content words, as ever. Once words are in more than
    `NEAR_COMMON` memories, the rarest half of the words plus one (of those under the
    cap): a memory sharing half of the words holds one of them, and BM25 ranks at most a
    few hundred rows, where an OR of common words ("prefer", "use") ranked every memory
    holding them, a cost that grew with the store. When every word is common, all of
    them at once, if that is rare enough. None: no word, or nothing rare to look for (an
    exact duplicate is still found by its hash). Each count stops at the cap, so sizing
    the query stays cheap too."""
    queries = lexical_queries(text, prefixes=False)  # [AND] or [AND, OR]
    if not queries:
        return None
    terms = queries[-1].terms
    if st._store.memories.max_id() <= NEAR_COMMON:  # no word can be common yet
        return queries[-1]
    common = _COMMON.setdefault(st._store, set())
    unknown = [t for t in terms if t.text not in common]
    counts = st._store.index.match_counts(
        "memories", [LexicalQuery((t,)) for t in unknown], cap=NEAR_COMMON
    )
    sizes = dict(zip(unknown, counts, strict=True))
    common.update(t.text for t in terms if sizes.get(t, 0) > NEAR_COMMON)
    counted = sorted(
        (NEAR_COMMON + 1 if t.text in common else sizes[t], i) for i, t in enumerate(terms)
    )
    if counted[-1][0] <= NEAR_COMMON:
        return queries[-1]
    rare = [i for n, i in counted if n <= NEAR_COMMON][: len(terms) // 2 + 1]
    if rare:
        return any_of(terms[i] for i in sorted(rare))
    every = queries[0]
    rare_enough = st._store.index.match_count("memories", every, cap=NEAR_COMMON) <= NEAR_COMMON
    return every if rare_enough else None


def slots_agree(a: dict[tuple[str, str], str], b: dict[tuple[str, str], str]) -> bool:
    """Whether two memories give the same value to every slot they share: "I prefer tea
    over coffee" and "I prefer coffee over tea" have the same words and are no repeat."""
    return all(same_value(key[1], value, b[key]) for key, value in a.items() if key in b)


def same_meaning(
    st: EngineState, new: NewMemory, slots: Sequence[Slot]
) -> tuple[int, DedupScore] | None:
    """A live memory of the same owner, subject and kind that says what `new` says in
    other words or another language ("I'm allergic to peanuts" / "I have an allergy to
    peanuts", "Я живу в Париже" / "I live in Paris"), if any: of the newest
    `MEANING_CANDIDATES`, the closest by embedding, at least `MEANING_COSINE` alike and
    a near-duplicate by the dedup score with the vector (words and meaning together: a
    shared name and a "wow" are not enough), or across languages `MEANING_ACROSS`
    alike; and only when the texts name no other value (numbers, dates, names, a
    negation: the dedup entities; a name in another script is the same when its
    letters are, `lifecycle.scripts`), no other time ("last weekend" / "last Friday"),
    and give every shared slot the same value. A text that says all the old one did
    and more is news. Without an embedder, or when it fails, nothing merges by meaning."""
    embedder = st.searcher.embedder
    if embedder is None:
        return None
    owner = _owner(new.scope)
    view = View(new.scope, now=st.clock.now())
    rows = [
        (i, text, h)
        for i, text, h, scope in st._store.memories.of_subject(
            new.subject, new.kind, view, limit=MEANING_CANDIDATES
        )
        if _owner(scope) == owner
    ]
    language = _language(new.text)
    words = token_set(new.text)
    rows = [
        (i, text, h)
        for i, text, h in rows
        if _language(text) != language or _containment(words, token_set(text)) >= LEXICAL_FLOOR
    ]  # in one language, too few shared words cannot reach the dedup threshold: not embedded
    if not rows:
        return None
    try:
        # The new text's vector is kept with the others': the next memory of the
        # subject is compared with it without embedding it again.
        known = vectors_of(
            st, embedder, [(new.content_hash, new.text)] + [(h, t) for _, t, h in rows]
        )
        vector = known[new.content_hash]
    except EngineError:  # an embedding service is down: compare by words only
        return None
    said = {(s.subject, s.attribute): s.value for s in slots}
    held = st._store.memories.slot_values([i for i, _, _ in rows]) if said else {}
    alike = sorted(
        ((float(np.dot(vector, known[h])), i, text) for i, text, h in rows if h in known),
        reverse=True,
    )
    threshold = st.settings.lifecycle.dedup_threshold
    for cosine, memory_id, text in alike[:3]:
        if cosine < MEANING_ACROSS:
            break
        if words > token_set(text):
            continue  # all it said and more ("… since 2021"): news
        score = dedup.similarity(new.text, text, vector_similarity=cosine)
        agree = not score.conflicts or (
            score.conflicts == ("name",) and names_agree(new.text, text)
        )
        other_language = _language(text) != language
        alike_enough = (
            cosine >= MEANING_ACROSS
            if other_language
            else cosine >= MEANING_COSINE and dedup.is_duplicate(score, threshold)
        )
        if (
            agree
            and alike_enough
            and _same_times(new.text, text)
            and slots_agree(said, held.get(memory_id, {}))
        ):
            return memory_id, score
    return None


@lru_cache(maxsize=8192)
def _language(text: str) -> str:
    return detect_language(text)


def _containment(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _same_times(a: str, b: str) -> bool:
    """Whether two texts name the same times, read from one fixed instant: "last
    weekend" and "last Friday" are two outings, "yesterday" and "вчера" one day."""
    return _times(a) == _times(b)


def _times(text: str) -> set[tuple[datetime, datetime]]:
    found = find_dates(text, _ANCHOR, _language(text))
    return {(m.start, m.end) for m in found}


def vectors_of(
    st: EngineState, embedder: Embedder, items: Sequence[tuple[str, str]]
) -> dict[str, Vector]:
    """The unit vectors of `items` (content hash, text) under the configured model:
    those the store holds read back, the others embedded, or taken from what this
    process embedded before for this store (`EngineState.embedded`: two stores open in
    one process never share it). They are not stored: embedding the store is search's
    and the nightly's work (`reindex`), which `health` watches."""
    model_id, dim = embedder.model_id, embedder.dim
    found: dict[str, Vector] = {}
    for h, stored_dim, blob in st._store.index.vectors_for(model_id, [h for h, _ in items]):
        if stored_dim == dim:
            found[h] = from_blob(blob, dim)
    cache = st.embedded
    found.update((h, cache[(model_id, h)]) for h, _ in items if (model_id, h) in cache)
    missing = list({h: text for h, text in items if h not in found}.items())
    if missing:
        vectors = embedder.embed_documents([text for _, text in missing])
        if len(cache) > EMBEDDED_KEPT:
            cache.clear()
        for (h, _), vector in zip(missing, vectors, strict=True):
            found[h] = cache[(model_id, h)] = vector
    return found


def _owner(scope: Scope) -> tuple[str | None, str | None, str | None]:
    return (scope.agent, scope.user, scope.chat)
