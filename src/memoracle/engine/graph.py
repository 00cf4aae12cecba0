"""The knowledge graph's side of the engine: each stored memory read for entities and
relations (`read_graph`), the backlog the nightly run catches up, and the graph reads
(`graph_entities`, `graph_relations`, `graph_show`).
"""

from __future__ import annotations

import logging
from datetime import datetime

from memoracle.engine.scope import view_for
from memoracle.engine.state import EngineState
from memoracle.errors import (
    InvalidInput,
    NotFound,
)
from memoracle.graph import extract as graph_rules
from memoracle.types import Entity, EntityView, Relation, Scope

log = logging.getLogger(__name__)


def read_graph(
    st: EngineState,
    memory_id: int,
    text: str,
    *,
    lang: str | None,
    speaker: str | None,
    now: datetime,
) -> None:
    """Store the entities and relations `text` names, linked to `memory_id`. With an
    ontology file that does not load, the memory is left unread (the nightly graph
    step names the problem) and capture goes on."""
    try:
        ontology = st.ontology
    except InvalidInput as exc:
        log.warning("knowledge graph not updated: %s", exc)
        return
    found = graph_rules.extract(text, lang=lang, speaker=speaker, ontology=ontology)
    graph = st._store.graph
    ids = {e.key: graph.entity(e.key, e.name, e.type, now=now) for e in found.entities}
    relations = [
        graph.relation(ids[r.source], r.relation, ids[r.target], now=now)
        for r in found.relations
        if r.source in ids and r.target in ids
    ]
    graph.link(memory_id, entities=ids.values(), relations=relations)


def read_graph_backlog(st: EngineState) -> int:
    """`Engine.read_graph_backlog`: how many live memories never read for the graph were
    read; `InvalidInput` for an ontology file that does not load (before any write)."""
    st.ontology  # noqa: B018 - fail before any write, naming the file and line
    done = 0
    while ids := st._store.graph.unread(limit=500):
        now = st.clock.now()
        with st._store.transaction():
            for memory in st._store.memories.get_many(ids):
                speaker = memory.subject if memory.subject not in (None, "user") else None
                read_graph(st, memory.id, memory.text, lang=memory.lang, speaker=speaker, now=now)
        done += len(ids)
    return done


def graph_entities(
    st: EngineState, *, type_: str | None = None, limit: int = 1_000_000, scope: Scope | None = None
) -> list[Entity]:
    """Entities named by live memories that `scope` may see, most named first."""
    return st._store.graph.entities(type_=type_, limit=limit, view=view_for(st.settings, scope))


def graph_relations(
    st: EngineState, *, limit: int = 1_000_000, scope: Scope | None = None
) -> list[Relation]:
    """Relations stated by live memories that `scope` may see, most stated first."""
    return st._store.graph.relations(limit=limit, view=view_for(st.settings, scope))


def graph_show(
    st: EngineState, name: str, *, limit: int = 20, scope: Scope | None = None
) -> EntityView:
    """One entity by any of its names ("Anna", "my wife Anna", "Anna's"): its type,
    aliases, relations and the newest live memories naming it, all as `scope` sees
    them (an entity only others' memories name is not found)."""
    view = view_for(st.settings, scope)
    key = graph_rules.canonical_key(name)
    entity = st._store.graph.find(key, view=view) if key else None
    if entity is None:
        raise NotFound(f"No entity named {name!r}. Try: memoracle graph entities")
    graph = st._store.graph
    memories = st._store.memories.get_many(graph.memories_of([entity.id], limit=limit, view=view))
    return EntityView(entity, tuple(graph.relations(entity=entity.id, view=view)), tuple(memories))
