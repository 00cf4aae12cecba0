"""The lexical stage of a search: the question's lexical queries run over memories and
turns, strictest first (every content word, then any), until the lists hold a pool
of ids. Common words are scored over their newest matches only (`matches`). Reads the
store's index; what a requester may see is `store.index`'s rule (`View`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoracle.storage_types import LexicalQuery, Term, View, any_of
from memoracle.store.protocols import SearchIndex


@dataclass(frozen=True)
class LexicalLists:
    """The memories' and turns' ids the lexical stage found, best first; the queries it
    ran (`tried`) and those it did not need (`untried`); per (table, query) the id
    at and below which only the rarest words were scored (`cutoffs`)."""

    memories: list[int]
    episodes: list[int]
    tried: tuple[LexicalQuery, ...]
    untried: tuple[LexicalQuery, ...]
    cutoffs: dict[tuple[str, LexicalQuery], int]


def lexical_lists(
    index: SearchIndex,
    queries: Sequence[LexicalQuery],
    view: View,
    *,
    turns: bool,
    pool: int,
    rows: int,
) -> LexicalLists:
    """Run `queries` in order over memories (and turns, when `turns`), each new id added
    after those found already, until the two lists hold `pool` ids between them; `rows`
    is `matches`' bound on the rows one query scores."""
    memories: list[int] = []
    episodes: list[int] = []
    tried: list[LexicalQuery] = []
    cutoffs: dict[tuple[str, LexicalQuery], int] = {}
    for query in queries:
        tried.append(query)
        found = matches(index, "memories", query, view, cutoffs, pool=pool, rows=rows)
        memories += [i for i in found if i not in memories]
        if turns:
            found = matches(index, "episodes", query, view, cutoffs, pool=pool, rows=rows)
            episodes += [i for i in found if i not in episodes]
        if len(memories) + len(episodes) >= pool:
            break
    return LexicalLists(memories, episodes, tuple(tried), tuple(queries[len(tried) :]), cutoffs)


def matches(
    index: SearchIndex,
    table: str,
    query: LexicalQuery,
    view: View,
    cutoffs: dict[tuple[str, LexicalQuery], int] | None = None,
    *,
    pool: int,
    rows: int,
) -> list[int]:
    """Ids in `table` matching `query`, best BM25 first, at most `pool`.

    BM25 scores every row that matches, so words found in tens of thousands of rows
    would cost tens of milliseconds. When more than `rows` rows match, the query runs
    over its `rows` newest matches only and, for OR, its rarest words (together in at
    most `rows` rows), which say the most, run over all rows as well: a strong match to
    an old item stays reachable; only old items that share nothing but common words
    with the query are left to the vector search (docs/retrieval.md). `cutoffs` learns,
    per (table, query), the id at and below which only the rarest words were
    scored."""
    run = index.lexical_memories if table == "memories" else index.lexical_episodes
    since = index.newest_matches_from(table, query, count=rows)
    if since is None:
        return [i for i, _ in run(query, view, limit=pool)]
    if cutoffs is not None:
        cutoffs[(table, query)] = since
    found = run(query, view, limit=pool, min_id=since)
    if query.any:
        rare = _rarest(index, table, query.terms, rows)
        if rare:
            found += run(any_of(rare), view, limit=pool)
    best: dict[int, float] = {}
    for item_id, score in found:  # FTS5's BM25 is negative: lower is better
        best[item_id] = min(score, best.get(item_id, score))
    return sorted(best, key=best.__getitem__)[:pool]


def _rarest(index: SearchIndex, table: str, terms: Sequence[Term], rows: int) -> list[Term]:
    """The rarest of `terms`, rarest first, while together they match at most `rows`
    rows of `table`."""
    counts = [index.match_count(table, LexicalQuery((t,)), cap=rows) for t in terms]
    rare: list[Term] = []
    total = 0
    for count, term in sorted(zip(counts, terms, strict=True), key=lambda p: p[0]):
        if total + count > rows:
            break
        rare.append(term)
        total += count
    return rare
