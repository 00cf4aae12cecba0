"""MEMORY.md's managed block read back and rewritten (`render_memory_md`): lines a
person added become user-stated memories, lines they deleted become forgets, text outside
the block is kept byte for byte, and what a person's own bullets there already say is
not repeated in the block."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memoracle.capture.pipeline import prepare
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, WriteHeld
from memoracle.files import read_text, write_atomically
from memoracle.ingest.callbacks import MAX_TEXT_BYTES, no_progress
from memoracle.ingest.markdown import read_memory_md
from memoracle.lifecycle.scoring import PROMOTE_AT
from memoracle.render.memory_md import (
    BlockEdits,
    BlockError,
    extract_block,
    merge_into,
    read_edits,
    render_block,
)
from memoracle.types import Memory
from memoracle.workspace import (
    LAST_BLOCK,
    MEMORY_FILE,
)


@dataclass(frozen=True)
class FileChange:
    """A file the nightly run writes (or a dry run would) with another text: its text
    before (None: it did not exist) and after."""

    path: Path
    before: str | None
    after: str

    def size(self) -> tuple[int, int]:
        """(lines added, lines removed): the diff's size, counted without the diff (a
        JSONL export of 10,000 lines is compared in a blink, not line-aligned)."""
        before = Counter((self.before or "").splitlines())
        after = Counter(self.after.splitlines())
        return sum((after - before).values()), sum((before - after).values())

    def diff(self) -> str:
        """The change as a unified diff."""
        return "".join(
            difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile="/dev/null" if self.before is None else str(self.path),
                tofile=str(self.path),
            )
        )


@dataclass(frozen=True)
class MemoryMdReport:
    path: Path
    added: tuple[str, ...]  # refs of memories made from lines a person added
    forgotten: tuple[str, ...]  # refs forgotten because a person deleted their line
    memories: int  # memories offered to the block (not those a person's bullet says)
    lines: int
    chars: int
    changed: bool
    problem: str | None = None  # why the file was left as it was (broken markers), or
    # which lines a person added are held for review (taken out of the block meanwhile)
    block: str | None = None  # the block rendered (None when the file was left as it was)


def render_memory_md(
    engine: Engine,
    *,
    dry_run: bool = False,
    preview: list[FileChange] | None = None,
    pointers: Sequence[tuple[str, str]] = (),
    apply_edits: bool | None = None,
) -> MemoryMdReport:
    """Read back what a person changed inside memoracle's block of MEMORY.md (added lines
    become user-stated memories, with the expiry of an ``<!-- until … -->`` comment if
    they have one; deleted lines forgets), then rewrite the block from the
    store: guardrails and every memory scoring `PROMOTE_AT` or more, within
    `render.memory_md_max_lines` / `_max_chars`. Text outside the block is kept byte for
    byte, and a memory one of its bullets already says (imported from it, say) is left
    out of the block: each bullet shows once. `pointers` ((title, path) pairs) fill its
    Topics section. With `dry_run`, no file is written, and the person's edits are only
    reported unless `apply_edits` (a dry run's scratch store: the block is then the one
    the real run writes). A change to the file is added to `preview`, written or not."""
    if apply_edits is None:
        apply_edits = not dry_run
    path = engine.settings.files_dir / MEMORY_FILE
    last_path = engine.settings.home / LAST_BLOCK
    current = read_text(path)
    last = read_text(last_path)
    try:
        has_block = current is not None and extract_block(current) is not None
        edits = read_edits(current, last) if has_block and current and last else None
    except BlockError as exc:  # a person broke a marker: their file stays as it is
        problem = f"{path}: {exc}; the file was left as it is."
        return MemoryMdReport(path, (), (), 0, 0, 0, False, problem=problem)
    back = _ReadBack([], [])
    if edits is not None and apply_edits:
        back = _store_edits(engine, edits, path)
        if back.problem is not None:  # the others are stored; once fixed, the next night goes on
            return MemoryMdReport(path, tuple(back.added), (), 0, 0, 0, False, problem=back.problem)
    elif edits is not None:
        back = _ReadBack(list(edits.added), list(edits.forgotten))
    chosen = _chosen(engine, path, current)
    render = engine.settings.render
    block = render_block(
        chosen,
        max_lines=render.memory_md_max_lines,
        max_chars=render.memory_md_max_chars,
        pointers=pointers,
        zone=engine.zone,
    )
    merged = merge_into(current, block)
    changed = merged != current
    if not dry_run:
        if changed:
            write_atomically(path, merged)
        write_atomically(last_path, block)
    if changed and preview is not None:
        preview.append(FileChange(path, current, merged))
    return MemoryMdReport(
        path,
        tuple(back.added),
        tuple(back.forgotten),
        len(chosen),
        block.count("\n"),
        len(block),
        changed,
        problem=back.note,
        block=block,
    )


@dataclass(frozen=True)
class _ReadBack:
    """A person's edits to the block, as stored: the refs of the memories their added
    lines became and of those their deleted lines forgot; `note`, the lines held for
    review (taken out of the block); `problem`, the lines that cannot be stored (the
    file is then left as it is)."""

    added: list[str]
    forgotten: list[str]
    note: str | None = None
    problem: str | None = None


def _store_edits(engine: Engine, edits: BlockEdits, path: Path) -> _ReadBack:
    """Each added line stored as a user-stated memory (with its expiry), then, unless a
    line could not be stored, each deleted line's memory forgotten."""
    added: list[str] = []
    refused: list[str] = []
    held: list[str] = []
    for text, kind, until in zip(edits.added, edits.added_kinds, edits.added_until, strict=True):
        try:
            memory, _ = engine.remember(
                text, kind=kind, source="user-stated", actor="memory-md", expires_at=until
            )
        except InvalidInput as exc:  # too long, say: the line stays in the file
            refused.append(f"the line {_quote(text)} cannot be stored ({exc})")
            continue
        except WriteHeld as exc:  # looks like prompt injection: a person decides
            # Kept as the held write (confirming it stores it, and the block
            # shows it again), out of the file the agent reads until then.
            held.append(f"the line {_quote(text)} is held for review ({exc})")
            continue
        added.append(memory.ref)
    if refused:
        return _ReadBack(
            added, [], problem=f"{path}: {'; '.join(refused)}; the file was left as it is."
        )
    forgotten = [
        engine.forget(ref, actor="memory-md", reason="line deleted").ref for ref in edits.forgotten
    ]
    note = f"{path}: {'; '.join(held)}; taken out of the block until confirmed." if held else None
    return _ReadBack(added, forgotten, note)


