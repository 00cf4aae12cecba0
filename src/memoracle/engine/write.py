"""The write path: which turns become episodes, which proposals become memories, what an
exact or near duplicate does, which slots a new memory settles (contradictions), and
which writes are held for a person's review ("forget …" said in a turn: `forgetting`).
Rules are `capture`'s, formulas `lifecycle`'s, SQL `store`'s.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any
from weakref import WeakKeyDictionary

from memoracle.capture.extract import extract
from memoracle.capture.injection.learned import audit
from memoracle.capture.lang import detect_language
from memoracle.capture.pipeline import Proposal, prepare, propose
from memoracle.engine import forgetting, graph, relate, settle
from memoracle.engine.near import near_duplicate, same_meaning
from memoracle.engine.scope import fill_scope
from memoracle.engine.state import EngineState
from memoracle.errors import (
    InvalidInput,
)
from memoracle.lifecycle.claims import split_claims
from memoracle.lifecycle.conflicts import Verdict, graver, judge, value_prefix
from memoracle.lifecycle.slots import Slot, slots_of
from memoracle.storage_types import HeldWrite
from memoracle.text import clean, content_hash
from memoracle.types import (
    CaptureResult,
    NewMemory,
    Scope,
    Turn,
)

log = logging.getLogger(__name__)

LAYER_OF_KIND = {
    "fact": "semantic",
    "preference": "semantic",
    "decision": "semantic",
    "insight": "semantic",
    "event": "episodic",
    "error": "episodic",
    "task": "episodic",
    "guardrail": "procedural",
    "pattern": "procedural",
}
# (importance, confidence) of memories stated whole, by source; a "remember …" said in a
# turn gets the same as one typed by hand.
STATED_SCORES = {
    "manual": (0.8, 0.95),
    "user-stated": (0.8, 0.95),
    "agent": (0.7, 0.9),
    "import": (0.6, 0.9),
}
NO_SLOT = "-"  # a slots row saying: looked for, none found
CONFIRM_STEP = 0.1  # confidence a memory gains when something says it again


def capture(
    st: EngineState, turns: Sequence[Turn], *, scope: Scope | None = None, actor: str = "capture"
) -> CaptureResult:
    """`Engine.capture`: what storing `turns` in one transaction did — their episodes,
    the memories the rules found in them added or bumped, what those superseded or
    forgot, and the turns skipped."""
    return capture_many(st, [(turns, scope)], actor=actor)[0]


def capture_many(
    st: EngineState,
    batches: Sequence[tuple[Sequence[Turn], Scope | None]],
    *,
    actor: str = "capture",
) -> list[CaptureResult]:
    """`capture` for several batches, each with its own scope, all or nothing."""
    scoped = [(turns, fill_scope(st.settings, scope)) for turns, scope in batches]
    for turns, _ in scoped:
        for turn in turns:
            check_size(st, turn, origin=turn.origin or "capture")
    outcomes: list[list[_Outcome]] = []
    # Each turn is checked against and stored among its owner's items only: writes of
    # other owners may run beside it (a backend that allows it: docs/fleet.md).
    with st._store.transaction(scopes=[scope for _, scope in scoped]):
        for turns, scope in scoped:
            outcomes.append([capture_one(st, turn, scope, actor) for turn in turns])
    return [_result(st, batch) for batch in outcomes]


def check_size(st: EngineState, turn: Turn, *, origin: str) -> None:
    limit = st.settings.capture.max_turn_chars
    if len(turn.text) > limit:
        raise InvalidInput(
            f"{origin}: turn of {len(turn.text):,} characters is over the limit of {limit:,} "
            "(capture.max_turn_chars). Split it, or raise the limit in config.toml."
        )


# The last turn stored of each session, as stored (redacted), per engine: a secret said
# over two turns ("the wifi password?" / "Tournesol88", a key pasted in two messages)
# is found only with the turn before it (`redact(previous=…)`). A new process starts
# without it; a long-running host (serve, MCP, the gateway plugin) and a batch (ingest,
# a transcript) have it.
_LAST_TURNS: WeakKeyDictionary[EngineState, dict[tuple[str, str], str]] = WeakKeyDictionary()
_LAST_TURNS_KEPT = 512


def _session_key(turn: Turn, scope: Scope) -> tuple[str, str] | None:
    return (repr(scope), turn.session_id) if turn.session_id else None


def _previous_turn(st: EngineState, turn: Turn, scope: Scope) -> str | None:
    key = _session_key(turn, scope)
    return _LAST_TURNS.get(st, {}).get(key) if key else None


def _remember_turn(st: EngineState, turn: Turn, scope: Scope, stored: str) -> None:
    key = _session_key(turn, scope)
    if key is None:
        return
    last = _LAST_TURNS.setdefault(st, {})
    last.pop(key, None)
    last[key] = stored
    if len(last) > _LAST_TURNS_KEPT:
        del last[next(iter(last))]  # the session not heard from longest


def capture_one(st: EngineState, turn: Turn, scope: Scope, actor: str) -> _Outcome:
    now = st.clock.now()
    prepared = prepare(turn.text, previous=_previous_turn(st, turn, scope))
    if prepared.noise is not None:
        return _Outcome(skipped=(f"noise:{prepared.noise}",))
    _remember_turn(st, turn, scope, prepared.text)
    stored = replace(
        turn,
        text=prepared.text,
        at=st.local_time(turn.at) if turn.at else now,
        session_id=clean(turn.session_id) if turn.session_id else None,
        turn_id=clean(turn.turn_id) if turn.turn_id else None,
        speaker=clean(turn.speaker) if turn.speaker else None,
    )
    if st._store.episodes.has_turn(stored, scope):
        return _Outcome(skipped=("duplicate-turn",), duplicate=True)
    assert stored.at is not None
    episode_id = st._store.episodes.insert(stored, at=stored.at, now=now, scope=scope)
    assert episode_id is not None  # the key was checked inside this transaction
    if prepared.redacted:
        st._store.audit.append(
            at=now,
            actor=actor,
            action="redact",
            detail={"episode": episode_id, "kinds": list(prepared.redacted)},
        )
    if stored.kind == "message":
        # a tool's output is read as one; the head is loaded only for a text it is asked
        verdict = audit(stored.text, role=stored.role, head=lambda: st.injection_head)
        if verdict.level != "clean":  # kept as an episode, out of search and memory
            held = hold(st, 
                stored.text, level=verdict.level, reasons=verdict.reasons, kind=None,
                source=_source_of(stored), observed_at=stored.at, scope=scope, actor=actor,
                now=now, episode_id=episode_id,
            )  # fmt: skip
            return _Outcome(episodes=(episode_id,), skipped=(f"held:{held.ref}",))
    return extract_turn(st, stored, episode_id, scope, actor, now)


def extract_turn(
    st: EngineState, stored: Turn, episode_id: int, scope: Scope, actor: str, now: datetime
) -> _Outcome:
    """The memories the rules find in a stored turn, stored (`capture_one`'s second
    half, and what confirming a held turn does)."""
    assert stored.at is not None
    if stored.kind != "message" or not _extracts_from(st, stored.role):
        return _Outcome(episodes=(episode_id,))
    found = propose(
        stored.text,
        role=stored.role,
        speaker=stored.speaker,
        at=st.anchor_time(stored.at),
        day_first=st.settings.workspace.day_first,
        languages=tuple(st.settings.capture.languages),
        classifier=st.classifier,
        split=functools.partial(split_claims, speaker=stored.speaker),
    )
    outcome = _Outcome(episodes=(episode_id,), skipped=found.skipped)
    subject = stored.speaker if stored.role == "speaker" else "user"
    if not any(p.candidate.kind == "task" for p in found.proposals):
        settle.finish_tasks(
            st, stored.text, scope, subject=subject, now=now, actor=actor, by=f"e_{episode_id}"
        )
    if found.skipped == ("no_match",) and (
        denied := settle.unclaimed(
            st, stored.text, lang=detect_language(stored.text), speaker=stored.speaker,
            observed_at=stored.at, scope=scope,
        )
    ):  # fmt: skip
        new, slots = denied
        memory_id, inserted = store_memory(
            st, replace(new, subject=new.subject or subject), now=now, actor=actor,
            episode_id=episode_id,
            speaker=stored.speaker if stored.role == "speaker" else None, slots=slots,
        )  # fmt: skip
        (outcome.added if inserted else outcome.bumped).append(memory_id)
    for proposal in found.proposals:
        candidate = proposal.candidate
        if candidate.action == "forget":
            forgotten = forgetting.forget_said(
                st, candidate, scope, now=now, episode_id=episode_id, asked=stored.role == "user"
            )
            if forgotten is None:
                outcome.skipped += ("forget:ambiguous",)
            elif not forgotten:
                outcome.skipped += ("forget:no-match",)
            outcome.forgotten += forgotten or []
            continue
        new = new_memory(
            st, proposal, observed_at=stored.at, scope=scope, source=_source_of(stored)
        )
        memory_id, inserted = store_memory(
            st,
            new,
            now=now,
            actor=actor,
            episode_id=episode_id,
            speaker=stored.speaker if stored.role == "speaker" else None,
        )
        (outcome.added if inserted else outcome.bumped).append(memory_id)
    return outcome


def _extracts_from(st: EngineState, role: str) -> bool:
    """Memories come from people (user, a named speaker) and, if configured, the
    assistant; system and tool messages are kept as episodes only."""
    if role == "assistant":
        return st.settings.capture.assistant_memories
    return role in ("user", "speaker")


def _result(st: EngineState, outcomes: Sequence[_Outcome]) -> CaptureResult:
    get = st._store.memories.get_many
    added = [m for o in outcomes for m in o.added]
    return CaptureResult(
        episodes=tuple(e for o in outcomes for e in o.episodes),
        added=tuple(get(added)),
        bumped=tuple(get([m for o in outcomes for m in o.bumped])),
        forgotten=tuple(get([m for o in outcomes for m in o.forgotten])),
        skipped=tuple(s for o in outcomes for s in o.skipped),
        duplicate_turn=bool(outcomes) and all(o.duplicate for o in outcomes),
        superseded=tuple(get(st._store.memories.replaced_by(added))) if added else (),
    )


def new_memory(
    st: EngineState, proposal: Proposal, *, observed_at: datetime, scope: Scope, source: str
) -> NewMemory:
    c = proposal.candidate
    first = proposal.dates[0] if proposal.dates else None
    remembered = c.action == "remember"
    return NewMemory(
        kind=c.kind,
        text=c.text,
        layer=LAYER_OF_KIND[c.kind],
        source="user-stated" if remembered else source,
        observed_at=observed_at,
        content_hash=content_hash(c.text),
        scope=scope,
        subject=c.subject,
        predicate=c.predicate,
        object=c.object,
        valid_from=first.start if first and c.kind == "event" else None,
        valid_to=first.end if first and c.kind == "event" else None,
        due_at=first.start if first and c.kind == "task" else None,
        importance=max(c.importance, STATED_SCORES["user-stated"][0])
        if remembered
        else c.importance,
        confidence=max(c.confidence, STATED_SCORES["user-stated"][1])
        if remembered
        else c.confidence,
        pinned=c.kind == "guardrail",
        lang=c.lang,
        rule=c.rule,
        details={
            "hedged": c.hedged,
            "dates": [
                {
                    "text": d.text,
                    "start": d.start.isoformat(),
                    "end": d.end.isoformat(),
                    "granularity": d.granularity,
                    "rule": d.rule,
                }
                for d in proposal.dates
            ],
        },
    )


def store_memory(
    st: EngineState,
    new: NewMemory,
    *,
    now: datetime,
    actor: str,
    episode_id: int | None = None,
    origin: str | None = None,
    speaker: str | None = None,
    slots: Sequence[Slot] | None = None,
) -> tuple[int, bool]:
    """Insert, or bump the exact duplicate; a new memory is then settled against
    what it may contradict (`settle_slots`), then by meaning (`settle`). Returns (id,
    inserted).

    `slots`, when given, are the slots the new memory fills instead of those its text
    states, and then only a duplicate of the same kind is the same memory: a
    replacement chosen by `resolve` keeps the kind and slot of what it replaces."""
    memories = st._store.memories
    existing = memories.find_duplicate(new.content_hash, new.subject, new.scope, now=now)
    if existing is not None and slots is not None and st.memory(existing).kind != new.kind:
        existing = None
    if existing is None and slots is None:
        slots = slots_of(new.text, lang=new.lang, speaker=speaker)
    slots = tuple(slots or ())
    near = None if existing is not None else near_duplicate(st, new, slots)
    how = "words"
    if near is None and existing is None:
        near, how = same_meaning(st, new, slots), "meaning"
    if near is not None:
        existing = near[0]
        memories.confirm(existing, step=CONFIRM_STEP)  # said again, in other words
        detail: dict[str, Any] = {"text": new.text, "score": round(near[1].score, 3), "by": how}
        if how == "meaning" and near[1].vector is not None:
            detail["cosine"] = round(near[1].vector, 3)
        st._store.audit.append(
            at=now, actor=actor, action="merge", memory_id=existing, detail=detail
        )
    if existing is not None:
        memories.bump(existing, now=now, boost=st.settings.recall.boost)
        memories.add_provenance(existing, now=now, episode_id=episode_id, origin=origin)
        return existing, False
    memory_id = memories.insert(new, now=now)
    memories.add_provenance(memory_id, now=now, episode_id=episode_id, origin=origin)
    st._store.audit.append(
        at=now,
        actor=actor,
        action="add",
        memory_id=memory_id,
        detail={"kind": new.kind, "rule": new.rule, "source": new.source},
    )
    if not slots and existing is None:  # no rule read it: by meaning
        slots = tuple(settle.by_attribute(st, memory_id, new, now=now, actor=actor))
    settle_slots(st, memory_id, new, slots, now=now, actor=actor)
    settle.replace_plan(st, memory_id, new, now=now, actor=actor)
    relate.settle_pairs(st, memory_id, new, slots, speaker=speaker, now=now, actor=actor)
    graph.read_graph(st, memory_id, new.text, lang=new.lang, speaker=speaker, now=now)
    return memory_id, True


def settle_slots(
    st: EngineState,
    memory_id: int,
    new: NewMemory,
    slots: Sequence[Slot],
    *,
    now: datetime,
    actor: str,
) -> None:
    """Contradictions at capture (docs/lifecycle.md): every slot the new memory fills ("We
    upgraded to PostgreSQL 17": what is used, and its version), against the live
    memories of the same owner in those slots. Per old memory the gravest verdict
    acts: a clear contradiction supersedes it (kept, linked, timed), a hedged one
    disputes it (`pending`), the same value raises its confidence. `slots` are
    `slots_of` the new text, with "I" its speaker."""
    memories = st._store.memories
    if not slots:
        memories.set_slot(memory_id, NO_SLOT, NO_SLOT, "", hedged=False, negated=False)
        return
    verdicts: dict[int, Verdict] = {}
    for slot in slots:
        memories.set_slot(
            memory_id,
            slot.subject,
            slot.attribute,
            slot.value,
            hedged=slot.hedged,
            negated=slot.negated,
        )
        held = memories.in_slot(
            slot.subject,
            slot.attribute,
            new.scope,
            exclude=memory_id,
            value_prefix=value_prefix(slot.attribute, slot.value),
        )
        for old_id, value, hedged, negated in held:
            verdict = judge(slot, Slot(slot.subject, slot.attribute, value, hedged, negated))
            if old_id not in verdicts or graver(verdict, verdicts[old_id]):
                verdicts[old_id] = verdict
    for old_id, verdict in verdicts.items():
        if verdict.kind == "REDUNDANT":
            memories.confirm(old_id, step=CONFIRM_STEP)
            action = "confirm"
        elif verdict.supersedes:
            memories.supersede(old_id, memory_id, now=now)
            settle.link(st, memory_id, old_id)
            action = "supersede"
        elif verdict.disputes:
            memories.set_status(old_id, "disputed", now=now)
            action = "dispute"
        else:
            continue
        st._store.audit.append(
            at=now,
            actor=actor,
            action=action,
            memory_id=old_id,
            detail={"by": f"m_{memory_id}", "reason": verdict.reason},
        )


def hold(
    st: EngineState,
    text: str,
    *,
    level: str,
    reasons: Sequence[str],
    kind: str | None,
    source: str,
    observed_at: datetime,
    scope: Scope,
    actor: str,
    now: datetime,
    episode_id: int | None = None,
    origin: str | None = None,
    expires_at: datetime | None = None,
) -> HeldWrite:
    """Hold a write the audit flagged (the same text from the same place held before,
    and not confirmed, is that write again), with an audit entry."""
    held = st._store.held
    # One hold per text: a turn saying what a held turn said is held by that entry.
    same = held.same_turn(text, scope) if episode_id is not None else held.same(text, source, scope)
    if same is not None:
        return same
    held_id = held.add(
        now=now, actor=actor, level=level, reasons=reasons, text=text, kind=kind,
        source=source, observed_at=observed_at, scope=scope, episode_id=episode_id,
        origin=origin, expires_at=expires_at,
    )  # fmt: skip
    st._store.audit.append(
        at=now,
        actor=actor,
        action="hold",
        detail={"held": f"h_{held_id}", "level": level, "reasons": list(reasons)},
    )
    log.warning("write held for review (h_%d, %s): %s", held_id, level, ", ".join(reasons))
    return held.get(held_id)


def stated(
    st: EngineState,
    text: str,
    *,
    kind: str | None,
    source: str,
    observed_at: datetime,
    scope: Scope,
    details: dict[str, Any] | None = None,
) -> NewMemory:
    """A memory stated as a whole (remembered by hand, imported from a note): its kind
    is given or inferred by the rules, else fact; trusted as the person wrote it."""
    if kind is None:
        found = extract(text, role="user")
        kind = found.candidates[0].kind if found.candidates else "fact"
    if kind not in LAYER_OF_KIND:
        raise InvalidInput(f"Unknown kind {kind!r}: one of {', '.join(LAYER_OF_KIND)}.")
    if source not in STATED_SCORES:
        raise InvalidInput(f"Unknown source {source!r}: one of {', '.join(STATED_SCORES)}.")
    importance, confidence = STATED_SCORES[source]
    return NewMemory(
        kind=kind,
        text=text,
        layer=LAYER_OF_KIND[kind],
        source=source,
        observed_at=observed_at,
        content_hash=content_hash(text),
        scope=scope,
        pinned=kind == "guardrail",
        importance=importance,
        confidence=confidence,
        lang=detect_language(text),
        details=details or {},
    )


@dataclass
class _Outcome:
    """What capturing one turn did, as ids (memories are loaded once, for the result)."""

    episodes: tuple[int, ...] = ()
    added: list[int] = field(default_factory=list)
    bumped: list[int] = field(default_factory=list)
    forgotten: list[int] = field(default_factory=list)
    skipped: tuple[str, ...] = ()
    duplicate: bool = False


def _source_of(turn: Turn) -> str:
    """The source of what a turn says: a checkpoint's turns (origin "checkpoint", or
    "checkpoint:FILE:LINE" for a transcript's) are the checkpoint's; others, capture's."""
    origin = turn.origin or ""
    return "checkpoint" if origin.split(":", 1)[0] == "checkpoint" else "capture"


def held_message(held: HeldWrite) -> str:
    return (
        f"Held for review ({held.ref}): this looks like prompt injection ({held.level}:"
        f" {', '.join(held.reasons)}), so it was not stored as memory. A person decides:"
        f" `memoracle audit --confirm {held.ref}` stores it, `--reject {held.ref}` drops it."
    )
