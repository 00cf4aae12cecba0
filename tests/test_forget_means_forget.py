"""Forget means forget: a forgotten memory's turns (its sources, later turns that only
repeat it, the turn that asked with its words) leave search, recall, the rendered files
and the recall over the files with it, through every door; the audit keeps the record
and `restore` brings the memory and its turns back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine, recall_anyway
from memoracle.jobs.nightly import run_nightly
from memoracle.mcp_server.tools import MemoryTools
from memoracle.recall.fallback import FORGOTTEN_FILE
from memoracle.types import Turn

DOG = "My dog is called Toby."
ASK = "Forget what I told you about my dog."


def _say(engine: Engine, clock: FixedClock, text: str) -> None:
    clock.advance(minutes=5)
    turn_id = f"t{len(list(engine._store.audit.entries(limit=100_000)))}-{clock.now():%H%M}"
    engine.capture([Turn("user", text, clock.now(), "s1", turn_id)])


def _texts(engine: Engine, query: str) -> list[tuple[str, str]]:
    return [(h.source, h.text) for h in engine.search(query).hits]


def _recalled(engine: Engine, message: str) -> str:
    return engine.recall(message, budget=800).text


def _dog(engine: Engine) -> Any:
    memories = engine.list_memories(status=None, limit=100)
    (memory,) = [m for m in memories if "Toby" in m.text and "dog" in m.text]
    return memory


def test_the_reported_case_the_raw_turn_leaves_search_and_recall(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, DOG)
    _say(engine, clock, "I like sushi.")
    assert any(source == "episode" for source, _ in _texts(engine, "Toby"))  # before
    _say(engine, clock, ASK)
    assert _dog(engine).status == "forgotten"
    assert not [t for _, t in _texts(engine, "Toby")]
    assert not [t for _, t in _texts(engine, "dog called") if "Toby" in t]
    assert "Toby" not in _recalled(engine, "What is my dog called? Toby?")
    # The turn that asked only names the topic: it may stay, and holds no Toby.
    assert all("Toby" not in t for _, t in _texts(engine, "forget dog"))
    assert "sushi" in " ".join(t for _, t in _texts(engine, "sushi"))  # the rest stays
    # The audit keeps the record.
    actions = [e.action for e in engine._store.audit.entries(memory_id=_dog(engine).id)]
    assert "forget" in actions


def test_later_turns_that_only_repeat_it_leave_too_but_not_those_saying_more(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, DOG)
    _say(engine, clock, "Toby is my dog.")
    _say(engine, clock, "My dog is called Toby.")  # the same words, another turn
    _say(engine, clock, "Toby loves the park by the river.")
    engine.forget(_dog(engine).id)
    left = [t for _, t in _texts(engine, "Toby")]
    assert left == ["Toby loves the park by the river."]


def test_a_forget_that_repeats_the_fact_leaves_with_it(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, DOG)
    _say(engine, clock, "Forget that my dog is called Toby.")
    assert _dog(engine).status == "forgotten"
    assert not _texts(engine, "Toby")


def test_restore_brings_the_memory_and_its_turns_back(engine: Engine, clock: FixedClock) -> None:
    _say(engine, clock, DOG)
    _say(engine, clock, "Toby is my dog.")
    _say(engine, clock, ASK)
    assert not _texts(engine, "Toby")
    back = engine.restore(_dog(engine).ref)
    assert back.status == "active"
    found = _texts(engine, "Toby")
    # the memory is back, standing for the turns it came from (a merged memory leads
    # its turns in search), or those turns are back themselves
    assert ("memory", DOG) in found or ("episode", DOG) in found
    assert any("Toby" in t for _, t in found)
    assert "restore" in [e.action for e in engine.history(back.id)]


def test_forget_by_id_hides_the_turns_through_the_cli_and_mcp(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(main, ["--home", str(home), *args])
        assert result.exit_code == code, result.output
        return result.output

    run("init")
    run("capture", "--user", DOG, "--session", "s", "--turn", "1")
    run("capture", "--user", "Our cat Mimi sleeps all day.", "--session", "s", "--turn", "2")
    hits = json.loads(run("search", "Toby", "--json"))["hits"]
    assert hits and any("Toby" in h["text"] for h in hits)
    dog = next(h["id"] for h in hits if h["id"].startswith("m_"))
    run("forget", dog)
    assert not json.loads(run("search", "Toby", "--json"))["hits"]
    run("restore", dog)
    assert json.loads(run("search", "Toby", "--json"))["hits"]

    # MCP: memory_forget by id
    settings = load(home, env={})
    tools = MemoryTools(settings)
    try:
        forgot = tools.memory_forget(id=dog)
        assert not forgot.is_error
        assert "Toby" not in str(tools.memory_search(query="Toby").content[0])
    finally:
        tools.close()
    assert not json.loads(run("search", "Toby", "--json"))["hits"]
    cats = json.loads(run("search", "Mimi", "--json"))["hits"]
    assert cats


def test_the_rendered_files_and_the_fallback_leave_it_out(
    engine: Engine, clock: FixedClock, tmp_path: Path
) -> None:
    _say(engine, clock, DOG)
    _say(engine, clock, "We deploy on Fridays at noon.")
    run_nightly(engine)
    files = engine.settings.files_dir
    assert "Toby" in (files / "MEMORY.md").read_text(encoding="utf-8")
    assert any("Toby" in p.read_text(encoding="utf-8") for p in (files / "memory").glob("*.md"))
    _say(engine, clock, ASK)

    # Before any night: the database gone, the recall over the files leaves it out.
    gone_home = tmp_path / "gone"
    gone_home.mkdir()
    shutil.copy(engine.settings.home / FORGOTTEN_FILE, gone_home / FORGOTTEN_FILE)
    gone = load(
        gone_home,
        env={},
        overrides={
            "workspace.files_dir": str(files),
            "workspace.agent": engine.settings.workspace.agent,
            "workspace.user": engine.settings.workspace.user,
        },
    )
    block = recall_anyway(gone, "What is my dog called? Toby", clock=engine.clock)
    assert block.degraded and "Toby" not in block.text
    assert "Fridays" in recall_anyway(gone, "When do we deploy Fridays?", clock=engine.clock).text

    # After the night: no rendered file holds it (the audit still does).
    clock.advance(days=1)
    run_nightly(engine)
    # (The graph log is a journal for replay, like the audit: it records the unlink.)
    rendered = [p for p in files.rglob("*") if p.is_file() and p.name != "graph-log.jsonl"]
    assert any(p.name == "SESSION-START.md" for p in rendered)
    for path in sorted(rendered):
        assert "Toby" not in path.read_text(encoding="utf-8"), path
    assert "Fridays" in (files / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("fact", "ask", "name"),
    [
        ("Mi perro se llama Toby.", "Olvida lo que te dije de mi perro.", "Toby"),
        ("Mon chien s'appelle Toby.", "Oublie ce que je t'ai dit sur mon chien.", "Toby"),
        ("Мою собаку зовут Шарик.", "Забудь, что я говорил про мою собаку.", "Шарик"),
    ],
)
def test_in_every_language_the_turn_goes_with_the_memory(
    engine: Engine, clock: FixedClock, fact: str, ask: str, name: str
) -> None:
    _say(engine, clock, fact)
    assert any(name in t for _, t in _texts(engine, name))
    _say(engine, clock, ask)
    assert {m.status for m in engine.list_memories(status=None) if name in m.text} == {"forgotten"}
    assert not [t for _, t in _texts(engine, name) if name in t]


def test_a_dry_run_night_shows_the_notes_cleaned_and_writes_nothing(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, DOG)
    _say(engine, clock, "We deploy on Fridays at noon.")
    run_nightly(engine)
    engine.forget(_dog(engine).id)
    marks = (engine.settings.home / FORGOTTEN_FILE).read_text(encoding="utf-8")
    files = engine.settings.files_dir
    memory_md = files / "MEMORY.md"
    deploy = next(line for line in memory_md.read_text().splitlines() if "Fridays" in line)
    memory_md.write_text(memory_md.read_text().replace(deploy + "\n", ""))  # a person deletes
    before = {p: p.read_bytes() for p in files.rglob("*") if p.is_file()}
    clock.advance(days=1)
    dry = run_nightly(engine, dry_run=True)
    assert {p: p.read_bytes() for p in files.rglob("*") if p.is_file()} == before
    assert (engine.settings.home / FORGOTTEN_FILE).read_text(encoding="utf-8") == marks
    cleaned = [c for c in dry.changes if c.path.parent.name == "memory"]
    assert cleaned and all("Toby" in (c.before or "") and "Toby" not in c.after for c in cleaned)
