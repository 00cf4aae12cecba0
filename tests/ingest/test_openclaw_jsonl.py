from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from pi_builders import SESSION_ID, Session

from memoracle.ingest import read
from memoracle.types import IngestWarning, Turn


def turns(path: Path, warnings: list[IngestWarning]) -> list[Turn]:
    items = list(read(path, "openclaw-jsonl", on_warning=warnings.append))
    assert all(isinstance(t, Turn) for t in items)
    return [t for t in items if isinstance(t, Turn)]


def test_reads_user_and_assistant_text_with_ids_and_session(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    u = session.user("hello there")
    a = session.assistant("hi!")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [(t.role, t.text, t.turn_id) for t in got] == [
        ("user", "hello there", u),
        ("assistant", "hi!", a),
    ]
    assert {t.session_id for t in got} == {SESSION_ID}
    assert got[0].origin == f"{tmp_path / 's.jsonl'}:2"
    assert got[0].kind == "message"
    assert got[0].at == datetime(2026, 5, 14, 8, 1, tzinfo=UTC)
    assert warnings == []


def test_only_the_live_branch_is_read(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("set up the NAS")
    kept = session.assistant("ok, which model?")
    session.user("Use MySQL")  # edited away below
    session.assistant("MySQL it is")
    session.user("Use PostgreSQL", parent=kept)
    session.assistant("PostgreSQL it is")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [t.text for t in got] == [
        "set up the NAS",
        "ok, which model?",
        "Use PostgreSQL",
        "PostgreSQL it is",
    ]


def test_the_leaf_is_the_last_entry_appended_even_on_an_older_branch(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    root = session.user("start")
    session.assistant("A path")
    session.user("B path", parent=root)
    session.assistant("back on B")
    # The user navigated back to the A reply and continued there last.
    a_reply = session.entries[2]["id"]
    session.user("continue A", parent=a_reply)
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [t.text for t in got] == ["start", "A path", "continue A"]


def test_thinking_tool_calls_and_tool_results_are_skipped(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("check the disk")
    session.assistant(
        {"type": "thinking", "thinking": "secret reasoning"},
        "Let me look.",
        {"type": "toolCall", "id": "call_1", "name": "exec", "arguments": {"command": "df -h"}},
    )
    session.tool_result("/dev/nvme0n1  2.0T  120G")
    session.assistant({"type": "thinking", "thinking": "only thinking"})
    session.assistant("Plenty of space.", "Two blocks.")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [t.text for t in got] == [
        "check the disk",
        "Let me look.",
        "Plenty of space.\n\nTwo blocks.",
    ]
    assert not any("secret" in t.text or "nvme" in t.text for t in got)


def test_metadata_blocks_and_envelope_are_stripped_and_give_the_time(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    text = (
        'Conversation info (untrusted metadata):\n```json\n{\n  "message_id": "42",\n'
        '  "sender": "Ana"\n}\n```\n\nSender (untrusted metadata):\n```json\n{\n'
        '  "label": "Ana (7)",\n  "name": "Ana"\n}\n```\n\n'
        "[Thu 2026-05-14 10:02 GMT+2] I prefer tea over coffee"
    )
    session.user(text, timestamp="2026-05-14T08:02:31.000Z")
    session.user(
        "[Thu 2026-05-14 10:05] no zone, so the entry time wins",
        timestamp="2026-05-14T08:05:09.000Z",
    )
    session.user("plain text", timestamp="2026-05-14T08:06:00.000Z")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert got[0].text == "I prefer tea over coffee"
    assert got[0].speaker == "Ana" and got[1].speaker == "Ana"  # carried within the session
    assert got[0].at == datetime(2026, 5, 14, 10, 2, tzinfo=timezone(timedelta(hours=2)))
    assert got[0].at.utcoffset() == timedelta(hours=2)
    assert got[1].text == "no zone, so the entry time wins"
    assert got[1].at == datetime(2026, 5, 14, 8, 5, 9, tzinfo=UTC)
    assert got[2].at == datetime(2026, 5, 14, 8, 6, tzinfo=UTC)


def test_a_message_of_only_metadata_gives_no_turn(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user(
        'Sender (untrusted metadata):\n```json\n{"name": "Ana"}\n```\n\n'
        "[Thu 2026-05-14 10:02 GMT+2]"
    )
    session.user("real")
    assert [t.text for t in turns(session.write(tmp_path / "s.jsonl"), warnings)] == ["real"]


def test_compaction_is_kept_as_a_system_turn(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("before")
    cid = session.compaction("## Goal\nSet up the server.")
    session.user("after")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [(t.kind, t.role, t.text) for t in got] == [
        ("message", "user", "before"),
        ("compaction", "system", "## Goal\nSet up the server."),
        ("message", "user", "after"),
    ]
    assert got[1].turn_id == cid


def test_branch_summaries_custom_and_other_entries_are_skipped(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.add({"type": "model_change", "provider": "anthropic", "modelId": "m"})
    session.user("hi")
    session.add({"type": "branch_summary", "fromId": "x", "summary": "abandoned branch said MySQL"})
    session.add(
        {"type": "custom_message", "customType": "ext", "content": "injected", "display": False}
    )
    session.add({"type": "custom", "customType": "ext", "data": {"n": 1}})
    session.add({"type": "label", "targetId": "x", "label": "checkpoint"})
    session.add(
        {"type": "message", "message": {"role": "bashExecution", "command": "ls", "output": "x"}}
    )
    session.assistant("bye")
    assert [t.text for t in turns(session.write(tmp_path / "s.jsonl"), warnings)] == ["hi", "bye"]
    assert warnings == []


def test_noise_is_passed_through_for_the_capture_layer(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.")
    session.assistant("HEARTBEAT_OK")
    session.assistant("NO_REPLY")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [t.text for t in got][1:] == ["HEARTBEAT_OK", "NO_REPLY"]


def test_malformed_lines_warn_with_file_and_line_and_the_rest_is_read(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("first")
    session.assistant("second")
    session.user("third")
    lines = [line.encode() for line in session.lines()]
    path = tmp_path / "s.jsonl"
    # The header is line 1; entries are lines 2, 4, 7; junk in between.
    junk = [b"{not json", b"[1, 2]", b'{"type": "message", "text": "\xff\xfe broken utf-8"}']
    path.write_bytes(
        b"\n".join([lines[0], lines[1], junk[0], lines[2], junk[1], junk[2], lines[3]]) + b"\n"
    )
    got = turns(path, warnings)
    assert [t.text for t in got] == ["first", "second", "third"]
    assert [t.origin for t in got] == [f"{path}:2", f"{path}:4", f"{path}:7"]
    assert [w.origin for w in warnings] == [f"{path}:3", f"{path}:5", f"{path}:6"]
    assert "not valid JSON" in warnings[0].message
    assert "not a JSON object" in warnings[1].message
    assert "UTF-8" in warnings[2].message


def test_a_missing_parent_is_reported_and_the_branch_read_from_there(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("lost root")
    session.user("orphan", parent="deadbeef")
    session.assistant("reply")
    got = turns(session.write(tmp_path / "s.jsonl"), warnings)
    assert [t.text for t in got] == ["orphan", "reply"]
    assert len(warnings) == 1 and "deadbeef" in warnings[0].message
    assert warnings[0].origin.endswith(":3")


def test_version_1_files_without_ids_are_read_in_order(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "v1.jsonl"
    entries = [
        {"type": "session", "id": "old", "timestamp": "2024-12-03T14:00:00.000Z"},
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:01.000Z",
            "message": {"role": "user", "content": "Hello"},
        },
        {
            "type": "message",
            "timestamp": "2024-12-03T14:00:02.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "Hi!"}]},
        },
    ]
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    got = turns(path, warnings)
    assert [(t.text, t.turn_id, t.session_id) for t in got] == [
        ("Hello", "L2", "old"),
        ("Hi!", "L3", "old"),
    ]


def test_without_a_header_the_file_name_is_the_session(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("hi")
    path = tmp_path / "2026-05-14T08-00-00_abc.jsonl"
    path.write_text("\n".join(session.lines()[1:]) + "\n")
    assert [t.session_id for t in turns(path, warnings)] == ["2026-05-14T08-00-00_abc"]


def test_oversized_lines_are_skipped_without_breaking_the_branch(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("run the export")
    session.tool_result("x" * 3_000)  # big tool output: skipped silently
    session.assistant("y" * 3_000)  # big spoken turn: reported
    session.user("thanks")
    path = session.write(tmp_path / "s.jsonl")
    got = list(read(path, on_warning=warnings.append, max_text_bytes=200))
    assert [t.text for t in got if isinstance(t, Turn)] == ["run the export", "thanks"]
    assert len(warnings) == 1
    assert warnings[0].origin == f"{path}:4" and "assistant" in warnings[0].message


def test_a_turn_above_the_text_limit_is_reported(
    tmp_path: Path, session: Session, warnings: list[IngestWarning]
) -> None:
    session.user("z" * 500)
    session.user("short")
    got = list(
        read(session.write(tmp_path / "s.jsonl"), on_warning=warnings.append, max_text_bytes=400)
    )
    assert [t.text for t in got if isinstance(t, Turn)] == ["short"]
    assert "above the" in warnings[0].message


def test_progress_is_monotonic_in_bytes_and_ends_at_the_size(
    tmp_path: Path, session: Session
) -> None:
    for i in range(50):
        session.user(f"message {i}")
    path = session.write(tmp_path / "s.jsonl")
    seen: list[tuple[int, int]] = []
    list(read(path, on_warning=lambda w: None, on_progress=lambda d, t: seen.append((d, t))))
    size = path.stat().st_size
    assert seen[-1] == (size, size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert {t for _, t in seen} == {size}
