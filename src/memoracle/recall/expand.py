"""Entity expansion: the memories of the graph neighbours a query points to, as one more
ranked list for search to fuse (docs/retrieval.md, docs/graph.md).

Owns `named_entities` (which graph entities a query names, by the graph's own key:
"Anna", "anna", "Anna's" and "my wife Anna" all meet ``anna``; names of several words,
"Bank of America", too) and `expand` (the neighbours the query points to, and the
memories about them). Which rows a view may see is `store`'s (every lookup takes the
`View`); what a name's key is, is `graph.extract`'s; how the list weighs against the
lexical and vector lists, and how the query's meaning orders it, is `hybrid`'s.

Which neighbours: a query that names an entity and says more than the name ("Where does
Anna's sister work?") is read as asking about someone or something linked to it. The
query's best lexical matches that name the entity and share one of those other words
("Anna's sister Lea lives in Lyon": *sister*) point to the entities they name beside it
(Lea); those one relation away from the named entity, through a relation a memory the
view may see states, are the neighbours, in the order of the matches that point to
them. Their memories (newest first) that do not name the query's entity — those the
lexical search finds by the name itself — are the list ("Lea works at Globex": the
answer, which shares no word with the question).

A query that only names ("Anna", "what about Anna?") or whose other words match nothing
said next to the name ("Where does Anna work?" when no memory says "Anna" and "work"
together with another name) expands to nothing: following every relation of a name
that is in hundreds of memories would bury what the query asks for.

Cheap by construction: one key per query word (cached by the graph rules), one indexed
lookup for them all and a range lookup per word for longer names; then, only when a name
was found, the entities of the top `SUPPORT` lexical matches, one relation check, and
bounded lookups per neighbour (`PER_ENTITY` memories among its `SCAN` newest links).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memoracle.graph.extract import canonical_key
from memoracle.language.words import content_words, fold
from memoracle.lifecycle.slots import DEFAULT_SUBJECT
from memoracle.storage_types import View
from memoracle.store.protocols import StoreBackend
from memoracle.text import fts_terms

__all__ = ["Expansion", "expand", "named_entities"]

MAX_WORDS = 64  # query words looked at, from the start (a recall message may be long)
MAX_NAME_WORDS = 5  # as the graph reads names
MAX_NAMED = 5  # entities taken from one query
SUPPORT = 20  # the query's best lexical matches read for the neighbours they point to
MAX_NEIGHBOURS = 10
PER_ENTITY = 20  # memories taken per neighbour
SCAN = 200  # newest links of a neighbour looked at for those

# A word as the graph reads one, apostrophes kept so "Anna's" is one word.
_WORD = re.compile(r"[^\W_](?:[\w&+#.'’-]*[\w+#])?")


@dataclass(frozen=True)
class Expansion:
    """What a query named (`named`: entity ids), the `neighbours` it points to, and
    their memories (`memories`, ids) with the rank of the neighbour each is about
    (`tiers`, 0 for the first neighbour): the list is ordered by tier, newest first
    within one."""

    named: tuple[int, ...] = ()
    neighbours: tuple[int, ...] = ()
    memories: tuple[int, ...] = ()
    tiers: tuple[int, ...] = ()


def named_entities(store: StoreBackend, query: str) -> dict[int, str]:
    """The graph entities `query` names (id -> key), in order of mention, at most
    `MAX_NAMED`.

    Each of the first `MAX_WORDS` words, and each run of up to `MAX_NAME_WORDS` words
    that starts like a longer entity key, is keyed as the graph keys names
    (`graph.extract.canonical_key`), whatever its case. The speaker placeholder
    ("user") is no name."""
    words = _WORD.findall(query)[:MAX_WORDS]
    keyed = [canonical_key(word) for word in words]
    firsts = dict.fromkeys(k for k in keyed if k and k != DEFAULT_SUBJECT)
    if not firsts:
        return {}
    graph = store.graph
    wanted: dict[str, int] = {}  # key -> first position
    longer = graph.longer_keys([k for k in firsts if " " not in k], limit=50)
    if longer:
        starts = {key.split(" ", 1)[0] for key in longer}
        candidates = set(longer)
        for i, key in enumerate(keyed):
            if key not in starts:
                continue
            for size in range(2, MAX_NAME_WORDS + 1):
                if i + size > len(words):
                    break
                run = canonical_key(" ".join(words[i : i + size]))
                if run in candidates:
                    wanted.setdefault(run, i)
    for i, key in enumerate(keyed):
        if key in firsts:
            wanted.setdefault(key, i)
    ids = graph.ids_of(list(wanted))
    order = sorted(ids, key=lambda k: (wanted[k], -len(k)))
    found: dict[int, str] = {}
    for key in order:
        found.setdefault(ids[key], key)
    return dict(list(found.items())[:MAX_NAMED])


def expand(
    store: StoreBackend, query: str, view: View, *, lexical: Sequence[int], limit: int
) -> Expansion:
    """The memories `view` may see about the neighbours `query` points to (see the module
    docstring), at most `limit`; `lexical` is the query's lexical memory matches, best
    first."""
    named = named_entities(store, query)
    if not named:
        return Expansion()
    name_words = {word for key in named.values() for word in key.split()}
    words = {
        fold(w)
        for w in content_words(query)
        if fold(w) not in name_words and canonical_key(w) not in name_words
    }
    top = list(lexical[:SUPPORT])
    if not words or not top:
        return Expansion(tuple(named))
    graph = store.graph
    links = graph.entities_of(top)
    texts = {i: text for i, (text, _) in graph.memory_texts(top).items()}
    pointed: dict[int, None] = {}
    for memory_id in top:
        entities = links.get(memory_id, [])
        if not named.keys() & set(entities):
            continue
        if not words & {fold(w) for w in fts_terms(texts.get(memory_id, ""))}:
            continue
        for entity in entities:
            if entity not in named:
                pointed.setdefault(entity)
    related = graph.related(list(named), list(pointed), view)
    near = [e for e in pointed if e in related][:MAX_NEIGHBOURS]
    memories: dict[int, int] = {}
    for tier, entity in enumerate(near):
        for memory_id in graph.newest_memories(entity, view, limit=PER_ENTITY, scan=SCAN):
            memories.setdefault(memory_id, tier)
    if memories:
        naming = graph.entities_of(list(memories))
        memories = {m: t for m, t in memories.items() if not named.keys() & set(naming[m])}
    ranked = list(memories)[:limit]
    return Expansion(tuple(named), tuple(near), tuple(ranked), tuple(memories[m] for m in ranked))
