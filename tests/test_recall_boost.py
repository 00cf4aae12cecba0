"""Recall adds `recall.boost` to the decayed activation (it does not reset it to full
strength) and counts an access, so the frequency factor of the score moves; `list` and
`get` show the activation decayed to the engine's clock."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine


def _old_event(engine: Engine, clock: FixedClock, days: float) -> str:
    now = clock.now()
    clock.set(now - timedelta(days=days))
    memory, _ = engine.remember("I visited the harbour museum.", kind="event")
    clock.set(now)
    return memory.ref


def test_recall_adds_the_boost_to_the_decayed_activation(engine: Engine, clock: FixedClock) -> None:
    ref = _old_event(engine, clock, 60)  # two half-lives: 0.25
    assert engine.activation(engine.get(ref))[0] == pytest.approx(0.25)
    engine.recall("harbour museum")
    once = engine.get(ref)
    assert once.activation == pytest.approx(0.25 + 0.3)  # not 1.0
    assert once.access_count == 1 and once.last_accessed_at == clock.now()
    engine.recall("harbour museum")
    twice = engine.get(ref)
    assert twice.activation == pytest.approx(0.85) and twice.access_count == 2
    engine.recall("harbour museum")
    assert engine.get(ref).activation == 1.0  # capped


def test_recalls_move_the_frequency_factor_of_the_score(engine: Engine, clock: FixedClock) -> None:
    ref = _old_event(engine, clock, 1)

    def frequency() -> float:
        return next(s.frequency for m, s in engine.score() if m.ref == ref)

    before = frequency()
    for _ in range(3):
        engine.recall("harbour museum")
    assert before == 1.0 and frequency() == pytest.approx(1.5)  # 1 + log2(1 + 3) / 4


def test_list_and_get_show_the_activation_at_the_engine_clock(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "h"), "--set", "embedding.model=hash"]
    then = ["--now", "2024-01-01T00:00:00+00:00"]
    later = ["--now", "2024-03-01T00:00:00+00:00"]  # 60 days: two half-lives of an event
    assert runner.invoke(main, [*home, *then, "init"]).exit_code == 0
    added = runner.invoke(
        main, [*home, *then, "remember", "I visited the harbour museum.", "--kind", "event"]
    )
    assert added.exit_code == 0
    listed = json.loads(runner.invoke(main, [*home, *later, "list", "--json"]).output)
    scores = listed["memories"][0]["scores"]
    assert scores["activation"] == 0.25  # 31 + 29 days
    assert scores["stored_activation"] == 1.0
    assert scores["activation_at"] == "2024-03-01T00:00:00+00:00"
    text = runner.invoke(main, [*home, *later, "list"])
    assert "(activation 0.25)" in text.output
    assert "decayed to 2024-03-01T00:00:00+00:00 (the engine clock)" in text.output
    got = runner.invoke(main, [*home, *later, "get", "m_1"]).output
    assert "activation=0.25," in got and "stored_activation=1.0" in got
    assert "decayed to 2024-03-01T00:00:00+00:00 (the engine clock)" in got
    fresh = json.loads(runner.invoke(main, [*home, *then, "get", "m_1", "--json"]).output)
    assert fresh["memory"]["scores"]["activation"] == 1.0
