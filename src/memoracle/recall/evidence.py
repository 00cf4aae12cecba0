"""Context as evidence: a turn's neighbours, its session, and who said it.

A multi-hop or open-domain question is answered by several turns of one conversation,
each sharing few words with the question; alone each ranks low, but the session they
were said in collects many of the query's hits. A session is scored as one document, by
the fused scores of its candidate turns, and each turn's fused score grows with its
session's share of the best session's score (`boost_by_session`). A good hit is often
half of an exchange ("What got you into running?"), the other half beside it: the turns
next to the best ones gain a share of their score (`spread_to_neighbours`). A turn said
by the person the query names ranks higher, when it shares a word with the query besides
the name (`boost_speakers`). Pure: the caller passes the fused scores and the turns.
"""

from __future__ import annotations

from collections.abc import Container, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from memoracle.language.words import content_words
from memoracle.text import fts_terms, stem
from memoracle.types import Episode

__all__ = [
    "NEIGHBOUR_TOP",
    "SESSION_DEPTH",
    "boost_by_session",
    "Context",
    "boost_speakers",
    "by_context",
    "context_factors",
    "named_speakers",
    "neighbour_ids",
    "session_scores",
    "spread_to_neighbours",
]

K = TypeVar("K", bound=Hashable)
Key = tuple[str, int]

SESSION_DEPTH = 3  # a session counts its best few turns: one long session is not favoured
NEIGHBOUR_TOP = 30  # the best turns whose neighbours gain from them


def session_scores(ranked: Mapping[K, float], session_of: Mapping[K, str]) -> dict[str, float]:
    """Each session's score: the sum of its SESSION_DEPTH best fused scores."""
    members: dict[str, list[float]] = {}
    for key, score in ranked.items():
        session = session_of.get(key)
        if session is not None:
            members.setdefault(session, []).append(score)
    return {s: sum(sorted(v, reverse=True)[:SESSION_DEPTH]) for s, v in members.items()}


def boost_by_session(
    ranked: Mapping[K, float], session_of: Mapping[K, str], weight: float
) -> dict[K, float]:
    """`ranked` with each item of a session multiplied by 1 + weight · (its session's
    score / the best session's score); items without a session keep their score."""
    scores = session_scores(ranked, session_of)
    best = max(scores.values(), default=0.0)
    if weight <= 0 or best <= 0:
        return dict(ranked)
    out: dict[K, float] = {}
    for key, value in ranked.items():
        session = session_of.get(key)
        share = scores[session] / best if session is not None else 0.0
        out[key] = value * (1.0 + weight * share)
    return out


def named_speakers(query_words: set[str], speakers: Mapping[K, str]) -> set[str]:
    """The speakers (of `speakers`' values) whose name, or first name, is one of
    `query_words` (case-folded)."""
    named: set[str] = set()
    for speaker in set(speakers.values()):
        parts = speaker.casefold().split()
        if parts and (parts[0] in query_words or speaker.casefold() in query_words):
            named.add(speaker)
    return named


def boost_speakers(
    ranked: Mapping[K, float],
    speaker_of: Mapping[K, str],
    query_words: set[str],
    factor: float,
    about: Container[K] | None = None,
) -> dict[K, float]:
    """`ranked` with the turns said by a person the query names multiplied by `factor`:
    "what did Caroline research?" is answered by what Caroline said, not by the turns
    that greet her ("Thanks, Caroline!"). With `about`, only its turns are boosted:
    those that share a word with the query besides the name; the others matched the
    name alone (a turn's speaker is part of what is searched), and every turn that
    person said would otherwise rank above a turn about the subject said by someone else.
    """
    named = named_speakers(query_words, speaker_of)
    if not named or factor == 1.0:
        return dict(ranked)
    return {
        k: v * factor if speaker_of.get(k) in named and (about is None or k in about) else v
        for k, v in ranked.items()
    }


def neighbour_ids(ranked: Mapping[Key, float], top: int = NEIGHBOUR_TOP) -> list[int]:
    """The ids beside the `top` best turns of `ranked` (id ± 1) that are not in it:
    the turns `spread_to_neighbours` may add, for the caller to look up (in its scope)."""
    turns = {i for source, i in ranked if source == "episode"}
    best = sorted((k for k in ranked if k[0] == "episode"), key=ranked.__getitem__, reverse=True)
    return sorted({i + d for _, i in best[:top] for d in (-1, 1)} - turns)


