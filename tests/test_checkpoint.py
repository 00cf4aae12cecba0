"""`memoracle checkpoint`: a session transcript or a text saved before compaction, once,
tagged as a checkpoint, noted in today's daily note; it never fails the host."""

from __future__ import annotations

import json
import shutil
from importlib.resources import files
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memoracle.cli import main
from memoracle.config import load
from memoracle.engine import Engine

NOW = "2026-05-14T18:30:00+00:00"
ENV = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": NOW}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    Engine.init(load(home, env=ENV))
    return home


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "0b7e4c1a.jsonl"
    source = files("memoracle.data").joinpath("sample-session.jsonl")
    path.write_bytes(source.read_bytes())
    return path


def _run(home: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(
        main, ["--home", str(home), "checkpoint", *args], input=input, env=ENV
    )


def _json(result: Result) -> dict[str, object]:
    assert result.exit_code == 0, result.output
    data: dict[str, object] = json.loads(result.stdout)
    return data


def _note(home: Path) -> str:
    return (home / "workspace" / "memory" / "2026-05-14.md").read_text(encoding="utf-8")


def test_a_transcript_is_saved_once_tagged_as_a_checkpoint(home: Path, session: Path) -> None:
    first = _json(_run(home, "--session-file", str(session), "--json"))
    (report,) = first["checkpoints"]  # type: ignore[misc]
    assert report["ok"] and report["episodes"] and report["already_stored"] == 0
    sources = {m["source"] for m in report["added"]}  # "remember …" stays the user's word
    assert sources == {"checkpoint", "user-stated"}
    assert report["note"]["section"] == "## Checkpoint [18:30]"
    note = _note(home)
    assert "## Checkpoint [18:30]" in note
    assert all(m["text"].split()[0] in note for m in report["added"])

    again = _json(_run(home, "--session-file", str(session), "--json"))
    (second,) = again["checkpoints"]  # type: ignore[misc]
    assert second["episodes"] == [] and second["added"] == []
    assert second["already_stored"] == len(report["episodes"])
    assert _note(home) == note  # nothing new: no second section


def test_turns_the_host_already_captured_are_not_saved_again(home: Path, session: Path) -> None:
    ingest = CliRunner().invoke(main, ["--home", str(home), "ingest", str(session)], env=ENV)
    assert ingest.exit_code == 0, ingest.output
    (report,) = _json(_run(home, "--session-file", str(session), "--json"))["checkpoints"]  # type: ignore[misc]
    assert report["episodes"] == [] and report["added"] == [] and report["already_stored"] > 0


def test_a_text_from_stdin_is_saved_and_noted(home: Path) -> None:
    text = "- I moved to Lyon last month.\n- assistant: Noted the move.\n"
    out = _run(home, "--text", "-", input=text)
    assert out.exit_code == 0 and "2 stored" in out.stdout
    assert "- I moved to Lyon last month." in _note(home)
    listed = CliRunner().invoke(main, ["--home", str(home), "list", "--json"], env=ENV)
    sources = {m["source"] for m in json.loads(listed.stdout)["memories"]}
    assert sources == {"checkpoint"}


@pytest.mark.parametrize(
    "args",
    [
        [],  # nothing to save
        ["--session-file", "/nonexistent/session.jsonl"],
        ["--openclaw-agent", "no-such-agent"],
    ],
)
def test_a_problem_is_said_on_stderr_and_the_exit_status_is_0(
    home: Path, args: list[str], tmp_path: Path
) -> None:
    out = CliRunner().invoke(
        main,
        ["--home", str(home), "checkpoint", *args],
        env={**ENV, "OPENCLAW_STATE_DIR": str(tmp_path / "openclaw")},
    )
    assert out.exit_code == 0
    assert out.stderr.startswith("problem: ") and out.stdout == ""


def test_a_broken_store_still_gets_the_text_into_the_daily_note(home: Path) -> None:
    db = home / "memoracle.db"
    db.write_bytes(b"this is not a database" * 100)
    out = _run(home, "--text", "Never deploy on Fridays.")
    assert out.exit_code == 0 and "problem: Not stored in memory" in out.stderr
    assert "- Never deploy on Fridays." in _note(home)


SECRETS = ("hunter2secret", "sk-proj-Zq81bXc4Lm0Vt7Wn2Ry5Kd9Pf3Hs6Ju1")


@pytest.mark.parametrize("broken", [False, True], ids=["stored", "store-broken"])
def test_secrets_never_reach_the_daily_note_or_the_snapshot(home: Path, broken: bool) -> None:
    if broken:  # the text goes to the note only
        (home / "memoracle.db").write_bytes(b"this is not a database" * 100)
    text = f"user: my password is {SECRETS[0]}. The NAS key is {SECRETS[1]}\n"
    out = _run(home, "--text", "-", input=text)
    assert out.exit_code == 0
    note = _note(home)
    assert "[REDACTED:password]" in note and "[REDACTED:openai_key]" in note
    if not broken:
        nightly = CliRunner().invoke(main, ["--home", str(home), "nightly"], env=ENV)
        assert nightly.exit_code == 0, nightly.output
    written = [p for p in home.rglob("*") if p.is_file() and p.suffix in (".md", ".jsonl")]
    assert written
    for path in written:
        body = path.read_text(encoding="utf-8", errors="replace")
        assert not any(secret in body for secret in SECRETS), path


def test_a_home_that_cannot_be_read_is_a_problem_not_a_failure(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[recall\n", encoding="utf-8")  # a TOML error
    out = _run(home, "--text", "I prefer tea.")
    assert out.exit_code == 0 and "config.toml" in out.stderr
    shutil.rmtree(home)


def test_an_unknown_agent_does_not_stop_the_text(home: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(
        main,
        ["--home", str(home), "checkpoint", "--openclaw-agent", "ghost", "--text", "I prefer tea."],
        env={**ENV, "OPENCLAW_STATE_DIR": str(tmp_path / "openclaw")},
    )
    assert out.exit_code == 0 and "No OpenClaw agent 'ghost'" in out.stderr
    assert "1 stored" in out.stdout and "- I prefer tea." in _note(home)


def test_a_checkpoint_waits_for_the_nightly_runs_hold_on_the_daily_notes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nightly run and a checkpoint read a daily note and write it whole again; each
    holds HOME/notes.lock meanwhile, so neither loses the other's lines."""
    from memoracle import workspace

    monkeypatch.setattr(workspace, "NOTE_LOCK_WAIT_SECONDS", 0.2)
    with workspace.note_lock(home):
        out = _run(home, "--text", "I prefer tea.")
    assert out.exit_code == 0 and "notes.lock" in out.stderr
    assert "1 stored" in out.stdout  # the memory is stored; only the note waited too long
    again = _run(home, "--text", "I prefer tea.")
    assert "- I prefer tea." in _note(home) and "problem" not in again.stderr
