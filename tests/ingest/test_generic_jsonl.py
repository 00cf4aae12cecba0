from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pi_builders import FIXTURES

from memoracle.ingest import detect_format, read
from memoracle.types import IngestWarning, Turn


def turns(path: Path, warnings: list[IngestWarning], **kw: int) -> list[Turn]:
    return [t for t in read(path, "jsonl", on_warning=warnings.append, **kw) if isinstance(t, Turn)]


def test_reads_roles_content_times_and_optional_fields(warnings: list[IngestWarning]) -> None:
    path = FIXTURES / "chat.jsonl"
    assert detect_format(path) == "jsonl"
    got = turns(path, warnings)
    assert [(t.role, t.text) for t in got] == [
        ("user", "I moved to Lisbon last month."),
        ("assistant", "Nice!\n\nHow do you like it?"),
        ("user", "Love it"),
        ("system", "Summary of earlier chat."),
        ("user", "no time here"),
    ]
    assert [t.at for t in got] == [
        datetime(2026, 5, 1, 9, 0, tzinfo=UTC),
        datetime(2026, 5, 1, 9, 1, tzinfo=UTC),  # epoch seconds
        datetime(2026, 5, 1, 9, 2, tzinfo=UTC),  # epoch milliseconds
        None,
        None,
    ]
    assert (got[0].session_id, got[0].turn_id) == ("chat-1", "m1")
    assert (got[2].session_id, got[2].speaker) == ("chat-1", "Rui")
    assert got[3].kind == "compaction"
    assert got[0].origin == f"{path}:1"
    assert warnings == []


def test_bad_lines_warn_with_file_and_line_and_the_rest_is_read(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_bytes(
        b'{"role": "user", "content": "one"}\n'
        b"\n"
        b"{oops\n"
        b'{"content": "no role"}\n'
        b'{"role": "user"}\n'
        b'{"role": "user", "content": 42}\n'
        b'{"role": "user", "content": "caf\xe9 in latin-1"}\n'
        b'"just a string"\n'
        b'{"role": "user", "content": "two", "timestamp": "yesterday"}\n'
    )
    got = turns(path, warnings)
    assert [t.text for t in got] == ["one", "two"]
    assert [w.origin.rsplit(":", 1)[1] for w in warnings] == ["3", "4", "5", "6", "7", "8", "9"]
    assert all(w.origin.startswith(str(path)) for w in warnings)
    assert "role" in warnings[1].message and "content" in warnings[2].message
    assert "UTF-8" in warnings[4].message
    assert "yesterday" in warnings[6].message and got[1].at is None


def test_a_huge_single_line_is_skipped_in_bounded_memory(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as f:
        f.write(b'{"role": "user", "content": "before"}\n')
        f.write(b'{"role": "user", "content": "' + b"a" * 10_000_000 + b'"}\n')
        f.write(b'{"role": "user", "content": "after"}\n')
    got = turns(path, warnings)
    assert [t.text for t in got] == ["before", "after"]
    assert warnings[0].origin == f"{path}:2" and "10.0 MB" in warnings[0].message


def test_text_above_the_limit_is_reported(tmp_path: Path, warnings: list[IngestWarning]) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"role": "user", "content": "' + "é" * 600 + '"}\n{"role": "user", "content": "ok"}\n'
    )
    assert [t.text for t in turns(path, warnings, max_text_bytes=1000)] == ["ok"]
    assert "1.0 MB" not in warnings[0].message and "above" in warnings[0].message
