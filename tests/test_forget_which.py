"""Which memories a forget by description reaches: only those it speaks of, in their
own language (never by a prefix of another language's word), and, when it fits more
than one, none until a person confirms — through every door."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Ambiguous, Engine
from memoracle.mcp_server.tools import MemoryTools
from memoracle.types import Turn

DECOYS = ("Change of plans — we'll use MySQL 8 for the backend.", "I charged my laptop.")


def _say(engine: Engine, clock: FixedClock, text: str) -> list[str]:
    clock.advance(minutes=5)
    result = engine.capture([Turn("user", text, clock.now(), "s", f"{clock.now():%H%M}")])
    return list(result.skipped)


def _status(engine: Engine, part: str) -> str:
    (memory,) = [m for m in engine.list_memories(status=None, limit=100) if part in m.text]
    return memory.status


# -- (b) a description reaches what it speaks of, in the memory's own language ---------


def test_french_chat_makes_no_candidate_of_change_or_charged(engine: Engine) -> None:
    for text in DECOYS:
        engine.remember(text)
    assert engine.forget_matching("chat", dry_run=True) == []
    engine.remember("J'ai un chat qui s'appelle Felix.")
    assert [m.text for m in engine.forget_matching("chat", dry_run=True)] == [
        "J'ai un chat qui s'appelle Felix."
    ]


def test_spanish_gato_does_not_match_the_gate_code(engine: Engine, clock: FixedClock) -> None:
    engine.remember("The gate code is 4521.")
    assert engine.forget_matching("gato", dry_run=True) == []
    _say(engine, clock, "Olvida lo de mi gato.")
    assert _status(engine, "gate code") == "active"


def test_said_in_french_it_forgets_the_cat_and_nothing_else(
    engine: Engine, clock: FixedClock
) -> None:
    for text in DECOYS:
        _say(engine, clock, text)
    _say(engine, clock, "I have a cat named Felix.")
    _say(engine, clock, "Oublie ce que je t'ai dit sur mon chat.")
    assert _status(engine, "Felix") == "forgotten"
    assert {_status(engine, t[:12]) for t in DECOYS} == {"active"}


# -- (c) several fit: none is forgotten until a person confirms ------------------------


def _two_dogs(engine: Engine) -> None:
    engine.remember("My dog is called Toby.")
    engine.remember("My sister's dog is called Rex.")
    engine.remember("I like sushi.")


def test_the_engine_refuses_several_and_names_them(engine: Engine) -> None:
    _two_dogs(engine)
    with pytest.raises(Ambiguous, match="fits 2 memories, so none was forgotten") as refused:
        engine.forget_matching("dog")
    assert {m.text for m in refused.value.candidates} == {
        "My dog is called Toby.",
        "My sister's dog is called Rex.",
    }
    assert len(engine.list_memories()) == 3
    assert len(engine.forget_matching("dog", dry_run=True)) == 2
    gone = engine.forget_matching("dog", everything=True)
    assert {m.status for m in gone} == {"forgotten"} and len(gone) == 2
    assert [m.text for m in engine.list_memories()] == ["I like sushi."]


def test_a_description_fitting_several_wholly_is_refused_too(engine: Engine) -> None:
    engine.remember("I work at Oracle as a DBA.")
    engine.remember("My job starts at 9am.")
    with pytest.raises(Ambiguous):
        engine.forget_matching("my old job")
    assert len(engine.list_memories()) == 2


def test_the_cli_lists_them_and_forgets_all_only_when_confirmed(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def run(*args: str, code: int = 0, input: str | None = None) -> str:
        result = CliRunner().invoke(main, ["--home", str(home), *args], input=input)
        assert result.exit_code == code, result.output
        return result.output

    run("init")
    run("remember", "My dog is called Toby.")
    run("remember", "My sister's dog is called Rex.")
    refused = run("forget", "--query", "dog", code=1)
    assert "none was forgotten" in refused and "Toby" in refused and "Rex" in refused
    assert run("forget", "--query", "dog", "--dry-run").count("would forget") == 2
    assert json.loads(run("forget", "--query", "dog", "--dry-run", "--json"))["dry_run"]
    assert run("list").count("called") == 2
    assert "Aborted" in run("forget", "--query", "dog", "--all", input="n\n", code=1)
    assert run("forget", "--query", "dog", "--all", "--yes").count("[forgotten]") == 2
    assert "no memories" in run("list")


def test_mcp_lists_them_and_forgets_all_only_with_all(settings_home: Path) -> None:
    tools = MemoryTools(load(settings_home, env={}))
    try:
        asked = tools.memory_forget(query="dog")
        assert not asked.is_error
        said = asked.content[0].text  # type: ignore[union-attr]
        assert "none was forgotten" in said and "Toby" in said and "Rex" in said
        assert asked.structured_content and asked.structured_content["dry_run"] is True
        status = tools.memory_status().structured_content or {}
        assert status["stats"]["by_status"] == {"active": 3}
        done = tools.memory_forget(query="dog", all=True)
        assert (done.structured_content or {})["dry_run"] is False
        assert len((done.structured_content or {})["memories"]) == 2
        one = tools.memory_forget(query="sushi")
        assert "Forgot 1" in one.content[0].text  # type: ignore[union-attr]
    finally:
        tools.close()


@pytest.fixture
def settings_home(tmp_path: Path, clock: FixedClock) -> Path:
    home = tmp_path / "mcp-home"
    settings = load(home, env={}, overrides={"embedding.model": "hash"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        _two_dogs(engine)
    (home / "config.toml").write_text('[embedding]\nmodel = "hash"\n', encoding="utf-8")
    return home


def test_said_in_conversation_it_forgets_none_and_waits_for_a_person(
    engine: Engine, clock: FixedClock
) -> None:
    _say(engine, clock, "My dog is called Toby.")
    _say(engine, clock, "My dog Rex is three years old.")
    skipped = _say(engine, clock, "Forget what I told you about my dog.")
    assert "forget:ambiguous" in skipped
    assert {_status(engine, "Toby"), _status(engine, "Rex")} == {"active"}
    waiting = engine.pending()
    assert len(waiting) == 2 and {"Toby", "Rex"} <= set(
        " ".join(d.memory.text for d in waiting).replace(".", "").split()
    )
    assert all("asked to forget" in d.reason for d in waiting)
    toby = next(d.memory for d in waiting if "Toby" in d.memory.text)
    rex = next(d.memory for d in waiting if "Rex" in d.memory.text)
    assert engine.resolve(toby.ref, confirm=False).status == "forgotten"
    assert engine.resolve(rex.ref, confirm=True).status == "active"
    assert engine.pending() == []
    assert not [h for h in engine.search("Toby").hits if "Toby" in h.text]
