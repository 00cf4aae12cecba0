"""The per-hit floor: a hit stays only when it touches the query.

The query as a whole may clear the noise floor (`hits.unsupported`) on the strength of
one good match, and fusion then ranks every candidate the vector search looked up, the
store's unrelated items among them ("Louvre" finding "I'm allergic to peanuts" at cosine
0.035). Here each hit is asked for a reason of its own (`reason`): it shares a word with
the query (a lexical rank), the graph proposed it (an entity the query names), it lies
inside the time the query names, or it is at least `search.hit_floor` similar in meaning
(cosine). A memory and the turns it came from are one piece of evidence (as
`hits.dedup_sources` merges them): one of them touching the query keeps them all. A turn
that gained from its neighbours (`evidence.spread_to_neighbours`) and is said just
before or after a turn that touches the query is kept as well: a good hit is often half
of an exchange, its answer sharing no word with the question. Everything else is
dropped, and why is said in the words `explain` prints (docs/retrieval.md, "The per-hit
floor"). Removing hits never reorders the others. Pure: hits in, hits out.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from memoracle.types import Hit

Key = tuple[str, int]  # ("memory" | "episode", id)
OFF = -1.0  # a floor at or below this keeps every hit (as `search.similarity_floor`)


class Span(Protocol):
    """The time a query names (`hybrid.TimeWindow`): from `start`, up to `end`."""

    @property
    def start(self) -> datetime: ...

    @property
    def end(self) -> datetime: ...


def reason(
    hit: Hit, floor: float, graph: Collection[int] = (), window: Span | None = None
) -> str | None:
    """Why `hit` touches the query on its own, or None: a lexical match, the graph's
    proposal, the time the query names, a cosine at or above `floor`."""
    scores = hit.scores
    if scores.lexical_rank is not None:
        return f"shares a word with the query (lexical rank {scores.lexical_rank})"
    if hit.source == "memory" and hit.id in graph:
        return "proposed by the graph (an entity the query names)"
    if window is not None and window.start <= hit.at < window.end:
        return "inside the time the query names"
    if scores.similarity is not None and scores.similarity >= floor:
        return f"close in meaning (cosine {scores.similarity:.3f} ≥ search.hit_floor {floor:g})"
    return None


def touching(
    hits: Sequence[Hit], floor: float, graph: Collection[int] = (), window: Span | None = None
) -> list[Hit]:
    """The hits that touch the query, in their order (`graph`: the memory ids the
    graph proposed; `window`: the time the query names). A floor at or below OFF keeps
    everything."""
    if floor <= OFF:
        return list(hits)
    group = _groups(hits)
    touched = {group[(h.source, h.id)] for h in hits if reason(h, floor, graph, window)}
    turns = {h.id: h for h in hits if h.episode is not None}
    touched |= {  # a turn beside one that touches, which gained from it
        group[(h.source, h.id)]
        for h in hits
        if h.episode is not None and h.scores.neighbours > 0 and _next_to(h, turns, touched, group)
    }
    return [h for h in hits if group[(h.source, h.id)] in touched]


def why_dropped(similarity: float | None, floor: float) -> str:
    """The sentence `explain` prints for an item the floor dropped: it shared no word
    with the query (or it would have been kept), and its cosine, if it had one."""
    meaning = (
        f"its cosine {similarity:.3f} is under the per-hit floor search.hit_floor = {floor:g}"
        if similarity is not None
        else f"it is not among the nearest vectors (search.hit_floor = {floor:g})"
    )
    return (
        "dropped by the per-hit floor: it shares no word with the query, the graph did not "
        f"propose it, it lies outside any time the query names, {meaning}, and neither its "
        "memory or turn nor a turn beside it touches the query"
    )


def _groups(hits: Sequence[Hit]) -> dict[Key, Key]:
    """Each hit's piece of evidence, named by one of its keys: a memory and the turns
    among `hits` it came from are one (joined across memories sharing a turn)."""
    parent: dict[Key, Key] = {(h.source, h.id): (h.source, h.id) for h in hits}

    def root(key: Key) -> Key:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for h in hits:
        if h.memory is None:
            continue
        for episode in h.memory.episode_ids:
            turn = ("episode", episode)
            if turn in parent:
                parent[root(turn)] = root(("memory", h.id))
    return {key: root(key) for key in parent}


def _next_to(hit: Hit, turns: dict[int, Hit], touched: set[Key], group: dict[Key, Key]) -> bool:
    """Whether the turn just before or after `hit`'s, in its session, touches the query."""
    assert hit.episode is not None
    for step in (-1, 1):
        other = turns.get(hit.id + step)
        if (
            other is not None
            and other.episode is not None
            and other.episode.session_id == hit.episode.session_id
            and group[("episode", other.id)] in touched
        ):
            return True
    return False
