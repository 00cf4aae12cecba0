"""The model steps as a night runs them: the pending queue across two nights, the token
budget, the dry run, health, consolidate and reflect, and no model at all."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest
from click.testing import CliRunner
from steps_model import Scripted

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.jobs import health, nightly
from memoracle.jobs.thinking import files
from memoracle.jobs.thinking.night import OFF, run_night
from memoracle.llm import Ask, ModelUnavailable
from memoracle.types import Turn

TURNS = [  # the rules store nothing from these
    "Rearranging the bookshelves in the hallway took ages.",
    "The weather turned cold around noon.",
    "Bookshelves are heavy, honestly.",
]


def _llm(engine: Engine, **keys: Any) -> None:
    engine.settings = replace(engine.settings, llm=replace(engine.settings.llm, **keys))


def _day(engine: Engine, clock: FixedClock, texts: list[str], session: str = "s1") -> None:
    for n, text in enumerate(texts):
        engine.capture([Turn("user", text, clock.now(), session, f"{session}-{n}")])
        clock.advance(minutes=1)
    clock.advance(hours=1)


def _extract_nothing(ask: Ask) -> Any:
    return {"memories": []}


@pytest.fixture
def day(engine: Engine, clock: FixedClock) -> Engine:
    _llm(engine, steps=["extract"])
    _day(engine, clock, (TURNS * 6)[:16])  # two questions (8 turns a batch)
    return engine


def test_the_model_down_queues_the_work_and_the_next_night_takes_it_first(
    day: Engine, clock: FixedClock
) -> None:
    down = Scripted(ModelUnavailable("connection refused after 3 tries"))
    first = run_night(day, model=down)
    assert first.error.startswith("ModelUnavailable") and first.queued == 2
    waiting = files.read_pending(day.settings.home)
    assert [w.step for w in waiting] == ["extract", "extract"]
    assert all("connection refused" in w.reason for w in waiting)
    report = health.check(day)
    assert report.fields["model"]["pending"] == 2  # type: ignore[index]
    assert "model_unavailable" in [w.code for w in report.warnings]

    clock.advance(days=1)
    _day(day, clock, ["The bookshelves finally look good."], session="s2")
    up = Scripted(_extract_nothing, _extract_nothing, _extract_nothing)
    second = run_night(day, model=up)
    assert second.asked == 3 and second.from_queue == 2 and second.queued == 0
    asked_first = [_refs(a) for a in up.asked[:2]]
    assert asked_first == [w.payload["episodes"] for w in waiting]
    assert not (day.settings.home / "llm" / files.PENDING_FILE).exists()
    after = health.check(day)
    assert after.fields["model"]["pending"] == 0  # type: ignore[index]
    assert "model_unavailable" not in [w.code for w in after.warnings]


def _refs(ask: Ask) -> list[int]:
    return [int(line.split()[0][2:]) for line in ask.user.splitlines() if line.startswith("e_")]


def test_a_night_stops_at_its_token_budget_and_queues_the_rest(day: Engine) -> None:
    costs = [p.tokens for p in run_night(day, model=Scripted(), dry_run=True).previews]
    budget = costs[0] + 100  # the first question fits; once it spent 150, the second not
    _llm(day, night_tokens=budget)
    model = Scripted(_extract_nothing, _extract_nothing)
    report = run_night(day, model=model)
    assert len(model.asked) == 1 and report.queued == 1
    assert report.tokens == 150 <= budget
    [left] = files.read_pending(day.settings.home)
    assert f"token budget ({budget})" in left.reason


def test_a_dry_run_shows_the_prompts_and_tokens_and_sends_nothing(day: Engine) -> None:
    model = Scripted()
    report = run_night(day, model=model, dry_run=True)
    assert model.asked == []
    assert len(report.previews) == 2 and report.tokens == sum(p.tokens for p in report.previews)
    assert all(p.tokens > 600 for p in report.previews)  # the prompt plus the reply's cap
    assert TURNS[0] in report.previews[0].user and report.previews[0].prompt_version == "extract/1"
    assert not (day.settings.home / "llm").exists()  # no queue, no state, no quarantine


def test_nightly_dry_run_with_a_model_set_prints_the_prompts_and_opens_nothing(
    engine: Engine, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _day(engine, clock, TURNS)
    engine.close()
    home = str(engine.settings.home)

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a dry run opened the model")

    monkeypatch.setattr("memoracle.llm.open_model", never, raising=False)
    args = ["--home", home, "--now", clock.now().isoformat(), "--set", "llm.provider=openai",
            "--set", "llm.model=tiny", "--set", "embedding.model=hash"]  # fmt: skip
    out = CliRunner().invoke(main, [*args, "nightly", "--dry-run"])
    assert out.exit_code == 0, out.output
    assert "prompt  extract (extract/1, ~" in out.output and TURNS[1] in out.output
    assert "would spend ~" in out.output
    as_json = CliRunner().invoke(main, [*args, "nightly", "--dry-run", "--json"])
    model = json.loads(as_json.output)["model"]
    assert model["prompts"] and model["tokens"] > 0 and model["asked"] == 0


def test_with_no_model_the_night_is_the_rule_night(engine: Engine, clock: FixedClock) -> None:
    _day(engine, clock, [*TURNS, "I live in Paris.", "I might move to Lyon."])
    before = [(m.id, m.status, m.text) for m in engine.list_memories(status=None)]
    report = nightly.run_nightly(engine)
    assert report.steps["model"]["skipped"] == 1 and report.model is not None
    assert report.model.skipped == OFF and report.model.asked == 0
    assert [(m.id, m.status, m.text) for m in engine.list_memories(status=None)] == before
    assert not (engine.settings.home / "llm").exists()


def test_no_model_client_is_imported_by_a_night_without_a_model(engine: Engine) -> None:
    engine.close()
    code = (
        "import sys\n"
        "from memoracle.cli import main\n"
        f"main(['--home', {str(engine.settings.home)!r}, '--set', 'embedding.model=hash',"
        " 'nightly', '--json'], standalone_mode=False)\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('openai', 'anthropic',"
        " 'httpx', 'jsonschema')]\n"
        "print('LOADED', loaded)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "LOADED []" in run.stdout


def _cluster_day(engine: Engine, clock: FixedClock) -> None:
    said = [
        "My sister Anna lives in Lyon.",
        "My sister Anna works as a nurse.",
        "I am visiting Anna in June.",
        "I need to call Anna tomorrow.",
        "My sister Anna has two cats.",
        "My sister Anna plays the cello.",
        "My sister Anna is a vegetarian.",
        "My sister Anna loves the Alps.",
    ]
    _day(engine, clock, said)


def test_consolidate_writes_a_topic_summary_citing_memories_and_merges_gated(
    engine: Engine, clock: FixedClock
) -> None:
    _llm(engine, steps=["consolidate"])
    _cluster_day(engine, clock)

    def reply(ask: Ask) -> Any:
        refs = [line.split(":")[0] for line in ask.user.splitlines() if line.startswith("m_")]
        return {
            "summary": "Anna, the user's sister, is a nurse in Lyon who hikes.",
            "cites": refs[:3],
            "merges": [{"keep": refs[0], "merge": refs[1], "reason": "same", "confidence": 0.5}],
        }

    report = run_night(engine, model=Scripted(reply))
    assert report.counts == {"summaries": 1, "held": 1}
    [summary] = (engine.settings.files_dir / "memory" / "topics").glob("*.summary.md")
    text = summary.read_text()
    assert "scripted-1 (consolidate/1)" in text and "Anna, the user's sister" in text
    assert text.count("<!-- m_") == 3
    assert len(engine.pending()) == 1  # the merge under the gate waits for a person
    again = Scripted()
    run_night(engine, model=again)
    assert again.asked == []  # the cluster did not change: not asked again


def test_reflect_light_stores_decisions_and_actions_and_notes_open_questions(
    engine: Engine, clock: FixedClock
) -> None:
    _llm(engine, steps=["reflect"])
    _cluster_day(engine, clock)

    def reply(ask: Ask) -> Any:
        ref = next(line.split()[0] for line in ask.user.splitlines() if line.startswith("m_"))
        if ask.prompt_version == "reflect-light/1":
            note = {"cites": [ref], "confidence": 0.9}
            return {
                "decisions": [{"text": "The user decided to visit Anna in Lyon.", **note}],
                "actions": [{"text": "Buy Anna a birthday present.", **note}],
                "questions": [{"text": "Does Anna still live in Lyon?", **note}],
            }
        promote = {"id": ref, "reason": "core family fact", "confidence": 0.95}
        return {"patterns": [], "stale": [], "compress": [], "promote": [promote]}

    report = run_night(engine, model=Scripted(reply, reply))
    by_model = {m.kind: m for m in engine.list_memories() if m.source == "llm"}
    assert set(by_model) == {"decision", "task"} and report.counts["applied"] == 3
    assert by_model["task"].rule == "reflect-light/1"
    pinned = [m for m in engine.list_memories() if m.pinned]
    assert len(pinned) == 1 and pinned[0].details["model"]["change"] == "pin"
    notes = engine.settings.files_dir / "memory" / "reflections"
    assert (
        "open question: Does Anna still live in Lyon?" in next(notes.glob("*[0-9].md")).read_text()
    )
    assert "promoted" in next(notes.glob("*-week.md")).read_text()
