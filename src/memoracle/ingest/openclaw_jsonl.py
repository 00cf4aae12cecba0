"""OpenClaw session transcripts as JSONL files (pi session format, version 3).

Owns reading ``agents/<id>/sessions/<session>.jsonl`` without loading it: a first pass
keeps the tree skeleton (id, parent, byte offset per entry, see `Tree`), a second pass
seeks to the live-branch entries only and turns them into `Turn`s. Memory grows with the
number of entries, not the size of the file. Origins are ``path:line``.

Lines above ``max_text_bytes * LINE_FACTOR`` bytes are never loaded; their id and parent
are sniffed from the line head so the branch stays whole, and a spoken one is reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoracle.ingest.callbacks import LINE_FACTOR, OnProgress, OnWarning, Throttle, mb
from memoracle.ingest.jsonlines import decode_json, iter_lines, read_line_at
from memoracle.ingest.openclaw_session import (
    Tree,
    carry_senders,
    entry_turn,
    is_header,
    newer_version,
    oversize_warning,
)
from memoracle.types import IngestWarning, Turn

_PROGRESS_STEP = 1 << 20


def read_openclaw_jsonl(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[Turn]:
    """The live-branch turns of one session file, root first."""
    return carry_senders(
        _read_openclaw_jsonl(
            path, on_warning=on_warning, on_progress=on_progress, max_text_bytes=max_text_bytes
        )
    )


def _read_openclaw_jsonl(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[Turn]:
    name = str(path)
    size = path.stat().st_size
    max_line = max_text_bytes * LINE_FACTOR
    progress = Throttle(on_progress, size, _PROGRESS_STEP)
    tree = Tree()
    session_id: str | None = None
    with path.open("rb") as f:
        # Pass 1 (first half of the progress bar): the skeleton.
        for line in iter_lines(f, max_line):
            progress(line.offset // 2)
            origin = f"{name}:{line.number}"
            if line.oversize:
                if not tree.add_sniffed(line.data, line.size, line.offset, line.number):
                    on_warning(
                        IngestWarning(
                            origin,
                            f"line of {mb(line.size)} is above the {mb(max_line)} limit and "
                            "has no readable id; skipped",
                        )
                    )
                continue
            value, why = decode_json(line.data)
            if why is not None:
                on_warning(IngestWarning(origin, f"{why}; skipped"))
                continue
            if not isinstance(value, dict):
                on_warning(IngestWarning(origin, "not a JSON object; skipped"))
                continue
            if is_header(value):
                newer = newer_version(value, origin)
                if newer is not None:
                    on_warning(newer)
                header_id = value.get("id")
                if session_id is None and isinstance(header_id, str) and header_id:
                    session_id = header_id
                continue
            tree.add_entry(value, line.offset, line.number)
        if session_id is None:
            session_id = path.stem
        # Pass 2 (second half): only the live branch, in file order.
        for i in tree.live_branch(name, on_warning):
            origin = f"{name}:{tree.line(i)}"
            progress((size + tree.position(i)) // 2)
            if i in tree.oversize:
                warning = oversize_warning(tree, i, origin, max_line)
                if warning is not None:
                    on_warning(warning)
                continue
            data = read_line_at(f, tree.position(i), max_line)
            value, why = decode_json(data) if data is not None else (None, "unreadable")
            if why is not None or not isinstance(value, dict):
                on_warning(IngestWarning(origin, "line changed while reading; skipped"))
                continue
            turn = entry_turn(
                value,
                session_id=session_id,
                origin=origin,
                fallback_id=f"L{tree.line(i)}",
                max_text_bytes=max_text_bytes,
                on_warning=on_warning,
            )
            if turn is not None:
                yield turn
    progress.finish()
