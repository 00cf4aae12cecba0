"""What a person browsing their memory reads, one call per page (`memoracle ui`): the
memories filtered and paged, one memory with where it came from and what became of it,
the recall block as the agent would get it with each line's reasons, and what waits for
a person (held writes, disputes, duplicates).

Every function takes the asker's scope and shows only what it may see (docs/scopes.md):
the store's queries carry the rule (`view_for`) or each item is checked (`can_see`).
Nothing here writes, not even the recall boost.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memoracle.engine import memories, search, upkeep
from memoracle.engine.scope import can_see, view_for
from memoracle.engine.state import EngineState
from memoracle.lifecycle import scoring
from memoracle.storage_types import GRAPH_SAMPLE, AuditEntry, Filter, HeldWrite
from memoracle.types import (
    LIVE,
    Dispute,
    DuplicateSet,
    Entity,
    Episode,
    Explanation,
    Memory,
    RecallBlock,
    RecallLine,
    Relation,
    Scope,
)

__all__ = [
    "GRAPH_SAMPLE", "Detail", "Filter", "Page", "Review", "SLOT_REASONS", "detail", "entities",
    "generation", "line_reasons", "memories_page", "recall_preview", "relations",
    "review", "subjects",
]  # fmt: skip

MAX_PAGE = 200  # memories on one page at most
AUDIT_SHOWN = 100  # audit entries on one memory's page
# Review's duplicates: among what came since the last nightly dedup, the newest this many
# live memories at most, each against the store (as health's duplicate rate samples).
DUPLICATES_SAMPLE = 200


@dataclass(frozen=True)
class Page:
    """One page of memories, each with its activation now; `more`: a next page exists."""

    items: tuple[tuple[Memory, float], ...]
    more: bool
    now: datetime


@dataclass(frozen=True)
class Detail:
    """One memory as its page shows it."""

    memory: Memory
    activation: float
    turns: tuple[Episode, ...]  # the turns it came from that the asker may see
    supersedes: tuple[Memory, ...]  # what it replaced
    superseded_by: Memory | None  # what replaced it
    history: tuple[AuditEntry, ...]  # its audit entries, newest first
    why: Explanation | None  # why it ranks where it does for the message asked, if any


@dataclass(frozen=True)
class Review:
    """What waits for a person, as the asker may see it."""

    held: tuple[HeldWrite, ...]  # writes the write audit held back, waiting
    disputes: tuple[Dispute, ...]  # disputed memories, then a "forget …" that fit several
    duplicates: tuple[DuplicateSet, ...] | None  # what the next nightly would merge (if asked)


def generation(st: EngineState) -> tuple[int, int]:
    """What changes whenever the store does: another connection's commit (SQLite's
    data_version) or this one's own write (its total_changes). A read that depends on
    the store alone (no clock) gives the same answer all through one generation."""
    return st._store.maintenance.change_marker()


def memories_page(
    st: EngineState, wanted: Filter, *, page: int = 1, size: int = 50, scope: Scope | None = None
) -> Page:
    """The `page`-th `size` memories (1-based) `scope` sees that fit `wanted`."""
    size = max(1, min(size, MAX_PAGE))
    now = st.clock.now()
    view = view_for(st.settings, scope)
    ids = st._store.browse.page(view, wanted, limit=size + 1, offset=(max(page, 1) - 1) * size)
    found = st._store.memories.get_many(ids[:size])
    items = tuple((m, scoring.activation(m, now, st.settings.decay)) for m in found)
    return Page(items, len(ids) > size, now)


def subjects(st: EngineState, *, scope: Scope | None = None) -> list[tuple[str, int]]:
    """Whom the live memories `scope` sees are about, most first (the subject filter)."""
    return st._store.browse.subjects(view_for(st.settings, scope))


def entities(
    st: EngineState, *, type_: str | None = None, limit: int = 300, scope: Scope | None = None
) -> list[Entity]:
    """The entities the newest live memories `scope` sees name (`GRAPH_SAMPLE` of them,
    so the graph page costs the same at any size), most named among them first."""
    return st._store.browse.entities(view_for(st.settings, scope), type_=type_, limit=limit)


def relations(st: EngineState, *, limit: int = 300, scope: Scope | None = None) -> list[Relation]:
    """The relations those newest memories state, most stated among them first."""
    return st._store.browse.relations(view_for(st.settings, scope), limit=limit)


def detail(
    st: EngineState, ref: str | int, *, query: str = "", scope: Scope | None = None
) -> Detail:
    """Memory `ref` as `scope` sees it (`NotFound` as for a missing id otherwise): its
    turns, what it superseded and what superseded it (each only when `scope` sees it),
    its audit history and, with `query`, `explain`'s reasons for that message."""
    memory = memories.get(st, ref, scope=scope)
    now = st.clock.now()
    older = st._store.memories.get_many(st._store.browse.superseded(memory.id))
    newer = (
        st._store.memories.get(memory.superseded_by) if memory.superseded_by is not None else None
    )
    why = search.explain(st, memory.ref, query=query, scope=scope) if query.strip() else None
    return Detail(
        memory=memory,
        activation=scoring.activation(memory, now, st.settings.decay),
        turns=tuple(memories.episodes_of(st, memory, scope=scope)),
        supersedes=tuple(m for m in older if can_see(st.settings, scope, m.scope)),
        superseded_by=newer if newer and can_see(st.settings, scope, newer.scope) else None,
        history=tuple(st._store.audit.entries(memory_id=memory.id, limit=AUDIT_SHOWN)),
        why=why,
    )


