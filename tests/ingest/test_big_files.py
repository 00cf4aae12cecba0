"""Streaming: a transcript tens of MB large is read without loading it."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from memoracle.ingest import read
from memoracle.types import IngestWarning, Turn

pytestmark = pytest.mark.slow  # subprocesses and real servers: `make check` runs it

FILLER = "The quick brown fox jumps over the lazy dog while the server hums. " * 24


def write_big_session(path: Path, entries: int) -> int:
    """A v3 session with an abandoned branch every 100 entries; returns live spoken turns."""
    live = 0
    parent: str | None = None
    with path.open("w", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {"type": "session", "version": 3, "id": "big", "timestamp": "2026-05-14T08:00:00Z"}
            )
            + "\n"
        )
        for i in range(entries):
            entry_id = f"{i:08x}"
            if i % 3 == 2:
                message = {
                    "role": "toolResult",
                    "toolCallId": "c",
                    "toolName": "exec",
                    "content": [{"type": "text", "text": FILLER}],
                    "isError": False,
                }
            else:
                role = "user" if i % 3 == 0 else "assistant"
                message = {
                    "role": role,
                    "content": [
                        {"type": "thinking", "thinking": FILLER[:400]},
                        {"type": "text", "text": f"turn {i} {FILLER[:600]}"},
                    ],
                }
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-05-14T08:00:00.000Z",
                "message": message,
            }
            f.write(json.dumps(entry) + "\n")
            if i % 100 == 50:  # a dead end: a sibling branch nobody continued
                dead = dict(entry, id=f"dead{i:08x}", parentId=parent)
                f.write(json.dumps(dead) + "\n")
            if message["role"] != "toolResult":
                live += 1
            parent = entry_id
    return live


def test_a_large_transcript_streams_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    live = write_big_session(path, 21_000)
    size = path.stat().st_size
    assert size > 30_000_000
    warnings: list[IngestWarning] = []
    tracemalloc.start()
    try:
        count = 0
        for item in read(path, on_warning=warnings.append):
            assert isinstance(item, Turn)
            count += 1
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert warnings == []
    assert count == live
    # Memory follows the number of entries (~130 bytes each), not the bytes of the file.
    assert peak < size / 6, f"peak {peak:,} bytes for a {size:,}-byte file"


def test_a_10_mb_line_in_a_transcript_is_reported_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "one-huge-line.jsonl"
    entries = [
        {"type": "session", "version": 3, "id": "s"},
        {
            "type": "message",
            "id": "a",
            "parentId": None,
            "message": {"role": "user", "content": "paste this"},
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "x" * 10_000_000}],
            },
        },
        {
            "type": "message",
            "id": "c",
            "parentId": "b",
            "message": {"role": "user", "content": "thanks"},
        },
    ]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    warnings: list[IngestWarning] = []
    tracemalloc.start()
    try:
        got = [t.text for t in read(path, on_warning=warnings.append) if isinstance(t, Turn)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == ["paste this", "thanks"]
    assert len(warnings) == 1 and warnings[0].origin == f"{path}:3"
    assert peak < 9_000_000
