"""Compress on completion (docs/lifecycle.md): the topic files of topics marked complete
(`engine.completion`), the nightly step that completes work topics whose tasks are all
done (`complete_due`), and `memoracle complete TOPIC` (`complete_topic`), with its dry
run, its backup and its undo."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from memoracle.engine import Engine, completion
from memoracle.files import read_text, write_atomically
from memoracle.jobs.nightly.memory_md import FileChange
from memoracle.jobs.nightly.notes import FILE_UNSAFE
from memoracle.render import topic as render
from memoracle.types import Entity, Memory
from memoracle.workspace import NOTES_DIR

FULL_SUFFIX = "_full"  # memory/topics/<entity>_full.md: a completed topic's full notes
DUE_LOOKED_AT = 20  # most-named entities the nightly step looks at for completion


def stem(entity: Entity) -> str:
    return FILE_UNSAFE.sub("-", entity.key).strip("-")


def relative_path(entity: Entity) -> str:
    return f"{NOTES_DIR}/topics/{stem(entity)}.md"


def topic_texts(
    engine: Engine,
    entity: Entity,
    memories: list[Memory],
    whole: completion.Topic | None = None,
) -> list[tuple[Path, str]]:
    """The files of one topic: (path, text) of its topic file, and of its full notes
    when some of `memories` (the newest, as the topic file lists them) completed.
    `whole` is the topic as it stands (a dry run's, marked in memory only); by default
    it is read from the store."""
    path = engine.settings.files_dir / relative_path(entity)
    if not any(_marked(m, entity) for m in memories):
        return [(path, render.plain(entity.name, entity.type, memories))]
    return _compressed(engine, whole or completion.topic_of(engine, entity), path)


def _marked(memory: Memory, entity: Entity) -> bool:
    done = memory.details.get("completed")
    return isinstance(done, dict) and done.get("topic") == entity.key


def _compressed(engine: Engine, found: completion.Topic, path: Path) -> list[tuple[Path, str]]:
    done = found.completed
    at = found.completed_at or engine.clock.now()
    since = [m for m in found.memories if not _marked(m, found.entity)]
    full_path = path.with_name(f"{path.stem}{FULL_SUFFIX}.md")
    name = found.entity.name
    return [
        (path, render.summary(name, full_path.name, done, since, at=at, zone=engine.zone)),
        (full_path, render.full(name, done, at=at, zone=engine.zone)),
    ]


@dataclass
class CompletionReport:
    """What `complete_topic` did (or, in a dry run, would do)."""

    topic: str
    key: str
    dry_run: bool
    undo: bool
    memories: list[int] = field(default_factory=list)  # marked (undo: unmarked)
    changes: list[FileChange] = field(default_factory=list)
    backup: Path | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "topic": self.topic,
            "key": self.key,
            "dry_run": self.dry_run,
            "undo": self.undo,
            "memories": [f"m_{i}" for i in self.memories],
            "files": [
                {"path": str(c.path), "added": c.size()[0], "removed": c.size()[1]}
                for c in self.changes
            ],
            "backup": None if self.backup is None else str(self.backup),
        }


def complete_topic(
    engine: Engine, name: str, *, dry_run: bool = False, undo: bool = False, actor: str = "cli"
) -> CompletionReport:
    """Mark the topic `name` complete (every live memory of it, audited) and write its
    summary and full notes now; with `undo`, take the marks off and write its topic
    file whole again. A verified backup is taken first; a dry run marks nothing and
    writes nothing, and reports the files as they would be."""
    found = completion.topic(engine, name)
    report = CompletionReport(found.entity.name, found.entity.key, dry_run, undo)
    if dry_run:
        report.memories = [m.id for m in (found.completed if undo else _fresh(found))]
        after = _as_marked(engine, found, undo=undo)
    else:
        report.backup = engine.backup().path
        if undo:
            report.memories = completion.reopen(engine, found, actor=actor)
        else:
            report.memories = completion.complete(engine, found, by=actor, actor=actor)
        after = completion.topic_of(engine, found.entity)
    newest = list(after.memories[:50])
    for path, text in topic_texts(engine, after.entity, newest, after) if newest else []:
        before = read_text(path)
        if before != text:
            report.changes.append(FileChange(path, before, text))
        if not dry_run:
            write_atomically(path, text)
    return report


def _fresh(found: completion.Topic) -> list[Memory]:
    return [m for m in found.memories if not _marked(m, found.entity)]


def _as_marked(engine: Engine, found: completion.Topic, *, undo: bool) -> completion.Topic:
    """`found` as it would be once (un)marked, for a dry run's files."""
    now = engine.clock.now().isoformat()
    mark = {"topic": found.entity.key, "at": now, "by": "cli"}

    def changed(m: Memory) -> Memory:
        rest = {k: v for k, v in m.details.items() if k != "completed"}
        if undo:
            return replace(m, details=rest) if _marked(m, found.entity) else m
        return m if _marked(m, found.entity) else replace(m, details={**rest, "completed": mark})

    return completion.Topic(found.entity, tuple(changed(m) for m in found.memories))


def complete_due(engine: Engine, *, dry_run: bool, actor: str) -> dict[str, int]:
    """The nightly `complete` step: work topics whose tasks are all done (a turn said
    so, and capture marked them: `completion.due`) completed, by the task that closed
    them; the render step then writes their summaries. A dry run runs on its scratch
    copy of the store, so it marks there."""
    entities = engine.graph_entities(limit=DUE_LOOKED_AT)
    topics = marked = 0
    for found, task in completion.due(engine, entities):
        marked += len(completion.complete(engine, found, by=f"task {task.ref}", actor=actor))
        topics += 1
    return {"topics": topics, "memories": marked}
