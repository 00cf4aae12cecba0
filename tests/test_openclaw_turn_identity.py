"""One turn identity across the OpenClaw plugin, `memoracle ingest` and `memoracle
checkpoint`: whichever stores a transcript's message first, the others find it stored
(same scope, session, role, speaker and turn id: the transcript entry's id), so each
message is one episode. The plugin runs on Node against the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memoracle.cli import main
from memoracle.config import load
from memoracle.engine import Engine

pytestmark = pytest.mark.slow  # Node and a memoracle process per hook call

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "integrations" / "openclaw" / "plugin" / "tools" / "drive-agent-end.js"
NODE = shutil.which("node")
NOW = "2026-05-14T18:30:00+00:00"
ENV = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": NOW}
SESSION = "0b7e4c1a-5d2f-4e8b-9a63-2f1d8c7e5b40"
# The user messages after which the plugin's agent_end runs: the first two turns, and
# the one whose answer follows a tool call, on the live branch after an edit.
PLUGIN_TURNS = ("a1c95e72", "c8e2714a", "b3f8025d")

needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    Engine.init(load(home, env=ENV))
    return home


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """OpenClaw's state folder with agent main's live session, where the plugin finds it."""
    state = tmp_path / "openclaw"
    folder = state / "agents" / "main" / "sessions"
    folder.mkdir(parents=True)
    source = files("memoracle.data").joinpath("sample-session.jsonl")
    (folder / f"{SESSION}.jsonl").write_bytes(source.read_bytes())
    return state


def _transcript(state: Path) -> Path:
    return state / "agents" / "main" / "sessions" / f"{SESSION}.jsonl"


def _live_messages(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(entry id, message) of the live branch, root first: what agent_end is handed."""
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    by_id = {e["id"]: e for e in entries if e.get("type") != "session"}
    branch: list[dict[str, Any]] = []
    entry: dict[str, Any] | None = entries[-1]
    while entry is not None:
        branch.append(entry)
        entry = by_id.get(entry.get("parentId") or "")
    branch.reverse()
    return [(e["id"], e["message"]) for e in branch if e["type"] == "message"]