def recall_preview(
    st: EngineState, message: str, *, budget: int | None = None, scope: Scope | None = None
) -> RecallBlock:
    """The block `recall` would inject for `message`, exactly, without its side effect:
    no memory gets a recall boost for being previewed."""
    return search.recall(st, message, budget=budget, scope=scope, boost=False)


SLOT_REASONS = {
    "answer": "holds the current value of what the message asks about",
    "guardrail": "a guardrail: every one the scope sees leads the block",
    "fresh": "fresh: stored within recall.fresh_hours",
    "search": "a search hit for the message",
}


def line_reasons(line: RecallLine) -> tuple[str, ...]:
    """Why `line` is in the block: its slot, then the search's signals for it, as
    `explain` words them (when the message found it too)."""
    reasons = [SLOT_REASONS[line.slot], f"{line.tokens} tokens"]
    if line.hit is not None:
        sc = line.hit.scores
        reasons.append(
            f"lexical (BM25) rank {sc.lexical_rank}" if sc.lexical_rank else "no lexical match"
        )
        if sc.vector_rank:
            reasons.append(f"vector rank {sc.vector_rank}, cosine similarity {sc.similarity:.3f}")
        else:
            reasons.append("not among the nearest vectors")
        reasons.append(f"rank fusion (RRF) {sc.rrf:.4f}, final score {sc.final:.4f}")
        reasons.append(f"recency weight {sc.recency:.3f}, activation weight {sc.activation:.3f}")
    return tuple(reasons)


def review(st: EngineState, *, scope: Scope | None = None, duplicates: bool = False) -> Review:
    """Held writes waiting, disputes (and the memories a "forget …" fitted along with
    others) and, with `duplicates`, the near-duplicates the next nightly would merge
    (among the newest `DUPLICATES_SAMPLE` it has not compared yet: seconds of work),
    only those `scope` sees."""
    held = [
        h for h in memories.held_writes(st, waiting=True) if can_see(st.settings, scope, h.scope)
    ]
    disputes = [d for d in upkeep.pending(st) if can_see(st.settings, scope, d.memory.scope)]
    if not duplicates:  # the dedup score over even a few hundred memories takes seconds
        return Review(tuple(held), tuple(disputes), None)
    last = st._store.runs.latest("nightly:dedup", status="ok")
    through = (last.counts.get("through_id") if last else None) or 0
    newest = st._store.memories.id_before_newest(DUPLICATES_SAMPLE, LIVE)
    groups = [
        g
        for g in upkeep.duplicates(st, after=max(through, newest))
        if can_see(st.settings, scope, g.keep.scope)
        and all(can_see(st.settings, scope, m.scope) for m, _ in g.merge)
    ]
    return Review(tuple(held), tuple(disputes), tuple(groups))
