"""Arbitration, the Memory Pipeline's conflict resolver (docs/lifecycle.md#check-and-arbitration):
`check`, whether the store supports, contradicts or does not know a claim, citing the
memories that say so, read-only; `arbitrate`, the pending disputes settled in one pass
where what was said since the dispute settles them, the rest left for a person.

Functions over the engine's state, as `memories` is. `check` reads through search and
the dedup query, so it sees exactly what the requesting scope may see (docs/scopes.md)
and changes no memory; the verdict of a claim against a memory is `conflicts.judge`,
the rule capture itself applies, on the slots both texts fill."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memoracle.engine import search, upkeep
from memoracle.engine.scope import view_for
from memoracle.engine.state import EngineState
from memoracle.errors import InvalidInput
from memoracle.lifecycle.conflicts import SlotIndex
from memoracle.lifecycle.dedup import DedupScore, is_duplicate
from memoracle.lifecycle.slots import slots_of
from memoracle.storage_types import BackupInfo
from memoracle.text import clean
from memoracle.types import LIVE, Dispute, Hit, Memory, Scope

__all__ = [
    "CHECK_K",
    "Arbitration",
    "Citation",
    "ClaimCheck",
    "Ruling",
    "arbitrate",
    "check",
]

CHECK_K = 20  # search hits a claim is judged against (besides the dedup query's five)
SLOT_K = 50  # memories read per slot the claim fills, newest first
RELATED = 3  # memories shown beside an unknown claim
Stance = Literal["supports", "contradicts"]
Verdict = Literal["supports", "contradicts", "unknown"]
_EXAMPLE = 'memoracle check "Anna lives in Lyon"'


@dataclass(frozen=True)
class Citation:
    """A memory that takes a stance on the claim, and why (for people)."""

    memory: Memory
    stance: Stance
    reason: str


@dataclass(frozen=True)
class ClaimCheck:
    """What the store says of `claim`: `verdict` is the stance of the newest memory that
    takes one (`cited`, newest first); "unknown" when none does, with the nearest
    memories in `related` (they neither support nor contradict it)."""

    claim: str
    verdict: Verdict
    cited: tuple[Citation, ...]
    related: tuple[Memory, ...]
    note: str | None = None


@dataclass(frozen=True)
class Ruling:
    """One pending item and what arbitration does with it: "confirm" (it holds again)
    or "leave" (for a person: `memoracle resolve`)."""

    dispute: Dispute
    decision: Literal["confirm", "leave"]
    reason: str


@dataclass(frozen=True)
class Arbitration:
    """Every pending item's ruling, in `pending`'s order; `backup` when anything was
    settled (not on a dry run)."""

    rulings: tuple[Ruling, ...]
    dry_run: bool
    backup: BackupInfo | None = None

    @property
    def settled(self) -> int:
        return sum(r.decision != "leave" for r in self.rulings)


def check(st: EngineState, claim: str, *, scope: Scope | None = None) -> ClaimCheck:
    """`claim` against the live memories `scope` may see that fill a slot it fills, or
    that search or the dedup query finds for it: a memory filling the same slot with
    the same value, or saying the same thing in other words (a duplicate by the dedup
    score), supports it; one filling a single-valued slot with another value, or
    denying it, contradicts it. Changes no memory (no recall boost, no access count).
    The verdict is the stance of the newest memory said without a hedge; of the newest
    hedged one when there is none."""
    said = clean(claim).strip()
    if not said:
        raise InvalidInput(f"Nothing to check: the claim is empty. Try: {_EXAMPLE}")
    outcome = search.search(st, said, k=CHECK_K, scope=scope)
    found = {h.memory.id: h.memory for h in outcome.hits if h.memory is not None}
    near = upkeep.dedup_query(st, said, scope=scope, limit=5)
    found.update((m.id, m) for m, _ in near)
    view = view_for(st.settings, scope, now=st.clock.now())
    claimed = slots_of(said)
    ids = [
        i
        for slot in claimed
        for i in st._store.memories.seen_in_slot(*slot.key, view, limit=SLOT_K)
    ]
    found.update((m.id, m) for m in st._store.memories.get_many([i for i in ids if i not in found]))
    live = [m for m in found.values() if m.status in LIVE]
    cited: dict[int, tuple[bool, Citation]] = {}
    for memory_id, verdict in SlotIndex([(m.id, m.text) for m in live]).verdicts(claimed):
        stance: Stance = "supports" if verdict.kind == "REDUNDANT" else "contradicts"
        hedged = verdict.old is not None and verdict.old.hedged
        memory = found[memory_id]
        reason = verdict.reason + (" (said with a hedge)" if hedged else "")
        reason += " (itself disputed)" if memory.status == "disputed" else ""
        cited[memory_id] = (hedged, Citation(memory, stance, reason))
    for memory, score in near:
        if memory.id not in cited and memory.status in LIVE and _same(score):
            cited[memory.id] = (
                False,
                Citation(memory, "supports", f"says the same: {score.reason}"),
            )
    # The newest sure word decides; a hedged one only when nothing sure was said.
    ranked = sorted(
        cited.values(), key=lambda c: (not c[0], c[1].memory.observed_at, c[1].memory.id)
    )
    ordered = tuple(c for _, c in reversed(ranked))
    verdict_of: Verdict = ordered[0].stance if ordered else "unknown"
    related = () if ordered else tuple(_nearest(outcome.hits, live))
    return ClaimCheck(said, verdict_of, ordered, related, outcome.note)


def _same(score: DedupScore) -> bool:
    """A duplicate by the dedup score, with no date, number or negation between them."""
    return is_duplicate(score) and not score.conflicts


def _nearest(hits: Sequence[Hit], live: Sequence[Memory]) -> list[Memory]:
    ids = {m.id for m in live}
    ordered: list[Memory] = []
    for hit in hits:
        if hit.memory is not None and hit.memory.id in ids and hit.memory not in ordered:
            ordered.append(hit.memory)
    return ordered[:RELATED]


def arbitrate(st: EngineState, *, dry_run: bool = False, actor: str = "arbitrate") -> Arbitration:
    """Rule on every pending item (`upkeep.pending`): a disputed memory said again,
    unhedged, after the dispute, or whose disputing memory no longer stands (forgotten,
    superseded, archived), is confirmed, as `resolve --confirm` would (audited, actor
    `arbitrate`); every other dispute, and every memory a "forget …" left waiting, is
    left for a person. A verified backup is taken before the first change; `dry_run`
    changes nothing."""
    rulings = tuple(_ruling(st, d) for d in upkeep.pending(st))
    backup = None
    if not dry_run and any(r.decision == "confirm" for r in rulings):
        backup = upkeep.backup(st)
        for ruling in rulings:
            if ruling.decision == "confirm":
                upkeep.resolve(st, ruling.dispute.memory.id, confirm=True, actor=actor)
    return Arbitration(rulings, dry_run, backup)


def _ruling(st: EngineState, dispute: Dispute) -> Ruling:
    memory, by = dispute.memory, dispute.by
    if memory.status != "disputed":
        return Ruling(dispute, "leave", "a forget waits for a person to say which memory goes")
    again = _said_again(st, memory)
    if again is not None:
        return Ruling(
            dispute, "confirm", f"said again since the dispute: {again.ref} {again.text!r}"
        )
    if by is not None and by.status not in LIVE:
        return Ruling(dispute, "confirm", f"what disputed it, {by.ref}, is {by.status}")
    return Ruling(dispute, "leave", "nothing said since settles it")


def _said_again(st: EngineState, memory: Memory) -> Memory | None:
    """The newest live memory that, after the memory's last dispute, said it again
    without a hedge (capture audits it as a `confirm`)."""
    entries = st._store.audit.entries(memory_id=memory.id, limit=1000)
    for entry in entries:  # newest first
        if entry.action == "dispute":
            return None
        by = entry.detail.get("by")
        if entry.action != "confirm" or not isinstance(by, str):
            continue
        said = st._store.memories.get(int(by.removeprefix("m_")))
        if said is not None and said.status in LIVE and not _hedged(said):
            return said
    return None


def _hedged(memory: Memory) -> bool:
    return any(slot.hedged for slot in slots_of(memory.text, lang=memory.lang))
