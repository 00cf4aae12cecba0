from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from pi_builders import FIXTURES, Session

from memoracle.errors import InvalidInput, NotFound
from memoracle.ingest import FORMATS, detect_format, read


def test_formats_are_exactly_these() -> None:
    assert FORMATS == (
        "openclaw-jsonl",
        "openclaw-sqlite",
        "jsonl",
        "locomo",
        "memory-md",
        "daily-note",
    )


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("s.jsonl", Session().lines()[0], "openclaw-jsonl"),
        (
            "s.jsonl",
            json.dumps({"type": "message", "id": "a", "parentId": None, "message": {}}),
            "openclaw-jsonl",
        ),
        (
            "s.jsonl",
            '{"type":"session","version":3,"id":"x","cwd":"' + "c" * 70_000 + '"}',
            "openclaw-jsonl",
        ),
        ("chat.jsonl", '{"role": "user", "content": "hi"}', "jsonl"),
        ("chat.txt", '\ufeff{"role": "user", "content": "hi"}', "jsonl"),
        ("chat.jsonl", '{"role": "user", "content": "' + "x" * 70_000 + '"}', "jsonl"),
        ("data.json", '[\n  {\n    "qa": [{"question": "q", "evidence": ["D1:1"]}]', "locomo"),
        ("one.json", '{\n  "sample_id": "conv-1",\n  "conversation": {}\n}', "locomo"),
        ("MEMORY.md", "# Memory\n- a fact\n", "memory-md"),
        ("notes.markdown", "- a fact\n", "memory-md"),
        ("2026-05-14.md", "# 2026-05-14\n", "daily-note"),
        ("2026-05-22-2108.md", "- late note\n", "daily-note"),
        ("2026-13-40.md", "- not a date\n", "memory-md"),
    ],
)
def test_detects_by_content_and_name(
    tmp_path: Path, name: str, content: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(content + "\n", encoding="utf-8")
    assert detect_format(path) == expected


def test_detects_an_sqlite_store(tmp_path: Path) -> None:
    path = tmp_path / "openclaw-agent.sqlite"
    sqlite3.connect(path).execute(
        "CREATE TABLE transcript_events (event_json TEXT)"
    ).connection.close()
    assert detect_format(path) == "openclaw-sqlite"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "empty"),
        (b"\n\n  \n", "blank"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
        ('{"role": "user"}'.encode("utf-16"), "UTF-16"),
        (b"caf\xe9 au lait\n", "not UTF-8"),
        (b"hello, just some text\n", "not a format"),
        (b'{"foo": 1}\n', "not a format"),
        (b"<html><body>hi</body></html>", "not a format"),
    ],
)
def test_unreadable_files_raise_invalid_input_naming_the_file_and_formats(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    with pytest.raises(InvalidInput) as info:
        detect_format(path)
    message = str(info.value)
    assert str(path) in message and why in message
    assert "openclaw-jsonl" in message and "locomo" in message and "daily-note" in message
    with pytest.raises(InvalidInput):
        read(path, on_warning=lambda w: None)  # raised at the call, before any reading


def test_binary_markdown_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"\x00\x01\x02")
    with pytest.raises(InvalidInput, match="binary"):
        detect_format(path)


def test_missing_paths_and_directories(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="nope.jsonl"):
        detect_format(tmp_path / "nope.jsonl")
    with pytest.raises(NotFound):
        read(tmp_path / "nope.jsonl", "jsonl", on_warning=lambda w: None)
    with pytest.raises(InvalidInput, match="directory"):
        detect_format(tmp_path)


def test_an_unknown_format_name_is_refused() -> None:
    with pytest.raises(InvalidInput, match="openclaw-sqlite"):
        read(FIXTURES / "chat.jsonl", "csv", on_warning=lambda w: None)


def test_an_explicit_format_skips_detection(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("## Decisions\n- Go with Caddy\n")
    got = list(read(path, "memory-md", on_warning=lambda w: None))
    assert [(n.kind, n.text) for n in got] == [("decision", "Go with Caddy")]
