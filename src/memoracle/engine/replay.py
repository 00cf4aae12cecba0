"""Delivering the write queue (`memoracle.outbox`) once the store works again
(docs/outage.md).

`deliver` takes HOME/queue/queue.lock, reads the queue file and stores each line once, in
order, through the normal write paths (`write.capture_many`, `memories.remember`: the
redaction, the size check and the injection write audit apply as at any write). A
capture is keyed by its turns (session, turn id, or time and text), so a line delivered
twice stores its turns once; a remember said again is the same memory, strengthened. A
line that cannot be parsed, or that the engine refuses (`InvalidInput`: over a limit, an
expiry already past), is put aside in HOME/queue/set-aside.jsonl with the reason, never
dropped and never in the way of the rest. The first line the store cannot take (a store
error, a lock past its timeout) stops the delivery: it and the lines after it wait for
the next one. What was delivered or put aside leaves the file, rewritten atomically.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from memoracle import outbox
from memoracle.clock import FixedClock
from memoracle.engine import memories, write
from memoracle.engine.state import EngineState
from memoracle.errors import EngineError, StoreError, WorkspaceError, WriteHeld
from memoracle.outbox import Entry

__all__ = ["Replay", "deliver"]

log = logging.getLogger(__name__)


@dataclass
class Replay:
    """What a delivery did: entries stored (`delivered`, their ids), lines put aside
    (with why), lines left waiting and the error that stopped it, if one did."""

    delivered: list[str] = field(default_factory=list)
    set_aside: list[str] = field(default_factory=list)  # "line N: why"
    waiting: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "delivered": len(self.delivered),
            "ids": list(self.delivered),
            "set_aside": list(self.set_aside),
            "waiting": self.waiting,
            "error": self.error,
        }


def deliver(st: EngineState) -> Replay:
    """Store every line of the queue once, in order (see the module's docstring). A
    store that is read-only, or no queue file, is a no-op. Raises `WorkspaceError` only
    when the queue's own files cannot be locked, read or rewritten."""
    done = Replay()
    home = st.settings.home
    if st._store.readonly or not outbox.queue_path(home).exists():
        return done
    with outbox.held(home):
        lines = outbox.read(home)
        keep: list[str] = []
        for line in lines:
            if done.error is not None:
                keep.append(line.raw)
            elif line.entry is None:
                _aside(st, done, line.number, line.raw, line.problem or "unreadable")
            else:
                try:
                    _store(st, line.entry)
                    done.delivered.append(line.entry.id)
                except (StoreError, WorkspaceError) as exc:  # the store still cannot take it
                    done.error = f"{line.entry.id}: {exc}"
                    keep.append(line.raw)
                except EngineError as exc:  # refused for good: kept aside, said
                    _aside(st, done, line.number, line.raw, f"refused at replay: {exc}")
        if len(keep) != len(lines):
            outbox.rewrite(home, keep)
    done.waiting = len(keep)
    if done.delivered or done.set_aside:
        log.warning(
            "write queue: %d delivered, %d set aside, %d waiting",
            len(done.delivered), len(done.set_aside), done.waiting,
        )  # fmt: skip
    return done


def _store(st: EngineState, entry: Entry) -> None:
    if entry.kind == "capture":
        batches = [(turns, scope) for scope, turns in entry.batches]
        write.capture_many(st, batches, actor=entry.actor)
        return
    ttl = None if entry.ttl_seconds is None else timedelta(seconds=entry.ttl_seconds)
    with _said_at(st, entry):
        try:
            memories.remember(
                st, entry.text, kind=entry.memory_kind, scope=entry.scope,
                source=entry.source, actor=entry.actor, expires_at=entry.until, ttl=ttl,
            )  # fmt: skip
        except WriteHeld as held:  # held for a person to review: delivered all the same
            log.warning("write queue: %s held for review as %s", entry.id, held.ref)


@contextmanager
def _said_at(st: EngineState, entry: Entry) -> Iterator[None]:
    """A remember carries no time of its own: it is stored as at the time it was said."""
    clock, st.clock = st.clock, FixedClock(entry.said_at)
    try:
        yield
    finally:
        st.clock = clock


def _aside(st: EngineState, done: Replay, number: int, raw: str, why: str) -> None:
    path = outbox.set_aside(st.settings.home, raw, why, st.clock.now())
    said = f"line {number}: {why}"
    log.warning("write queue: %s (kept in %s)", said, path)
    done.set_aside.append(said)
