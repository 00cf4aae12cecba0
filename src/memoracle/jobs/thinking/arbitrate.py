"""arbitrate: the disputes waiting in `pending` (a hedged contradiction) and the pairs
the lifecycle left unsure (new memories close to an older one, under the dedup
threshold), each settled by the model: supersede, merge or keep both, with its reason.
Above the gate the change is made (and undone by `memoracle undo-model`); under it the
memory that would go is disputed, the model's reason shown by `pending`."""

from __future__ import annotations

from datetime import datetime

from memoracle.engine import Engine
from memoracle.engine import thinking as apply
from memoracle.jobs.thinking import prompts
from memoracle.jobs.thinking.files import State, Work
from memoracle.jobs.thinking.work import Night, Question, vet
from memoracle.llm import Answer, Ask

BATCH = 5  # pairs in one ask
NEW_READ = 40  # new memories looked at for an unsure pair, a night
UNSURE_BAND = 0.2  # a dedup score this far under the threshold is "unsure"


def plan(engine: Engine, state: State, now: datetime) -> list[Work]:
    pairs: list[tuple[int, int]] = []
    for dispute in engine.pending():
        if dispute.by is not None and not _asked_before(engine, dispute.memory.id):
            pairs.append((dispute.memory.id, dispute.by.id))
    pairs += _unsure(engine, state)
    return [
        Work(
            "arbitrate",
            "arbitrate:" + ",".join(f"{a}-{b}" for a, b in chunk),
            {"pairs": [list(p) for p in chunk]},
        )
        for chunk in (pairs[i : i + BATCH] for i in range(0, len(pairs), BATCH))
    ]


def _asked_before(engine: Engine, memory_id: int) -> bool:
    """Whether the model already disputed it (its reason is there for a person)."""
    entries = engine.history(memory_id, limit=20)
    newest = next((e for e in entries if e.action == "dispute"), None)
    return newest is not None and newest.actor == apply.ACTOR


def _unsure(engine: Engine, state: State) -> list[tuple[int, int]]:
    """New live memories (since the last night's) and the closest older one, when their
    dedup score is within `UNSURE_BAND` under the threshold."""
    through = int(state.extra.get("arbitrate_through", 0))
    threshold = engine.settings.lifecycle.dedup_threshold
    fresh = [m for m in engine.memories_with_status("active", limit=NEW_READ) if m.id > through]
    state.extra["arbitrate_through"] = engine.newest_memory_id()
    pairs: list[tuple[int, int]] = []
    seen: set[frozenset[int]] = set()
    for memory in fresh:
        for other, score in engine.dedup_query(memory.text, scope=memory.scope, limit=3):
            key = frozenset((memory.id, other.id))
            if other.id == memory.id or key in seen or other.subject != memory.subject:
                continue
            if threshold - UNSURE_BAND <= score.score < threshold:
                seen.add(key)
                pairs.append((other.id, memory.id))
    return pairs


def question(engine: Engine, work: Work) -> Question | None:
    pairs = [(int(a), int(b)) for a, b in work.payload.get("pairs", [])]
    found = {m.id: m for m in engine.memories_by_id([i for p in pairs for i in p])}
    lines = []
    for n, (a, b) in enumerate(pairs, 1):
        if a in found and b in found:
            first, second = found[a], found[b]
            lines.append(
                f"pair {n}:\n  {first.ref} ({first.observed_at.date()}): {first.text}"
                f"\n  {second.ref} ({second.observed_at.date()}): {second.text}"
            )
    if not lines:
        return None
    user = "\n".join(lines) + '\n\nAnswer as {"decisions": [...]}, one per pair.'
    ask = Ask(
        "arbitrate",
        prompts.ARBITRATE_VERSION,
        prompts.ARBITRATE_SYSTEM,
        user,
        prompts.ARBITRATE_SCHEMA,
        prompts.MAX_TOKENS["arbitrate"],
    )
    return Question(work, ask, frozenset(f"m_{i}" for p in pairs for i in p if i in found))


def settle(night: Night, q: Question, answer: Answer) -> None:
    pairs = [(int(a), int(b)) for a, b in q.work.payload.get("pairs", [])]
    engine = night.engine
    for item in answer.data.get("decisions", []):
        number = int(item.get("pair", 0))
        if not 1 <= number <= len(pairs):
            night.refuse(q, f"unknown id pair {number}", model_id=answer.model_id, said=item)
            continue
        a, b = pairs[number - 1]
        cites = [f"m_{a}", f"m_{b}"]
        keep = str(item.get("keep", ""))
        why = vet(engine, q, cites, [str(item.get("reason", ""))])
        if why is None and keep not in cites:
            why = f"unknown id {keep} (not one of pair {number})"
        if why is not None:
            night.refuse(q, why, model_id=answer.model_id, said=item)
            continue
        kept = int(keep[2:])
        other = b if kept == a else a
        tag = night.tag(q, answer, item, cites)
        decision = str(item["decision"])
        if decision == "keep_both":
            disputed = [i for i in (a, b) if engine.memory(i).status == "disputed"]
            if night.applies(item) and disputed:
                for i in disputed:
                    apply.keep(engine, i, tag)
                night.counts["applied"] += 1
            continue
        if engine.memory(other).status not in ("active", "disputed"):
            continue  # settled since it was asked
        if night.applies(item):
            apply.supersede(engine, other, kept, tag, change=decision)
            night.counts["applied"] += 1
        else:
            apply.hold(engine, other, kept, tag)
            night.counts["held"] += 1
