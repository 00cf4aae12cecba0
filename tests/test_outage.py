"""Nothing said during an outage is lost (docs/outage.md): what the doors could not store
while the store was damaged is queued, redacted, and stored once, in order, with its own
time and scope, when the store works again; health and doctor name the queue."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import sqlite3
import stat
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle import outbox
from memoracle.cli import main
from memoracle.clock import FixedClock, parse_instant
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.jobs import checkpoint, doctor, nightly
from memoracle.mcp_server import MemoryTools
from memoracle.serve.server import WarmServer
from memoracle.store import db
from memoracle.types import Scope, Turn

BEFORE = "2026-06-01T09:00:00+00:00"  # the workspace's first night
OUTAGE = ("2026-06-02T10:00:00+00:00", "2026-06-02T10:05:00+00:00", "2026-06-02T10:10:00+00:00")
AFTER = "2026-06-03T08:00:00+00:00"
SECRET = "sk-proj-abcdefghijklmnopqrstuvwx1234"


def _settings(home: Path) -> Settings:
    return load(home, env={}, overrides={"embedding.model": "hash"})


def cli(home: Path, *args: str, now: str = AFTER, code: int | None = 0, stdin: str = "") -> str:
    result = CliRunner().invoke(
        main,
        ["--home", str(home), "--set", "embedding.model=hash", "--now", now, *args],
        input=stdin,
    )
    if code is not None:
        assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace after a night (memories, a verified backup)."""
    home = tmp_path_factory.mktemp("template") / "home"
    settings = _settings(home)
    clock = FixedClock(parse_instant(BEFORE))
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.remember("Never restart the database during business hours.", kind="guardrail")
        engine.capture([Turn(role="user", text="I live in Lyon.")])
        assert nightly.run_nightly(engine).backup is not None
    return home


@pytest.fixture
def damaged(template: Path, tmp_path: Path) -> Path:
    """A copy of the workspace whose store's header was overwritten."""
    home = tmp_path / "home"
    shutil.copytree(template, home)
    with open(home / "memoracle.db", "r+b") as file:
        file.write(b"\xde\xad\xbe\xef" * 25)
    return home


def _db_time(at: str) -> str:
    return parse_instant(at).isoformat(timespec="microseconds")


def _episodes(home: Path, *, after: str = BEFORE) -> list[dict[str, str | None]]:
    with sqlite3.connect(home / "memoracle.db") as db:
        db.row_factory = sqlite3.Row
        rows = db.execute(
            "SELECT text, at, session_id, agent_id, user_id, chat_id, origin FROM episodes"
            " WHERE at > ? ORDER BY id",
            (_db_time(after),),
        ).fetchall()
    return [dict(r) for r in rows]


def _queue_json(home: Path) -> dict[str, object]:
    health = json.loads(cli(home, "health", "--json", code=None))
    queue = health["queue"]
    assert isinstance(queue, dict)
    return queue


def test_cli_captures_and_checkpoints_are_queued_and_replayed_once_in_order(
    damaged: Path,
) -> None:
    home = damaged
    first = cli(home, "capture", "--user", f"My API key is {SECRET}, I moved to Berlin.",
                "--agent", "main", "--user-id", "alice", "--json", now=OUTAGE[0])  # fmt: skip
    reply = json.loads(first[first.index("{") :])
    assert reply["queued"] is True and reply["added"] == [] and reply["queue_id"].startswith("q_")
    turns = [{"user": "We decided to ship the release on Monday.", "session": "s1", "turn": "t1",
              "chat": "team", "visibility": "shared"}]  # fmt: skip
    listed = cli(home, "capture", "--json", stdin=json.dumps(turns), now=OUTAGE[1])
    assert json.loads(listed[listed.index("{") :])["results"][0]["queued"] is True
    said = cli(home, "checkpoint", "--text", "-", stdin="- I booked the flight to Oslo\n",
               now=OUTAGE[2])  # fmt: skip
    assert "Queued as q_" in said
    note = home / "workspace" / "memory" / "2026-06-02.md"
    assert "I booked the flight to Oslo" in note.read_text()  # the daily note, as before

    queue_file = home / "queue" / "pending-writes.jsonl"
    assert stat.S_IMODE(queue_file.stat().st_mode) == 0o600
    assert SECRET not in queue_file.read_text()  # redacted before it was written
    assert "[REDACTED:openai_key]" in queue_file.read_text()
    queue = _queue_json(home)
    assert queue["pending"] == 3 and queue["oldest_at"] == OUTAGE[0]
    assert queue["oldest_age_hours"] == 22.0
    assert "[writes_queued] 3 write(s)" in cli(home, "doctor", code=2)
    assert "3 write(s) waiting" in cli(home, "queue")

    kept = queue_file.read_text(encoding="utf-8")
    fixed = cli(home, "doctor", "--fix", code=None)
    assert "write queue: 3 stored, 0 set aside, 0 waiting" in fixed, fixed
    cli(home, "nightly")
    stored = _episodes(home)
    assert [e["text"] for e in stored] == [
        "My API key is [REDACTED:openai_key], I moved to Berlin.",
        "We decided to ship the release on Monday.",
        "I booked the flight to Oslo",
    ]
    assert [e["at"] for e in stored] == [_db_time(t) for t in OUTAGE]
    assert (stored[0]["agent_id"], stored[0]["user_id"]) == ("main", "alice")
    assert (stored[1]["session_id"], stored[1]["chat_id"]) == ("s1", "team")
    assert stored[2]["origin"] == "checkpoint"
    assert _queue_json(home)["pending"] == 0
    assert "0 write(s) waiting" in cli(home, "queue")

    # The same lines replayed again (a crash before the file was rewritten) store nothing.
    queue_file.write_text(kept, encoding="utf-8")
    cli(home, "nightly")
    assert _episodes(home) == stored
    assert not queue_file.read_text().strip()


