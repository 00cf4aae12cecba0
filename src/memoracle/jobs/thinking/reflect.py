"""reflect: light each night (the day's memories: decisions made, action items, open
questions) and deep once a week (the week's: patterns, stale items, promotions to
MEMORY.md, finished work that could be compressed). Decisions, action items and
patterns become memories (kinds decision, task, pattern) citing what they stand on;
a promotion pins the memory (MEMORY.md keeps it) — both gated. Open questions, stale
items and compress candidates are for a person: listed in the reflection note,
`memory/reflections/<date>.md` (deep: `<date>-week.md`), with the commands that act."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from memoracle.engine import Engine
from memoracle.engine import thinking as apply
from memoracle.engine.scope import own_scope
from memoracle.errors import InvalidInput
from memoracle.files import write_atomically
from memoracle.jobs.thinking import prompts
from memoracle.jobs.thinking.files import State, Work
from memoracle.jobs.thinking.work import Night, Question, clean, refs, vet
from memoracle.llm import Answer, Ask
from memoracle.types import Memory
from memoracle.workspace import NOTES_DIR

DEEP_EVERY = timedelta(days=7)
SHOWN = {"light": 40, "deep": 60}  # memories shown, newest first
_KIND = {"decisions": "decision", "actions": "task", "patterns": "pattern"}


def plan(engine: Engine, state: State, now: datetime) -> list[Work]:
    since = (
        datetime.fromisoformat(state.light_through)
        if state.light_through
        else now - timedelta(days=1)
    )
    works = [
        Work(
            "reflect",
            f"reflect-light:{now.date()}",
            {"mode": "light", "since": since.isoformat(), "until": now.isoformat()},
        )
    ]
    state.light_through = now.isoformat()
    if state.deep_at is None or now - datetime.fromisoformat(state.deep_at) >= DEEP_EVERY:
        works.append(
            Work(
                "reflect",
                f"reflect-deep:{now.date()}",
                {"mode": "deep", "since": (now - DEEP_EVERY).isoformat(), "until": now.isoformat()},
            )
        )
        state.deep_at = now.isoformat()
    return works


def _memories(engine: Engine, work: Work) -> list[Memory]:
    since = datetime.fromisoformat(str(work.payload["since"]))
    until = datetime.fromisoformat(str(work.payload["until"]))
    found = engine.memories_created_since(since, ("active",))
    mode = str(work.payload.get("mode"))
    return [
        m
        for m in found
        if m.created_at < until and engine.owner_sees(m.scope) and m.source != "llm"
    ][: SHOWN.get(mode, 40)]


def question(engine: Engine, work: Work) -> Question | None:
    found = _memories(engine, work)
    if not found:
        return None
    deep = work.payload.get("mode") == "deep"
    lines = "\n".join(f"{m.ref} [{m.kind}, {m.observed_at.date()}]: {m.text}" for m in found)
    shape = (
        '{"patterns": [...], "stale": [...], "promote": [...], "compress": [...]}'
        if deep
        else '{"decisions": [...], "actions": [...], "questions": [...]}'
    )
    user = f"Memories:\n{lines}\n\nAnswer as {shape}."
    ask = Ask(
        "reflect",
        prompts.REFLECT_DEEP_VERSION if deep else prompts.REFLECT_LIGHT_VERSION,
        prompts.REFLECT_DEEP_SYSTEM if deep else prompts.REFLECT_LIGHT_SYSTEM,
        user,
        prompts.REFLECT_DEEP_SCHEMA if deep else prompts.REFLECT_LIGHT_SCHEMA,
        prompts.MAX_TOKENS["reflect"],
    )
    return Question(work, ask, frozenset(m.ref for m in found))


def settle(night: Night, q: Question, answer: Answer) -> None:
    data: dict[str, Any] = answer.data
    note: list[str] = []
    for field in ("decisions", "actions", "patterns"):
        for item in data.get(field, []):
            line = _note_item(night, q, answer, item, kind=_KIND[field])
            if line:
                note.append(f"- {field[:-1]}: {line}")
    for item in data.get("questions", []):
        if _usable(night, q, answer, item, refs(item.get("cites")), str(item.get("text", ""))):
            note.append(
                f"- open question: {clean(str(item['text']))} ({', '.join(refs(item['cites']))})"
            )
    for item in data.get("promote", []):
        ref = str(item.get("id", ""))
        if _usable(night, q, answer, item, [ref], str(item.get("reason", ""))):
            if night.applies(item):
                apply.pin(night.engine, int(ref[2:]), night.tag(q, answer, item, [ref]))
                night.counts["applied"] += 1
                note.append(f"- promoted {ref} to MEMORY.md (undo: memoracle undo-model {ref})")
            else:
                note.append(f"- proposed for MEMORY.md: {ref} ({item['confidence']:.2f})")
    for item in data.get("stale", []):
        ref = str(item.get("id", ""))
        if _usable(night, q, answer, item, [ref], str(item.get("reason", ""))):
            note.append(f"- stale? {ref}: {clean(str(item['reason']))} (memoracle forget {ref})")
    for item in data.get("compress", []):
        ids = refs(item.get("ids"))
        if _usable(night, q, answer, item, ids, str(item.get("summary", ""))):
            note.append(f"- compress {', '.join(ids)} into: {clean(str(item['summary']))}")
    if note:
        _write_note(night, q, answer, note)


def _usable(
    night: Night, q: Question, answer: Answer, item: dict[str, Any], cites: list[str], text: str
) -> bool:
    why = vet(night.engine, q, cites, [text, str(item.get("reason", ""))])
    if why is not None:
        night.refuse(q, why, model_id=answer.model_id, said=item)
    return why is None


def _note_item(
    night: Night, q: Question, answer: Answer, item: dict[str, Any], *, kind: str
) -> str:
    """A decision, action item or pattern stored as a memory (held under the gate)."""
    cites = refs(item.get("cites"))
    text = clean(str(item.get("text", "")))
    if not _usable(night, q, answer, item, cites, text) or not text:
        return ""
    engine = night.engine
    episodes = [int(c[2:]) for c in cites if c.startswith("e_")]
    for memory in engine.memories_by_id([int(c[2:]) for c in cites if c.startswith("m_")]):
        episodes += [e for e in memory.episode_ids if e not in episodes]
    hold = not night.applies(item)
    try:  # the owner's reflection: in the owner's own private scope, whatever it cites
        stored = apply.add_memory(
            engine,
            kind=kind,
            text=text,
            tag=night.tag(q, answer, item, cites),
            episodes=episodes[:8],
            hold=hold,
            scope=own_scope(engine.settings),
        )
    except InvalidInput as exc:
        night.refuse(q, str(exc), model_id=answer.model_id, said=item)
        return ""
    night.counts["held" if hold else "applied"] += 1
    return f"{text} ({stored.ref}{', waiting in pending' if hold else ''})"


def _write_note(night: Night, q: Question, answer: Answer, note: list[str]) -> None:
    engine = night.engine
    day = engine.clock.now().date().isoformat()
    deep = q.work.payload.get("mode") == "deep"
    path = (
        engine.settings.files_dir / NOTES_DIR / "reflections" / f"{day}{'-week' if deep else ''}.md"
    )
    head = [
        f"# {'Weekly' if deep else 'Daily'} reflection, {day}",
        "",
        f"_Written by {answer.model_id} ({q.ask.prompt_version}); a model's reading, "
        "for a person to check._",
        "",
    ]
    write_atomically(path, "\n".join(head + note) + "\n")
    night.counts["notes"] += 1
