"""Completion and promotion, the engine's side of two seed habits: a topic marked
complete ("compress on completion": its memories stay stored and searchable, marked
`details.completed`, and the topic file shows a summary, docs/lifecycle.md) and a
memory promoted to MEMORY.md's block by a person who accepted the advisor's candidate
(`details.promoted`). Each mark is audited and undone the same way (`reopen`,
`complete --undo`). Functions over the engine's state, as `memories` is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from memoracle.engine.scope import can_see, own_scope, view_for
from memoracle.engine.state import EngineState
from memoracle.errors import InvalidInput, NotFound
from memoracle.graph import extract as graph_rules
from memoracle.types import Entity, Memory

TOPIC_LIMIT = 5000  # memories of one topic looked at, newest first
# Entity types whose topic completes by itself when its tasks are done (docs/lifecycle.md);
# a person, a place or a tool never "completes": only `memoracle complete` says so.
WORK_TYPES = frozenset({"Project", "Task", "Event", "Feature", "BugFix", "Document", "Integration"})
DUE_LIMIT = 300  # newest memories of a topic that say whether it completed by itself
QUIET_AFTER_DONE = timedelta(days=1)  # nothing said about it this long after its last task


@dataclass(frozen=True)
class Topic:
    """One entity's live memories as the workspace owner sees them, newest first, and
    which of them a completion marked (`completed`), with its time and cause."""

    entity: Entity
    memories: tuple[Memory, ...]

    @property
    def completed(self) -> tuple[Memory, ...]:
        return tuple(m for m in self.memories if _mark(m) == self.entity.key)

    @property
    def completed_at(self) -> datetime | None:
        times = [m.details["completed"]["at"] for m in self.completed]
        return datetime.fromisoformat(max(times)) if times else None


def _mark(memory: Memory) -> str | None:
    done = memory.details.get("completed")
    return str(done.get("topic")) if isinstance(done, dict) else None


def topic(st: EngineState, name: str) -> Topic:
    """The topic named `name` (any name of its entity), as the owner sees it."""
    key = graph_rules.canonical_key(name)
    view = view_for(st.settings, own_scope(st.settings))
    entity = st._store.graph.find(key, view=view) if key else None
    if entity is None:
        raise NotFound(f"No topic named {name!r}. Try: memoracle graph entities")
    return topic_of(st, entity)


def topic_of(st: EngineState, entity: Entity, *, limit: int = TOPIC_LIMIT) -> Topic:
    view = view_for(st.settings, own_scope(st.settings))
    ids = st._store.graph.memories_of([entity.id], limit=limit, view=view)
    return Topic(entity, tuple(st._store.memories.get_many(ids)))


def complete(st: EngineState, found: Topic, *, by: str, actor: str) -> list[int]:
    """Mark every memory of `found` not yet marked as completed with it (`by`: what
    said so — "cli", "task m12"), each with an audit `complete`. The ids marked."""
    now = st.clock.now()
    marked = [m for m in found.memories if _mark(m) != found.entity.key]
    with st._store.transaction():
        for m in marked:
            done = {"topic": found.entity.key, "at": now.isoformat(), "by": by}
            st._store.memories.set_details(m.id, {**m.details, "completed": done})
            st._store.audit.append(
                at=now, actor=actor, action="complete", memory_id=m.id, detail=done
            )
    return [m.id for m in marked]


def reopen(st: EngineState, found: Topic, *, actor: str) -> list[int]:
    """Undo `complete`: the marks of `found` taken off, each with an audit `reopen`; the
    topic does not complete by itself again (`due`) until something new is said of it."""
    now = st.clock.now()
    marked = found.completed
    with st._store.transaction():
        for m in marked:
            details = {k: v for k, v in m.details.items() if k != "completed"}
            details["reopened"] = {"topic": found.entity.key, "at": now.isoformat()}
            st._store.memories.set_details(m.id, details)
            st._store.audit.append(
                at=now,
                actor=actor,
                action="reopen",
                memory_id=m.id,
                detail={"topic": found.entity.key},
            )
    return [m.id for m in marked]


def due(st: EngineState, entities: Sequence[Entity]) -> list[tuple[Topic, Memory]]:
    """The topics of `entities` that completed by themselves, each with the task that
    closed it: a work topic (`WORK_TYPES`) with a task marked done (capture marks one
    when a turn says it is finished: docs/capture.md) and none still open, something of
    it not completed yet, nothing said about it for `QUIET_AFTER_DONE`, and nothing
    reopened by a person (`reopen`) since it was last said."""
    now = st.clock.now()
    found: list[tuple[Topic, Memory]] = []
    for entity in entities:
        if entity.type not in WORK_TYPES:
            continue
        t = topic_of(st, entity, limit=DUE_LIMIT)
        tasks = [m for m in t.memories if m.kind == "task"]
        if not tasks or any(not m.details.get("done") for m in tasks):
            continue
        fresh = [m for m in t.memories if _mark(m) != entity.key]
        newest = max((m.observed_at for m in t.memories), default=now)
        reopened = _reopened(t)
        if reopened is not None and newest <= reopened:
            continue  # a person reopened it: only something said since completes it again
        if fresh and now - newest >= QUIET_AFTER_DONE:
            found.append((t, max(tasks, key=lambda m: m.observed_at)))
    return found


def _reopened(found: Topic) -> datetime | None:
    times = [
        datetime.fromisoformat(str(mark["at"]))
        for m in found.memories
        if isinstance(mark := m.details.get("reopened"), dict)
        and mark.get("topic") == found.entity.key
    ]
    return max(times, default=None)


def promote(st: EngineState, refs: Sequence[str | int], *, actor: str) -> list[Memory]:
    """Put the live memories `refs` in MEMORY.md's block from the next render on
    (`details.promoted`, as a guardrail is: whatever their score), each audited
    `promote`. Only what the owner's private context sees may go there."""
    now = st.clock.now()
    chosen: list[Memory] = []
    for ref in refs:
        memory = st.memory(ref)
        if not can_see(st.settings, own_scope(st.settings), memory.scope):
            raise NotFound(f"No memory {ref}.")
        if memory.status not in ("active", "disputed"):
            raise InvalidInput(f"{memory.ref} is {memory.status}: only a live memory is promoted.")
        chosen.append(memory)
    with st._store.transaction():
        for m in chosen:
            if m.details.get("promoted"):
                continue
            mark = {"at": now.isoformat(), "by": actor}
            st._store.memories.set_details(m.id, {**m.details, "promoted": mark})
            st._store.audit.append(at=now, actor=actor, action="promote", memory_id=m.id)
    return [st.memory(m.id) for m in chosen]
