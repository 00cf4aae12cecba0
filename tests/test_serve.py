"""`memoracle serve`: one engine behind a unix socket. Requests are answered as the CLI
would answer them, with the same checks (a turn captured through it keeps its transcript
identity: tests/test_openclaw_turn_identity.py); the socket is 0600, a dead server's
socket is replaced, a live one refused; SIGTERM stops it cleanly."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.serve.server import WarmServer, claim_socket


def _ask(server: WarmServer, **request: Any) -> dict[str, Any]:
    return server.answer(json.dumps(request))


def _result(server: WarmServer, **request: Any) -> dict[str, Any]:
    reply = _ask(server, **request)
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


@pytest.fixture
def server(settings: Settings, clock: FixedClock) -> Iterator[WarmServer]:
    Engine.init(settings, clock=clock)
    warm = WarmServer(settings, clock=clock)
    yield warm
    warm.close()


@pytest.fixture
def sock() -> Iterator[Path]:
    """A socket path under the unix limit (pytest's tmp_path can be longer), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="mt-", dir="/tmp"))
    yield folder / "s.sock"
    shutil.rmtree(folder, ignore_errors=True)


def _send(path: Path, *requests: dict[str, Any]) -> list[dict[str, Any]]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        with conn.makefile("rwb") as stream:
            replies = []
            for request in requests:
                stream.write(json.dumps(request).encode() + b"\n")
                stream.flush()
                replies.append(json.loads(stream.readline()))
            return replies


def test_capture_then_recall(server: WarmServer) -> None:
    turn = {"user": "I live in Lyon. Never push to main.", "session": "s", "turn": "t1"}
    first = _result(server, op="capture", turns=turn)["results"][0]
    assert len(first["added"]) == 2
    again = _result(server, op="capture", turns=[turn])["results"][0]
    assert again["duplicate_turn"] is True
    block = _result(server, op="recall", message="where do I live", budget=300)
    assert "Lyon" in block["text"] and "Never push to main" in block["text"]
    assert _result(server, op="status")["stats"]["episodes"] == 1


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        ("{not json", "request: not valid JSON"),
        ("[1]", "expected a JSON object"),
        ('{"op": "drop"}', "field 'op' must be one of ping, recall"),
        ('{"op": "recall"}', "field 'message' must be a non-empty string"),
        ('{"op": "recall", "message": "x", "budget": 0}', "'budget' must be a positive integer"),
        ('{"op": "recall", "message": "x", "visibility": "all"}', "'visibility' must be private"),
        ('{"op": "capture"}', "field 'turns' is missing"),
        ('{"op": "capture", "turns": {"user": "hi", "colour": 1}}', "unknown field(s) colour"),
        ('{"op": "capture", "turns": [{"user": "hi", "at": "soon"}]}', "item 0: field 'at'"),
        ('{"op": "capture", "turns": {"user": 5}}', "field 'user' must be a string"),
        ('{"op": "checkpoint"}', "needs 'text', 'session_file' and/or 'turns'"),
        ('{"op": "search"}', "field 'query' must be a non-empty string"),
        ('{"op": "search", "query": "x", "limit": 0}', "field 'limit' must be an integer"),
        ('{"op": "get", "ids": "m_1"}', "field 'ids' must be a list of 1 to 100 ids"),
        ('{"op": "get", "ids": []}', "field 'ids' must be a list of 1 to 100 ids"),
    ],
)
def test_bad_requests_are_one_line_naming_the_field(
    server: WarmServer, request_: str, error: str
) -> None:
    reply = server.answer(request_)
    assert reply["ok"] is False
    assert error in reply["error"]
    assert "\n" not in reply["error"]
    assert _result(server, op="status")["stats"]["episodes"] == 0


def test_the_request_scope_is_checked_and_kept(server: WarmServer) -> None:
    _result(server, op="capture", turns={"user": "I live in Lyon."}, user_id="alice")
    _result(server, op="capture", turns={"user": "I live in Oslo.", "user_id": "bob"})
    alice = _result(server, op="recall", message="where do I live", user_id="alice")["text"]
    assert "Lyon" in alice and "Oslo" not in alice
    assert _result(server, op="status", user_id="bob")["scope"]["user"] == "bob"


