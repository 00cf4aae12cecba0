"""`bench capture|lifecycle --llm` and `bench locomo --answer`, with a scripted model
(steps_model.py), on small sets written here; LoCoMo's scoring checked by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from steps_model import Scripted

from memoracle.cli import main
from memoracle.jobs.bench.answer import normalise, run_locomo_answer, score, token_f1
from memoracle.jobs.bench.capture_set import run_capture_set
from memoracle.jobs.bench.lifecycle_set import run_lifecycle_set
from memoracle.llm import Ask, ModelUnavailable

LOCOMO = Path(__file__).parents[1] / "fixtures" / "locomo_mini.json"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


CASES = [
    {  # the rules store nothing from it; the model finds the hobby
        "id": "c1", "lang": "en", "role": "user", "said_at": "2026-11-20T10:00:00+00:00",
        "text": "Spent the whole weekend at the pottery wheel again, glazing bowls.",
        "expected": [{"kind": "preference", "subject": "user", "value": "pottery"}],
    },
    {
        "id": "c2", "lang": "en", "role": "user", "said_at": "2026-11-20T10:00:00+00:00",
        "text": "I'm a nurse at St. Mary's hospital.",
        "expected": [{"kind": "fact", "subject": "user", "value": "nurse"}],
    },
]  # fmt: skip


def _pottery(ask: Ask) -> Any:
    ref = next(line.split()[0] for line in ask.user.splitlines() if line.startswith("e_"))
    text = "The user enjoys pottery." if "pottery" in ask.user else "Nothing."
    return {"memories": [{"text": text, "kind": "preference", "cites": [ref], "confidence": 0.9}]}


def test_bench_capture_llm_adds_what_the_model_extracts_and_counts_tokens(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path / "set.jsonl", CASES)
    rules = run_capture_set(path)
    model = Scripted(_pottery, _pottery)
    both = run_capture_set(path, model=model)
    assert rules.overall.found == 1 and both.overall.found == 2
    assert len(model.asked) == 1  # only the turn the rules made nothing from
    assert both.model is not None and both.model.asked == 1 and both.model.tokens == 150
    assert both.model.applied == 1
    assert both.to_json()["model"]["model_id"] == "scripted-1"
    assert "model scripted-1: 1 asked, 150 tokens" in both.format()


def test_bench_capture_llm_counts_what_the_model_did_not_answer(tmp_path: Path) -> None:
    path = _write(tmp_path / "set.jsonl", CASES)
    report = run_capture_set(path, model=Scripted(ModelUnavailable("down")))
    assert report.overall.found == 1 and report.model is not None
    assert report.model.unavailable == 1 and report.model.asked == 0


SCENARIOS = [
    {
        "id": "s1", "lang": "en", "topic": "hobby",
        "turns": [{"at": "2026-11-01T10:00:00Z",
                   "text": "Spent the whole weekend at the pottery wheel again."}],
        "checks": {"active": ["pottery"]},
    },
    {
        "id": "s2", "lang": "en", "topic": "residence",
        "turns": [{"at": "2026-11-01T10:00:00Z", "text": "I live in Paris."}, {"nightly": True},
                  {"at": "2026-11-03T10:00:00Z", "text": "I moved to Lyon last month."}],
        "checks": {"active": ["Lyon"], "not_active": ["Paris"]},
    },
]  # fmt: skip


def _lifecycle_reply(ask: Ask) -> Any:
    if ask.purpose == "extract":
        return _pottery(ask)
    light = {"decisions": [], "actions": [], "questions": []}
    deep = {"patterns": [], "stale": [], "promote": [], "compress": []}
    return {"reflect-light/1": light, "reflect-deep/1": deep}.get(ask.prompt_version, {})


def test_bench_lifecycle_llm_runs_the_model_steps_after_each_night(tmp_path: Path) -> None:
    path = _write(tmp_path / "set.jsonl", SCENARIOS)
    rules = run_lifecycle_set(path)
    model = Scripted(*[_lifecycle_reply] * 20)
    both = run_lifecycle_set(path, model=model)
    assert [o.failed == [] for o in rules.outcomes] == [False, True]
    assert [o.failed == [] for o in both.outcomes] == [True, True]
    assert both.model is not None and both.model.asked == len(model.asked) > 0
    assert {a.purpose for a in model.asked} >= {"extract", "reflect"}
    assert both.to_json()["model"]["applied"] >= 1


def test_locomo_scoring_is_the_papers() -> None:
    assert normalise("The Cat, and a DOG!") == "cat dog"
    assert token_f1("cobalt blue", "cobalt blue") == 1.0
    assert token_f1("a blue glaze", "cobalt blue") == pytest.approx(0.5)
    assert token_f1("nothing", "cobalt blue") == 0.0
    assert token_f1("running", "run") == 1.0  # stemmed
    # multi-hop: each gold part against its best predicted part, averaged
    assert score(1, "Berlin", "Rotterdam, Berlin") == pytest.approx(0.5)
    # open-domain: the gold answer before a ';'
    assert score(3, "probably not", "Probably not; he finds starting at four brutal") == 1.0
    # adversarial: right only when the answer says it is not known
    assert score(5, "No information available.", "Juniper") == 1.0
    assert score(5, "Juniper", "Juniper") == 0.0


def test_bench_locomo_answer_scores_each_category_from_the_recall_block() -> None:
    gold = {}
    for sample in json.loads(LOCOMO.read_text()):
        for qa in sample["qa"]:
            gold[qa["question"]] = qa.get("answer", "No information available")

    def oracle(ask: Ask) -> Any:
        question = ask.user.rsplit("Question: ", 1)[1]
        assert ask.user.startswith("Memories:\n")  # the recall block, nothing else
        return {"answer": str(gold[question])}

    report = run_locomo_answer(LOCOMO, Scripted(*[oracle] * 13), embedder="hash")
    data = report.to_json()
    f1 = {name: c["f1"] for name, c in data["categories"].items()}
    assert f1["single-hop"] == f1["temporal"] == f1["multi-hop"] == f1["adversarial"] == 1.0
    assert f1["open-domain"] < 1.0  # the gold part before ';' against the whole answer
    assert data["all"]["questions"] == 13 and data["tokens_in"] == 1300
    wrong = run_locomo_answer(LOCOMO, Scripted(*[{"answer": "purple"}] * 13), embedder="hash")
    assert wrong.to_json()["overall"]["f1"] == 0.0
    down = run_locomo_answer(LOCOMO, Scripted(*[ModelUnavailable("x")] * 13), embedder="hash")
    assert down.to_json()["all"]["failed"] == 13


def test_bench_llm_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "set.jsonl", CASES)
    for args in (["capture", str(path), "--llm"], ["locomo", str(LOCOMO), "--answer"]):
        out = CliRunner().invoke(main, ["bench", *args])
        assert out.exit_code == 1 and "No model is configured" in out.output