def _plugin_turn(
    home: Path,
    state: Path,
    user_entry: str,
    source: Path | None = None,
    socket: Path | None = None,
    **ctx_extra: str,
) -> list[str]:
    """The plugin's agent_end after the turn that `user_entry` opens; its log lines.
    Through the CLI, or with `socket` through the warm server there (`memoracle serve`,
    which the plugin starts when nothing answers)."""
    assert NODE is not None
    live = _live_messages(source or _transcript(state))
    ids = [entry_id for entry_id, _ in live]
    start = ids.index(user_entry)
    end = next((i for i in range(start + 1, len(live)) if live[i][1]["role"] == "user"), len(live))
    payload = {
        "config": {
            "command": sys.executable,
            "commandArgs": ["-m", "memoracle.cli"],
            "home": str(home),
            **({"socket": str(socket)} if socket else {"warm": False}),
        },
        "messages": [message for _, message in live[:end]],
        "ctx": {
            "sessionId": SESSION,
            "sessionKey": "agent:main:main",
            "agentId": "main",
            "trigger": "user",
            **ctx_extra,
        },
    }
    env = {**os.environ, **ENV, "OPENCLAW_STATE_DIR": str(state)}
    env.pop("OPENCLAW_HOME", None)
    run = subprocess.run(
        [NODE, str(DRIVER)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    logs = [json.loads(line) for line in run.stdout.splitlines()]
    assert not [log for log in logs if log["level"] in ("warn", "error")], logs
    return [str(log["message"]) for log in logs]


def _cli(home: Path, *args: str) -> Result:
    result = CliRunner().invoke(main, ["--home", str(home), *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result


def _episodes(home: Path) -> list[tuple[str, str, str, str]]:
    """(session, role, turn id, speaker) of every stored episode."""
    with sqlite3.connect(home / "memoracle.db") as db:
        rows = db.execute(
            "SELECT session_id, role, turn_id, coalesce(speaker, '') FROM episodes"
        ).fetchall()
    return [tuple(map(str, row)) for row in rows]  # type: ignore[misc]


def _ingested_alone(tmp_path: Path, state: Path) -> list[tuple[str, str, str, str]]:
    """The episodes ingest alone stores from the transcript, in a home of their own."""
    alone = tmp_path / "alone"
    Engine.init(load(alone, env=ENV))
    _cli(alone, "ingest", str(_transcript(state)))
    return _episodes(alone)


def _assert_once(episodes: list[tuple[str, str, str, str]]) -> None:
    keys = [(s, r, t) for s, r, t, _ in episodes]
    assert len(keys) == len(set(keys)), sorted(keys)


@needs_node
def test_plugin_then_ingest_stores_each_turn_once(home: Path, state: Path, tmp_path: Path) -> None:
    for entry in PLUGIN_TURNS:
        assert any("captured turn" in line for line in _plugin_turn(home, state, entry))
    by_plugin = _episodes(home)
    # The plugin used the transcript's ids and session, and the Sender block's name.
    assert {t for _, _, t, _ in by_plugin} >= set(PLUGIN_TURNS) | {"5be03f4d", "8e3b4c7a"}
    assert {s for s, _, _, _ in by_plugin} == {SESSION}
    _cli(home, "ingest", str(_transcript(state)))
    after = _episodes(home)
    _assert_once(after)
    assert sorted(after) == sorted(_ingested_alone(tmp_path, state))


@needs_node
def test_the_warm_plugin_then_ingest_stores_each_turn_once(
    home: Path, state: Path, tmp_path: Path
) -> None:
    socket = tmp_path / "s.sock"
    try:
        for entry in PLUGIN_TURNS:
            logs = _plugin_turn(home, state, entry, socket=socket)
            assert any("captured turn" in line for line in logs), logs
        assert socket.exists()  # no warning above: no call fell back to the CLI
    finally:
        _stop_server(socket)
    _cli(home, "ingest", str(_transcript(state)))
    after = _episodes(home)
    _assert_once(after)
    assert sorted(after) == sorted(_ingested_alone(tmp_path, state))


def _stop_server(socket: Path) -> None:
    """SIGTERM to the warm server the plugin started, if it is there."""
    import signal
    import socket as sockets

    if not socket.exists():
        return
    with sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(str(socket))
        conn.sendall(b'{"op": "ping"}\n')
        with conn.makefile("rb") as stream:
            pid = json.loads(stream.readline())["result"]["pid"]
    os.kill(pid, signal.SIGTERM)


@needs_node
def test_ingest_then_plugin_stores_nothing_again(home: Path, state: Path) -> None:
    _cli(home, "ingest", str(_transcript(state)))
    before = _episodes(home)
    for entry in PLUGIN_TURNS:
        logs = _plugin_turn(home, state, entry)
        assert any("was already captured" in line for line in logs), logs
    assert sorted(_episodes(home)) == sorted(before)


@needs_node
def test_plugin_then_checkpoint_stores_each_turn_once(
    home: Path, state: Path, tmp_path: Path
) -> None:
    for entry in PLUGIN_TURNS:
        _plugin_turn(home, state, entry)
    _cli(home, "checkpoint", "--session-file", str(_transcript(state)), "--json")
    after = _episodes(home)
    _assert_once(after)
    assert sorted(after) == sorted(_ingested_alone(tmp_path, state))


@needs_node
def test_the_plugin_finds_the_transcript_by_session_file_too(home: Path, state: Path) -> None:
    moved = state.parent / "elsewhere.jsonl"
    shutil.copy(_transcript(state), moved)
    _transcript(state).unlink()
    _plugin_turn(home, state, PLUGIN_TURNS[0], moved, sessionFile=str(moved))
    assert {(s, r, t) for s, r, t, _ in _episodes(home)} == {
        (SESSION, "user", "a1c95e72"),
        (SESSION, "assistant", "5be03f4d"),
    }


def test_checkpoint_then_ingest_stores_each_turn_once(
    home: Path, state: Path, tmp_path: Path
) -> None:
    _cli(home, "checkpoint", "--session-file", str(_transcript(state)), "--json")
    _cli(home, "ingest", str(_transcript(state)))
    after = _episodes(home)
    _assert_once(after)
    assert sorted(after) == sorted(_ingested_alone(tmp_path, state))
