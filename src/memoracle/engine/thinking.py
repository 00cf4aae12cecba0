"""What the nightly model steps change in the store, and how each change is undone.

Every change a model proposal makes goes through here, inside one transaction, with a
`model-apply` audit entry that holds the model id, the prompt version, the step, the
confidence, the model's reason, what it cites and what the memory was before; the
memory's `details["model"]` carries the same tag, so `get` and `explain` show it.
`undo` reads those audit entries back and puts each memory as it was (`memoracle
undo-model`). A proposal under the confidence gate changes nothing but a memory's
status to `disputed`, with a `dispute` audit entry naming the model's reason: it then
waits in `memoracle pending` for `memoracle resolve`. docs/llm.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoracle.engine.scope import can_see, own_scope
from memoracle.engine.state import EngineState, parse_ref
from memoracle.engine.write import LAYER_OF_KIND, store_memory
from memoracle.errors import InvalidInput
from memoracle.text import content_hash
from memoracle.types import Episode, Memory, NewMemory, Scope

ACTOR = "model"  # the audit actor of every change a model proposal made
APPLIED = "model-apply"  # the audit action of such a change
UNDONE = "model-undo"  # the audit action of its reversal
CHANGES = ("add", "supersede", "merge", "keep", "pin")


@dataclass(frozen=True)
class Tag:
    """Who proposed a change and why: stamped on the memory and its audit entry."""

    model_id: str
    prompt_version: str
    step: str
    confidence: float
    reason: str
    cites: tuple[str, ...]  # the m_… and e_… refs the proposal stands on

    def as_detail(self) -> dict[str, Any]:
        return {
            "model": self.model_id,
            "prompt": self.prompt_version,
            "step": self.step,
            "confidence": round(self.confidence, 3),
            "reason": self.reason,
            "cites": list(self.cites),
        }


@dataclass(frozen=True)
class Undone:
    """One model change reversed (or, in a dry run, that would be)."""

    memory: str
    change: str
    step: str
    model_id: str
    to: str  # the status (or pin) the memory is back to


def turns_without_memory(
    st: EngineState, since: datetime, until: datetime, *, limit: int
) -> list[Episode]:
    """The messages of [since, until) the rules stored nothing from (and the write
    audit did not hold), oldest first."""
    return st._store.episodes.without_memory(since, until, limit=limit)


def add_memory(
    st: EngineState,
    *,
    kind: str,
    text: str,
    tag: Tag,
    episodes: Sequence[int],
    hold: bool,
    scope: Scope | None = None,
) -> Memory:
    """A memory the model found, stored as user turns' memories are (redacted text
    expected: the caller vetted it), source `llm`, rule its prompt version (`extract/1`),
    linked to the turns it cites. With `hold` (under the gate) it is stored disputed,
    out of search and recall until `resolve --confirm`. It takes `scope`, every cited
    turn visible to it; by default the one scope the cited turns share. InvalidInput
    when they do not: a memory drawn from one person's or one chat's turns never lands
    in another's."""
    if kind not in LAYER_OF_KIND:
        raise InvalidInput(f"Unknown memory kind {kind!r}.")
    now = st.clock.now()
    cited = st._store.episodes.get_many(list(episodes))
    first = next((e for e in cited if episodes and e.id == episodes[0]), None)
    if scope is None and len({e.scope for e in cited}) > 1:
        raise InvalidInput("The cited turns belong to different scopes.")
    if scope is not None and not all(can_see(st.settings, scope, e.scope) for e in cited):
        raise InvalidInput("A cited turn is not visible where the memory would be stored.")
    new = NewMemory(
        kind=kind,
        text=text,
        layer=LAYER_OF_KIND[kind],
        source="llm",
        observed_at=first.at if first is not None else now,
        content_hash=content_hash(text),
        scope=scope or (first.scope if first is not None else own_scope(st.settings)),
        confidence=tag.confidence,
        rule=tag.prompt_version,
        details={"model": _stamp(tag, "add")},
    )
    with st._store.transaction():
        memory_id, inserted = store_memory(
            st, new, now=now, actor=ACTOR, episode_id=episodes[0] if episodes else None
        )
        for extra in episodes[1:]:
            st._store.memories.add_provenance(memory_id, now=now, episode_id=extra)
        if not inserted:  # said already, in other words: the model added nothing
            return st.memory(memory_id)
        _audit(st, memory_id, "add", tag, before={"status": "absent"}, now=now)
        if hold:
            _dispute(st, memory_id, None, tag, now=now)
    return st.memory(memory_id)


def supersede(st: EngineState, old: int, by: int, tag: Tag, *, change: str = "supersede") -> Memory:
    """`old` no longer holds: `by` replaces it (`change` "merge": says the same)."""
    now = st.clock.now()
    memory = st.memory(old)
    st.memory(by)
    with st._store.transaction():
        st._store.memories.supersede(old, by, now=now)
        _retag(st, memory, tag, change)
        before = {"status": memory.status, "valid_to": _iso(memory.valid_to), "by": f"m_{by}"}
        _audit(st, old, change, tag, before=before, now=now)
    return st.memory(old)


