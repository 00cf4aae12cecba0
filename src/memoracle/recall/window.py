"""The time-window stage: a question about a time only ("What did I do yesterday?",
"qu'est-ce que j'ai fait la semaine dernière ?", "¿qué hice el lunes?", "что я делал на
прошлой неделе?") is answered with what is dated in that window, not searched by its
words (which name nothing but the time, so lexical search finds nothing or the wrong
turns that happen to say "yesterday").

`time_only` decides, from the question's words once the time it names is taken out;
`window_hits` reads the window: the memories dated in it (an event by when it happened,
anything else by when it was said) and the turns said in it, that the view may see,
memories first, each in time order. Which window a question names is the date
grammar's (`capture.dates`, resolved at the question's own time by the caller).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memoracle.language.words import content_words, fold, query_words
from memoracle.recall.hits import hit, with_provenance
from memoracle.storage_types import View
from memoracle.store.protocols import StoreBackend
from memoracle.types import Hit, Scores

__all__ = ["time_only", "window_hits"]


def time_only(query: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether `query`, with the time mentions at `spans` blanked, is left with nothing
    but stop words and the words of a question about a time (`window` in the query
    words: "do", "happened", "fait", "hice", "делал"), in any language."""
    if not spans:
        return False
    blanked = query
    for start, end in spans:
        blanked = blanked[:start] + " " * (end - start) + blanked[end:]
    generic = frozenset().union(*(words.window for words in query_words().values()))
    return all(fold(word) in generic for word in content_words(blanked))


def window_hits(
    store: StoreBackend, view: View, start: datetime, end: datetime, *, k: int
) -> list[Hit]:
    """What `view` may see of [start, end): memories first, then the turns said then
    that no listed memory came from (none under a kind filter), each in time order; at
    most `k` in all. A hit's
    score falls with its place, so the order reads as a ranking."""
    memory_ids, episode_ids = store.index.in_window(view, start, end, limit=k)
    if view.kinds:  # a kind filter asks for memories: a turn has no kind
        episode_ids = []
    memories = sorted(
        store.memories.get_many(memory_ids), key=lambda m: (m.valid_from or m.observed_at, m.id)
    )
    told = {e for m in memories for e in m.episode_ids}
    episodes = sorted(
        (e for e in store.episodes.get_many(episode_ids) if e.id not in told),
        key=lambda e: (e.at, e.id),
    )
    found = [(m.id, m, None) for m in memories] + [(e.id, None, e) for e in episodes]
    hits = []
    for place, (item_id, memory, episode) in enumerate(found[:k]):
        score = 1.0 / (place + 1)
        scores = Scores(None, None, None, rrf=score, recency=1.0, activation=1.0, final=score)
        source = "memory" if memory is not None else "episode"
        hits.append(hit(source, item_id, memory, episode, scores))
    return with_provenance(store, hits)
