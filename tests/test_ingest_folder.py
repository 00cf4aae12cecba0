"""`ingest DIR`: a folder is walked in sorted order, every file of a known format read,
every other file skipped and named, no link followed out of the tree, one progress count
over all files, and a bad file reported as when it is given alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.ingest.walk import walk_folder

CHAT = [
    {"role": "user", "content": "I live in Lyon.", "timestamp": "2026-01-05T10:00:00Z"},
    {"role": "assistant", "content": "Noted.", "timestamp": "2026-01-05T10:00:05Z"},
]
NOTE = "# 2026-01-04\n\n## Decisions Made\n- Ship the billing service on Tuesdays\n"


def jsonl(path: Path, lines: list[dict[str, str]], *, bad_line: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = [json.dumps(line) for line in lines]
    if bad_line is not None:
        text.insert(1, bad_line)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Two known files (one nested two levels down), an unknown file, an empty folder."""
    root = tmp_path / "tree"
    jsonl(root / "chat.jsonl", CHAT)
    (root / "notes" / "memory").mkdir(parents=True)
    (root / "notes" / "memory" / "2026-01-04.md").write_text(NOTE, encoding="utf-8")
    (root / "README.txt").write_text("These are exported chats.\n", encoding="utf-8")
    (root / "empty-folder").mkdir()
    return root


def fresh(tmp_path: Path, name: str, clock: FixedClock) -> Settings:
    settings = load(tmp_path / name, env={}, overrides={"embedding.model": "hash"})
    Engine.init(settings, clock=clock)
    return settings


def test_a_folder_reads_every_known_file_and_names_the_others(engine: Engine, tree: Path) -> None:
    calls: list[tuple[int, int]] = []
    report = engine.ingest([tree], on_progress=lambda done, total: calls.append((done, total)))
    assert report.files == 2
    assert report.format_counts == {"jsonl": 1, "daily-note": 1}
    assert report.turns == 2 and report.episodes_added == 2
    assert sorted(m.text for m in engine.list_memories()) == [
        "I live in Lyon.",
        "Ship the billing service on Tuesdays",
    ]
    [skipped] = report.skipped_files
    assert skipped.path == str(tree / "README.txt")
    assert skipped.reason.startswith("is not a format memoracle reads")
    # One count over both files: the total never changes, the count never goes back.
    total = (tree / "chat.jsonl").stat().st_size
    total += (tree / "notes" / "memory" / "2026-01-04.md").stat().st_size
    assert {t for _, t in calls} == {total}
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1] == (total, total)


