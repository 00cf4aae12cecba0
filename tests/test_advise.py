"""The advisor (docs/lifecycle.md, "The advisor"): clusters, promotion candidates, stale
memories, duplicates and disputes; promotions a person accepts applied, audited, and in
MEMORY.md's block from the next render."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.errors import NotFound
from memoracle.jobs import advise, nightly
from memoracle.types import Turn

ATLAS = [
    "Project Atlas uses Redis for its job queue.",
    "Project Atlas uses Postgres for its billing ledger.",
    "Project Atlas uses Stripe for its card payments.",
]
GARDEN = [
    "The tomato seedlings in the garden need water every morning.",
    "The garden tomato seedlings need shade every afternoon.",
]


@pytest.fixture
def lexical(tmp_path: Path, clock: FixedClock) -> Iterator[Engine]:
    """An engine without an embedder: the clusters are made by shared words."""
    settings = load(tmp_path / "lexical", env={}, overrides={"embedding.provider": "none"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as e:
        yield e


def _store(engine: Engine) -> None:
    for text in [*ATLAS, *GARDEN, "Anna was born in Lyon in 1990."]:
        engine.remember(text, kind="fact")
    engine.read_graph_backlog()


@pytest.mark.parametrize("which", ["engine", "lexical"])
def test_clusters_of_related_memories(which: str, request: pytest.FixtureRequest) -> None:
    engine: Engine = request.getfixturevalue(which)
    _store(engine)
    advice = advise.advise(engine)
    assert advice.method == ("embedding" if which == "engine" else "lexical")
    groups = {frozenset(m.text for m in c.memories): c.label for c in advice.clusters}
    assert groups.get(frozenset(GARDEN)) is not None
    atlas = [c for c in advice.clusters if set(ATLAS) & {m.text for m in c.memories}]
    assert atlas and atlas[0].label == "Atlas"  # the graph's entity names it
    assert all("Lyon" not in m.text for c in advice.clusters for m in c.memories)


def test_promotion_candidates_are_recalled_often_and_long_lived(
    engine: Engine, clock: FixedClock
) -> None:
    often, _ = engine.remember("The office wifi network is called heron-5.", kind="fact")
    for _ in range(4):
        engine.recall("what is the office wifi network called")
    never, _ = engine.remember("The office printer is on the third floor.", kind="fact")
    clock.advance(days=60)  # its score faded below the block's: not in MEMORY.md now
    advice = advise.advise(engine)
    candidates = {c.memory.id: c for c in advice.promotions}
    assert never.id not in candidates  # long-lived, but never recalled
    assert candidates[often.id].recalls >= advise.MIN_RECALLS
    assert candidates[often.id].age_days == 60
    clock.advance(days=-50)  # ten days old: not long-lived yet
    assert often.id not in {c.memory.id for c in advise.advise(engine).promotions}


def test_applied_promotions_enter_the_block_audited_and_a_dry_run_changes_nothing(
    engine: Engine, clock: FixedClock
) -> None:
    memory, _ = engine.remember("The office wifi network is called heron-5.", kind="fact")
    clock.advance(days=400)  # faded: far below the block's score
    nightly.run_nightly(engine, only="render")
    block = (engine.settings.files_dir / "MEMORY.md").read_text()
    assert memory.ref not in block
    advise.apply_promotions(engine, [memory.ref], dry_run=True)
    assert "promoted" not in engine.get(memory.ref).details
    [promoted] = advise.apply_promotions(engine, [memory.ref], dry_run=False)
    assert promoted.details["promoted"]["by"] == "advise"
    assert [e.action for e in engine.audit_entries(limit=1)] == ["promote"]
    nightly.run_nightly(engine, only="render")
    assert memory.ref in (engine.settings.files_dir / "MEMORY.md").read_text()
    with pytest.raises(NotFound):
        advise.apply_promotions(engine, ["m_999"], dry_run=False)


def test_stale_duplicates_and_disputes(engine: Engine, clock: FixedClock) -> None:
    stale, _ = engine.remember("The old staging box was called kestrel.", kind="fact")
    clock.advance(days=200)
    engine.remember("The billing service is deployed with Helm charts on the blue cluster.")
    engine.remember(
        "The billing service is deployed with Helm charts on the blue cluster, says Dana."
    )
    engine.capture([Turn("user", "I live in Lyon.", clock.now(), "s", "1")])
    clock.advance(days=1)
    engine.capture([Turn("user", "I might move to Berlin.", clock.now(), "s", "2")])
    advice = advise.advise(engine)
    assert [s.memory.id for s in advice.stale] == [stale.id]
    assert advice.stale[0].idle_days == 201
    assert len(advice.duplicates) == 1
    assert [d.memory.text for d in advice.disputes] == ["I live in Lyon."]
    body = advice.to_json()
    assert list(body) == ["method", "clusters", "promotions", "stale", "duplicates", "disputes"]
    lines = "\n".join(advice.lines())
    assert "Stale: 1" in lines and "Disputes: 1" in lines


def test_the_advise_command(engine: Engine, clock: FixedClock) -> None:
    memory, _ = engine.remember("The office wifi network is called heron-5.", kind="fact")
    home = str(engine.settings.home)
    runner = CliRunner()
    shown = runner.invoke(main, ["--home", home, "advise", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["method"] == "embedding"
    dry = runner.invoke(
        main, ["--home", home, "advise", "--apply-promotions", memory.ref, "--dry-run"]
    )
    assert dry.exit_code == 0 and f"would promote {memory.ref}" in dry.output
    alone = runner.invoke(main, ["--home", home, "advise", "--dry-run"])
    assert alone.exit_code == 2 and "--apply-promotions" in alone.output
    done = runner.invoke(
        main, ["--home", home, "advise", "--apply-promotions", memory.ref, "--json"]
    )
    body = json.loads(done.output)
    assert (body["dry_run"], body["promoted"]) == (False, [memory.ref]) and body["version"]
