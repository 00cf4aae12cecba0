"""The cold tier's policy: which memories go to the archive now (`plan_archive`) and
moving them there (`archive`). Restoring is the engine's."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memoracle.engine import Engine
from memoracle.lifecycle.scoring import activation, rank
from memoracle.types import CAP_EXEMPT_KINDS, Memory

CENTURY_DAYS = 36_524  # a longer --min-age-days means the same: nothing is old enough


@dataclass(frozen=True)
class ArchiveCandidate:
    memory: Memory
    reason: str  # below_threshold | over_max_facts | superseded_retention | expired
    score: float | None


def plan_archive(engine: Engine, *, min_age_days: int = 7) -> list[ArchiveCandidate]:
    """What would go to the cold tier now (docs/lifecycle.md): active memories whose activation
    fell below `lifecycle.prune_threshold` (and said at least `min_age_days` ago), the
    lowest-scored beyond `lifecycle.max_facts`, superseded ones older than the retention,
    and live memories whose time to live ran out (`remember --ttl/--until`). Guardrails
    and pinned memories are never archived for their score or age, only when they
    expire: the person who gave the expiry asked for it."""
    now = engine.clock.now()
    life, decay = engine.settings.lifecycle, engine.settings.decay
    old_enough = now - timedelta(days=min(min_age_days, CENTURY_DAYS))
    chosen = {m.id: ArchiveCandidate(m, "expired", None) for m in engine.expired_memories(now)}
    active = [
        m for m in engine.all_memories("active") if counts_against_cap(m) and m.id not in chosen
    ]
    for memory in active:
        if (
            memory.observed_at <= old_enough
            and (a := activation(memory, now, decay)) < life.prune_threshold
        ):
            chosen[memory.id] = ArchiveCandidate(memory, "below_threshold", round(a, 4))
    remaining = [m for m in active if m.id not in chosen]
    if len(remaining) > life.max_facts:
        by_id = {m.id: m for m in remaining}
        for s in rank(remaining, now, decay)[life.max_facts :]:
            chosen[s.memory_id] = ArchiveCandidate(by_id[s.memory_id], "over_max_facts", s.total)
    retention = now - timedelta(days=life.superseded_retention_days)
    for memory in engine.all_memories("superseded"):
        changed = memory_changed_at(engine, memory)
        if changed is not None and changed <= retention:
            chosen[memory.id] = ArchiveCandidate(memory, "superseded_retention", None)
    return sorted(chosen.values(), key=lambda c: c.memory.id)


def counts_against_cap(memory: Memory) -> bool:
    """Whether `memory` may be archived to hold `lifecycle.max_facts`, and so counts
    against it: not pinned, not a guardrail (`Engine.capped_count` counts the same
    ones, for health)."""
    return not memory.pinned and memory.kind not in CAP_EXEMPT_KINDS


def archive(
    engine: Engine, candidates: Iterable[ArchiveCandidate], *, actor: str, log: bool = True
) -> int:
    """Move `candidates` to the cold tier and append them to HOME/archive/YYYY-MM-DD.jsonl
    (not with `log=False`: a dry run's scratch store); the caller has taken a backup.
    Returns how many moved."""
    chosen = list(candidates)
    if not chosen:
        return 0
    now = engine.clock.now()
    moved = engine.archive_memories(
        [(c.memory.id, c.reason, c.score) for c in chosen], now=now, actor=actor
    )
    if not log:
        return moved
    folder = engine.settings.home / "archive"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{now.astimezone(engine.zone):%Y-%m-%d}.jsonl", "a", encoding="utf-8") as f:
        for c in chosen:
            row = engine.archived(c.memory.id)
            if row is not None:
                line = {
                    "id": row.ref,
                    "archived_at": row.archived_at.isoformat(),
                    "reason": row.reason,
                    "score": row.score,
                    "record": row.record,
                }
                f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    return moved


def memory_changed_at(engine: Engine, memory: Memory) -> datetime | None:
    entries = engine.history(memory.id)
    changes = [e.at for e in entries if e.action in ("supersede", "resolve")]
    return max(changes) if changes else None
