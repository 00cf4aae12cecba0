"""The views written each night besides MEMORY.md: the session-start snapshot
(`write_snapshot`), the JSONL exports (`export_jsonl`, `export_archived`), topic files for
the most named entities (`write_topic_files`) and reference/entities.md."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from datetime import timedelta
from pathlib import Path

from memoracle.engine import Engine
from memoracle.errors import WorkspaceError
from memoracle.files import read_text, write_atomically
from memoracle.jobs.nightly.memory_md import FileChange
from memoracle.jobs.nightly.notes import FILE_UNSAFE
from memoracle.jobs.nightly.topics import topic_texts
from memoracle.lifecycle.scoring import NAME as _NAME
from memoracle.render.memory_md import BlockError, block_body, without_block
from memoracle.serialize import records
from memoracle.storage_types import ArchivedMemory
from memoracle.workspace import (
    LAST_BLOCK,
    MEMORY_FILE,
    NOTES_DIR,
    SNAPSHOT_FILE,
)

log = logging.getLogger(__name__)

TOPIC_MIN_MEMORIES = 5  # live memories naming an entity before it gets a topic file
TOPICS_SHOWN = 10  # topic files written (and pointed to from MEMORY.md), most named first
TOPIC_MEMORIES = 50  # memories listed in a topic file, newest first
SNAPSHOT_HEADER = (
    "_Written by memoracle each night for the agent to read at a session's start: a copy"
    " of MEMORY.md and the latest notes. An edit here is overwritten tonight: change"
    " MEMORY.md, or ask the agent to remember or forget._"
)


def write_snapshot(
    engine: Engine,
    *,
    dry_run: bool = False,
    preview: list[FileChange] | None = None,
    block: str | None = None,
) -> Path:
    """`SESSION-START.md` in the workspace folder: a line saying what it is, the
    person's own MEMORY.md text (outside memoracle's block), memoracle's block (without
    its markers, whose "add a line to remember it" holds in MEMORY.md only), today's and
    yesterday's notes and the week's hot topics, cut to `render.snapshot_bytes` (8 KB) —
    what an agent reads first in a new session (the OpenClaw plugin hands it over at a
    session's first turn). (Not BOOTSTRAP.md: that is OpenClaw's first-run file.)
    `block` is the block just rendered (by default, the last one written), and a file
    changed in `preview` is read as changed: so a dry run, which writes neither, shows
    the snapshot the real run writes."""
    files = engine.settings.files_dir
    today = engine.clock.now().astimezone(engine.zone).date()
    parts: list[str] = [f"# Session start — {today:%Y-%m-%d}", SNAPSHOT_HEADER]
    own = _own_memory_text(files / MEMORY_FILE, preview)
    if own:
        parts.append(own)
    if block is None:
        block = read_text(engine.settings.home / LAST_BLOCK)
    if block and (body := block_body(block)):
        parts.append(body)
    for day in (today, today - timedelta(days=1)):
        try:
            note = _as_changed(files / NOTES_DIR / f"{day:%Y-%m-%d}.md", preview)
        except WorkspaceError as exc:  # the snapshot goes without it
            log.warning("%s", exc)
            continue
        if note:
            parts.append(note.strip())
    topics = hot_topics(engine)
    if topics:
        parts.append("## Hot topics (7 days)\n" + "\n".join(f"- {t} ({n})" for t, n in topics))
    text = _cut("\n\n".join(parts) + "\n", engine.settings.render.snapshot_bytes)
    path = files / SNAPSHOT_FILE
    _write(path, text, dry_run=dry_run, preview=preview)
    return path


def _own_memory_text(path: Path, preview: list[FileChange] | None) -> str:
    """What the person wrote in MEMORY.md, outside memoracle's block ("" when there is
    no file, or it cannot be read: the snapshot goes without it, the reason logged)."""
    try:
        text = _as_changed(path, preview) or ""
        return without_block(text).strip()
    except (WorkspaceError, BlockError) as exc:
        log.warning("%s: left out of %s: %s", path.name, SNAPSHOT_FILE, exc)
        return ""


def _as_changed(path: Path, preview: list[FileChange] | None) -> str | None:
    """`path`'s text after the changes in `preview`, else as it is on disk."""
    for change in reversed(preview or ()):
        if change.path == path:
            return change.after
    return read_text(path)


