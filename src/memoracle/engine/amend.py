"""Corrections a person makes to one memory by hand, for the doors that offer them (the
web page, `memoracle ui`): a new text or kind (stored as a new memory that supersedes
the old one, so the audit log keeps both), the pinned flag, and the time to live.

Each takes the asker's scope: a memory they may not see is "No memory", as for an id
that does not exist (docs/scopes.md). Each writes one audit entry with the `actor`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta

from memoracle.capture.injection.learned import audit
from memoracle.capture.pipeline import prepare
from memoracle.engine import memories, write
from memoracle.engine.state import EngineState
from memoracle.errors import InvalidInput, WriteHeld
from memoracle.types import LIVE, Memory, Scope, Turn


def edit(
    st: EngineState,
    ref: str | int,
    *,
    text: str | None = None,
    kind: str | None = None,
    scope: Scope | None = None,
    actor: str,
) -> Memory:
    """Replace a live memory's text or kind: the new one is stored as a person states a
    memory (`remember`'s path: redaction, the write audit, duplicates, slots, the graph)
    in the old one's scope, keeping its subject, pin and expiry, and the old one is
    superseded by it. Returns the new memory (or the live one it turned out to repeat)."""
    old = memories.get(st, ref, scope=scope)
    if old.status not in LIVE:
        raise InvalidInput(f"{old.ref} is {old.status}, not live: restore it first to change it.")
    said = prepare(old.text if text is None else text).text.strip()
    if not said:
        raise InvalidInput("text: the new text is empty.")
    kind = kind or old.kind
    if said == old.text and kind == old.kind:
        raise InvalidInput("Nothing changed: give a new text or another kind.")
    write.check_size(st, Turn(role="user", text=said), origin="edit")
    now = st.clock.now()
    new = write.stated(st, said, kind=kind, source="manual", observed_at=now, scope=old.scope)
    expiry = old.expires_at if old.expires_at and old.expires_at > now else None
    new = replace(new, subject=old.subject, pinned=new.pinned or old.pinned, expires_at=expiry)
    verdict = audit(said, lang=new.lang, head=lambda: st.injection_head)
    if verdict.level != "clean":
        with st._store.transaction():
            held = write.hold(st, 
                said, level=verdict.level, reasons=verdict.reasons, kind=kind, source="manual",
                observed_at=now, scope=old.scope, actor=actor, now=now, expires_at=expiry,
            )  # fmt: skip
        raise WriteHeld(write.held_message(held), held.ref)
    with st._store.transaction():
        new_id, _ = write.store_memory(st, new, now=now, actor=actor)
        if new_id == old.id:  # the same text said again in another kind: nothing to replace
            raise InvalidInput(f"{old.ref} already says this.")
        if st.memory(old.id).status != "superseded":  # settling may have done it already
            st._store.memories.supersede(old.id, new_id, now=now)
        st._store.audit.append(
            at=now,
            actor=actor,
            action="edit",
            memory_id=old.id,
            detail={"by": f"m_{new_id}", "kind": kind, "was_kind": old.kind},
        )
    return st.memory(new_id)


def pin(
    st: EngineState, ref: str | int, pinned: bool, *, scope: Scope | None = None, actor: str
) -> Memory:
    """Pin a memory (the archive's cap never cuts it, as for a guardrail) or unpin it."""
    memory = memories.get(st, ref, scope=scope)
    if memory.pinned == pinned:
        return memory
    now = st.clock.now()
    with st._store.transaction():
        st._store.browse.set_pinned(memory.id, pinned)
        st._store.audit.append(
            at=now,
            actor=actor,
            action="pin" if pinned else "unpin",
            memory_id=memory.id,
        )
    return st.memory(memory.id)


def set_expiry(
    st: EngineState,
    ref: str | int,
    *,
    ttl: timedelta | None = None,
    expires_at: datetime | date | None = None,
    scope: Scope | None = None,
    actor: str,
) -> Memory:
    """Give a live memory a time to live (`ttl` from now, or an end `expires_at`, as
    `remember --ttl/--until` read them), or clear it (neither: kept for good). The audit
    entry is `remember`'s: action "expiry", with the old and new end."""
    memory = memories.get(st, ref, scope=scope)
    if memory.status not in LIVE:
        raise InvalidInput(f"{memory.ref} is {memory.status}: only a live memory can expire.")
    now = st.clock.now()
    expiry = memories.expiry_of(st, now, expires_at=expires_at, ttl=ttl)
    if memory.expires_at == expiry:
        return memory
    with st._store.transaction():
        st._store.memories.set_expiry(memory.id, expiry)
        st._store.audit.append(
            at=now,
            actor=actor,
            action="expiry",
            memory_id=memory.id,
            detail={
                "expires_at": None if expiry is None else expiry.isoformat(),
                "was": None if memory.expires_at is None else memory.expires_at.isoformat(),
            },
        )
    return st.memory(memory.id)