def test_one_server_answers_every_scope(server: WarmServer) -> None:
    """The owner, another person and a group through one server: each sees its own."""
    group = {"chat": "telegram:group:-100777", "visibility": "shared"}
    _result(server, op="capture", turns={"user": "My sister Ada is getting married in June."})
    _result(server, op="capture", turns={"user": "I live in Oslo."}, user_id="telegram:111")
    _result(
        server,
        op="capture",
        turns={"user": "The picnic moved to the Vieux Port.", "speaker": "Bob"},
        user_id="telegram:222",
        **group,
    )
    owner = _result(server, op="recall", message="Ada Oslo picnic")["text"]
    other = _result(server, op="recall", message="Ada Oslo picnic", user_id="telegram:111")["text"]
    shared = _result(server, op="recall", message="Ada Oslo picnic", user_id="x", **group)["text"]
    assert "Ada" in owner and "Oslo" not in owner and "picnic" not in owner
    assert "Oslo" in other and "Ada" not in other and "picnic" not in other
    assert "picnic" in shared and "Ada" not in shared and "Oslo" not in shared
    # The group's capture is stored shared, in that chat, with the sender as speaker.
    stored = server.engine().turns_by_id(range(1, 10))
    (episode,) = [e for e in stored if "picnic" in e.text]
    scope = episode.scope
    assert (scope.chat, scope.visibility, episode.speaker, scope.user) == (
        "telegram:group:-100777",
        "shared",
        "Bob",
        "telegram:222",
    )


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"user": "bob"}, "unknown field(s) user for recall"),
        ({"user_id": ""}, "field 'user_id' is empty"),
        ({"chat": "  "}, "field 'chat' is empty"),
        ({"agent": 7}, "field 'agent' must be a string"),
        ({"visibility": "group"}, "field 'visibility' must be private or shared"),
    ],
)
def test_a_malformed_scope_is_refused_naming_the_field(
    server: WarmServer, fields: dict[str, Any], error: str
) -> None:
    for op, extra in (("recall", {"message": "x"}), ("capture", {"turns": {"user": "hi"}})):
        reply = _ask(server, op=op, **extra, **fields)
        assert reply["ok"] is False
        assert error.replace("for recall", f"for {op}") in reply["error"]
    assert _result(server, op="status")["stats"]["episodes"] == 0


def test_search_and_get_answer_in_the_requests_scope(server: WarmServer) -> None:
    """What the OpenClaw gateway's own memory tools ask: a group's search finds the
    group's words and never a private item; `get` leaves out what the scope does not
    see, as if it did not exist."""
    group = {"chat": "telegram:group:-100777", "visibility": "shared"}
    _result(server, op="capture", turns={"user": "My sister Ada swims at the pier every morning."})
    _result(server, op="capture", turns={"user": "We meet at the pier on Sunday."}, **group)
    owner = _result(server, op="search", query="pier", limit=10)["hits"]
    shared = _result(server, op="search", query="pier", **group)["hits"]
    assert any("Ada" in h["text"] for h in owner)
    assert shared and all("Ada" not in h["text"] for h in shared)
    assert any("Sunday" in h["text"] for h in shared)
    ids = [h["id"] for h in owner + shared]
    seen = {i["id"] for i in _result(server, op="get", ids=ids, **group)["items"]}
    private = {h["id"] for h in owner if "Ada" in h["text"]}
    assert seen and not seen & private
    assert {i["id"] for i in _result(server, op="get", ids=ids)["items"]} >= private
    assert _result(server, op="get", ids=["m_999", "e_999", "nonsense"])["items"] == []


def test_a_checkpoint_of_a_live_sessions_turns(server: WarmServer, settings: Settings) -> None:
    """The plugin's heartbeat checkpoint: the session's turns with their transcript ids;
    those captured before change nothing, a new one is stored tagged as a checkpoint and
    its memories go to today's note."""
    first = {"user": "I live in Lyon.", "session": "s1", "turn": "u1"}
    _result(server, op="capture", turns=first)
    later = {"user": "I decided to rent the cabin in Tromso.", "session": "s1", "turn": "u2"}
    reply = _result(server, op="checkpoint", turns=[first, later])["checkpoints"][0]
    assert (reply["items"], reply["already_stored"], len(reply["episodes"])) == (2, 1, 1)
    assert str(reply["note"]["section"]).startswith("## Checkpoint [")
    note = Path(reply["note"]["path"]).read_text()
    assert "cabin in Tromso" in note and "Lyon" not in note
    again = _result(server, op="checkpoint", turns=[first, later])["checkpoints"][0]
    assert again["already_stored"] == 2 and not again["episodes"]
    stored = server.engine().turns_by_id(range(1, 10))
    assert {e.origin for e in stored if "Tromso" in e.text} == {"checkpoint"}


def test_checkpoint_through_the_server(server: WarmServer) -> None:
    reply = _result(server, op="checkpoint", text="- Decided to ship on Monday", session="s")
    assert reply["checkpoints"][0]["episodes"]
    again = _result(server, op="checkpoint", text="- Decided to ship on Monday", session="s")
    assert not again["checkpoints"][0]["episodes"]


def test_recall_without_a_store_answers_from_the_files(
    settings: Settings, clock: FixedClock
) -> None:
    settings.home.mkdir(parents=True)
    warm = WarmServer(settings, clock=clock)
    block = _result(warm, op="recall", message="anything")
    assert "database unavailable" in block["degraded"]