def _write(path: Path, text: str, *, dry_run: bool, preview: list[FileChange] | None) -> None:
    """Write `path` whole (not in a dry run); when its text changes, say so in `preview`.
    A file that cannot be read counts as all new."""
    if preview is not None:
        try:
            before = read_text(path)
        except WorkspaceError:
            before = None
        if before != text:
            preview.append(FileChange(path, before, text))
    if not dry_run:
        write_atomically(path, text)


def hot_topics(engine: Engine, *, days: int = 7, top: int = 10) -> list[tuple[str, int]]:
    """The names mentioned most in the owner's memories of the last `days` days."""
    since = engine.clock.now() - timedelta(days=days)
    counts: dict[str, int] = {}
    for memory in engine.all_memories("active", seen_by=engine.owner):
        if memory.observed_at >= since:
            for name in set(_NAME.findall(memory.text)):
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]


def export_jsonl(
    engine: Engine,
    *,
    dry_run: bool = False,
    preview: list[FileChange] | None = None,
    appended: dict[Path, int] | None = None,
) -> list[Path]:
    """`knowledge-graph/facts.jsonl` (live memories), `entities.jsonl` and
    `relations.jsonl` (the graph, each with how many live memories state it), rewritten
    whole each night, and `archived-facts.jsonl` (the cold tier, `export_archived`), one
    JSON object a line: views of the store for tools that read JSONL. Files whose text
    changes go to `preview`, and the lines `archived-facts.jsonl` gains to `appended`
    (written or, in a dry run, not)."""
    folder = engine.settings.files_dir / "knowledge-graph"
    facts = [
        json.dumps(records.memory(m), ensure_ascii=False, sort_keys=True)
        for status in ("active", "disputed")
        for m in engine.all_memories(status, seen_by=engine.owner)
    ]
    entities = [json.dumps(records.entity(e), ensure_ascii=False) for e in engine.graph_entities()]
    relations = [
        json.dumps(records.relation(r), ensure_ascii=False) for r in engine.graph_relations()
    ]
    written = []
    for name, lines in (
        ("facts.jsonl", facts),
        ("entities.jsonl", entities),
        ("relations.jsonl", relations),
    ):
        path = folder / name
        written.append(path)
        _write(path, "".join(line + "\n" for line in lines), dry_run=dry_run, preview=preview)
    written.append(export_archived(engine, dry_run=dry_run, appended=appended))
    return written


def export_archived(
    engine: Engine, *, dry_run: bool = False, appended: dict[Path, int] | None = None
) -> Path:
    """`knowledge-graph/archived-facts.jsonl`: the cold tier, one memory a line, in the
    order they were archived. The cold tier only grows, night after night, so the file
    is appended with what was archived since the last export, when it is as that export
    left it (the same size, and no memory up to its last line restored since);
    otherwise it is written whole again. Each export is recorded (runs:
    `export:archived`, with its lines, bytes and last memory id). The lines written (in
    a dry run: that would be) are added to `appended` under the path."""
    path = engine.settings.files_dir / "knowledge-graph" / "archived-facts.jsonl"
    last = engine.last_run("export:archived", status="ok")
    done = {} if last is None else last.counts
    lines = done.get("lines", 0)
    newest = engine.archived(done.get("last_id", 0)) if lines else None
    appending = (
        last is not None
        and _size(path) == done.get("bytes")
        and (
            lines == 0
            or (newest is not None and engine.archived_position(newest.memory_id) == lines)
        )
    )
    if not appending:
        lines, newest = 0, None
    if dry_run:
        if appended is not None:
            appended[path] = engine.archived_count() - lines  # the cold tier only grows
        return path
    written = 0

    def fresh_lines() -> Iterator[str]:
        nonlocal newest, written
        while page := engine.archived_in_order(after=newest, limit=1000):
            for a in page:
                yield _archived_line(a) + "\n"
            newest, written = page[-1], written + len(page)

    if appending:
        _append(path, fresh_lines())
    else:
        write_atomically(path, fresh_lines())
    if appended is not None:
        appended[path] = written
    engine.record_run(
        "export:archived",
        {
            "lines": lines + written,
            "bytes": _size(path) or 0,
            "last_id": newest.memory_id if newest is not None else 0,
            "written": written,
            "whole": int(not appending),
        },
    )
    return path


