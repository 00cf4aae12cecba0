"""`memoracle bench capture` and `bench lifecycle`: labelled sets scored the documented
way, bad files named by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.errors import InvalidInput
from memoracle.jobs.bench.capture_set import read_cases, run_capture_set
from memoracle.jobs.bench.lifecycle_set import read_scenarios, run_lifecycle_set

CASES = [
    {
        "id": "a",
        "lang": "en",
        "role": "user",
        "said_at": "2025-11-03T10:00:00+00:00",
        "text": "I live in Lyon.",
        "category": "self-fact",
        "expected": [{"kind": "fact", "subject": "user", "value": "Lyon"}],
    },
    {
        "id": "b",
        "lang": "en",
        "role": "user",
        "said_at": "2025-11-03T10:00:00+00:00",
        "text": "ok thanks!",
        "category": "acknowledgement",
        "expected": [],
    },
    {
        "id": "c",
        "lang": "en",
        "role": "user",
        "said_at": "2025-11-03T10:00:00+00:00",
        "text": "The report is due on the 17th.",
        "category": "task",
        "expected": [{"kind": "task", "subject": "user", "value": "report", "date": "2025-11-17"}],
    },
    {
        "id": "d",
        "lang": "en",
        "role": "user",
        "said_at": "2025-11-03T10:00:00+00:00",
        "text": "zorbly flimflam wobble",
        "category": "self-fact",
        "expected": [{"kind": "fact", "subject": "user", "value": "Quux"}],
    },
]

SCENARIOS = [
    {
        "id": "move",
        "lang": "en",
        "topic": "residence",
        "turns": [
            {"at": "2025-01-05T10:00:00+00:00", "text": "I live in Paris."},
            {"nightly": True},
            {"at": "2025-03-05T10:00:00+00:00", "text": "I live in Lyon now."},
        ],
        "checks": {
            "active": ["Lyon"],
            "not_active": ["Paris"],
            "ask": {"question": "where do I live?", "answer": "Lyon"},
        },
    },
    {
        "id": "never",
        "lang": "en",
        "topic": "residence",
        "turns": [{"at": "2025-01-05T10:00:00+00:00", "text": "I live in Paris."}],
        "checks": {"active": ["Berlin"], "not_active": ["Paris"]},
    },
]


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_capture_set_counts_found_typed_dated_precision_and_noise(tmp_path: Path) -> None:
    report = run_capture_set(_write(tmp_path / "set.jsonl", CASES))
    t = report.overall
    assert (t.cases, t.expected, t.found, t.quiet_cases, t.noisy) == (4, 3, 2, 1, 0)
    assert (t.with_date, t.dated) == (1, 1)
    assert t.memories >= 2 and t.right == 2
    assert [m.id for m in report.misses] == ["d"]
    assert report.to_json()["overall"]["recall"] == round(2 / 3, 3)


def test_lifecycle_set_checks_the_end_state(tmp_path: Path) -> None:
    report = run_lifecycle_set(_write(tmp_path / "set.jsonl", SCENARIOS))
    by_id = {o.id: o for o in report.outcomes}
    assert by_id["move"].failed == [] and by_id["move"].checks == 3
    assert by_id["never"].failed == ["active 'Berlin'", "not_active 'Paris'"]
    assert report.to_json()["right"] == 1


JOB = "first week at Zalando done-ish, the onboarding is chaos"


def test_lifecycle_set_measures_capture_as_it_ships_when_learned(tmp_path: Path) -> None:
    # A statement no capture rule reads; the learned decision keeps it (the use model).
    job = {
        "id": "job",
        "lang": "en",
        "topic": "employer",
        "turns": [{"at": "2025-01-05T10:00:00+00:00", "text": JOB}],
        "checks": {"active": ["Zalando"]},
    }
    path = _write(tmp_path / "set.jsonl", [job])
    rules = run_lifecycle_set(path, embedder="use")
    learned = run_lifecycle_set(path, embedder="use", learned=True)
    assert rules.outcomes[0].failed == ["active 'Zalando'"] and learned.outcomes[0].failed == []


def test_lifecycle_set_turns_the_pair_model_on_only_when_asked(tmp_path: Path) -> None:
    # A change no slot or meaning rule reads; the pair model (off by default) supersedes.
    landline = {
        "id": "landline",
        "lang": "en",
        "topic": "home",
        "turns": [
            {"at": "2026-03-02T09:00:00+00:00", "text": "I have a landline at home."},
            {
                "at": "2026-03-05T09:00:00+00:00",
                "text": "We cancelled the landline, mobiles only now.",
            },
        ],
        "checks": {"not_active": ["a landline at home"]},
    }
    path = _write(tmp_path / "set.jsonl", [landline])
    shipped = run_lifecycle_set(path, embedder="use", learned=True)
    paired = run_lifecycle_set(path, embedder="use", learned=True, pair_model=True)
    assert shipped.outcomes[0].failed and paired.outcomes[0].failed == []


@pytest.mark.parametrize("read", [read_cases, read_scenarios])
def test_a_bad_line_is_named(tmp_path: Path, read: object) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"bad\.jsonl:1: not a"):
        read(path)  # type: ignore[operator]


def test_the_commands_print_and_json(tmp_path: Path) -> None:
    cases = _write(tmp_path / "c.jsonl", CASES)
    scenarios = _write(tmp_path / "s.jsonl", SCENARIOS)
    out = CliRunner().invoke(main, ["bench", "capture", str(cases), "--misses"])
    assert out.exit_code == 0, out.output
    assert "recall" in out.output and "missing  fact: Quux" in out.output
    out = CliRunner().invoke(main, ["bench", "lifecycle", str(scenarios), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["right"] == 1
    bad = CliRunner().invoke(main, ["bench", "lifecycle", str(tmp_path / "missing.jsonl")])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


STRICT = [
    {  # a task due the next March, expected at the month's granularity: strict
        "id": "s1",
        "lang": "en",
        "role": "user",
        "said_at": "2026-12-07T10:00:00+00:00",
        "text": "Need to renew my passport before March.",
        "category": "task",
        "expected": [{"kind": "task", "subject": "user", "value": "passport", "date": "2027-03"}],
    },
    {  # the words found, the kind wrong: not strict, and listed as wrong
        "id": "s2",
        "lang": "en",
        "role": "user",
        "said_at": "2026-12-07T10:00:00+00:00",
        "text": "Need to renew my passport before March.",
        "category": "task",
        "expected": [{"kind": "event", "subject": "user", "value": "passport"}],
    },
    {  # the kind right, the year wrong: not strict
        "id": "s3",
        "lang": "en",
        "role": "user",
        "said_at": "2026-12-07T10:00:00+00:00",
        "text": "I moved to Lyon in March.",
        "category": "event",
        "expected": [{"kind": "event", "subject": "user", "value": "Lyon", "date": "2025"}],
    },
    {  # a memory that matches nothing expected: noise in its category
        "id": "s4",
        "lang": "en",
        "role": "user",
        "said_at": "2026-12-07T10:00:00+00:00",
        "text": "I live in Oslo.",
        "category": "self",
        "expected": [{"kind": "fact", "subject": "user", "value": "Bergen"}],
    },
]


def test_capture_set_scores_kind_and_date_strictly_and_noise_per_category(
    tmp_path: Path,
) -> None:
    report = run_capture_set(_write(tmp_path / "strict.jsonl", STRICT))
    t = report.overall
    assert (t.expected, t.found, t.strict) == (4, 3, 1)
    by = report.to_json()["by_category"]
    assert by["task"]["strict_recall"] == 0.5 and by["task"]["noise_share"] == 0.0
    assert by["event"]["strict_recall"] == 0.0 and by["self"]["noise_share"] == 1.0
    wrong = {m.id: m.wrong for m in report.misses}
    assert wrong["s2"] == ("event undated: passport (made task ['2027-03-01'])",)
    assert wrong["s3"] == ("event 2025: Lyon (made event ['2026-03-01'])",)
    assert "strict" in report.format() and "extra" in report.format()
    assert "3 case(s) with a miss, an extra memory or a wrong kind or date" in report.format()
