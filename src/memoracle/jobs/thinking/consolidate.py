"""consolidate: the clusters of related memories (those naming one knowledge-graph
entity, as the topic files group them) read by the model for a topic summary, written
beside the rendered topic file as `memory/topics/<entity>.summary.md` (a view, rewritten
when the cluster changes), and merge proposals (gated, as arbitrate's). Only clusters
whose memories changed since their last summary are asked again; only memories the
workspace owner may see are shown (the file is the owner's view)."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime

from memoracle.engine import Engine
from memoracle.engine import thinking as apply
from memoracle.files import write_atomically
from memoracle.jobs.thinking import prompts
from memoracle.jobs.thinking.files import State, Work
from memoracle.jobs.thinking.work import Night, Question, clean, refs, vet
from memoracle.llm import Answer, Ask
from memoracle.render.memory_md import tagged_line
from memoracle.workspace import NOTES_DIR

CLUSTERS = 5  # clusters looked at in one night, most named first
CLUSTER_MIN = 5  # memories naming an entity before it is a cluster (as a topic file)
CLUSTER_MOST = 30  # memories of a cluster shown, newest first
_UNSAFE = re.compile(r"[^\w-]+")


def plan(engine: Engine, state: State, now: datetime) -> list[Work]:
    done: dict[str, str] = dict(state.extra.get("consolidated", {}))
    works: list[Work] = []
    for entity in engine.graph_entities(limit=CLUSTERS * 2):
        if entity.memories < CLUSTER_MIN or len(works) == CLUSTERS:
            break
        if entity.key == "user":
            continue
        ids = _cluster(engine, entity.id)
        digest = hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()[:16]
        if done.get(entity.key) == digest:
            continue
        done[entity.key] = digest
        payload = {"entity": entity.id, "name": entity.name, "key": entity.key, "ids": ids}
        works.append(Work("consolidate", f"consolidate:{entity.key}:{digest}", payload))
    state.extra["consolidated"] = done
    return works


def _cluster(engine: Engine, entity_id: int) -> list[int]:
    ids = engine.memory_ids_of_entity(entity_id, limit=CLUSTER_MOST * 2)
    seen = [m.id for m in engine.memories_by_id(ids) if engine.owner_sees(m.scope)]
    return sorted(seen[:CLUSTER_MOST])


def question(engine: Engine, work: Work) -> Question | None:
    found = [
        m
        for m in engine.memories_by_id(list(work.payload.get("ids", [])))
        if m.status == "active" and engine.owner_sees(m.scope)
    ]
    if len(found) < 2:
        return None
    lines = "\n".join(f"{m.ref}: {m.text}" for m in found)
    user = (
        f"Topic: {work.payload.get('name')}\nMemories:\n{lines}\n\n"
        'Answer as {"summary": "...", "cites": [...], "merges": [...]}.'
    )
    ask = Ask(
        "consolidate",
        prompts.CONSOLIDATE_VERSION,
        prompts.CONSOLIDATE_SYSTEM,
        user,
        prompts.CONSOLIDATE_SCHEMA,
        prompts.MAX_TOKENS["consolidate"],
    )
    return Question(work, ask, frozenset(m.ref for m in found))


def settle(night: Night, q: Question, answer: Answer) -> None:
    data = answer.data
    cites = refs(data.get("cites"))
    summary = clean(str(data.get("summary", "")))
    why = vet(night.engine, q, cites, [summary])
    if why is not None:
        night.refuse(
            q, why, model_id=answer.model_id, said={"summary": data.get("summary"), "cites": cites}
        )
    else:
        _write_summary(night, q, answer, summary, cites)
    for item in data.get("merges", []):
        keep, merge = str(item.get("keep", "")), str(item.get("merge", ""))
        pair = [keep, merge]
        why = vet(night.engine, q, pair, [str(item.get("reason", ""))])
        if why is None and keep == merge:
            why = f"unknown id {merge} (a memory merged into itself)"
        if why is not None:
            night.refuse(q, why, model_id=answer.model_id, said=item)
            continue
        tag = night.tag(q, answer, item, pair)
        if night.engine.memory(merge).status != "active":
            continue
        if night.applies(item):
            apply.supersede(night.engine, int(merge[2:]), int(keep[2:]), tag, change="merge")
            night.counts["applied"] += 1
        else:
            apply.hold(night.engine, int(merge[2:]), int(keep[2:]), tag)
            night.counts["held"] += 1


def _write_summary(
    night: Night, q: Question, answer: Answer, summary: str, cites: list[str]
) -> None:
    engine = night.engine
    stem = _UNSAFE.sub("-", str(q.work.payload.get("key", ""))).strip("-") or "topic"
    path = engine.settings.files_dir / NOTES_DIR / "topics" / f"{stem}.summary.md"
    texts = {m.ref: m.text for m in engine.memories_by_id([int(c[2:]) for c in cites])}
    lines = [
        f"# {q.work.payload.get('name')}: summary",
        "",
        f"_Written by {answer.model_id} ({answer.prompt_version or q.ask.prompt_version}) on "
        f"{engine.clock.now().date().isoformat()} from the memories cited below; a model's "
        "summary, not a memory._",
        "",
        summary,
        "",
        *(tagged_line(ref, texts[ref]) for ref in cites if ref in texts),
    ]
    write_atomically(path, "\n".join(lines) + "\n")
    night.counts["summaries"] += 1
