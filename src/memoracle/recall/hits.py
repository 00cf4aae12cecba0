"""The hits of one search, made and merged: a hit from its memory or turn (`hit`), a
memory and the turn it came from as one hit (`dedup_sources`), and why a query has
nothing to answer with (`unsupported`); the turns and sessions the returned
hits came from (`with_provenance`). Moved out of `hybrid` unchanged, so the searcher
stays about the order of operations.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memoracle.store import Store
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
    """A memory and the turn it was said in are one piece of evidence: one hit, at the
    better of their two places (`stood_for` learns which hit stands for each one left
    out). The memory is that hit even when its turn ranked higher (it takes the turn's
    place and scores, `Scores.via` naming the turn): it says the same, with its date
    and kind, and can be superseded; the turn's words found it (the memories' lexical
    list weighs less, MEMORY_LEXICAL_WEIGHT)."""
    seen_episodes: dict[int, int] = {}  # episode id -> index in `out` of the hit for it
    out: list[Hit] = []
    for hit in hits:
        episodes = set(hit.memory.episode_ids) if hit.memory else {hit.id}
        if episodes and episodes <= seen_episodes.keys():
            places = {seen_episodes[e] for e in episodes}
            at = min(places)
            turn = out[at]
            if hit.memory is not None and len(places) == 1 and turn.memory is None:
                stood_for[(turn.source, turn.id)] = hit.ref
                # The better of the two scores, whole: every factor of it stays shown.
                scores = replace(turn.scores, via=turn.ref)
                out[at] = replace(hit, scores=max(hit.scores, scores, key=lambda s: s.final))
            else:
                stood_for[(hit.source, hit.id)] = turn.ref
            continue
        for episode in episodes:
            seen_episodes.setdefault(episode, len(out))
        out.append(hit)
    return out


def with_provenance(store: Store, hits: list[Hit]) -> list[Hit]:
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
