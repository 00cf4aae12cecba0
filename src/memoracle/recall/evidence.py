"""Session-level evidence: turns of the sessions the query's hits gather in rank higher.

A multi-hop or open-domain question is answered by several turns of one conversation,
each sharing few words with the question; alone each ranks low, but the session they
were said in collects many of the query's hits. A session is scored as one document, by
the fused scores of its candidate turns, and each turn's fused score grows with its
session's share of the best session's score (`boost_by_session`). Pure: the caller
passes the fused scores and which session each turn belongs to.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

from memoracle.text import fts_terms
from memoracle.types import Episode

__all__ = [
    "SESSION_DEPTH",
    "boost_by_session",
    "boost_speakers",
    "by_context",
    "named_speakers",
    "session_scores",
]

K = TypeVar("K", bound=Hashable)

SESSION_DEPTH = 3  # a session counts its best few turns: one long session is not favoured


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
    ranked: Mapping[K, float], speaker_of: Mapping[K, str], query_words: set[str], factor: float
) -> dict[K, float]:
    """`ranked` with the turns said by a person the query names multiplied by `factor`:
    "what did Caroline research?" is answered by what Caroline said, not by the turns
    that greet her ("Thanks, Caroline!")."""
    named = named_speakers(query_words, speaker_of)
    if not named or factor == 1.0:
        return dict(ranked)
    return {k: v * (factor if speaker_of.get(k) in named else 1.0) for k, v in ranked.items()}


def by_context(
    ranked: Mapping[tuple[str, int], float],
    episodes: Sequence[Episode],
    query: str,
    session_weight: float,
    speaker_factor: float,
) -> dict[tuple[str, int], float]:
    """`ranked` (fused scores by ("memory" | "episode", id)) after the session boost
    and then the speaker boost, `episodes` being the candidate turns."""
    session_of = {("episode", e.id): e.session_id for e in episodes if e.session_id}
    out = boost_by_session(ranked, session_of, session_weight)
    speaker_of = {("episode", e.id): e.speaker for e in episodes if e.speaker}
    words = {w.casefold() for w in fts_terms(query)}
    return boost_speakers(out, speaker_of, words, speaker_factor)
