"""What keeps the store healthy: near-duplicate groups and their merge, slots settled
for memories that have none, disputes and their resolution, scores, backups and
restores, run records and stats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.capture.pipeline import prepare
from memoracle.embed import from_blob
from memoracle.engine import forgetting, settle, write
from memoracle.engine.near import slots_agree
from memoracle.engine.scope import can_see, view_for
from memoracle.engine.state import EngineState, parse_ref
from memoracle.engine.write import CONFIRM_STEP
from memoracle.errors import (
    EngineError,
    InvalidInput,
)
from memoracle.lifecycle import dedup, scoring
from memoracle.lifecycle.dedup import DedupScore
from memoracle.lifecycle.scoring import MemoryScore
from memoracle.lifecycle.slots import DEFAULT_SUBJECT, Slot, slots_of, value_key
from memoracle.recall.query import lexical_queries
from memoracle.storage_types import BackupInfo, View
from memoracle.store.backup import prune_backups
from memoracle.text import clean
from memoracle.types import (
    LIVE,
    Dispute,
    DuplicateSet,
    Memory,
    NewMemory,
    Scope,
    Stats,
)

DEDUP_CANDIDATES = 20  # old memories FTS offers the nightly dedup for each new one
# Past one new memory in this many live ones, comparing the whole live store is cheaper
# than asking FTS for each new one (measured at 40k: FTS costs 0.5 µs per live memory per
# new one, the whole store about 4e-8·n² seconds).
WHOLE_STORE_RATIO = 12


def duplicates(st: EngineState, *, after: int | None = None) -> list[DuplicateSet]:
    """`Engine.duplicates`: the near-duplicate groups among live memories, each with the
    memory it keeps; with `after` (a memory id), only the groups holding a memory stored
    since."""
    live_count = sum(n for (status, _), n in st._store.memories.counts().items()
                     if status in LIVE)  # fmt: skip
    if after is not None and (
        st._store.memories.count_after(after, LIVE) * WHOLE_STORE_RATIO <= live_count
    ):
        live = _fresh_and_near(st, after)
    else:
        live = [m for status in LIVE for m in all_memories(st, status)]
    vectors = _vectors_of(st, live)
    groups: dict[tuple[Any, ...], list[Memory]] = {}
    for m in live:
        key = (m.scope.agent, m.scope.user, m.scope.chat, m.subject, m.kind)
        groups.setdefault(key, []).append(m)
    found: list[DuplicateSet] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        by_id = {m.id: m for m in members}

        def fullest(i: int, by_id: dict[int, Memory] = by_id) -> tuple[int, int, int]:
            return (-len(by_id[i].text), -by_id[i].access_count, i)

        near = dedup.find_duplicates(
            [(m.id, m.text) for m in members],
            vectors={m.id: vectors[m.id] for m in members if m.id in vectors},
            threshold=st.settings.lifecycle.dedup_threshold,
            rank=fullest,
        )
        held = st._store.memories.slot_values([i for g in near for i in (g.keep, *g.merge_ids)])
        for group in near:
            if after is not None and max(group.keep, *group.merge_ids) <= after:
                continue  # old memories only: compared on an earlier night
            merge = tuple(
                (by_id[i], score)
                for i, score in group.merge
                if slots_agree(held[group.keep], held[i])  # same words, another value
            )
            if merge:
                found.append(DuplicateSet(by_id[group.keep], merge))
    return sorted(found, key=lambda g: g.keep.id)


def _fresh_and_near(st: EngineState, after: int) -> list[Memory]:
    """The live memories stored after id `after`, and those FTS finds nearest each."""
    fresh = [m for status in LIVE for batch in st._store.memories.pages(status, after=after)
             for m in batch]  # fmt: skip
    near: set[int] = set()
    for memory in fresh:
        queries = lexical_queries(memory.text, prefixes=False)  # [AND] or [AND, OR]
        if queries:
            found = st._store.index.lexical_memories(
                queries[-1], View(memory.scope), limit=DEDUP_CANDIDATES
            )
            near.update(i for i, _ in found if i <= after)
    old = [m for m in st._store.memories.get_many(sorted(near)) if m.status in LIVE]
    return fresh + old


def merge_duplicates(st: EngineState, groups: Sequence[DuplicateSet], *, actor: str = "cli") -> int:
    """`Engine.merge_duplicates`: how many memories were merged into their group's kept
    one (superseded by it, their provenance moved over, audited on both sides)."""
    now = st.clock.now()
    merged = 0
    with st._store.transaction():
        memories = st._store.memories
        for group in groups:
            for other, score in group.merge:
                for episode_id in other.episode_ids:
                    memories.add_provenance(group.keep.id, now=now, episode_id=episode_id)
                for origin in other.origins:
                    memories.add_provenance(group.keep.id, now=now, origin=origin)
                memories.supersede(other.id, group.keep.id, now=now)
                memories.confirm(group.keep.id, step=CONFIRM_STEP)
                detail = {"score": round(score.score, 3), "reason": score.reason}
                st._store.audit.append(
                    at=now,
                    actor=actor,
                    action="merge",
                    memory_id=group.keep.id,
                    detail={"merged": other.ref, **detail},
                )
                st._store.audit.append(
                    at=now,
                    actor=actor,
                    action="merged-into",
                    memory_id=other.id,
                    detail={"into": group.keep.ref, **detail},
                )
                merged += 1
    return merged


def dedup_query(
    st: EngineState, text: str, *, scope: Scope | None = None, limit: int = 5
) -> list[tuple[Memory, DedupScore]]:
    """The live memories closest to `text` by the dedup score, best first (whether or
    not they pass the threshold: `dedup.is_duplicate` says)."""
    said = clean(text).strip()
    if not said:
        raise InvalidInput("Nothing to compare: the text is empty.")
    view = view_for(st.settings, scope, now=st.clock.now())
    ids: list[int] = []
    for words in lexical_queries(said)[:2]:
        found = st._store.index.lexical_memories(words, view, limit=50)
        ids += [i for i, _ in found if i not in ids]
    candidates = st._store.memories.get_many(ids)
    by_id = {m.id: m for m in candidates}
    scored = dedup.query(said, [(m.id, m.text) for m in candidates], limit=limit)
    return [(by_id[i], score) for i, score in scored]


def _vectors_of(st: EngineState, memories: Sequence[Memory]) -> dict[int, npt.NDArray[np.float32]]:
    """Stored vectors of the configured model for `memories`, by memory id."""
    embedder = st.searcher.embedder
    if embedder is None:
        return {}
    by_hash: dict[str, list[int]] = {}
    for m in memories:
        by_hash.setdefault(m.content_hash, []).append(m.id)
    out: dict[int, npt.NDArray[np.float32]] = {}
    for h, dim, blob in st._store.index.vectors_for(embedder.model_id, list(by_hash)):
        if dim != embedder.dim:
            continue
        try:
            vector = from_blob(blob, dim)
        except EngineError:
            continue
        for memory_id in by_hash[h]:
            out[memory_id] = vector
    return out


def all_memories(
    st: EngineState, status: str, page: int = 2000, *, seen_by: Scope | None = None
) -> list[Memory]:
    """Every memory with `status` (that `seen_by` may see, when given), newest first,
    read a page at a time."""
    found = [
        m
        for batch in st._store.memories.pages(status, size=page)
        for m in batch
        if seen_by is None or can_see(st.settings, seen_by, m.scope)
    ]
    found.sort(key=lambda m: (m.observed_at, m.id), reverse=True)
    return found


def settle_unslotted(st: EngineState, *, actor: str = "nightly") -> int:
    """`Engine.settle_unslotted`: how many live memories whose slot was never looked
    for were looked at (and settled, in order, as capture would have)."""
    done = 0
    while ids := st._store.memories.without_slot(limit=500):
        now = st.clock.now()
        with st._store.transaction():
            for memory in st._store.memories.get_many(ids):
                new = NewMemory(
                    kind=memory.kind,
                    text=memory.text,
                    layer=memory.layer,
                    source=memory.source,
                    observed_at=memory.observed_at,
                    content_hash=memory.content_hash,
                    scope=memory.scope,
                    lang=memory.lang,
                )
                speaker = memory.subject if memory.subject not in (None, "user") else None
                slots = slots_of(memory.text, lang=memory.lang, speaker=speaker)
                write.settle_slots(st, memory.id, new, slots, now=now, actor=actor)
        done += len(ids)
    return done


ASKED = "forget-asked"  # the audit action of a "forget …" that fitted several memories
_ANSWERS = ("forget", "resolve", "restore")  # what answers it


def pending(st: EngineState) -> list[Dispute]:
    """Disputed memories (a hedged contradiction put them in doubt), oldest first,
    each with the memory that disputed it; then the live memories a "forget …" said in
    conversation fitted along with others, each waiting for a person to say whether it
    goes (`resolve --reject` forgets it, `--confirm` keeps it; `by` None, `reason` what
    was said)."""
    disputed = st._store.memories.select(status="disputed", limit=10_000)
    found = [_dispute(st, memory) for memory in reversed(disputed)]
    asks = st._store.audit.open_asks(ASKED, _ANSWERS)
    live = {m.id: m for m in st._store.memories.get_many([a.memory_id or 0 for a in asks])}
    for ask in asks:
        memory = live.get(ask.memory_id or 0)
        if memory is not None and memory.status == "active":
            said = str(ask.detail.get("said", ""))
            found.append(Dispute(memory, None, f"asked to forget: {said!r}", ask.at))
    return found


def _asked(st: EngineState, memory: Memory) -> int | None:
    """The turn whose "forget …" fitted several memories and left `memory` waiting (0
    when it names none); None when nothing waits."""
    if memory.status != "active":
        return None
    for ask in st._store.audit.open_asks(ASKED, _ANSWERS):
        if ask.memory_id == memory.id:
            episode = ask.detail.get("episode")
            return episode if isinstance(episode, int) else 0
    return None


def _dispute(st: EngineState, memory: Memory) -> Dispute:
    """`memory` with what last disputed it (its newest `dispute` audit entry)."""
    entry = next(
        (e for e in st._store.audit.entries(memory_id=memory.id) if e.action == "dispute"),
        None,
    )
    if entry is None:
        return Dispute(memory, None, "", None)
    by = entry.detail.get("by")
    found = st._store.memories.get(parse_ref(by)) if isinstance(by, str) else None
    return Dispute(memory, found, str(entry.detail.get("reason", "")), entry.at)


def resolve(
    st: EngineState,
    ref: str | int,
    *,
    confirm: bool,
    replacement: str | None = None,
    actor: str = "cli",
) -> Memory:
    """`Engine.resolve`: the disputed (or forget-waiting) memory as it is now, kept by
    `confirm`, else superseded by `replacement` or by what disputed it (or forgotten)."""
    memory = st.memory(ref)
    if (said_in := _asked(st, memory)) is not None:
        return _answer(st, memory, forget=not confirm, actor=actor, said_in=said_in or None)
    if memory.status != "disputed":
        raise InvalidInput(
            f"{memory.ref} is not disputed (it is {memory.status}); nothing to resolve. "
            "See: memoracle pending"
        )
    if confirm and replacement:
        raise InvalidInput("--replacement goes with --reject, not --confirm.")
    now = st.clock.now()
    by = _dispute(st, memory).by
    with st._store.transaction():
        memories = st._store.memories
        if confirm:
            memories.set_status(memory.id, "active", now=now)
            detail: dict[str, Any] = {"decision": "confirm"}
        else:
            if replacement is not None:
                said = prepare(replacement).text.strip()
                if not said:
                    raise InvalidInput("The replacement text is empty.")
                new, slots = _replacement(st, memory, said, now=now)
                new_id, _ = write.store_memory(st, new, now=now, actor=actor, slots=slots)
                by = memories.get(new_id)
            if st.memory(memory.id).status != "superseded":  # the replacement may have
                if by is not None:
                    memories.supersede(memory.id, by.id, now=now)
                else:
                    memories.set_status(memory.id, "superseded", now=now)
            detail = {"decision": "reject", "by": by.ref if by else None}
        st._store.audit.append(
            at=now, actor=actor, action="resolve", memory_id=memory.id, detail=detail
        )
    return st.memory(memory.id)


def _replacement(
    st: EngineState, memory: Memory, said: str, *, now: datetime
) -> tuple[NewMemory, tuple[Slot, ...]]:
    """The memory `said` makes of a rejected `memory`'s replacement, with the slots it
    fills. It takes the old memory's place: its kind, subject and attribute (predicate),
    whatever the rules would make of the new words alone ("Lyon" is no sentence; "I'm
    moving to Lyon" reads as an event). Each slot the old memory filled gets the value
    the replacement states for it, else the replacement's words as a whole; slots the
    replacement states besides are kept too. The object is the new value when the
    replacement states the predicate's slot, else unknown."""
    speaker = memory.subject if memory.subject not in (None, DEFAULT_SUBJECT) else None
    stated = {s.key: s for s in slots_of(said, speaker=speaker)}
    held = st._store.memories.slot_values([memory.id])[memory.id]
    slots = {
        key: stated.get(key) or Slot(key[0], key[1], value_key(said), said=said)
        for key in held
        if key != (write.NO_SLOT, write.NO_SLOT)
    }
    slots.update({k: s for k, s in stated.items() if k not in slots})
    value = next(
        (s.said or s.value for (_, a), s in stated.items() if memory.predicate in (a, _base(a))),
        None,
    )
    new = replace(
        write.stated(
            st, said, kind=memory.kind, source="user-stated", observed_at=now, scope=memory.scope
        ),
        subject=memory.subject,
        predicate=memory.predicate,
        object=value if memory.predicate else None,
    )
    return new, tuple(slots.values())


def _base(attribute: str) -> str:
    """ "prefers" of "prefers:drink" (a parametrised attribute)."""
    return attribute.partition(":")[0]


def backup(st: EngineState) -> BackupInfo:
    """A verified copy of the database in HOME/backups (the newest
    `lifecycle.backups_kept` are kept), taken before any bulk change."""
    folder, now = st.settings.home / "backups", st.clock.now()
    info = st._store.maintenance.backup(folder, now=now)
    prune_backups(
        folder, keep=st.settings.lifecycle.backups_kept, now=now
    )  # by the engine clock, as named
    return info


def record_run(st: EngineState, kind: str, counts: dict[str, int]) -> None:
    """Note a finished job (nightly, …) in the runs table, for health and stats."""
    st.finish_run(st.start_run(kind), "ok", counts)


def _answer(
    st: EngineState, memory: Memory, *, forget: bool, actor: str, said_in: int | None
) -> Memory:
    """A person's answer to a "forget …" (said in turn `said_in`) that left `memory`
    waiting: forget it (and that turn, when it repeats it), or keep it (an audit
    `resolve`)."""
    now = st.clock.now()
    with st._store.transaction():
        if forget:
            asked: dict[str, Any] = {"asked": True}
            forgetting.set_forgotten(
                st, memory, now=now, actor=actor, detail=asked, said_in=said_in
            )
        else:
            kept: dict[str, Any] = {"decision": "confirm", "asked": "forget"}
            st._store.audit.append(
                at=now, actor=actor, action="resolve", memory_id=memory.id, detail=kept
            )
    if forget:
        settle.write_forgotten_marks(st)
    return st.memory(memory.id)


def restore(st: EngineState, ref: str | int, *, actor: str = "cli") -> Memory:
    """`Engine.restore`: the archived or forgotten memory back as it was, its
    activation refreshed as a recall would."""
    memory_id = parse_ref(ref) if isinstance(ref, str) else ref
    now = st.clock.now()
    memory = st._store.memories.get(memory_id)
    if memory is not None and memory.status == "forgotten":
        return _unforget(st, memory, now=now, actor=actor)
    with st._store.transaction():
        st._store.archive.restore(memory_id, now=now, actor=actor)
        st._store.memories.touch([memory_id], now=now, boost=st.settings.recall.boost)
    return st.memory(memory_id)


def _unforget(st: EngineState, memory: Memory, *, now: datetime, actor: str) -> Memory:
    """A forgotten memory brought back to the status it had (its newest `forget` audit
    entry says which), and with it the turns it hid (they are linked to it)."""
    forgot = next(
        (e for e in st._store.audit.entries(memory_id=memory.id) if e.action == "forget"), None
    )
    was = str(forgot.detail.get("from", "active")) if forgot else "active"
    was = was if was in ("active", "disputed", "superseded") else "active"
    with st._store.transaction():
        st._store.memories.set_status(memory.id, was, now=now)
        st._store.audit.append(
            at=now, actor=actor, action="restore", memory_id=memory.id, detail={"to": was}
        )
        st._store.memories.touch([memory.id], now=now, boost=st.settings.recall.boost)
    settle.write_forgotten_marks(st)
    return st.memory(memory.id)


def score(st: EngineState, *, seen_by: Scope | None = None) -> list[tuple[Memory, MemoryScore]]:
    """`Engine.score`: the active memories (that `seen_by` may see) with their
    promotion/archival score, best first; nothing written."""
    memories = {m.id: m for m in all_memories(st, "active", seen_by=seen_by)}
    ranked = scoring.rank(memories.values(), st.clock.now(), st.settings.decay)
    return [(memories[s.memory_id], s) for s in ranked]


def stats(st: EngineState, *, scope: Scope | None = None) -> Stats:
    """What `scope` sees of the store, counted (the database's size and the audit log
    are the store's own)."""
    view = view_for(st.settings, scope)
    counts = st._store.memories.counts(view)
    by_status: dict[str, int] = {}
    active_by_kind: dict[str, int] = {}
    for (status, kind), n in counts.items():
        by_status[status] = by_status.get(status, 0) + n
        if status == "active":
            active_by_kind[kind] = n
    last = st._store.runs.last("ingest")
    return Stats(
        home=str(st.settings.home),
        database=st._store.location,
        schema_version=st._store.schema_version,
        database_bytes=st._store.maintenance.size(),
        memories=sum(counts.values()),
        by_status=by_status,
        active_by_kind=active_by_kind,
        episodes=st._store.episodes.count(view),
        episodes_by_kind=st._store.episodes.count_by_kind(view),
        sessions=st._store.episodes.count_sessions(view),
        audit_entries=st._store.audit.count(),
        last_ingest=last[1] if last else None,
    )
