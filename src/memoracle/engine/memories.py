"""Memories by hand: reading them (`list_memories`, `episodes_of`), stating one
(`remember`), forgetting by id or by what they say, and the writes held back by the
write audit (`held_writes`, `confirm_held`, `reject_held`, `audit_entries`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta

from memoracle.capture.injection.learned import audit
from memoracle.capture.pipeline import prepare
from memoracle.clock import LAST_YEAR
from memoracle.engine import forgetting, settle, write
from memoracle.engine.scope import can_see, fill_scope, view_for
from memoracle.engine.state import EngineState, parse_ref
from memoracle.errors import InvalidInput, NotFound, WriteHeld
from memoracle.storage_types import AuditEntry, HeldWrite, every_word
from memoracle.types import (
    LIVE,
    Episode,
    Memory,
    Scope,
    Turn,
)

EVERY = 10_000_000  # `forget_matching(everything=True)`: no cap on the matches


def held_writes(
    st: EngineState, *, since: datetime | None = None, waiting: bool = False
) -> list[HeldWrite]:
    """Writes the write audit held back, newest first (see `confirm_held`)."""
    return st._store.held.list(since=since, waiting=waiting)


def audit_entries(
    st: EngineState, *, since: datetime | None = None, limit: int = 1000
) -> list[AuditEntry]:
    """The audit log (every write through every door, with who made it), newest first."""
    return st._store.audit.entries(since=since, limit=limit)


def confirm_held(st: EngineState, ref: str | int, *, actor: str = "cli") -> list[Memory]:
    """`Engine.confirm_held`: the memories stored or bumped when a person vouches for a
    held write (a turn's memories found by the rules, or a stated text as one)."""
    held = _waiting(st, ref)
    now = st.clock.now()
    with st._store.transaction():
        st._store.held.decide(held.id, "confirm", now=now, actor=actor)
        st._store.audit.append(
            at=now, actor=actor, action="confirm-held", detail={"held": held.ref}
        )
        if held.episode_id is not None:
            episode = st._store.episodes.get(held.episode_id)
            if episode is None:
                return []
            turn = Turn(
                episode.role, episode.text, episode.at, episode.session_id,
                episode.turn_id, speaker=episode.speaker, kind=episode.kind,
                origin=episode.origin,
            )  # fmt: skip
            outcome = write.extract_turn(st, turn, episode.id, held.scope, actor, now)
            ids = [*outcome.added, *outcome.bumped]
        else:
            new = write.stated(st, 
                held.text, kind=held.kind, source=held.source,
                observed_at=held.observed_at, scope=held.scope,
            )  # fmt: skip
            new = replace(new, expires_at=held.expires_at)
            ids = [write.store_memory(st, new, now=now, actor=actor, origin=held.origin)[0]]
    return st._store.memories.get_many(ids)


def reject_held(st: EngineState, ref: str | int, *, actor: str = "cli") -> HeldWrite:
    """A person turns a held write down: it stays held, for the record."""
    held = _waiting(st, ref)
    now = st.clock.now()
    with st._store.transaction():
        st._store.held.decide(held.id, "reject", now=now, actor=actor)
        st._store.audit.append(at=now, actor=actor, action="reject-held", detail={"held": held.ref})
    return st._store.held.get(held.id)


def _waiting(st: EngineState, ref: str | int) -> HeldWrite:
    try:
        held_id = parse_ref(ref, "h")
    except InvalidInput:
        raise InvalidInput(f"{str(ref)!r} is not a held write's id (h_12, or 12).") from None
    held = st._store.held.get(held_id)
    if held.decision is not None:
        raise InvalidInput(f"{held.ref} was already decided ({held.decision}).")
    return held


def get(st: EngineState, ref: str | int, *, scope: Scope | None = None) -> Memory:
    """The memory `ref` names, when `scope` may see it; otherwise the same `NotFound` as
    for an id that does not exist, so nothing about another's memory leaks."""
    memory_id = parse_ref(ref)
    memory = st._store.memories.get(memory_id)
    if memory is None or not can_see(st.settings, scope, memory.scope):
        raise NotFound(f"No memory 'm_{memory_id}'. Try: memoracle list, or memoracle search")
    return memory


def get_episode(st: EngineState, ref: str | int, *, scope: Scope | None = None) -> Episode:
    """The turn `ref` (e_…) names, when `scope` may see it (as `get`)."""
    episode_id = parse_ref(ref, "e")
    episode = st._store.episodes.get(episode_id)
    if episode is None or not can_see(st.settings, scope, episode.scope):
        raise NotFound(f"No episode 'e_{episode_id}'.")
    return episode


def live_episode(st: EngineState, ref: str | int, *, scope: Scope | None = None) -> Episode:
    """As `get_episode`, and NotFound for a turn a forgotten memory took out of search
    and recall with it (what answers a host's memory tools: forget means forget)."""
    episode = get_episode(st, ref, scope=scope)
    if st._store.episodes.taken_out_by_forget(episode.id):
        raise NotFound(f"No episode {episode.ref!r}.")
    return episode


def episodes_of(st: EngineState, memory: Memory, *, scope: Scope | None = None) -> list[Episode]:
    """The turns `memory` came from that `scope` may see."""
    found = (st._store.episodes.get(i) for i in memory.episode_ids)
    return [e for e in found if e is not None and can_see(st.settings, scope, e.scope)]


def turns(st: EngineState, *, scope: Scope | None = None) -> Iterator[list[Episode]]:
    """Every turn `scope` may see, a page at a time, oldest first."""
    return st._store.episodes.pages(view_for(st.settings, scope))


def list_memories(
    st: EngineState,
    *,
    kind: str | None = None,
    status: str | None = "active",
    limit: int = 50,
    scope: Scope | None = None,
) -> list[Memory]:
    """The newest memories `scope` may see, of `kind` and `status` when given."""
    view = view_for(st.settings, scope)
    return st._store.memories.select(kind=kind, status=status, limit=limit, view=view)


def remember(
    st: EngineState,
    text: str,
    *,
    kind: str | None = None,
    scope: Scope | None = None,
    source: str = "manual",
    actor: str = "cli",
    expires_at: datetime | date | None = None,
    ttl: timedelta | None = None,
) -> tuple[Memory, bool]:
    """`Engine.remember`: (memory, inserted) for `text` stored as it is (secrets
    redacted), an exact duplicate bumped instead; `ttl` or `expires_at` sets when it
    expires, and `InvalidInput` for an expiry past or both given."""
    said = prepare(text).text.strip()
    if not said:
        raise InvalidInput("Nothing to remember: the text is empty.")
    write.check_size(st, Turn(role="user", text=said), origin="remember")
    now = st.clock.now()
    expiry = expiry_of(st, now, expires_at=expires_at, ttl=ttl)
    new = write.stated(
        st, said, kind=kind, source=source, observed_at=now, scope=fill_scope(st.settings, scope)
    )
    new = replace(new, expires_at=expiry)
    verdict = audit(said, lang=new.lang, head=lambda: st.injection_head)
    if verdict.level != "clean":
        with st._store.transaction():
            held = write.hold(st, 
                said, level=verdict.level, reasons=verdict.reasons, kind=kind,
                source=source, observed_at=now, scope=new.scope, actor=actor, now=now,
                expires_at=expiry,
            )  # fmt: skip
        raise WriteHeld(write.held_message(held), held.ref)
    with st._store.transaction():
        memory_id, inserted = write.store_memory(st, new, now=now, actor=actor)
        if not inserted:
            _renew(st, memory_id, expiry, now=now, actor=actor)
    return st.memory(memory_id), inserted


def expiry_of(
    st: EngineState,
    now: datetime,
    *,
    expires_at: datetime | date | None = None,
    ttl: timedelta | None = None,
    past_ok: bool = False,
) -> datetime | None:
    """The UTC instant a memory expires: `now` + `ttl`, or `expires_at` — a date is kept
    to the end of that day, a time without an offset is a wall-clock time, both in
    `workspace.timezone`. None when neither is given (it never expires). An instant not
    after `now` is `InvalidInput` unless `past_ok` (an imported note, kept as written)."""
    if expires_at is not None and ttl is not None:
        raise InvalidInput("Give a time to live (--ttl) or an end (--until), not both.")
    try:
        if ttl is not None:
            if ttl <= timedelta(0):
                raise InvalidInput(f"A time to live must be positive, not {ttl}.")
            at = now + ttl
        elif isinstance(expires_at, datetime):
            at = st.local_time(expires_at).astimezone(UTC)
        elif expires_at is not None:
            at = datetime.combine(expires_at + timedelta(days=1), time(), tzinfo=st.zone)
            at = at.astimezone(UTC)
        else:
            return None
    except OverflowError:
        at = datetime.max.replace(tzinfo=UTC)
    if at.year > LAST_YEAR:
        raise InvalidInput(
            f"The expiry is too far away ({ttl or expires_at}): years up to {LAST_YEAR} only."
        )
    if at <= now and not past_ok:
        raise InvalidInput(
            f"The expiry {at.astimezone(st.zone).isoformat()} is already past (now "
            f"{now.astimezone(st.zone).isoformat()}): a memory must outlive the moment "
            "it is stored. Give a later time."
        )
    return at


def _renew(
    st: EngineState, memory_id: int, expiry: datetime | None, *, now: datetime, actor: str
) -> None:
    """A memory remembered again by hand takes the expiry asked this time: a time to
    live, or none (said again without one, it is kept for good)."""
    memory = st.memory(memory_id)
    if memory.expires_at == expiry:
        return
    st._store.memories.set_expiry(memory_id, expiry)
    st._store.audit.append(
        at=now,
        actor=actor,
        action="expiry",
        memory_id=memory_id,
        detail={
            "expires_at": None if expiry is None else expiry.isoformat(),
            "was": None if memory.expires_at is None else memory.expires_at.isoformat(),
        },
    )


def forget(st: EngineState, ref: str | int, *, actor: str = "cli", reason: str = "") -> Memory:
    """Mark one memory forgotten (a status change with an audit entry, never a delete)."""
    memory = st.memory(ref)
    if memory.status == "forgotten":
        return memory
    now = st.clock.now()
    with st._store.transaction():
        forgetting.set_forgotten(
            st, memory, now=now, actor=actor, detail={"reason": reason} if reason else {}
        )
    settle.write_forgotten_marks(st)
    return st.memory(memory.id)


class Ambiguous(InvalidInput):
    """A forget by description that fits more than one memory: none was forgotten.
    `candidates` are what it fits (a person picks, or confirms them all)."""

    def __init__(self, message: str, candidates: list[Memory]) -> None:
        super().__init__(message)
        self.candidates = candidates


def forget_matching(
    st: EngineState,
    query: str,
    *,
    scope: Scope | None = None,
    dry_run: bool = False,
    actor: str = "cli",
    limit: int = 20,
    everything: bool = False,
) -> list[Memory]:
    """Forget every live memory `scope` may see (docs/scopes.md; None: the workspace
    owner's view) containing all words of `query`, else every one it describes ("my old
    job" -> "I work at Oracle", `settle.described_memories`), or list them (dry run).
    What the scope cannot see is never read: the visibility rule is in the store's
    queries (`view_for`), so it is never counted, listed nor forgotten. Refused
    (`InvalidInput`, nothing forgotten) unless `everything`: a query with no word to look
    for (it would fit every memory), one that fits more than `limit` memories (all of
    them are forgotten, not the first `limit`), and one that fits more than one
    (`Ambiguous`, naming them: a person picks one by id, or confirms them all)."""
    view = view_for(st.settings, scope)
    if every_word(query) is None:
        if not everything:
            raise InvalidInput(
                f"--query {query!r} names nothing to look for, so it fits every memory."
                " Say what to forget, or pass --all to forget every live memory."
            )
        batches = (b for status in LIVE for b in st._store.memories.pages(status, view=view))
        found = [m for batch in batches for m in batch]
    else:
        # one more than `limit` says whether more fit: no need to read them all
        ids = st._store.memories.match(query, view=view, limit=EVERY if everything else limit + 1)
        if len(ids) == 1:  # holding the words, while it describes others too?
            ids += settle.also_described(st, query, ids, None, view=view)
        found = st._store.memories.get_many(ids if everything else ids[: limit + 1])
        if len(ids) > limit and not everything and not dry_run:
            raise InvalidInput(
                f"--query {query!r} fits more than {limit} memories. See them with --dry-run,"
                " say more, or pass --all to forget every one."
            )
        found = found if everything else found[:limit]
        if not found:
            meant, unclear = settle.described_memories(st, query, None, view=view)
            found = meant or unclear
            if len(found) > limit and not everything and not dry_run:
                raise InvalidInput(
                    f"--query {query!r} may mean more than {limit} memories. See them with"
                    " --dry-run, say more, or pass --all to forget every one."
                )
            found = found if everything else found[:limit]
    if len(found) > 1 and not everything and not dry_run:
        maybe = "; ".join(f"{m.ref} {m.text!r}" for m in found[:10])
        raise Ambiguous(
            f"--query {query!r} fits {len(found)} memories, so none was forgotten: {maybe}."
            " Forget one by id, say more, or pass --all to forget every one.",
            found,
        )
    if dry_run or not found:
        return found
    now = st.clock.now()
    with st._store.transaction():
        for memory in found:
            forgetting.set_forgotten(st, memory, now=now, actor=actor, detail={"query": query})
    settle.write_forgotten_marks(st)
    return st._store.memories.get_many([m.id for m in found])
