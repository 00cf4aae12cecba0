"""The hits of one search, made and merged: a hit from its memory or turn (`hit`), a
memory and the turn it came from as one hit (`dedup_sources`), and why a query has
nothing to answer with (`unsupported`); the turns and sessions the returned
hits came from (`with_provenance`). Moved out of `hybrid` unchanged, so the searcher
stays about the order of operations.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memoracle.store.protocols import StoreBackend
from memoracle.types import Episode, Hit, Memory, Scores

Key = tuple[str, int]  # ("memory" | "episode", id)


def unsupported(lexical: bool, similarities: list[float], floor: float) -> str | None:
    """Why the query has nothing to answer with, or None when it has: no item shares a
    content word with it, and none is nearer in meaning than `floor` (the noise floor,
    `search.similarity_floor`). Without it the nearest vectors of a nonsense query are
    simply the store's best-weighted items, returned as if they answered it."""
    if lexical or floor <= -1:  # -1: the floor is off
        return None
    best = max(similarities, default=None)
    if best is not None and best >= floor:
        return None
    nearest = "no vectors" if best is None else f"best similarity {best:.3f}"
    return (
        "no match: no memory or turn shares a word with the query, and none is close in "
        f"meaning ({nearest}, under the noise floor search.similarity_floor = {floor})"
    )


def time_of(memory: Memory | None, episode: Episode | None) -> datetime:
    if memory is not None:
        return memory.valid_from or memory.observed_at
    assert episode is not None
    return episode.at


def hit(
    source: str, item_id: int, memory: Memory | None, episode: Episode | None, scores: Scores
) -> Hit:
    """A hit; a memory's provenance is added once the hits are chosen."""
    if memory is not None:
        return Hit(
            source="memory",
            id=item_id,
            text=memory.text,
            at=memory.valid_from or memory.observed_at,
            scores=scores,
            memory=memory,
        )
    assert episode is not None
    return Hit(
        source="episode",
        id=item_id,
        text=episode.text,
        at=episode.at,
        scores=scores,
        episode=episode,
        turn_ids=(episode.turn_id,) if episode.turn_id else (),
        session_ids=(episode.session_id,) if episode.session_id else (),
    )


def dedup_sources(hits: list[Hit], stood_for: dict[Key, str]) -> list[Hit]:
    """A memory and the turns it was said in are one piece of evidence: one hit, at the
    best of their places (`stood_for` learns which hit stands for each one left out).
    The memory is that hit even when its turns ranked higher (it takes the best turn's
    place and, when better, its scores whole, `Scores.via` naming the turn, so every
    factor of the score stays shown): it says the same, with its date and kind, and can
    be superseded; the turns' words found it (the memories' lexical list weighs less,
    MEMORY_LEXICAL_WEIGHT). A memory merged from several turns ("I'm allergic to
    peanuts", then "I have an allergy to peanuts") leads them all; two memories of one
    turn (its claims, `lifecycle.claims`) are two hits."""
    seen: dict[int, int] = {}  # episode id -> index in `out` of the hit for it
    out: list[Hit | None] = []
    for hit in hits:
        if hit.memory is None:
            if hit.id in seen:
                kept = out[seen[hit.id]]
                assert kept is not None
                stood_for[(hit.source, hit.id)] = kept.ref
                continue
            seen[hit.id] = len(out)
            out.append(hit)
            continue
        episodes = hit.memory.episode_ids
        turns = sorted({seen[e] for e in episodes if e in seen and _a_turn(out[seen[e]])})
        if not turns:
            for episode in episodes:
                seen.setdefault(episode, len(out))
            out.append(hit)
            continue
        at = turns[0]
        best = hit.scores
        for place in turns:
            turn = out[place]
            assert turn is not None
            stood_for[(turn.source, turn.id)] = hit.ref
            if turn.scores.final > best.final:
                best = replace(turn.scores, via=turn.ref)
            out[place] = None
        out[at] = replace(hit, scores=best)
        for episode in episodes:
            if episode not in seen or seen[episode] in turns:
                seen[episode] = at
    return [h for h in out if h is not None]


def _a_turn(hit: Hit | None) -> bool:
    return hit is not None and hit.memory is None


def with_provenance(store: StoreBackend, hits: list[Hit]) -> list[Hit]:
    """The returned hits with the turns and sessions their memories came from (read
    for these few only: a memory said a hundred times has a hundred turns)."""
    ids = sorted({e for h in hits if h.memory is not None for e in h.memory.episode_ids})
    turns = {e.id: e for e in store.episodes.get_many(ids)}
    out: list[Hit] = []
    for hit in hits:
        if hit.memory is not None:
            sources = [turns[e] for e in hit.memory.episode_ids if e in turns]
            hit = replace(
                hit,
                turn_ids=tuple(e.turn_id for e in sources if e.turn_id),
                session_ids=tuple(dict.fromkeys(e.session_id for e in sources if e.session_id)),
            )
        out.append(hit)
    return out