def test_the_walk_is_sorted_and_the_same_every_time(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for rel in ("b.jsonl", "a/z.jsonl", "a/b/c.jsonl", "B.jsonl", "a.jsonl"):
        jsonl(root / rel, CHAT)
    names = [f.path.relative_to(root).as_posix() for f in walk_folder(root).files]
    assert names == ["B.jsonl", "a/b/c.jsonl", "a/z.jsonl", "a.jsonl", "b.jsonl"]
    assert walk_folder(root) == walk_folder(root)


def test_a_folder_gives_what_its_files_give_one_by_one(
    tree: Path, tmp_path: Path, clock: FixedClock
) -> None:
    bad = jsonl(tree / "notes" / "bad.jsonl", CHAT[:1], bad_line="{not json")
    with Engine.open(fresh(tmp_path, "whole", clock), clock=clock) as engine:
        whole = engine.ingest([tree])
        memories = sorted(m.text for m in engine.list_memories())
    with Engine.open(fresh(tmp_path, "single", clock), clock=clock) as engine:
        alone = engine.ingest([bad])
    # The bad line is the same warning, naming the file and the line, in both.
    assert alone.warnings == whole.warnings
    assert [w.origin for w in whole.warnings] == [f"{bad.resolve()}:2"]
    assert whole.files == 3 and memories == [
        "I live in Lyon.",
        "Ship the billing service on Tuesdays",
    ]


def test_a_file_no_reader_can_read_is_named_and_nothing_of_it_is_stored(
    engine: Engine, tree: Path
) -> None:
    broken = tree / "locomo.json"
    broken.write_text(
        '[{"sample_id": "s1", "conversation": {"speaker_a": "Ana", "session_1": '
        '[{"speaker": "Ana", "dia_id": "D1:1", "text": "I live in Oslo."}\n',
        encoding="utf-8",
    )
    report = engine.ingest([tree])
    assert report.files == 2
    [warning] = report.warnings
    assert warning.origin == str(broken.resolve())
    assert "not a valid LoCoMo JSON document" in warning.message and "line 2" in warning.message
    assert all("Oslo" not in m.text for m in engine.list_memories())
    with pytest.raises(InvalidInput, match="locomo.json"):
        engine.ingest([broken])  # alone, the same file is the call's error


def test_no_link_is_followed_out_of_the_tree(engine: Engine, tree: Path, tmp_path: Path) -> None:
    outside = jsonl(
        tmp_path / "elsewhere" / "secret.jsonl", [{"role": "user", "content": "I live in Oslo."}]
    )
    (tree / "out.jsonl").symlink_to(outside)
    (tree / "out-folder").symlink_to(outside.parent, target_is_directory=True)
    (tree / "loop").symlink_to(tree, target_is_directory=True)
    (tree / "broken.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (tree / "zz-again.jsonl").symlink_to(tree / "chat.jsonl")
    report = engine.ingest([tree])
    reasons = {Path(s.path).name: s.reason for s in report.skipped_files}
    assert "outside" in reasons["out.jsonl"]
    assert "outside" in reasons["out-folder"]
    assert "not followed" in reasons["loop"]
    assert "does not exist" in reasons["broken.jsonl"]
    assert "read once" in reasons["zz-again.jsonl"]
    assert report.files == 2 and report.turns == 2
    assert all("Oslo" not in m.text for m in engine.list_memories())


def test_a_fifo_is_skipped_not_waited_on(engine: Engine, tree: Path) -> None:
    os.mkfifo(tree / "pipe")
    report = engine.ingest([tree])
    assert report.files == 2
    assert any(s.path.endswith("pipe") and "FIFO" in s.reason for s in report.skipped_files)


def test_format_in_a_folder_reads_only_that_format(engine: Engine, tree: Path) -> None:
    report = engine.ingest([tree], fmt="daily-note")
    assert report.format_counts == {"daily-note": 1}
    skipped = {Path(s.path).name: s.reason for s in report.skipped_files}
    assert skipped["chat.jsonl"] == "detected as jsonl, not daily-note (--format)"


def test_an_empty_folder_is_a_clear_error(engine: Engine, tmp_path: Path) -> None:
    empty = tmp_path / "nothing-here"
    (empty / "sub").mkdir(parents=True)
    with pytest.raises(InvalidInput, match="holds no files; there is nothing to ingest"):
        engine.ingest([empty])


def cli(home: Path, *args: str, code: int) -> str:
    result = CliRunner().invoke(main, ["--home", str(home), *args])
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


def test_the_cli_reads_a_folder_and_lists_what_it_skipped(tree: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli(home, "init", code=0)
    out = cli(home, "ingest", str(tree), code=0)
    assert f"skipped {tree / 'README.txt'}: is not a format memoracle reads" in out
    assert "read 2 file(s) (1 daily-note, 1 jsonl; 1 skipped)" in out
    data = json.loads(cli(home, "ingest", str(tree), "--json", code=0))
    assert data["files"] == 2
    assert data["skipped_files"] == [
        {
            "path": str(tree / "README.txt"),
            "reason": "is not a format memoracle reads (first line: 'These are exported chats.')",
        }
    ]


def test_the_cli_refuses_an_empty_folder_and_one_with_nothing_to_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli(home, "init", code=0)
    empty = tmp_path / "empty"
    empty.mkdir()
    out = cli(home, "ingest", str(empty), code=1)
    assert f"'{empty}' holds no files; there is nothing to ingest" in out
    (empty / "notes.txt").write_text("just text\n")
    out = cli(home, "ingest", str(empty), code=1)
    assert f"skipped {empty / 'notes.txt'}" in out and "read 0 file(s)" in out
    assert "holds no file a reader takes" in out
