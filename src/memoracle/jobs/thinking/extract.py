"""extract: the turns of the day the rules stored nothing from, read by the model for
memories the rules missed. Each memory cites the turns it came from and is stored as
source `llm`, rule `extract/<version>`; under the gate it is stored disputed (out of
search and recall) and waits in `pending`."""

from __future__ import annotations

from datetime import datetime, timedelta

from memoracle.engine import Engine
from memoracle.engine import thinking as apply
from memoracle.errors import InvalidInput
from memoracle.jobs.thinking import prompts
from memoracle.jobs.thinking.files import State, Work
from memoracle.jobs.thinking.work import Night, Question, clean, refs, vet
from memoracle.llm import Answer, Ask
from memoracle.types import Episode, Scope

BATCH = 8  # turns in one ask
MOST = 200  # turns read in one night (the rest: the next night's, by time)
TURN_CHARS = 600  # of each turn shown
FIRST_DAYS = 1  # a store's first night reads this many days back


def plan(engine: Engine, state: State, now: datetime) -> list[Work]:
    """The day's turns without a memory, in batches; `state.extract_through` moves on."""
    since = (
        datetime.fromisoformat(state.extract_through)
        if state.extract_through
        else now - timedelta(days=FIRST_DAYS)
    )
    turns = apply.turns_without_memory(engine, since, now, limit=MOST)
    state.extract_through = (
        turns[-1].at + timedelta(microseconds=1) if len(turns) == MOST else now
    ).isoformat()
    by_scope: dict[Scope, list[Episode]] = {}
    for turn in turns:  # one ask reads one scope's turns: none lends words to another's
        by_scope.setdefault(turn.scope, []).append(turn)
    return [
        Work(
            "extract", f"extract:{batch[0].id}-{batch[-1].id}", {"episodes": [t.id for t in batch]}
        )
        for group in by_scope.values()
        for batch in (group[i : i + BATCH] for i in range(0, len(group), BATCH))
    ]


def question(engine: Engine, work: Work) -> Question | None:
    turns = engine.turns_by_id([int(i) for i in work.payload.get("episodes", [])])
    if not turns:
        return None
    lines = [
        f"{t.ref} [{t.at.date().isoformat()}] {t.speaker or t.role}: {t.text[:TURN_CHARS]}"
        for t in turns
    ]
    user = "Turns:\n" + "\n".join(lines) + '\n\nAnswer as {"memories": [...]}.'
    ask = Ask(
        "extract",
        prompts.EXTRACT_VERSION,
        prompts.EXTRACT_SYSTEM,
        user,
        prompts.EXTRACT_SCHEMA,
        prompts.MAX_TOKENS["extract"],
    )
    return Question(work, ask, frozenset(t.ref for t in turns))


def settle(night: Night, q: Question, answer: Answer) -> None:
    for item in answer.data.get("memories", []):
        cites = refs(item.get("cites"))
        text = clean(str(item.get("text", "")))
        why = vet(night.engine, q, cites, [text]) or (None if text else "empty text")
        if why is not None:
            night.refuse(q, why, model_id=answer.model_id, said=item)
            continue
        hold = not night.applies(item)
        try:
            apply.add_memory(
                night.engine,
                kind=str(item["kind"]),
                text=text,
                hold=hold,
                tag=night.tag(q, answer, item, cites),
                episodes=[int(c[2:]) for c in cites],
            )
        except InvalidInput as exc:  # cites turns of two scopes
            night.refuse(q, str(exc), model_id=answer.model_id, said=item)
            continue
        night.counts["held" if hold else "applied"] += 1
