"""The canary probe: canary.json read strictly and appended atomically, the probe over
a real engine, and when its pass ratio warns."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.jobs import canary
from memoracle.jobs.canary import Canary, CanaryResult, ProbeReport

ENTRY = {"query": "q", "expect": "e", "added_at": "2026-05-15T09:30:00+00:00"}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "home" / canary.CANARY_FILE


def _write(path: Path, body: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")


def test_added_canaries_load_back_in_order(path: Path, clock: FixedClock) -> None:
    first = canary.add(path, "When did the fleet project start?", "May 15", now=clock.now())
    clock.advance(days=1)
    second = canary.add(path, "  Where  is the NAS? ", "hall closet", now=clock.now())

    assert canary.load(path) == [first, second]
    assert second == Canary("Where is the NAS?", "hall closet", clock.now())
    assert json.loads(path.read_text(encoding="utf-8"))[1] == {
        "query": "Where is the NAS?",
        "expect": "hall closet",
        "added_at": "2023-05-09T13:56:00+00:00",
    }
    assert [p.name for p in path.parent.iterdir()] == [canary.CANARY_FILE]  # no temp file


def test_add_keeps_the_other_entries_as_they_are(path: Path, clock: FixedClock) -> None:
    _write(path, [{**ENTRY, "note": "kept"}])

    canary.add(path, "q2", "e2", now=clock.now())

    assert json.loads(path.read_text(encoding="utf-8"))[0] == {**ENTRY, "note": "kept"}


def test_no_file_means_no_canaries(path: Path) -> None:
    assert canary.load(path) == []


def test_a_file_that_is_not_json_names_line_and_column(path: Path, clock: FixedClock) -> None:
    path.parent.mkdir(parents=True)
    path.write_text('[\n  {"query": "q",\n   "expect": }\n]\n', encoding="utf-8")

    with pytest.raises(InvalidInput, match=r"canary\.json: not valid JSON at line 3, column 14"):
        canary.load(path)
    with pytest.raises(InvalidInput, match="line 3, column 14"):
        canary.add(path, "q", "e", now=clock.now())


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"query": "q"}, "expected a JSON list"),
        ([ENTRY, "just a string"], r"entry \[1\] is a str, not an object"),
        ([ENTRY, {"query": "q", "added_at": ENTRY["added_at"]}], r'entry \[1\] has no "expect"'),
        ([{**ENTRY, "query": 42}], r'entry \[0\]: "query" must be a non-empty string, not 42'),
        ([{**ENTRY, "expect": "  "}], r'entry \[0\]: "expect" must be a non-empty string'),
        ([{**ENTRY, "added_at": "last week"}], r'entry \[0\]: "added_at" must be an ISO 8601'),
    ],
)
def test_a_bad_entry_names_its_index_and_field(path: Path, body: object, said: str) -> None:
    _write(path, body)

    with pytest.raises(InvalidInput, match=said) as caught:
        canary.load(path)
    assert str(path) in str(caught.value)


def test_a_naive_added_at_is_utc(path: Path) -> None:
    _write(path, [{**ENTRY, "added_at": "2026-05-15T09:30"}])

    assert canary.load(path)[0].added_at.isoformat() == "2026-05-15T09:30:00+00:00"


@pytest.mark.parametrize(("query", "expect"), [("", "May 15"), ("When?", " \n"), ("?", "x")])
def test_add_refuses_an_empty_query_or_expected_text(
    path: Path, clock: FixedClock, query: str, expect: str
) -> None:
    with pytest.raises(InvalidInput, match="is empty"):
        canary.add(path, query, expect, now=clock.now())
    assert not path.exists()


def test_add_refuses_a_duplicate(path: Path, clock: FixedClock) -> None:
    canary.add(path, "When did the fleet project start?", "May 15", now=clock.now())
    before = path.read_bytes()

    with pytest.raises(InvalidInput, match=r"entry \[0\] already asks"):
        canary.add(path, "when did the  fleet project start?", "may 15", now=clock.now())
    assert path.read_bytes() == before
    # The same question with another expected answer is another canary.
    canary.add(path, "When did the fleet project start?", "2026", now=clock.now())
    assert len(canary.load(path)) == 2


def test_probe_passes_when_the_expected_text_is_found(engine: Engine, clock: FixedClock) -> None:
    fleet, _ = engine.remember("The fleet deployment project started on May 15, 2026.")
    engine.remember("The NAS sits in the hall closet.")
    clock.advance(days=3)
    canaries = [
        Canary("When did the fleet deployment project start?", "may  15, 2026", clock.now()),
        Canary("Where is the NAS?", "in the garage", clock.now()),
    ]

    report = canary.probe(engine, canaries)

    assert report.results == (
        CanaryResult(canaries[0].query, canaries[0].expect, True, fleet.ref, 1),
        CanaryResult(canaries[1].query, canaries[1].expect, False),
    )
    assert (report.passed, report.total, report.ratio, report.warn) == (1, 2, 0.5, True)
    assert report.threshold == engine.settings.health.canary_warn_ratio


def test_probe_changes_no_memory(engine: Engine, clock: FixedClock) -> None:
    fleet, _ = engine.remember("The fleet deployment project started on May 15, 2026.")
    clock.advance(days=30)
    before = engine.get(fleet.ref)

    canary.probe(engine, [Canary("When did the fleet project start?", "May 15", clock.now())])

    # Recall would have restarted its decay (last_accessed_at) and raised its activation.
    assert engine.get(fleet.ref) == before


def test_no_canaries_no_ratio_no_warning(engine: Engine) -> None:
    report = canary.probe(engine, [])

    assert (report.total, report.ratio, report.warn) == (0, None, False)
    assert report.to_json()["ratio"] is None


@pytest.mark.parametrize(("passed", "warn"), [(7, False), (6, True), (10, False), (0, True)])
def test_warns_under_the_threshold(passed: int, warn: bool) -> None:
    results = tuple(CanaryResult(f"q{i}", "e", i < passed) for i in range(10))

    report = ProbeReport(results, threshold=0.7)

    assert (report.passed, report.ratio, report.warn) == (passed, passed / 10, warn)
    assert report.to_json()["warn"] is warn


def test_remove_by_number_or_query_keeps_the_rest_and_a_backup(path: Path) -> None:
    _write(path, [{**ENTRY, "note": "kept"}, {**ENTRY, "query": "Where is the NAS?"}])
    before = path.read_text(encoding="utf-8")
    nas = canary.load(path)[1]

    assert canary.remove(path, "  where is the  NAS? ") == (2, nas)

    assert json.loads(path.read_text(encoding="utf-8")) == [{**ENTRY, "note": "kept"}]
    assert path.with_name(canary.BACKUP_FILE).read_text(encoding="utf-8") == before
    assert canary.remove(path, "1")[0] == 1
    assert canary.load(path) == []


def test_remove_dry_run_writes_nothing(path: Path) -> None:
    _write(path, [ENTRY])
    before = path.read_text(encoding="utf-8")

    assert canary.remove(path, "1", dry_run=True)[0] == 1

    assert path.read_text(encoding="utf-8") == before
    assert not path.with_name(canary.BACKUP_FILE).exists()


@pytest.mark.parametrize(
    ("which", "said"),
    [
        ("3", "no canary 3 (the file holds 2)"),
        ("0", "no canary 0"),
        ("x", "no canary asks 'x'"),
        ("q", "canaries 1, 2 all ask 'q'"),
    ],
)
def test_remove_refuses_what_names_no_single_canary(path: Path, which: str, said: str) -> None:
    _write(path, [ENTRY, {**ENTRY, "expect": "other"}])
    before = path.read_text(encoding="utf-8")

    with pytest.raises(InvalidInput, match=re.escape(said)):
        canary.remove(path, which)

    assert path.read_text(encoding="utf-8") == before


def test_canary_list_and_remove_from_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def run(*args: str, code: int = 0) -> str:
        result = CliRunner().invoke(main, ["--home", str(home), *args])
        assert result.exit_code == code, result.output
        return result.output

    run("init")
    assert "no canary in" in run("canary", "list")
    run("canary", "add", "staging database", "--expect", "db2")
    run("canary", "add", "where is the NAS?", "--expect", "hall closet")
    listed = run("canary", "list")
    assert listed.startswith("1. 'staging database' expects 'db2'")
    assert "\n2. 'where is the NAS?' expects 'hall closet'" in listed
    assert "would remove canary 1" in run("canary", "remove", "1", "--dry-run")
    assert run("canary", "list") == listed
    assert "removed canary 1: 'staging database'" in run("canary", "remove", "staging database")
    body = json.loads(run("canary", "list", "--json"))
    assert [c["query"] for c in body["canaries"]] == ["where is the NAS?"]
    assert "no canary 5" in run("canary", "remove", "5", code=1)