def keep(st: EngineState, memory_id: int, tag: Tag) -> Memory:
    """A disputed memory the model says still holds beside what disputed it."""
    now = st.clock.now()
    memory = st.memory(memory_id)
    with st._store.transaction():
        st._store.memories.set_status(memory_id, "active", now=now)
        _retag(st, memory, tag, "keep")
        _audit(st, memory_id, "keep", tag, before={"status": memory.status}, now=now)
    return st.memory(memory_id)


def pin(st: EngineState, memory_id: int, tag: Tag) -> Memory:
    """A memory promoted to MEMORY.md (pinned: the render keeps it in the block)."""
    now = st.clock.now()
    memory = st.memory(memory_id)
    with st._store.transaction():
        st._store.memories.set_pinned(memory_id, True)
        _retag(st, memory, tag, "pin")
        _audit(st, memory_id, "pin", tag, before={"pinned": memory.pinned}, now=now)
    return st.memory(memory_id)


def hold(st: EngineState, memory_id: int, by: int | None, tag: Tag) -> Memory:
    """A proposal under the gate about `memory_id` (replace it by `by`): the memory is
    disputed, the model's reason in its `dispute` entry, until a person resolves it
    (`resolve --reject` supersedes it by `by`, `--confirm` keeps it)."""
    now = st.clock.now()
    with st._store.transaction():
        _dispute(st, memory_id, by, tag, now=now)
    return st.memory(memory_id)


def _dispute(st: EngineState, memory_id: int, by: int | None, tag: Tag, *, now: datetime) -> None:
    st._store.memories.set_status(memory_id, "disputed", now=now)
    reason = (
        f"{tag.step} by {tag.model_id} ({tag.prompt_version}), confidence "
        f"{tag.confidence:.2f} under the gate: {tag.reason}"
    )
    detail = {**tag.as_detail(), "by": f"m_{by}" if by else None, "reason": reason}
    st._store.audit.append(
        at=now, actor=ACTOR, action="dispute", memory_id=memory_id, detail=detail
    )


def _stamp(tag: Tag, change: str) -> dict[str, Any]:
    return {**tag.as_detail(), "change": change}


def _retag(st: EngineState, memory: Memory, tag: Tag, change: str) -> None:
    st._store.memories.set_details(memory.id, {**memory.details, "model": _stamp(tag, change)})


def _audit(
    st: EngineState, memory_id: int, change: str, tag: Tag, *, before: dict[str, Any], now: datetime
) -> None:
    detail = {"change": change, "before": before, **tag.as_detail()}
    st._store.audit.append(at=now, actor=ACTOR, action=APPLIED, memory_id=memory_id, detail=detail)


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()


def undo(
    st: EngineState,
    *,
    ref: str | None = None,
    since: datetime | None = None,
    dry_run: bool = False,
) -> list[Undone]:
    """Reverse the model's changes, newest first: of memory `ref`, or made at or after
    `since` (one of them). An added memory is rejected (superseded by nothing, as
    `resolve --reject` leaves it; its turns stay searchable), a
    superseded or merged one gets its status and end back, a kept one is disputed
    again, a pinned one unpinned. Each reversal has its `model-undo` audit entry; a
    change already undone is not undone twice."""
    if (ref is None) == (since is None):
        raise InvalidInput("Say what to undo: a memory (m_12) or --since a time.")
    memory_id = None if ref is None else parse_ref(ref)
    entries = st._store.audit.entries(memory_id=memory_id, since=since, limit=100_000)
    undone = {int(e.detail.get("entry", 0)) for e in entries if e.action == UNDONE}
    todo = [e for e in entries if e.action == APPLIED and e.id not in undone]
    found: list[Undone] = []
    now = st.clock.now()
    with st._store.transaction():
        for entry in todo:  # newest first: the oldest state is the one that stays
            assert entry.memory_id is not None
            change, before = str(entry.detail.get("change")), entry.detail.get("before", {})
            to = _reverse(st, entry.memory_id, change, before, now=now, dry_run=dry_run)
            found.append(
                Undone(f"m_{entry.memory_id}", change, str(entry.detail.get("step", "")),
                       str(entry.detail.get("model", "")), to)
            )  # fmt: skip
            if not dry_run:
                detail = {"entry": entry.id, "change": change, "to": to}
                st._store.audit.append(
                    at=now, actor="cli", action=UNDONE, memory_id=entry.memory_id, detail=detail
                )
    return found


def _reverse(
    st: EngineState,
    memory_id: int,
    change: str,
    before: dict[str, Any],
    *,
    now: datetime,
    dry_run: bool,
) -> str:
    """Put one memory back as `before` says; returns what it is back to."""
    memories = st._store.memories
    if change == "pin":
        if not dry_run:
            memories.set_pinned(memory_id, bool(before.get("pinned")))
        return "pinned" if before.get("pinned") else "unpinned"
    status = str(before.get("status", "active"))
    if change == "add":  # rejected, as `resolve --reject` rejects (forgotten would hide its turns)
        status = "superseded"
    if dry_run:
        return status
    if change in ("supersede", "merge"):
        valid_to = before.get("valid_to")
        end = datetime.fromisoformat(valid_to) if isinstance(valid_to, str) else None
        memories.reinstate(memory_id, status, valid_to=end, now=now)
    else:
        memories.set_status(memory_id, status, now=now)
    return status
