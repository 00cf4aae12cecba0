"""Check and arbitration (the Memory Pipeline's conflict resolver): `check CLAIM` says
whether the store supports, contradicts or does not know a claim, citing memories,
within the requester's scope and read-only; `resolve --all` rules on every pending
dispute, confirming those what was said since settles, with a dry run and a backup."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.engine.arbitrate import arbitrate, check
from memoracle.types import Scope


def _state(engine: Engine) -> tuple[object, ...]:
    """Every memory and audit entry as stored, to see that nothing changed."""
    memories = engine._store.memories.select(status=None, limit=1000)
    return tuple(memories), tuple(engine._store.audit.entries(limit=1000))


def test_check_supports_contradicts_or_does_not_know(engine: Engine, clock: FixedClock) -> None:
    home, _ = engine.remember("I live in Paris.")
    clock.advance(days=1)
    db, _ = engine.remember("The staging database is on db2.")
    before = _state(engine)

    same = check(engine, "I live in Paris")
    other = check(engine, "I live in Berlin")
    reworded = check(engine, "the staging database is on db2")
    unknown = check(engine, "My cat is named Tom")

    assert same.verdict == "supports" and [c.memory.id for c in same.cited] == [home.id]
    assert other.verdict == "contradicts" and other.cited[0].memory.id == home.id
    assert "'Berlin' replaces 'Paris'" in other.cited[0].reason
    assert reworded.verdict == "supports" and reworded.cited[0].memory.id == db.id
    assert unknown.verdict == "unknown" and unknown.cited == ()
    assert _state(engine) == before  # read-only: no access count, no audit entry


def test_check_the_newest_sure_word_decides_over_a_hedge(engine: Engine, clock: FixedClock) -> None:
    paris, _ = engine.remember("I live in Paris.")
    clock.advance(days=1)
    engine.remember("I might move to Lyon.")  # disputes Paris, supersedes nothing

    found = check(engine, "I live in Paris")

    assert found.verdict == "supports"
    assert found.cited[0].memory.id == paris.id and "itself disputed" in found.cited[0].reason
    assert found.cited[1].stance == "contradicts" and "hedge" in found.cited[1].reason


def test_check_sees_only_what_the_scope_may_see(engine: Engine) -> None:
    engine.remember("I live in Paris.", scope=Scope(user="ann", visibility="private"))
    group = Scope(user="bob", chat="team", visibility="shared")

    assert check(engine, "I live in Berlin", scope=group).verdict == "unknown"
    assert check(engine, "I live in Berlin", scope=Scope(user="ann")).verdict == "contradicts"


def test_arbitrate_confirms_what_was_said_again_and_leaves_the_rest(
    engine: Engine, clock: FixedClock
) -> None:
    paris, _ = engine.remember("I live in Paris.")
    tea, _ = engine.remember("My favourite drink is tea.")
    clock.advance(days=1)
    engine.remember("I might move to Lyon.")
    engine.remember("Maybe my favourite drink is coffee.")
    clock.advance(days=1)
    engine.remember("I live in Paris, definitely.")
    assert {d.memory.id for d in engine.pending()} == {paris.id, tea.id}
    before = _state(engine)

    dry = arbitrate(engine, dry_run=True)

    assert {r.dispute.memory.id: r.decision for r in dry.rulings} == {
        paris.id: "confirm",
        tea.id: "leave",
    }
    assert dry.backup is None and _state(engine) == before

    done = arbitrate(engine)

    assert done.settled == 1 and done.backup is not None and done.backup.path.exists()
    assert engine.stored_memory(paris.id).status == "active"  # type: ignore[union-attr]
    assert [d.memory.id for d in engine.pending()] == [tea.id]
    assert engine.history(paris.id)[0].actor == "arbitrate"


def test_arbitrate_confirms_when_what_disputed_it_is_forgotten(
    engine: Engine, clock: FixedClock
) -> None:
    paris, _ = engine.remember("I live in Paris.")
    clock.advance(days=1)
    lyon, _ = engine.remember("I might move to Lyon.")
    engine.forget(lyon.ref)

    (ruling,) = arbitrate(engine, dry_run=True).rulings

    assert ruling.dispute.memory.id == paris.id and ruling.decision == "confirm"
    assert f"{lyon.ref}, is forgotten" in ruling.reason


def test_check_and_resolve_all_from_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(main, ["--home", str(home), *args])
        assert result.exit_code == code, result.output
        return result.output

    run("init")
    run("remember", "I live in Paris.")
    run("remember", "I might move to Lyon.")
    assert run("check", "I live in Berlin").startswith("contradicted: I live in Berlin")
    body = json.loads(run("check", "I live in Paris", "--json"))
    assert body["verdict"] == "supports" and body["cited"][0]["memory"]["id"] == "m_1"
    assert "left for a person" in run("resolve", "--all", "--dry-run")
    run("remember", "I live in Paris, for sure.")
    assert "1 would confirm, 0 left" in run("resolve", "--all", "--dry-run")
    assert "[disputed]" in run("pending")
    rulings = json.loads(run("resolve", "--all", "--json"))
    assert rulings["settled"] == 1 and rulings["backup"]
    assert run("pending") == "nothing pending\n"
    assert "give no ID" in run("resolve", "m_1", "--all", code=1)
    assert "--dry-run goes with --all" in run("resolve", "m_1", "--confirm", "--dry-run", code=1)
