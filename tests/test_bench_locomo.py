"""`memoracle.jobs.bench.run_locomo` on a LoCoMo-format fixture of our own (two conversations,
three sessions each, questions of every category, malformed evidence ids)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memoracle.errors import InvalidInput
from memoracle.jobs.bench import (
    LocomoReport,
    QuestionResult,
    format_report,
    repair_evidence,
    report_json,
    run_locomo,
    session_of,
    within_budget,
)
from memoracle.jobs.bench.run import parse_positions

FIXTURE = Path(__file__).parent / "fixtures" / "locomo_mini.json"
KS = (5, 10, 20)


@pytest.fixture(scope="module")
def report() -> LocomoReport:
    return run_locomo(FIXTURE, ks=KS, embedder="hash")


def _question(report: LocomoReport, sample_id: str, index: int) -> QuestionResult:
    return next(q for q in report.questions if q.sample_id == sample_id and q.index == index)


# -- evidence repair ------------------------------------------------------------------------

KNOWN = {"D8:6", "D9:17", "D11:26", "D30:5", "D9:1", "D4:4", "D4:6", "D1:1"}


@pytest.mark.parametrize(
    ("raw", "ids", "repaired", "dropped"),
    [
        (["D1:1"], ("D1:1",), 0, ()),
        (["D8:6; D9:17"], ("D8:6", "D9:17"), 1, ()),
        (["D:11:26"], ("D11:26",), 1, ()),
        (["D30:05"], ("D30:5",), 1, ()),
        (["D9:1 D4:4 D4:6"], ("D9:1", "D4:4", "D4:6"), 1, ()),
        (["D"], (), 0, ("D",)),
        (["D1:1", "D10:19"], ("D1:1",), 0, ("D10:19",)),
        (["D1:1", "D1:1", "D:1:01"], ("D1:1",), 1, ()),
        ([], (), 0, ()),
    ],
)
def test_repair_evidence(
    raw: list[str], ids: tuple[str, ...], repaired: int, dropped: tuple[str, ...]
) -> None:
    assert repair_evidence(raw, KNOWN) == (ids, repaired, dropped)


def test_session_of() -> None:
    assert session_of("conv-26", "D3:5") == "conv-26:session_3"
    assert session_of("conv-26", "D") is None


def test_within_budget_stops_at_the_first_turn_that_does_not_fit() -> None:
    assert within_budget([10, 20, 30, 5], 30) == 2
    assert within_budget([10, 20, 30, 5], 60) == 3
    assert within_budget([40, 1], 30) == 0
    assert within_budget([], 30) == 0


# -- the run --------------------------------------------------------------------------------


def test_structure(report: LocomoReport) -> None:
    assert report.ks == KS
    assert report.budget == 2000
    assert report.embedder == "hash"
    assert [c.sample_id for c in report.conversations] == ["mini-1", "mini-2"]
    assert [(c.sessions, c.turns, c.questions) for c in report.conversations] == [
        (3, 15, 6),
        (3, 15, 7),
    ]
    assert all(c.episodes == 15 for c in report.conversations)
    assert [(g.label, g.name, g.questions, g.scored) for g in report.categories] == [
        ("1", "multi-hop", 2, 2),
        ("2", "temporal", 2, 2),
        ("3", "open-domain", 3, 2),
        ("4", "single-hop", 4, 4),
        ("5", "adversarial", 2, 2),
    ]
    assert (report.overall.questions, report.overall.scored) == (11, 10)
    assert (report.everything.questions, report.everything.scored) == (13, 12)
    assert report.search_latency.n == report.recall_latency.n == 13
    assert sum(report.search_modes.values()) == 13
    assert report.ingest_warnings == 0
    for group in (*report.categories, report.overall, report.everything):
        for scores in (group.memoracle, group.baseline):
            assert set(scores.turn_recall) == set(KS)
            for k in KS:
                assert 0.0 <= scores.all_found[k] <= scores.turn_recall[k] <= 1.0
                assert scores.turn_recall[k] <= scores.any_found[k] <= 1.0
                assert 0.0 <= scores.session_recall[k] <= 1.0
            # recall@k never drops as k grows
            assert [scores.turn_recall[k] for k in KS] == sorted(scores.turn_recall[k] for k in KS)
            assert 0.0 <= scores.budget_recall <= 1.0
            assert scores.budget_tokens <= report.budget


def test_malformed_evidence_is_repaired_or_dropped(report: LocomoReport) -> None:
    assert report.evidence.repaired == 2  # "D1:5; D3:1" and "D:2:01"
    assert report.evidence.dropped == ("mini-2:D9:9",)
    assert report.evidence.unscored_questions == 1  # empty evidence, as in LoCoMo cat 3
    assert _question(report, "mini-1", 3).evidence == ("D1:5", "D3:1")
    assert _question(report, "mini-1", 3).evidence_sessions == (
        "mini-1:session_1",
        "mini-1:session_3",
    )
    assert _question(report, "mini-2", 4).evidence == ("D2:1",)
    assert _question(report, "mini-2", 1).evidence == ("D3:5",)


def test_baseline_values_we_can_reason_about(report: LocomoReport) -> None:
    # "glaze" and "finish", "bakery": words said only in the evidence turn -> ranked first.
    for sample_id, index in (("mini-1", 0), ("mini-2", 0)):
        found = _question(report, sample_id, index).baseline
        assert found.turns == {5: 1, 10: 1, 20: 1}
        assert found.sessions == {5: 1, 10: 1, 20: 1}
        assert found.budget == 1
    # 15 turns per conversation, fewer than k=20 and far below 2,000 tokens: every turn
    # sharing a word with its question is found, and in categories 1-4 each evidence turn
    # does (at least the speaker's name).
    overall = report.overall.baseline
    assert overall.turn_recall[20] == overall.all_found[20] == 1.0
    assert overall.session_recall[20] == 1.0
    assert overall.budget_recall == 1.0
    # The adversarial guitar question shares no word with "Jonas: Mostly old folk tunes…".
    assert _question(report, "mini-2", 6).baseline.turns == {5: 0, 10: 0, 20: 0}
    adversarial = report.categories[-1].baseline
    assert adversarial.turn_recall[20] == adversarial.budget_recall == 0.5


def test_memoracle_finds_a_turn_with_unique_words(report: LocomoReport) -> None:
    for sample_id, index in (("mini-1", 0), ("mini-2", 0)):
        found = _question(report, sample_id, index).memoracle
        assert found.turns[5] == 1
        assert found.budget == 1


def test_format_report(report: LocomoReport) -> None:
    text = format_report(report)
    lines = text.splitlines()
    for name in ("1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop", "1-4 overall"):
        assert any(line.startswith(name) for line in lines), name
    assert any(line.startswith("5 adversarial") for line in lines)
    assert "turn-level evidence recall@k" in text
    assert "session-level evidence recall@k" in text
    assert "inside 2000 tokens" in text
    assert "mem @10" in text and "bm25 @10" in text
    assert "2 repaired, 1 dropped (mini-2:D9:9)" in text
    assert "latency: search median" in text


def test_report_json(report: LocomoReport) -> None:
    data = report_json(report)
    assert json.loads(json.dumps(data)) == data
    assert [c["name"] for c in data["categories"]] == [
        "multi-hop",
        "temporal",
        "open-domain",
        "single-hop",
        "adversarial",
    ]
    assert data["overall"]["bm25-turns"]["budget_recall"] == 1.0
    assert set(data["overall"]["memoracle"]["turn_recall"]) == {"5", "10", "20"}
    assert "questions" not in data
    full = report_json(report, questions=True)
    assert len(full["questions"]) == 13
    json.dumps(full)


def test_limit_and_progress() -> None:
    seen: list[tuple[int, int]] = []
    small = run_locomo(
        FIXTURE,
        ks=(1, 3),
        budget=60,
        embedder="hash",
        limit=1,
        on_progress=lambda d, t: seen.append((d, t)),
    )
    assert [c.sample_id for c in small.conversations] == ["mini-1"]
    assert seen == [(i, 6) for i in range(1, 7)]
    assert small.ks == (1, 3)
    assert small.overall.baseline.budget_tokens <= 60
    assert all(q.memoracle.budget_tokens <= 60 for q in small.questions)


def test_conversations_by_position() -> None:
    """One set to tune on, another to report: `conversations` picks them by position."""
    second = run_locomo(FIXTURE, ks=(1,), embedder="hash", conversations="1")
    assert [c.sample_id for c in second.conversations] == ["mini-2"]
    both = run_locomo(FIXTURE, ks=(1,), embedder="hash", conversations="1,0-1")
    assert [c.sample_id for c in both.conversations] == ["mini-2", "mini-1"]
    assert parse_positions("0-4,7", 10) == [0, 1, 2, 3, 4, 7]


@pytest.mark.parametrize("spec", ["2", "0-2", "x", "1-0", "-1", ""])
def test_conversations_outside_the_file_are_named(spec: str) -> None:
    with pytest.raises(InvalidInput, match="conversations"):
        run_locomo(FIXTURE, embedder="hash", conversations=spec)


@pytest.mark.parametrize(
    "kwargs", [{"ks": ()}, {"ks": (0, 5)}, {"budget": 0}, {"budget": -5}, {"limit": 0}]
)
def test_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        run_locomo(FIXTURE, embedder="hash", **kwargs)  # type: ignore[arg-type]


def test_not_locomo(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput):
        run_locomo(bad, embedder="hash")
