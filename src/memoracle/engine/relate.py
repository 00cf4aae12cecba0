"""Settling by the pair model, after the slots and the meaning rules (`write.store_memory`):
a new memory of the speaker's own against the few live memories of the same owner and
subject nearest to it in meaning, each pair read by the learned decision
(`lifecycle.pairs`: update, same, negate or coexist) — but only the pairs the rules left:
no slot both fill (`write.settle_slots` judged those), no task already reported done,
no event that had already happened (only a plan can change), and nothing changed when
the rules already replaced something with the new memory.

What a decision does (docs/lifecycle.md, "The pair model"): an update or a negation the
model is sure of (at least the `supersede` band of its metadata) supersedes the old
memory (kept, linked, timed), a less sure one (the `dispute` band) disputes it
(`memoracle pending`), the same claim (the `confirm` band) raises the old one's
confidence; each audited with the model's name, its label and probability. At most one
memory is changed a statement. A change's probability is that of update and negate
together (which of the two it is only names it). On with `lifecycle.pair_model =
true` (off by default: it lowered LoCoMo retrieval a little, docs/lifecycle.md), and
only with the embedder the model was trained for.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from weakref import WeakKeyDictionary

import numpy as np

from memoracle.engine import settle
from memoracle.engine.near import vectors_of
from memoracle.engine.state import EngineState
from memoracle.errors import EngineError
from memoracle.lifecycle.pairs import Decision, PairModel, load
from memoracle.lifecycle.slots import DEFAULT_SUBJECT, Slot
from memoracle.storage_types import View
from memoracle.types import Memory, NewMemory, Scope

__all__ = ["CANDIDATES", "KINDS", "NEAREST", "pair_model", "settle_pairs"]

log = logging.getLogger(__name__)

KINDS = ("fact", "preference", "event", "decision", "task")  # what states a claim
CANDIDATES = 16  # the owner's newest live memories of the subject looked at, per kind
NEAREST = 3  # of those, the nearest in meaning the model is asked about
CONFIRM_STEP = 0.1  # confidence a memory gains when something says it again (as `write`)
# Per engine: the model, made once (None: off, or no embedder it was trained for).
_MODELS: WeakKeyDictionary[EngineState, PairModel | None] = WeakKeyDictionary()


def pair_model(st: EngineState) -> PairModel | None:
    """The pair model, when `lifecycle.pair_model` is on and the store's embedder is the
    one it was trained for (else None: the rules alone)."""
    if not st.settings.lifecycle.pair_model:
        return None
    if st not in _MODELS:
        try:
            embedder = st.searcher.embedder
        except EngineError as exc:  # e.g. the model's package is missing
            log.warning("pair model off (%s): rules only", exc)
            embedder = None
        _MODELS[st] = load(embedder)
    return _MODELS[st]


def settle_pairs(
    st: EngineState,
    memory_id: int,
    new: NewMemory,
    slots: Sequence[Slot],
    *,
    speaker: str | None,
    now: datetime,
    actor: str,
) -> str | None:
    """What the pair model did with the new memory `memory_id` (the module doc): the
    action taken ("supersede", "dispute", "confirm") or None."""
    if new.kind not in KINDS or not new.subject or new.subject not in (DEFAULT_SUBJECT, speaker):
        return None
    model = pair_model(st)
    if model is None:
        return None
    candidates = _candidates(st, memory_id, new, slots, now=now)
    if not candidates:
        return None
    try:
        known = vectors_of(
            st, model.embedder, [(new.content_hash, new.text), *((h, t) for _, t, h in candidates)]
        )
    except EngineError:  # an embedding service is down: the rules alone
        return None
    vector = known[new.content_hash]
    nearest = sorted(candidates, key=lambda c: -float(np.dot(vector, known[c[2]])))[:NEAREST]
    decided = model.decide([(known[h], text, vector, new.text) for _, text, h in nearest])
    changed = bool(st._store.memories.replaced_by([memory_id]))
    return _act(st, memory_id, model, list(zip(nearest, decided, strict=True)), changed, now, actor)


def _candidates(
    st: EngineState, memory_id: int, new: NewMemory, slots: Sequence[Slot], *, now: datetime
) -> list[tuple[int, str, str]]:
    """(id, text, content hash) of the owner's live memories of the new memory's subject
    that the rules left: through the visibility rule (a `View` of the new memory's
    scope), then only the same owner's (agent, user, chat); none sharing a slot with the
    new memory, no task reported done, and no event that had happened when it was said
    (what happened stays true: only a plan can change)."""
    view = View(new.scope, now=now)
    owner = _owner(new.scope)
    rows: list[tuple[int, str, str]] = []
    timed: list[int] = []  # tasks and events: read whole, to see which are left
    for kind in KINDS:
        for i, text, h, scope in st._store.memories.of_subject(
            new.subject, kind, view, limit=CANDIDATES
        ):
            if i != memory_id and _owner(scope) == owner:
                rows.append((i, text, h))
                timed += [i] if kind in ("task", "event") else []
    if not rows:
        return []
    said = {(s.subject, s.attribute) for s in slots}
    held = st._store.memories.slot_values([i for i, _, _ in rows]) if said else {}
    settled = {m.id for m in st._store.memories.get_many(timed) if not _open(m)}
    return [r for r in rows if r[0] not in settled and not said & set(held.get(r[0], {}))]


def _open(memory: Memory) -> bool:
    """Whether a task or event can still change: a task not reported done, an event
    still ahead when it was said (a plan: it ends after that day)."""
    if memory.kind == "task":
        return not memory.details.get("done")
    end = memory.valid_to or memory.valid_from
    return end is not None and (end - timedelta(seconds=1)).date() > memory.observed_at.date()


def _act(
    st: EngineState,
    memory_id: int,
    model: PairModel,
    decided: list[tuple[tuple[int, str, str], Decision]],
    changed: bool,
    now: datetime,
    actor: str,
) -> str | None:
    bands = model.model.meta["bands"]
    changes = [(d.change, old[0], d) for old, d in decided if d.change >= float(bands["dispute"])]
    if changes and not changed:
        p, old_id, decision = max(changes)
        action = "supersede" if p >= float(bands["supersede"]) else "dispute"
        if action == "supersede":
            st._store.memories.supersede(old_id, memory_id, now=now)
            settle.link(st, memory_id, old_id)
        else:
            st._store.memories.set_status(old_id, "disputed", now=now)
        _audit(st, action, old_id, memory_id, model, decision, now, actor)
        return action
    same = [(d, old[0]) for old, d in decided if d.label == "same"]
    for decision, old_id in same:
        if decision.probability >= float(bands["confirm"]):
            st._store.memories.confirm(old_id, step=CONFIRM_STEP)
            _audit(st, "confirm", old_id, memory_id, model, decision, now, actor)
            return "confirm"
    return None


def _audit(
    st: EngineState,
    action: str,
    old_id: int,
    memory_id: int,
    model: PairModel,
    decision: Decision,
    now: datetime,
    actor: str,
) -> None:
    label, p = (
        (decision.how, decision.change)
        if action != "confirm"
        else (decision.label, decision.probability)
    )
    reason = f"pair model {model.name}: {label} (p={p:.2f})"
    st._store.audit.append(
        at=now,
        actor=actor,
        action=action,
        memory_id=old_id,
        detail={
            "by": f"m_{memory_id}",
            "reason": reason,
            "model": model.name,
            "label": label,
            "probability": round(p, 3),
        },
    )


def _owner(scope: Scope) -> tuple[str | None, str | None, str | None]:
    return (scope.agent, scope.user, scope.chat)