def test_engine_doors_queue_and_the_recovered_store_takes_them(damaged: Path) -> None:
    home = damaged
    settings = _settings(home)
    times = [parse_instant(t) for t in OUTAGE]
    tools = MemoryTools(settings, Scope(agent="main", user="alice"), clock=FixedClock(times[0]))
    answer = tools.memory_remember(text="Alice's daughter Mia was born on 2019-04-02.")
    assert answer.structured_content is not None
    assert answer.structured_content["queued"] is True
    assert answer.structured_content["memory"] is None
    server = WarmServer(settings, scope=Scope(agent="main"), clock=FixedClock(times[1]))
    reply = server.answer(json.dumps(
        {"op": "capture", "turns": [{"user": "I prefer tea over coffee.", "user_id": "bob"}]}
    ))  # fmt: skip
    assert reply["ok"] is True and reply["result"]["results"][0]["queued"] is True
    report = checkpoint.save(
        settings, "- The VPN certificate expires in March", clock=FixedClock(times[2]),
        engine=lambda: Engine.open(settings, clock=FixedClock(times[2])),
    )  # fmt: skip
    assert report.store_failed and report.queued is not None and report.noted == 1
    assert outbox.status(home).pending == 3

    result = doctor.run(settings, FixedClock(parse_instant(AFTER)), fix=True)
    assert "write queue: 3 stored, 0 set aside, 0 waiting" in result.done
    assert outbox.status(home).pending == 0
    stored = _episodes(home)
    assert [(e["text"], e["user_id"]) for e in stored] == [
        ("I prefer tea over coffee.", "bob"),
        ("The VPN certificate expires in March", None),
    ]
    with Engine.open(settings, clock=FixedClock(parse_instant(AFTER))) as engine:
        (mia,) = [m for m in engine.list_memories(scope=Scope(agent="main", user="alice"))
                  if "Mia" in m.text]  # fmt: skip
        assert mia.observed_at == times[0] and mia.source == "agent"
        assert engine.replayed is not None and engine.replayed.delivered == []  # nothing left


def test_a_line_that_cannot_be_read_is_set_aside_and_the_rest_is_stored(
    damaged: Path, tmp_path: Path
) -> None:
    home = damaged
    cli(home, "capture", "--user", "My sister Ana lives in Porto.", now=OUTAGE[0])
    queue_file = home / "queue" / "pending-writes.jsonl"
    with open(queue_file, "a", encoding="utf-8") as f:
        f.write('{"v": 1, "id": "q_cut", "kind": "capture", "batc\n')  # cut by a crash
    cli(home, "capture", "--user", "My brother Rui lives in Faro.", now=OUTAGE[1])
    listed = cli(home, "queue", "--json")
    data = json.loads(listed[listed.index("{") :])
    assert data["pending"] == 2 and data["unreadable"] == 1
    assert data["unreadable_lines"][0]["line"] == 2
    assert "queue_unreadable" in cli(home, "doctor", code=2)

    cli(home, "doctor", "--fix", code=None)
    assert [e["text"] for e in _episodes(home)] == [
        "My sister Ana lives in Porto.",
        "My brother Rui lives in Faro.",
    ]
    (aside,) = (home / "queue" / "set-aside.jsonl").read_text().splitlines()
    record = json.loads(aside)
    assert record["line"].startswith('{"v": 1, "id": "q_cut"')
    assert "not valid JSON" in record["reason"]
    queue = _queue_json(home)
    assert queue["pending"] == 0 and queue["set_aside"] == 1
    health = json.loads(cli(home, "health", "--json", code=None))
    assert "queue_set_aside" in {w["code"] for w in health["warnings"]}