def spread_to_neighbours(
    ranked: Mapping[Key, float],
    session_of: Mapping[Key, str],
    weight: float,
    top: int = NEIGHBOUR_TOP,
) -> dict[Key, float]:
    """`ranked` with each turn said just before or after one of the `top` best turns,
    in the same session, gaining `weight` × that turn's score (a turn not in `ranked`
    enters with it). Turns are numbered in the order they were said, so id ± 1 in one
    session is the turn before and the one after."""
    out = dict(ranked)
    if weight <= 0:
        return out
    best = sorted((k for k in ranked if k[0] == "episode"), key=ranked.__getitem__, reverse=True)
    for key in best[:top]:
        session = session_of.get(key)
        for step in (-1, 1):
            beside = ("episode", key[1] + step)
            if session is not None and session_of.get(beside) == session:
                out[beside] = out.get(beside, 0.0) + weight * ranked[key]
    return out


_EXACT_BELOW = 4  # a shorter query word must be the whole word ("tv"), not its start


def _shares_a_word(text: str, forms: set[str], names: set[str]) -> bool:
    """Whether a word of `text` other than `names` is one of `forms` or, for forms of
    _EXACT_BELOW letters or more, starts with one ("research" finds "researching").
    Matching stems by prefix spares stemming every candidate turn (a cold process would
    stem each new word of ~300 turns, ~70 ms); the stem of an English word is nearly
    always its start, and the word itself is a form too ("happy" is not "happi…")."""
    for word in fts_terms(text):
        folded = word.casefold()
        if folded in names:
            continue
        if folded in forms or any(len(f) >= _EXACT_BELOW and folded.startswith(f) for f in forms):
            return True
    return False


def by_context(
    ranked: Mapping[Key, float],
    episodes: Sequence[Episode],
    query: str,
    session_weight: float,
    speaker_factor: float,
    neighbour_weight: float = 0.0,
) -> dict[Key, float]:
    """`ranked` (fused scores by ("memory" | "episode", id)) after the neighbours'
    share, the session boost and then the speaker boost, `episodes` being the candidate
    turns and the neighbours the caller looked up (`neighbour_ids`)."""
    return context_factors(
        ranked, episodes, query, session_weight, speaker_factor, neighbour_weight
    ).scores


@dataclass(frozen=True)
class Context:
    """`by_context`'s scores and, per key, what made them, for `explain` to show:
    score = (fused + neighbours) × session × speaker (keys absent: 0.0, 1.0, 1.0)."""

    scores: dict[Key, float]
    neighbours: dict[Key, float]
    session: dict[Key, float]
    speaker: dict[Key, float]


def context_factors(
    ranked: Mapping[Key, float],
    episodes: Sequence[Episode],
    query: str,
    session_weight: float,
    speaker_factor: float,
    neighbour_weight: float = 0.0,
) -> Context:
    """`by_context`, with each key's neighbours' share and session and speaker factors."""
    session_of = {("episode", e.id): e.session_id for e in episodes if e.session_id}
    spread = spread_to_neighbours(ranked, session_of, neighbour_weight)
    gained = {k: v - ranked.get(k, 0.0) for k, v in spread.items() if v != ranked.get(k, 0.0)}
    out = boost_by_session(spread, session_of, session_weight)
    session = {k: out[k] / v for k, v in spread.items() if v and out[k] != v}
    speaker_of = {("episode", e.id): e.speaker for e in episodes if e.speaker}
    words = {w.casefold() for w in fts_terms(query)}
    named = named_speakers(words, speaker_of)
    names = {part.casefold() for s in named for part in s.split()}
    said = [w.casefold() for w in content_words(query) if w.casefold() not in names]
    forms = {stem(w) for w in said} | set(said)
    about = (  # only the named people's turns can be boosted: only theirs are read
        {
            ("episode", e.id)
            for e in episodes
            if e.speaker in named and _shares_a_word(e.text, forms, names)
        }
        if forms
        else None
    )
    boosted = boost_speakers(out, speaker_of, words, speaker_factor, about)
    speaker = {k: speaker_factor for k, v in boosted.items() if v != out[k]}
    return Context(boosted, gained, session, speaker)
