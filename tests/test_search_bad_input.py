"""Awkward queries get an answer or a clear word, never a traceback: a 100 KB query
(cut to its start, still answered), a script nothing is written in, an empty store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from memoracle.cli import main
from memoracle.engine import Engine
from memoracle.types import Turn

AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


def _filled(engine: Engine) -> Engine:
    engine.capture(
        [
            Turn("user", "My sister Anna lives in Lyon.", AT, "s", "1", speaker="Bob"),
            Turn("user", "I adopted a puppy named Biscuit.", AT, "s", "2", speaker="Bob"),
        ]
    )
    return engine


def test_a_100_kb_query_is_cut_and_answered(engine: Engine) -> None:
    query = "Where does Anna live? " + "blah " * 20_000
    outcome = _filled(engine).search(query)
    assert outcome.hits and outcome.hits[0].turn_ids == ("1",)
    assert engine.recall(query, budget=200).tokens <= 200


def test_a_script_nothing_is_written_in_gets_nothing_and_says_why(engine: Engine) -> None:
    outcome = _filled(engine).search("ᚠᚢᚦᚨᚱᚲ ᚷᚹᚺ")  # runes
    assert outcome.hits == () and outcome.no_match is not None


def test_an_empty_store_answers_nothing_and_says_why(engine: Engine) -> None:
    outcome = engine.search("Where does Anna live?")
    assert outcome.hits == () and outcome.no_match is not None
    assert engine.recall("Where does Anna live?").note == outcome.no_match


def test_the_cli_answers_a_100_kb_query(tmp_path: Path) -> None:
    runner = CliRunner()
    home = ["--home", str(tmp_path / "h"), "--set", "embedding.model=hash"]
    assert runner.invoke(main, [*home, "init"]).exit_code == 0
    assert runner.invoke(main, [*home, "remember", "My sister Anna lives in Lyon."]).exit_code == 0
    query = "Anna " + "x" * 100_000
    result = runner.invoke(main, [*home, "search", query, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["hits"]