def _chosen(engine: Engine, path: Path, current: str | None) -> list[Memory]:
    """What the block shows: guardrails, promoted memories and those scoring
    `PROMOTE_AT` or more, not expired, that none of the person's own bullets in the
    file (`current`, at `path`) already says."""
    now = engine.clock.now()
    theirs = _own_bullets(path) if current else set()
    return [  # the owner's file: only what the owner's private context sees
        m
        for m, s in engine.score(seen_by=engine.owner)
        if (m.kind == "guardrail" or "promoted" in m.details or s.total >= PROMOTE_AT)
        and (m.expires_at is None or m.expires_at > now)  # expired: archived tonight
        and _key(m.text) not in theirs
    ]


def _quote(text: str, width: int = 60) -> str:
    return f"“{text[:width]}…”" if len(text) > width else f"“{text}”"


def _own_bullets(path: Path) -> set[str]:
    """The texts of the bullets a person wrote in MEMORY.md outside memoracle's block,
    read by the very importer that makes memories of them (`memoracle ingest`), in the
    form an import stores (`prepare`), compared by `_key`. A bullet the importer skips
    (too big, not UTF-8) is no memory, so it hides nothing."""
    notes = read_memory_md(
        path, on_warning=lambda _: None, on_progress=no_progress, max_text_bytes=MAX_TEXT_BYTES
    )
    return {_key(prepare(note.text).text) for note in notes}


def _key(text: str) -> str:
    """What two texts must share to be one bullet: words, whitespace and case aside."""
    return " ".join(text.split()).casefold()
