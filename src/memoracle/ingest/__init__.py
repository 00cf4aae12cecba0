"""Readers that turn files into turns and notes; no store access, no capture logic.

    read(path, on_warning=warnings.append)   -> Iterator[Turn | ImportedNote]
    detect_format(path)                      -> "openclaw-jsonl" | "openclaw-sqlite" | ...

Formats (one module each): OpenClaw session JSONL (`openclaw_jsonl`), OpenClaw's
per-agent SQLite store (`openclaw_sqlite`), generic ``{role, content, timestamp}`` JSONL
(`generic_jsonl`), LoCoMo JSON (`locomo`), MEMORY.md and daily notes (`markdown`).
`walk.walk_folder` lists a folder's files a reader takes, and names those it skips.

A file no reader can take raises `InvalidInput` (or `NotFound`) before reading starts. A
bad line or an oversized turn inside a readable file goes to `on_warning` with its
``path:line`` origin, and reading continues. Turns are passed through as said: dropping
noise (heartbeats, ``NO_REPLY``) and extracting memories is the capture layer's job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from memoracle.errors import InvalidInput
from memoracle.ingest.callbacks import MAX_TEXT_BYTES, no_progress
from memoracle.ingest.detect import FORMATS, check_file, detect_format
from memoracle.ingest.generic_jsonl import read_generic_jsonl
from memoracle.ingest.locomo import read_locomo
from memoracle.ingest.markdown import read_daily_note, read_memory_md
from memoracle.ingest.openclaw_jsonl import read_openclaw_jsonl
from memoracle.ingest.openclaw_sqlite import read_openclaw_sqlite
from memoracle.types import ImportedNote, IngestWarning, Turn

__all__ = ["FORMATS", "MAX_TEXT_BYTES", "detect_format", "read"]

_READERS: dict[str, Callable[..., Iterator[Turn | ImportedNote]]] = {
    "openclaw-jsonl": read_openclaw_jsonl,
    "openclaw-sqlite": read_openclaw_sqlite,
    "jsonl": read_generic_jsonl,
    "locomo": read_locomo,
    "memory-md": read_memory_md,
    "daily-note": read_daily_note,
}


def read(
    path: Path,
    fmt: str | None = None,
    *,
    on_warning: Callable[[IngestWarning], None],
    on_progress: Callable[[int, int], None] | None = None,
    max_text_bytes: int = MAX_TEXT_BYTES,
) -> Iterator[Turn | ImportedNote]:
    """Turns (transcripts) or notes (Markdown) from one file, lazily, in order.

    `fmt` is one of `FORMATS`; None detects it. `on_progress(done, total)` counts bytes
    (rows for SQLite). A turn or note whose text is above `max_text_bytes` of UTF-8 is
    reported and skipped; JSON lines above 4 times that are never loaded. The path and
    format are checked now; the file is read as the iterator is consumed.
    """
    path = Path(path)
    check_file(path)
    if fmt is None:
        fmt = detect_format(path)
    elif fmt not in _READERS:
        raise InvalidInput(f"Unknown format '{fmt}'. Use one of: {', '.join(FORMATS)}.")
    if max_text_bytes < 1:
        raise InvalidInput(f"max_text_bytes must be positive, not {max_text_bytes}.")
    reader = _READERS[fmt]
    return reader(
        path,
        on_warning=on_warning,
        on_progress=on_progress or no_progress,
        max_text_bytes=max_text_bytes,
    )
