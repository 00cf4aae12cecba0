"""The stable JSON shapes of the engine's values: memories, episodes, hits, recall
blocks, entities, relations, held writes, audit entries, scores, stats.

One function per value type; the doors (and the nightly's JSONL exports) call these and
never build dicts of their own, so the CLI, MCP and the files agree on the fields. A
value whose JSON is simply its fields (a scope, stats, the index's state, a job's plain
report) goes through `fields`, the one way such a shape is made.
docs/json.md documents them. The reports of jobs and doors are `reports`'.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from pathlib import PurePath
from typing import Any

from memoracle.lifecycle.scoring import MemoryScore
from memoracle.storage_types import AuditEntry, HeldWrite
from memoracle.types import (
    CaptureResult,
    Dispute,
    Entity,
    Episode,
    Explanation,
    Hit,
    IndexStatus,
    IngestReport,
    InitReport,
    Memory,
    RecallBlock,
    Relation,
    Scope,
    Stats,
)

JSON_VERSION = 1


def envelope(**fields: Any) -> dict[str, Any]:
    """A top-level `--json` answer: always an object, always with the format version."""
    return {"version": JSON_VERSION, **fields}


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def fields(value: Any) -> dict[str, Any]:
    """A dataclass as JSON: its fields in order, nested dataclasses as objects, a time
    (a field's own value) in ISO 8601 and a path as a string."""
    return asdict(value, dict_factory=_plain)


def _plain(items: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        key: value.isoformat()
        if isinstance(value, datetime)
        else str(value)
        if isinstance(value, PurePath)
        else value
        for key, value in items
    }


def status(scope: Scope, stats: Stats, index: IndexStatus) -> dict[str, Any]:
    """What a status answer of the warm server and the MCP door shares: the scope asked
    for, its `stats` and the vector index's state."""
    return {"scope": fields(scope), "stats": fields(stats), "index": fields(index)}


def memory(m: Memory, *, episodes: list[Episode] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": m.ref,
        "kind": m.kind,
        "text": m.text,
        "status": m.status,
        "layer": m.layer,
        "subject": m.subject,
        "predicate": m.predicate,
        "object": m.object,
        "dates": {
            "created_at": _time(m.created_at),
            "observed_at": _time(m.observed_at),
            "valid_from": _time(m.valid_from),
            "valid_to": _time(m.valid_to),
            "due_at": _time(m.due_at),
            "last_accessed_at": _time(m.last_accessed_at),
            "expires_at": _time(m.expires_at),
        },
        "scores": {
            "activation": round(m.activation, 4),
            "importance": m.importance,
            "confidence": m.confidence,
            "access_count": m.access_count,
            "pinned": m.pinned,
        },
        "source": m.source,
        "rule": m.rule,
        "lang": m.lang,
        "scope": fields(m.scope),
        "superseded_by": f"m_{m.superseded_by}" if m.superseded_by else None,
        "provenance": {
            "episodes": [f"e_{e}" for e in m.episode_ids],
            "origins": list(m.origins),
        },
        "details": m.details,
    }
    if episodes is not None:
        out["provenance"]["turns"] = [episode(e) for e in episodes]
    return out


def memory_score(m: Memory, s: MemoryScore) -> dict[str, Any]:
    return {
        "id": m.ref,
        "kind": m.kind,
        "text": m.text,
        "score": round(s.total, 4),
        "promote": s.promote,
        "factors": {
            "kind_weight": s.kind_weight,
            "recency": round(s.recency, 4),
            "frequency": round(s.frequency, 4),
            "entity": round(s.entity, 4),
            "completion": s.completion,
        },
    }


def dispute(d: Dispute) -> dict[str, Any]:
    return {
        "memory": memory(d.memory),
        "by": memory(d.by) if d.by else None,
        "reason": d.reason,
        "at": _time(d.at),
    }


def episode(e: Episode) -> dict[str, Any]:
    return {
        "id": e.ref,
        "kind": e.kind,
        "role": e.role,
        "speaker": e.speaker,
        "text": e.text,
        "at": _time(e.at),
        "session_id": e.session_id,
        "turn_id": e.turn_id,
        "origin": e.origin,
        "scope": fields(e.scope),
    }


def capture_result(r: CaptureResult) -> dict[str, Any]:
    return envelope(
        episodes=[f"e_{e}" for e in r.episodes],
        added=[memory(m) for m in r.added],
        bumped=[memory(m) for m in r.bumped],
        forgotten=[memory(m) for m in r.forgotten],
        superseded=[memory(m) for m in r.superseded],
        skipped=list(r.skipped),
        duplicate_turn=r.duplicate_turn,
    )


def ingest_report(r: IngestReport) -> dict[str, Any]:
    return envelope(**fields(r))


def stats(s: Stats) -> dict[str, Any]:
    return envelope(**fields(s))


def init_report(r: InitReport) -> dict[str, Any]:
    return envelope(**fields(r))


def hit(h: Hit) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": h.ref,
        "source": h.source,
        "text": h.text,
        "at": _time(h.at),
        "scores": fields(h.scores),
        "provenance": {
            "turn_ids": list(h.turn_ids),
            "session_ids": list(h.session_ids),
            "episodes": [f"e_{e}" for e in h.memory.episode_ids] if h.memory else [h.ref],
        },
    }
    if h.memory is not None:
        out["memory"] = memory(h.memory)
    if h.episode is not None:
        out["episode"] = episode(h.episode)
        out["replaced_at"] = _time(h.replaced_at)
    return out


def recall_block(b: RecallBlock) -> dict[str, Any]:
    return envelope(
        text=b.text,
        budget=b.budget,
        tokens=b.tokens,
        tokenizer=b.tokenizer,
        degraded=b.degraded,
        note=b.note,
        lines=[
            {"slot": line.slot, "id": line.ref, "text": line.text, "tokens": line.tokens}
            for line in b.lines
        ],
    )


def explanation(e: Explanation) -> dict[str, Any]:
    return envelope(
        id=e.ref,
        query=e.query,
        rank=e.rank,
        reasons=list(e.reasons),
        hit=hit(e.hit) if e.hit else None,
    )


def entity(e: Entity) -> dict[str, Any]:
    return {
        "key": e.key,
        "name": e.name,
        "type": e.type,
        "aliases": list(e.aliases),
        "memories": e.memories,
    }


def relation(r: Relation) -> dict[str, Any]:
    return {"source": r.source, "relation": r.relation, "target": r.target, "memories": r.memories}


def held(h: HeldWrite) -> dict[str, Any]:
    """A write the write audit held back, with its decision if one was made."""
    return {
        "id": h.ref,
        "held_at": h.held_at.isoformat(),
        "via": h.actor,
        "level": h.level,
        "reasons": list(h.reasons),
        "text": h.text,
        "kind": h.kind,
        "source": h.source,
        "episode": f"e_{h.episode_id}" if h.episode_id is not None else None,
        "origin": h.origin,
        "decision": h.decision,
        "decided_at": _time(h.decided_at),
        "decided_by": h.decided_by,
        "expires_at": _time(h.expires_at),
    }


def audit_entry(e: AuditEntry) -> dict[str, Any]:
    """One line of the audit log."""
    return {
        "at": e.at.isoformat(),
        "actor": e.actor,
        "action": e.action,
        "memory": f"m_{e.memory_id}" if e.memory_id is not None else None,
        "detail": e.detail,
    }
