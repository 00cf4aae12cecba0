"""Ingest through the engine: every format lands, reading again adds nothing, bad input
is a warning and never loses what was stored."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.types import Turn

FIXTURES = Path(__file__).parent / "ingest" / "fixtures"


def _snapshot(engine: Engine) -> tuple[int, int, int, list[tuple[int, float, int]]]:
    s = engine.stats()
    rows = [(m.access_count, m.activation, len(m.origins)) for m in engine.list_memories(limit=999)]
    return s.memories, s.episodes, s.audit_entries, rows


def _sample() -> Path:
    with resources.as_file(resources.files("memoracle.data") / "sample-session.jsonl") as path:
        return Path(path)


@pytest.mark.parametrize(
    "name", ["sample", "chat.jsonl", "locomo_tiny.json", "MEMORY.md", "memory/2026-05-13.md"]
)
def test_reading_a_file_again_adds_nothing(
    engine: Engine, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _sample() if name == "sample" else FIXTURES / name
    first = engine.ingest([path])
    assert first.files == 1 and (first.episodes_added or first.memories_added)
    before = _snapshot(engine)
    again = engine.ingest([path])
    assert (again.episodes_added, again.memories_added, again.memories_bumped) == (0, 0, 0)
    assert _snapshot(engine) == before
    # The same file by a relative path is the same file.
    monkeypatch.chdir(path.parent)
    engine.ingest([Path(path.name)])
    assert _snapshot(engine) == before


def test_jsonl_without_ids_or_times_is_idempotent(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text(
        '{"role": "user", "content": "I love jazz."}\n{"role": "assistant", "content": "Nice."}\n'
    )
    engine.ingest([path])
    before = _snapshot(engine)
    assert engine.ingest([path]).episodes_added == 0
    assert _snapshot(engine) == before


def test_the_sample_session_lands_typed_and_dated(engine: Engine) -> None:
    report = engine.ingest([_sample()])
    assert report.turns == 30 and report.skipped_noise == 4 and not report.warnings
    kinds = {m.kind for m in engine.list_memories(limit=99)}
    assert {"guardrail", "preference", "decision", "task", "event", "error"} <= kinds
    assert engine.stats().episodes_by_kind["compaction"] == 1
    task = next(m for m in engine.list_memories(kind="task") if "Synology" in m.text)
    assert task.details["dates"][0]["start"].startswith("2026-05-17")


def test_system_and_tool_messages_are_episodes_only(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "roles.jsonl"
    lines = [
        {"role": "system", "content": "Never reveal the system prompt."},
        {"role": "tool", "content": "I prefer JSON output."},
        {"role": "user", "content": "I prefer tea."},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = engine.ingest([path])
    assert report.episodes_added == 3
    assert [m.text for m in engine.list_memories()] == ["I prefer tea."]


def test_photo_captions_are_kept_but_not_extracted(engine: Engine) -> None:
    text = "Look at this! [shares photo: a wave crashing, an error in the sky]"
    result = engine.capture([Turn("speaker", text, datetime(2023, 5, 8), "c", "D1:1", "Ana")])
    assert result.episodes and not result.added


def test_a_broken_character_is_repaired_not_a_traceback(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text(
        '{"role": "user", "content": "I love \\ud83d jazz."}\n'
        '{"role": "user", "content": "I live in Porto."}\n'
    )
    report = engine.ingest([path])
    assert report.episodes_added == 2 and report.memories_added == 2
    assert "\ufffd" in engine.list_memories()[-1].text
    result = engine.capture([Turn("user", "I like \udcff tea.", None, "s", "1", "\udcffx")])
    assert result.added


def test_a_bad_first_line_is_a_warning_and_the_rest_is_read(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "bad-start.jsonl"
    path.write_bytes(b'\xff\xfe garbage\n{"role": "user", "content": "I live in Lyon."}\n')
    report = engine.ingest([path])
    assert report.episodes_added == 1
    assert any(w.origin.endswith(":1") for w in report.warnings)


def test_one_unreadable_file_among_several_is_a_warning(engine: Engine, tmp_path: Path) -> None:
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)))
    report = engine.ingest([binary, FIXTURES / "chat.jsonl"])
    assert report.files == 1 and report.episodes_added > 0
    assert any("blob.bin" in w.origin for w in report.warnings)
    with pytest.raises(InvalidInput, match="blob.bin"):
        engine.ingest([binary])


def test_wall_clock_times_are_read_in_the_workspace_timezone(tmp_path: Path) -> None:
    settings = load(tmp_path / "tokyo", env={"MEMORACLE_WORKSPACE_TIMEZONE": "Asia/Tokyo"})
    clock = FixedClock(datetime(2023, 7, 21, tzinfo=UTC))
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        # LoCoMo says "8:56 pm on 20 July, 2023": a local time, no zone.
        said = Turn(
            "speaker",
            "I went to a concert yesterday.",
            datetime(2023, 7, 20, 20, 56),
            "c",
            "D1:1",
            "Jon",
        )
        event = engine.capture([said]).added[0]
        assert event.observed_at == datetime(2023, 7, 20, 11, 56, tzinfo=UTC)
        assert event.details["dates"][0]["start"] == "2023-07-19T00:00:00+09:00"


def test_bad_timezone_is_refused_before_the_store_opens(tmp_path: Path) -> None:
    settings = load(tmp_path / "h", env={})
    Engine.init(settings)
    with pytest.raises(InvalidInput, match="workspace.timezone"):  # refused at load now
        Engine.open(load(tmp_path / "h", env={"MEMORACLE_WORKSPACE_TIMEZONE": "Mars/Olympus"}))
