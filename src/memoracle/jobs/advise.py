"""The advisor (`memoracle advise`, docs/lifecycle.md, "The advisor"): what a person may
want to tidy, read from the store and changing nothing — clusters of related memories (by
meaning with the embedder, by shared words without one), promotion candidates for
MEMORY.md's block (recalled often, long-lived, not in the block yet), stale memories,
near-duplicates (`Engine.duplicates`) and unresolved disputes (`Engine.pending`) — and
the promotions a person accepts applied (`apply_promotions`: audited, with a dry run)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np

from memoracle.engine import Engine, completion
from memoracle.lifecycle.scoring import NAME, PROMOTE_AT, MemoryScore, activation
from memoracle.text import fts_terms, stem
from memoracle.types import Dispute, DuplicateSet, Memory

LOOKED_AT = 500  # newest live memories the clusters are made of
COSINE = 0.6  # two memories this alike by meaning are related (the embedder's vectors)
JACCARD = 0.34  # … or sharing this share of their word stems (no embedder)
MIN_RECALLS = 3  # a promotion candidate was recalled at least this often
MIN_AGE_DAYS = 14  # … and said at least this long ago
STALE_DAYS = 60  # a stale memory was not recalled for this long
STALE_ACTIVATION = 0.2  # … and its activation fell below this (archived near the threshold)
SHOWN = 20  # items of each list, at most


@dataclass(frozen=True)
class Cluster:
    label: str
    memories: tuple[Memory, ...]


@dataclass(frozen=True)
class Candidate:
    memory: Memory
    recalls: int
    age_days: int
    score: float


@dataclass(frozen=True)
class Stale:
    memory: Memory
    idle_days: int
    activation: float


@dataclass
class Advice:
    method: str  # "embedding" | "lexical": how the clusters were made
    clusters: list[Cluster] = field(default_factory=list)
    promotions: list[Candidate] = field(default_factory=list)
    stale: list[Stale] = field(default_factory=list)
    duplicates: list[DuplicateSet] = field(default_factory=list)
    disputes: list[Dispute] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """`memoracle advise --json` (docs/json.md)."""
        return {
            "method": self.method,
            "clusters": [
                {"label": c.label, "memories": [_item(m) for m in c.memories]}
                for c in self.clusters
            ],
            "promotions": [
                {**_item(c.memory), "recalls": c.recalls, "age_days": c.age_days, "score": c.score}
                for c in self.promotions
            ],
            "stale": [
                {**_item(s.memory), "idle_days": s.idle_days, "activation": s.activation}
                for s in self.stale
            ],
            "duplicates": [
                {"keep": _item(g.keep), "merge": [_item(m) for m, _ in g.merge]}
                for g in self.duplicates
            ],
            "disputes": [
                {**_item(d.memory), "by": None if d.by is None else d.by.ref, "reason": d.reason}
                for d in self.disputes
            ],
        }

    def lines(self) -> list[str]:
        """The advice for a person, section by section."""
        out = [f"Clusters ({self.method}): {len(self.clusters)}"]
        for c in self.clusters:
            refs = ", ".join(m.ref for m in c.memories[:8])
            out.append(f"  {c.label} ({len(c.memories)}): {refs}")
        out.append(f"Promotion candidates for MEMORY.md: {len(self.promotions)}")
        out += [
            f"  {c.memory.ref} recalled {c.recalls}x, {c.age_days} days old: {_clip(c.memory.text)}"
            for c in self.promotions
        ]
        if self.promotions:
            refs = ",".join(c.memory.ref for c in self.promotions[:3])
            out.append(f"  accept with: memoracle advise --apply-promotions {refs}")
        out.append(f"Stale: {len(self.stale)}")
        out += [
            f"  {s.memory.ref} idle {s.idle_days} days (activation {s.activation}):"
            f" {_clip(s.memory.text)}"
            for s in self.stale
        ]
        out.append(f"Duplicates: {len(self.duplicates)} group(s) (memoracle dedup --fix)")
        out += [
            f"  {g.keep.ref} <- {', '.join(m.ref for m, _ in g.merge)}" for g in self.duplicates
        ]
        out.append(f"Disputes: {len(self.disputes)} (memoracle pending, memoracle resolve)")
        out += [f"  {d.memory.ref}: {_clip(d.memory.text)}" for d in self.disputes]
        return out


def _item(m: Memory) -> dict[str, object]:
    return {"id": m.ref, "kind": m.kind, "text": m.text}


def _clip(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def advise(engine: Engine) -> Advice:
    """Everything the advisor reports; reads only (vectors it embeds are not stored)."""
    scored = engine.score(seen_by=engine.owner)
    live = [m for m, _ in scored]
    newest = sorted(live, key=lambda m: (m.observed_at, m.id), reverse=True)[:LOOKED_AT]
    method, clusters = _clusters(engine, newest)
    return Advice(
        method=method,
        clusters=clusters[:SHOWN],
        promotions=_candidates(engine, scored)[:SHOWN],
        stale=_stale(engine, live)[:SHOWN],
        duplicates=engine.duplicates(),
        disputes=engine.pending(),
    )


def _candidates(engine: Engine, scored: list[tuple[Memory, MemoryScore]]) -> list[Candidate]:
    now = engine.clock.now()
    found = []
    for m, s in scored:
        total = s.total
        age = (now - m.observed_at).days
        in_block = m.kind == "guardrail" or "promoted" in m.details or total >= PROMOTE_AT
        done = m.kind == "task" and bool(m.details.get("done"))  # no longer to keep in mind
        if not (in_block or done) and m.access_count >= MIN_RECALLS and age >= MIN_AGE_DAYS:
            found.append(Candidate(m, m.access_count, age, round(total, 4)))
    return sorted(found, key=lambda c: (-c.recalls, -c.age_days, c.memory.id))


def _stale(engine: Engine, live: list[Memory]) -> list[Stale]:
    now = engine.clock.now()
    idle_since = now - timedelta(days=STALE_DAYS)
    found = []
    for m in live:
        if m.pinned or m.kind == "guardrail" or m.last_accessed_at > idle_since:
            continue
        a = activation(m, now, engine.settings.decay)
        if a < STALE_ACTIVATION:
            found.append(Stale(m, (now - m.last_accessed_at).days, round(a, 4)))
    return sorted(found, key=lambda s: (s.activation, s.memory.id))


def _clusters(engine: Engine, memories: list[Memory]) -> tuple[str, list[Cluster]]:
    """Related memories joined (single link) by meaning, or by shared word stems."""
    if len(memories) < 2:
        return ("embedding" if engine.searcher.embedder else "lexical"), []
    embedder = engine.searcher.embedder
    if embedder is not None:
        vectors = np.asarray(embedder.embed_documents([m.text for m in memories]))
        near = vectors @ vectors.T >= COSINE
        method = "embedding"
    else:
        words = [{stem(w) for w in fts_terms(m.text)} for m in memories]
        near = np.array([[_jaccard(a, b) >= JACCARD for b in words] for a in words])
        method = "lexical"
    groups = [g for g in _components(near) if len(g) > 1]
    linked = engine.entities_of([memories[i].id for g in groups for i in g])
    names = {e.id: e.name for e in engine.graph_entities()} if linked else {}
    clusters = []
    for g in groups:
        members = [memories[i] for i in g]
        named = Counter(names[e] for m in members for e in linked.get(m.id, ()) if e in names)
        clusters.append(Cluster(_label(members, named), tuple(members)))
    clusters.sort(key=lambda c: (-len(c.memories), c.label))
    return method, clusters


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _components(near: np.ndarray) -> list[list[int]]:
    seen: set[int] = set()
    groups = []
    for start in range(len(near)):
        if start in seen:
            continue
        group, todo = [], [start]
        seen.add(start)
        while todo:
            i = todo.pop()
            group.append(i)
            for j in np.flatnonzero(near[i]).tolist():
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        groups.append(sorted(group))
    return groups


def _label(memories: list[Memory], entities: Counter[str]) -> str:
    """A cluster's name: the entity of the knowledge graph its memories name most, else
    the capitalised name they say most, else their commonest word (ties: A to Z)."""
    names = Counter(n for m in memories for n in set(NAME.findall(" " + m.text)))
    words = Counter(w for m in memories for w in set(fts_terms(m.text)) if len(w) > 3)
    for counts in (entities, names, words):
        if counts:
            return str(min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0])
    return "(untitled)"


def apply_promotions(engine: Engine, refs: list[str], *, dry_run: bool) -> list[Memory]:
    """Promote `refs` to MEMORY.md's block from the next render (`completion.promote`:
    each audited `promote`); a dry run checks them and changes nothing."""
    if dry_run:
        return [engine.get(ref, scope=engine.owner) for ref in refs]
    return completion.promote(engine, refs, actor="advise")