def _archived_line(a: ArchivedMemory) -> str:
    return json.dumps(
        {
            "id": a.ref,
            "archived_at": a.archived_at.isoformat(),
            "reason": a.reason,
            "score": a.score,
            "record": a.record,
        },
        ensure_ascii=False,
        sort_keys=True,
        default=str,
    )


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _append(path: Path, lines: Iterable[str]) -> None:
    """Append `lines` to `path` and sync; a failure raises `WorkspaceError` naming it."""
    try:
        with open(path, "a", encoding="utf-8", newline="") as f:
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot append to it ({exc.strerror or exc}); check free space and the"
            " folder's permissions."
        ) from None


def _cut(text: str, max_bytes: int) -> str:
    """`text` within `max_bytes` of UTF-8, cut at a line end."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    head = data[:max_bytes].decode("utf-8", errors="ignore")
    return head[: head.rfind("\n") + 1] if "\n" in head else head


def write_topic_files(
    engine: Engine, *, dry_run: bool = False, preview: list[FileChange] | None = None
) -> list[tuple[str, str]]:
    """Topic files (L2), `memory/topics/<entity>.md`: for the `TOPICS_SHOWN` entities
    named by the most live memories (at least `TOPIC_MIN_MEMORIES`), those memories,
    newest first, each tagged with its id; rewritten whole each night (a view). Returns
    the (title, workspace-relative path) pointers MEMORY.md's Topics section shows."""
    pointers: list[tuple[str, str]] = []
    for entity in engine.graph_entities(limit=TOPICS_SHOWN * 2):
        if entity.memories < TOPIC_MIN_MEMORIES or len(pointers) == TOPICS_SHOWN:
            break
        stem = FILE_UNSAFE.sub("-", entity.key).strip("-")
        if not stem or entity.key == "user":  # the speaker is everywhere: no topic
            continue
        relative = f"{NOTES_DIR}/topics/{stem}.md"
        ids = engine.memory_ids_of_entity(entity.id, limit=TOPIC_MEMORIES)
        seen = [m for m in engine.memories_by_id(ids) if engine.owner_sees(m.scope)]
        for path, text in topic_texts(engine, entity, seen):  # a completed one: its summary
            _write(path, text, dry_run=dry_run, preview=preview)
        pointers.append((entity.name, relative))
    return pointers


def write_entities_md(
    engine: Engine, *, dry_run: bool = False, preview: list[FileChange] | None = None
) -> Path:
    """`reference/entities.md`: the knowledge graph's entities by type, each with the
    names it was seen under, how many memories name it and its relations; rewritten
    whole each night (a view: edit the memories, not this file)."""
    by_type: dict[str, list[str]] = {}
    relations: dict[str, list[str]] = {}
    for r in engine.graph_relations():
        relations.setdefault(r.source, []).append(f"{r.relation} {r.target}")
    for e in engine.graph_entities():
        also = [a for a in e.aliases if a != e.name]
        line = f"- **{e.name}** (`{e.key}`), {e.memories} memor{'y' if e.memories == 1 else 'ies'}"
        if also:
            line += f"; also {', '.join(also[:5])}"
        if e.key in relations:
            line += f"; {', '.join(relations[e.key][:8])}"
        by_type.setdefault(e.type, []).append(line)
    parts = ["# Entities\n\n_Written by memoracle each night from the knowledge graph._"]
    for type_ in sorted(by_type):
        parts.append(f"## {type_}\n" + "\n".join(by_type[type_]))
    path = engine.settings.files_dir / "reference" / "entities.md"
    _write(path, "\n\n".join(parts) + "\n", dry_run=dry_run, preview=preview)
    return path