def test_the_socket(server: WarmServer, sock: Path) -> None:
    path = sock
    ready = threading.Event()
    thread = threading.Thread(target=server.serve, args=(path,), kwargs={"on_ready": ready.set})
    thread.start()
    try:
        assert ready.wait(30)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        ping, bad, status = _send(path, {"op": "ping"}, {"op": "?"}, {"op": "status"})
        assert ping["result"]["pid"] == os.getpid()
        assert bad["ok"] is False and status["ok"] is True
        with pytest.raises(InvalidInput, match="another memoracle serve is answering"):
            claim_socket(path)
    finally:
        server.stop()
        thread.join(30)
    assert not path.exists()


def test_concurrent_clients_each_get_their_answer(server: WarmServer, sock: Path) -> None:
    path = sock
    ready = threading.Event()
    thread = threading.Thread(target=server.serve, args=(path,), kwargs={"on_ready": ready.set})
    thread.start()
    replies: dict[int, list[dict[str, Any]]] = {}

    def client(n: int) -> None:
        turns = [
            {"op": "capture", "turns": {"user": f"I live in town {n}-{i}.", "turn": f"{n}-{i}"}}
            for i in range(5)
        ]
        replies[n] = _send(path, *turns, {"op": "recall", "message": f"town {n}"})

    try:
        assert ready.wait(30)
        clients = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for c in clients:
            c.start()
        for c in clients:
            c.join(60)
        assert sorted(replies) == [0, 1, 2, 3]
        for n, answers in replies.items():
            assert all(a["ok"] for a in answers), answers
            assert f"town {n}-" in answers[-1]["result"]["text"]
        assert _send(path, {"op": "status"})[0]["result"]["stats"]["episodes"] == 20
    finally:
        server.stop()
        thread.join(30)


def test_a_dead_servers_socket_is_replaced_and_other_files_refused(
    tmp_path: Path, sock: Path
) -> None:
    path = sock
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(path))  # bound, never listening: what a killed server leaves
    left.close()
    claim_socket(path)
    assert not path.exists()
    path.write_text("not a socket")
    with pytest.raises(InvalidInput, match="exists and is not a socket"):
        claim_socket(path)
    path.unlink()
    with pytest.raises(InvalidInput, match="unix sockets allow"):
        claim_socket(tmp_path / ("x" * 120) / "s.sock")


@pytest.mark.slow
def test_sigterm_stops_the_process_cleanly(settings: Settings, sock: Path) -> None:
    Engine.init(settings)
    path = sock
    env = {**os.environ, "MEMORACLE_EMBEDDING_MODEL": "hash"}
    args = [sys.executable, "-m", "memoracle.cli", "--home", str(settings.home), "serve"]
    proc = subprocess.Popen([*args, "--socket", str(path)], env=env, stderr=subprocess.PIPE)
    try:
        for _ in range(600):
            if path.exists():
                break
            time.sleep(0.05)
        assert _send(path, {"op": "ping"})[0]["result"]["pid"] == proc.pid
        proc.send_signal(signal.SIGTERM)
        _, said = proc.communicate(timeout=30)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert not path.exists()
    assert b"stopped" in said


def test_the_cli_refuses_a_live_socket_with_one_line(settings: Settings, tmp_path: Path) -> None:
    Engine.init(settings)
    path = tmp_path / "file.sock"
    path.write_text("")
    result = CliRunner().invoke(
        main, ["--home", str(settings.home), "serve", "--socket", str(path)]
    )
    assert result.exit_code == 2
    assert f"{path} exists and is not a socket" in result.output
    assert "Traceback" not in result.output


def test_get_never_answers_with_what_was_forgotten(server: WarmServer) -> None:
    """A forgotten memory and the turn it came from leave search, and `get` (the
    gateway's memory_get, and its check of stale hits) does not bring them back."""
    _result(server, op="capture", turns={"user": "My sister Anna lives in Lyon."})
    server.engine().forget("m_1")
    assert not _result(server, op="search", query="Anna Lyon")["hits"]
    assert _result(server, op="get", ids=["m_1", "e_1"])["items"] == []


def test_a_checkpoint_for_another_person_leaves_the_owners_note_alone(
    server: WarmServer, settings: Settings
) -> None:
    turn = {"user": "I keep my spare bicycle at the Zebrastrasse depot.", "turn": "b1"}
    reply = _result(server, op="checkpoint", turns=[{**turn, "user_id": "bob"}])
    assert reply["checkpoints"][0]["episodes"]  # stored, in bob's scope
    notes = list(settings.files_dir.rglob("*.md"))
    assert all("Zebrastrasse" not in n.read_text() for n in notes)
