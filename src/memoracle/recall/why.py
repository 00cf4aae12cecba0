"""Why a search did not return an item it could see: the stage where it fell out, named.

`explain` asks this once the item passed the filters (status, scope, kind, held turns,
which are the engine's to check). The search's own `Trace` says what each stage kept;
the few probes here (the item's lexical rank over more rows, its stored vector's
similarity) say why the item was not kept, in the search's own terms: no lexical match,
a match beyond the rows each list keeps, no vector yet, not among the nearest, a fused
score below the candidates scored, faded, the same evidence as a better hit, a
near-repeat MMR left out, a hit that does not touch the query (the per-hit floor,
`relevance`). The doors print the sentences as they are.
"""

from __future__ import annotations

from memoracle.recall import hybrid
from memoracle.recall.hybrid import Searcher
from memoracle.recall.lexical import matches
from memoracle.recall.outcome import Key, Trace
from memoracle.recall.relevance import why_dropped
from memoracle.recall.vectors import stored_vectors
from memoracle.storage_types import LexicalQuery, View

PROBE_ROWS = 10_000  # how deep `explain` looks for an item's own lexical rank, at most


def missing(
    searcher: Searcher, trace: Trace, key: Key, *, view: View, content_hash: str
) -> list[str]:
    """The reasons `key` (an item `view` may see) is not among the search's hits."""
    lexical = _lexical(searcher, trace, key, view, content_hash)
    vector = _vector(searcher, trace, key, content_hash)
    lines = [lexical, vector]
    if key not in trace.ranked:  # in no list: the two reasons above are the whole story
        return ["not a candidate: in none of the lists fused (lexical, vector, graph)", *lines]
    if key in trace.graph:
        lines.append("proposed by the graph (a memory about an entity the query names)")
    if key not in trace.scored:
        order = sorted(trace.ranked, key=trace.ranked.__getitem__, reverse=True)
        lines.append(
            f"fused score (RRF) {trace.ranked[key]:.4f} ranks {order.index(key) + 1} of "
            f"{len(order)} candidates; only the best {len(trace.scored)} are scored"
        )
    elif key in trace.faded:
        weighting = searcher.settings.search
        lines.append(
            f"faded: activation {trace.faded[key]:.3f} is under the threshold "
            f"{weighting.activation_threshold}, and the match is weak (no lexical or vector "
            "rank near the top), so it is dropped"
        )
    elif key in trace.stood_for:
        lines.append(
            f"the same evidence as {trace.stood_for[key]}, which ranks higher: a memory and "
            "the turn it was said in are one hit"
        )
    elif key in trace.kept:
        lines.append("left out by MMR: a near-repeat of better hits, beyond the k asked for")
    else:  # scored, not faded, not merged, not left for MMR: the per-hit floor dropped it
        floor = searcher.settings.search.hit_floor
        lines.append(why_dropped(_similarity(searcher, trace, content_hash), floor))
    return lines


def _lexical(searcher: Searcher, trace: Trace, key: Key, view: View, content_hash: str) -> str:
    """Whether the item matches the query's words, and if so why no list kept it. Costs
    what the search's own lexical stage costs, at most: no query's matches are ranked
    beyond the rows the search ranked (`lexical.matches`); an item older than the rows
    a common word was scored over is told so without ranking any."""
    if key in trace.lexical:
        return f"lexical (BM25) rank {trace.lexical[key]}"
    if not trace.queries:
        return "no lexical match: the query has no content word to match"
    source, item_id = key
    table = "memories" if source == "memory" else "episodes"
    index = searcher.store.index
    words = ", ".join(t.text for t in trace.queries[0].terms)
    unmatched = f"no lexical match: it shares none of the query's content words (as stems: {words})"
    if not _searched(searcher, key, view, content_hash):
        return unmatched
    for query in trace.queries:
        if not index.matches(table, query, item_id):  # ranks nothing in vain
            continue
        cutoffs = dict(trace.cutoffs)
        if _older(cutoffs, table, query, item_id):  # nothing to rank: told so at once
            return _common(query)
        # the search's own ranking of this query, only deeper
        found = matches(
            index, table, query, view, cutoffs, pool=PROBE_ROWS, rows=hybrid.LEXICAL_ROWS
        )
        if item_id in found:
            return (
                f"matches {_shown(query)} at lexical rank {found.index(item_id) + 1}, below "
                f"the best {hybrid.POOL} each list keeps"
            )
        if _older(cutoffs, table, query, item_id):
            return _common(query)
    for query in trace.untried:
        if index.matches(table, query, item_id):
            return (
                f"matches the looser {_shown(query)}, which the search did not run: the "
                f"stricter ones had found {hybrid.POOL} items already"
            )
    return unmatched


def _older(
    cutoffs: dict[tuple[str, LexicalQuery], int], table: str, query: LexicalQuery, item_id: int
) -> bool:
    """Whether `query` was scored over its newest matches only, and the item is older."""
    since = cutoffs.get((table, query))
    return since is not None and item_id <= since


def _common(query: LexicalQuery) -> str:
    return (
        f"matches {_shown(query)} only through words common in the store: they are "
        f"scored over their {hybrid.LEXICAL_ROWS} newest matches, and this item is older"
    )


def _searched(searcher: Searcher, key: Key, view: View, content_hash: str) -> bool:
    """Whether the lexical stage searches the item at all under `view` (a memory the
    view holds; a turn that is a message the view holds): one row looked up."""
    index = searcher.store.index
    source, item_id = key
    if source == "memory":
        return (item_id, content_hash) in index.memories_with_hashes([content_hash], view)
    return item_id in index.visible_episodes([item_id], view)


def _shown(query: LexicalQuery) -> str:
    joiner = " or " if query.any else " and "
    return "'" + joiner.join(t.text + ("*" if t.prefix else "") for t in query.terms) + "'"


def _similarity(searcher: Searcher, trace: Trace, content_hash: str) -> float | None:
    """The item's cosine to the query, when both have a vector."""
    embedder = searcher.embedder
    if embedder is None or trace.query_vector is None:
        return None
    stored = stored_vectors(searcher.store.index, embedder.model_id, embedder.dim, [content_hash])
    return float(stored[content_hash] @ trace.query_vector) if content_hash in stored else None


def _vector(searcher: Searcher, trace: Trace, key: Key, content_hash: str) -> str:
    """Whether the item has a vector, and if so how near it is to the query's."""
    if key in trace.vector:
        return f"vector rank {trace.vector[key]}"
    embedder = searcher.embedder
    if embedder is None or trace.query_vector is None:
        return "no vector search"
    stored = stored_vectors(searcher.store.index, embedder.model_id, embedder.dim, [content_hash])
    if content_hash not in stored:
        return f"no vector yet for {embedder.model_id} (memoracle reindex embeds it)"
    similarity = float(stored[content_hash] @ trace.query_vector)
    if similarity <= 0.0:
        return (
            f"cosine similarity {similarity:.3f}: no relation to the query (the vector "
            "search keeps positive similarities only)"
        )
    if trace.nearest_floor is not None and similarity < trace.nearest_floor:
        return (
            f"not among the {hybrid.VECTOR_POOL} nearest vectors (cosine similarity "
            f"{similarity:.3f}; the last of them {trace.nearest_floor:.3f})"
        )
    return (
        f"cosine similarity {similarity:.3f}, yet not in the vector list: nearer items filled "
        f"it ({hybrid.POOL} a list), or the approximate (HNSW) search passed it by"
    )
