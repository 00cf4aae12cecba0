"""`forget --query`: a query naming nothing or fitting too many is refused unless
--all (which asks first); --dry-run shows; an unclear description lists candidates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.types import Scope


def run(home: Path, *args: str, input: str | None = None, code: int = 0) -> str:
    result = CliRunner().invoke(main, ["--home", str(home), *args], input=input)
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.output


def _live(engine: Engine) -> int:
    return len(engine.list_memories(limit=1000))


def test_a_query_naming_nothing_is_refused_unless_all(engine: Engine) -> None:
    for text in ("I live in Paris.", "I work at Oracle.", "My cat is called Tom."):
        engine.remember(text)
    with pytest.raises(InvalidInput, match="names nothing"):
        engine.forget_matching("  ")
    assert _live(engine) == 3
    assert len(engine.forget_matching("", dry_run=True, everything=True)) == 3
    assert _live(engine) == 3
    engine.forget_matching("", everything=True)
    assert _live(engine) == 0


def test_a_query_fitting_more_than_the_limit_forgets_none_unless_all(engine: Engine) -> None:
    for n in range(5):
        engine.remember(f"The staging server number {n} runs Debian.")
    engine.remember("The production server runs Ubuntu.")
    with pytest.raises(InvalidInput, match="fits more than 3"):
        engine.forget_matching("staging server", limit=3)
    assert _live(engine) == 6
    assert len(engine.forget_matching("staging server", limit=3, dry_run=True)) == 3
    forgotten = engine.forget_matching("staging server", limit=3, everything=True)
    assert len(forgotten) == 5 and {m.status for m in forgotten} == {"forgotten"}
    assert [m.text for m in engine.list_memories()] == ["The production server runs Ubuntu."]


def test_the_cli_asks_before_forgetting_everything(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "init")
    run(home, "remember", "I live in Paris.")
    run(home, "remember", "I work at Oracle.")
    assert "names nothing" in run(home, "forget", "--query", "", code=1)
    assert run(home, "forget", "--query", "", "--all", "--dry-run").count("would forget") == 2
    assert "Aborted" in run(home, "forget", "--query", "", "--all", input="n\n", code=1)
    assert "2 memories" in run(home, "forget", "--query", "", "--all", input="y\n")
    assert "no memories" in run(home, "list")
    assert "--all goes with --query" in run(home, "forget", "m_1", "--all", code=1)


def test_forget_by_query_never_reaches_what_the_scope_cannot_see(engine: Engine) -> None:
    """Bob's and the owner's memories are neither counted, listed nor forgotten by
    Alice's description, not even with --all; Alice's own are."""
    alice, bob = Scope(user="alice"), Scope(user="bob")
    engine.remember("The staging server runs Debian.", scope=alice)
    engine.remember("The staging server password rotates monthly.", scope=bob)
    engine.remember("The staging server lives in Frankfurt.")
    listed = engine.forget_matching("staging server", scope=alice, dry_run=True)
    assert [m.text for m in listed] == ["The staging server runs Debian."]
    assert engine.forget_matching("", scope=alice, dry_run=True, everything=True) == listed
    engine.forget_matching("staging server", scope=alice, everything=True)
    assert [m.text for m in engine.list_memories(scope=bob)] == [
        "The staging server password rotates monthly."
    ]
    assert [m.text for m in engine.list_memories()] == ["The staging server lives in Frankfurt."]
    assert engine.list_memories(scope=alice) == []


def test_what_the_scope_cannot_see_never_changes_what_a_description_finds(
    engine: Engine,
) -> None:
    """Bob's memory fits Alice's description fully, hers only in part: what she gets is
    what she would get were Bob's not there (hers, as the one it speaks of most), and
    Bob's is never listed nor forgotten."""
    alice, bob = Scope(user="alice"), Scope(user="bob")
    engine.remember("I work at Oracle.", scope=alice)
    alone = engine.forget_matching("my old job at the bank", scope=alice, dry_run=True)
    assert [m.text for m in alone] == ["I work at Oracle."]
    engine.remember("I work at the bank downtown.", scope=bob)
    assert engine.forget_matching("my old job at the bank", scope=alice, dry_run=True) == alone
    engine.forget_matching("my old job at the bank", scope=alice)
    assert engine.list_memories(scope=alice) == []
    assert [m.text for m in engine.list_memories(scope=bob)] == ["I work at the bank downtown."]


def test_the_cli_forgets_only_in_its_scope(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run(home, "init")
    run(home, "remember", "--user-id", "bob", "I work at Oracle.")
    assert "no live memory matches" in run(home, "forget", "--query", "Oracle", "--dry-run")
    bobs = run(home, "list", "--user-id", "bob", "--json")
    ref = json.loads(bobs)["memories"][0]["id"]
    assert "No memory" in run(home, "forget", ref, "--user-id", "alice", code=1)
    assert "forgot" in run(home, "forget", "--query", "Oracle", "--user-id", "bob")
    assert "Oracle" not in run(home, "list", "--user-id", "bob")