def test_a_line_the_store_refuses_is_set_aside_with_the_reason(damaged: Path) -> None:
    home = damaged
    cli(home, "capture", "--user", "I like long walks by the river. " * 10, now=OUTAGE[0])
    cli(home, "capture", "--user", "My cat is called Tofu.", now=OUTAGE[1])
    fixed = cli(home, "--set", "capture.max_turn_chars=200", "doctor", "--fix", code=None)
    assert "write queue: 1 stored, 1 set aside, 0 waiting" in fixed
    assert [e["text"] for e in _episodes(home)] == ["My cat is called Tofu."]
    (aside,) = (home / "queue" / "set-aside.jsonl").read_text().splitlines()
    assert "refused at replay" in json.loads(aside)["reason"]
    assert "capture.max_turn_chars" in json.loads(aside)["reason"]


def test_every_queue_warning_has_advice(tmp_path: Path) -> None:
    everything = outbox.QueueStatus(
        path=tmp_path / "q", pending=1, items=1, oldest_at=parse_instant(BEFORE),
        unreadable=1, set_aside=1, aside_path=tmp_path / "a",
    )  # fmt: skip
    codes = {code for code, _ in everything.warnings(parse_instant(AFTER))}
    assert codes == {"writes_queued", "queue_unreadable", "queue_set_aside"}
    assert codes <= set(doctor.ADVICE)


def _append_many(home: str, who: str) -> None:
    for i in range(100):
        entry = outbox.capture_entry(
            [([Turn(role="user", text=f"{who} line {i} " + "x" * 2000)], Scope())],
            now=datetime.fromisoformat(BEFORE), door="test",
        )  # fmt: skip
        outbox.append(Path(home), entry)


def test_two_processes_appending_never_interleave_a_line(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(tmp_path), w)) for w in "ab"]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    lines = outbox.read(tmp_path)
    assert len(lines) == 200 and all(line.entry is not None for line in lines)


def test_a_store_locked_past_its_timeout_queues_and_the_next_open_stores_it_first(
    settings: Settings, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)
    monkeypatch.setattr(db, "WRITER_TRIES", 5)
    Engine.init(settings, clock=clock)
    server = WarmServer(settings, clock=clock)
    other = sqlite3.connect(settings.db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another writer that does not let go
    try:
        reply = server.answer(json.dumps({"op": "capture", "turns": {"user": "I live in Nantes."}}))
        assert reply["ok"] is True and reply["result"]["results"][0]["queued"] is True
    finally:
        other.execute("ROLLBACK")
        other.close()
    clock.advance(minutes=1)
    reply = server.answer(json.dumps({"op": "capture", "turns": {"user": "I work at Airbus."}}))
    assert reply["ok"] is True and "queued" not in reply["result"]["results"][0]
    server.close()
    texts = [e["text"] for e in _episodes(settings.home, after="2000-01-01T00:00:00+00:00")]
    assert texts == ["I live in Nantes.", "I work at Airbus."]  # the queued one first
    assert outbox.status(settings.home).pending == 0


def test_checks_and_dry_runs_leave_the_queue(template: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(template, home)  # a sound store: say a lock had timed out
    said = parse_instant(OUTAGE[0])
    entry = outbox.capture_entry(
        [([Turn(role="user", text="My sister moved to Porto.")], Scope())], now=said, door="test"
    )
    outbox.append(home, entry)
    assert _queue_json(home)["pending"] == 1  # health only looks
    assert "[writes_queued] 1 write(s)" in cli(home, "doctor", code=None)
    assert "queue      delivered 1" in cli(home, "nightly", "--dry-run", code=None)
    cli(home, "doctor", "--fix", "--dry-run", code=None)
    assert outbox.status(home).pending == 1 and _episodes(home) == []
    cli(home, "health", "--fix", code=None)
    assert outbox.status(home).pending == 0
    assert [e["text"] for e in _episodes(home)] == ["My sister moved to Porto."]


def test_the_queue_shows_the_owner_only_what_the_owner_may_see(damaged: Path) -> None:
    home = damaged
    cli(home, "capture", "--user", "Bob's salary is 90k.", "--user-id", "bob", now=OUTAGE[0])
    cli(home, "capture", "--user", "I water the plants on Sundays.", now=OUTAGE[1])
    listed = cli(home, "queue")
    assert "I water the plants on Sundays." in listed
    assert "salary" not in listed and "(another scope: not shown)" in listed
    data = json.loads(cli(home, "queue", "--json"))
    assert [e["text"] for e in data["entries"]] == [None, "I water the plants on Sundays."]
