"""No planted secret gets past any door: the whole corpus (tests/redaction_corpus.py)
goes in through the engine (capture, remember) and a sample through every other door
(the CLI's capture, remember and checkpoint --text, an OpenClaw transcript ingested,
MCP remember and checkpoint, an import of an export edited by hand); then every file
under the home and the workspace, the nightly run's files among them, and every output
(search, recall, list, get, export, MCP results) is scanned for them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.mcp_server.tools import MemoryTools
from memoracle.types import Turn
from redaction_corpus import Planted, leaks, secrets

NOW = "2026-05-14T18:30:00+00:00"
ENV = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": NOW}
SAMPLE_EVERY = 7  # the CLI and MCP doors take every 7th secret: all shapes, fast


def _cli(home: Path, *args: str, input: str | None = None) -> str:
    result = CliRunner().invoke(main, ["--home", str(home), *args], input=input, env=ENV)
    assert result.exit_code == 0, result.output
    return result.output


def _transcript(path: Path, planted: list[Planted]) -> Path:
    lines = [{"type": "session", "version": 3, "id": "sess-redact", "timestamp": NOW}]
    for i, p in enumerate(planted):
        lines.append(
            {
                "type": "message",
                "id": f"m{i:04d}",
                "parentId": None,
                "timestamp": "2026-05-14T08:02:09.187Z",
                "message": {"role": "user", "content": [{"type": "text", "text": p.text}]},
            }
        )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def _leaked(where: str, text: str, planted: list[Planted]) -> list[str]:
    return [f"{where}: {p.shape} {n!r}" for p in planted for n in leaks(text, p.needles)]


def _scan_tree(root: Path, planted: list[Planted]) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            text = path.read_bytes().decode("utf-8", errors="replace")
            found += _leaked(str(path.relative_to(root)), text, planted)
    return found


@pytest.mark.slow
def test_no_secret_gets_past_any_door(tmp_path: Path) -> None:
    planted = secrets()
    sample = planted[::SAMPLE_EVERY]
    home = tmp_path / "home"
    settings = load(home, env=ENV)
    clock = FixedClock(datetime.fromisoformat(NOW))
    Engine.init(settings, clock=clock)
    outputs: list[tuple[str, str]] = []
    with Engine.open(settings, clock=clock) as engine:
        turns = [
            Turn(role="user", text=p.text, session_id="corpus", turn_id=f"t{i}",
                 at=datetime(2026, 5, 14, 9, tzinfo=UTC))
            for i, p in enumerate(planted)
        ]  # fmt: skip
        engine.capture(turns)
        for p in planted:
            memory, _ = engine.remember(p.text)
            outputs.append(("remember", memory.text))
    for p in sample:
        outputs.append(("cli capture", _cli(home, "capture", "--user", p.text, "--json")))
        outputs.append(("cli remember", _cli(home, "remember", p.text, "--json")))
        outputs.append(
            ("cli checkpoint", _cli(home, "checkpoint", "--text", "-", "--json", input=p.text))
        )
    transcript = _transcript(tmp_path / "session.jsonl", sample)
    outputs.append(("ingest", _cli(home, "ingest", str(transcript), "--json")))
    tools = MemoryTools(settings, clock=clock)
    try:
        for p in sample:
            outputs.append(("mcp remember", str(tools.memory_remember(text=p.text))))
            outputs.append(("mcp checkpoint", str(tools.memory_checkpoint(text=p.text))))
        outputs.append(("mcp search", str(tools.memory_search(query="password key token"))))
        outputs.append(("mcp recall", str(tools.memory_recall(query="door code PIN IBAN"))))
    finally:
        tools.close()
    outputs.append(("nightly", _cli(home, "nightly", "--json")))
    for query in ("password", "token key secret", "code PIN", "IBAN", "пароль", "contraseña"):
        outputs.append(("search", _cli(home, "search", query, "--json")))
        outputs.append(("recall", _cli(home, "recall", query)))
    outputs.append(("list", _cli(home, "list", "--limit", "1000", "--json")))
    outputs.append(("get", _cli(home, "get", "1", "--json")))
    export = tmp_path / "export.jsonl"
    _cli(home, "export", str(export))

    # An export edited by hand (or from an older memoracle) with secrets in its text.
    lines = export.read_text(encoding="utf-8").splitlines()
    edited = []
    for line in lines:
        record = json.loads(line)
        if record.get("type") in ("memory", "episode"):
            record["text"] += " " + sample[len(edited) % len(sample)].text
            edited.append(record)
        lines[lines.index(line)] = json.dumps(record, ensure_ascii=False)
    assert edited
    handmade = tmp_path / "handmade.jsonl"
    handmade.write_text("\n".join(lines) + "\n", encoding="utf-8")
    other = tmp_path / "other"
    Engine.init(load(other, env=ENV), clock=clock)
    _cli(other, "import", str(handmade))
    outputs.append(("list after import", _cli(other, "list", "--limit", "1000", "--json")))

    found = [f for where, out in outputs for f in _leaked(where, out, planted)]
    found += _leaked("export", export.read_text(encoding="utf-8"), planted)
    found += _scan_tree(home, planted) + _scan_tree(other, planted)
    assert found == []


def _engine(tmp_path: Path) -> tuple[Engine, object]:
    settings = load(tmp_path / "home", env=ENV)
    clock = FixedClock(datetime.fromisoformat(NOW))
    Engine.init(settings, clock=clock)
    return Engine.open(settings, clock=clock), settings


def _stored(engine: Engine) -> str:
    return "\n".join(e.text for episodes in engine.turns() for e in episodes)


def test_a_secret_over_two_captured_turns_is_not_stored(tmp_path: Path) -> None:
    """The write path hands `redact` the session's previous turn: the value said alone
    after "what's the wifi password?" is not stored, in another session it is."""
    engine, _ = _engine(tmp_path)
    at = datetime(2026, 5, 14, 9, tzinfo=UTC)
    with engine:
        for i, text in enumerate(["what's the wifi password again?", "Tournesol88"]):
            engine.capture([Turn(role="user", text=text, session_id="s1", turn_id=f"t{i}", at=at)])
        engine.capture(
            [Turn(role="user", text="Tournesol88", session_id="s2", turn_id="t0", at=at)]
        )
        stored = [e.text for episodes in engine.turns() for e in episodes]
    assert stored[1].startswith("[REDACTED:")
    assert stored.count("Tournesol88") == 1  # the other session's turn says nothing secret


def test_a_private_key_with_blank_lines_in_a_checkpoint_is_not_stored(tmp_path: Path) -> None:
    """checkpoint cuts its text at blank lines: the key is redacted whole before."""
    from memoracle.jobs import checkpoint

    body = "\n\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "Bq" * 16] * 3)
    key = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    engine, settings = _engine(tmp_path)
    clock = FixedClock(datetime.fromisoformat(NOW))
    with engine:
        checkpoint.save(settings, f"the deploy key:\n{key}", engine=lambda: engine, clock=clock)
        stored = _stored(engine)
    notes = "\n".join(p.read_text() for p in (tmp_path / "home").rglob("*.md"))
    assert "MIIEvQIBADAN" not in stored + notes
    assert "[REDACTED:private_key]" in stored
