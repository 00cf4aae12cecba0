"""bench/redaction_set.py, the harness that scores redaction on a labelled JSONL corpus,
on a tiny corpus made here: a secret `redact` finds, one it does not (a password said
with no label), a benign sentence it leaves, and code it alters. The harness must tell
them apart per text and, through the doors, find the unfound secret in the stores'
files and outputs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import redaction_doors  # noqa: E402
import redaction_set  # noqa: E402
from redaction_doors import run_doors  # noqa: E402
from redaction_set import CorpusError, leaked, load_cases, score_texts  # noqa: E402

FOUND = "Zq7marmot41"
UNFOUND = "tarantula"  # an ordinary word: no rule may ever take it from this sentence
CASES = [
    {"id": "s1", "lang": "en", "shape": "label", "kind": "password",
     "turns": [f"my password is {FOUND}"], "needles": [FOUND]},
    {"id": "s2", "lang": "en", "shape": "unlabelled", "kind": "password",
     "turns": ["I like the word", {"role": "user", "text": f"{UNFOUND} best"}],
     "needles": [UNFOUND]},
    {"id": "b1", "lang": "es", "shape": "prose", "kind": "benign",
     "turns": ["La reunión está prevista para el martes."], "needles": []},
]  # fmt: skip


def _corpus(tmp_path: Path, cases: list[dict[str, object]]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases) + "\n", encoding="utf-8")
    return path


def test_per_text_counts_leaks_and_alterations(tmp_path: Path) -> None:
    cases = load_cases(_corpus(tmp_path, CASES))
    score = score_texts(cases)
    assert (score.secrets, score.benign, score.texts) == (2, 1, 4)
    assert [c.id for c, _ in score.leaks] == ["s2"]
    assert score.altered == []
    lines = redaction_set.text_report(cases, score, show=0)
    assert "per text: secrets leaked 1 of 2; benign altered 0 of 1" in lines[1]
    assert "    unlabelled: 1 of 1" in lines
    assert not any(UNFOUND in line for line in lines)  # aggregate counts only by default
    assert any(UNFOUND in line for line in redaction_set.text_report(cases, score, show=1))


def test_an_altered_benign_case_is_counted(tmp_path: Path) -> None:
    benign = {"id": "b2", "lang": "en", "shape": "code", "kind": "benign",
              "turns": ["password: Kestrel99"], "needles": []}  # fmt: skip
    score = score_texts(load_cases(_corpus(tmp_path, [benign])))
    assert [c.id for c, _ in score.altered] == ["b2"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{", "corpus.jsonl:1: not JSON"),
        ('{"id": "x", "lang": "en", "shape": "s", "kind": "k", "turns": ["a"]}', "'needles'"),
        ('{"id": "x", "lang": "en", "shape": "s", "kind": "k", "turns": [], "needles": ["a"]}',
         "'turns'"),
        ('{"id": "x", "lang": "en", "shape": "s", "kind": "benign", "turns": ["a"],'
         ' "needles": ["a"]}', "a benign case has no needles"),
        ('{"id": "x", "lang": "en", "shape": "s", "kind": "k", "turns": [3], "needles": ["a"]}',
         "turns[0]"),
    ],
)  # fmt: skip
def test_a_bad_line_names_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_cases(path)


def test_a_short_needle_counts_only_as_a_token_of_its_own() -> None:
    assert leaked("hash ab4821cd, id 14821", ["4821"]) == []
    assert leaked("code 4821#", ["4821"]) == ["4821"]
    assert leaked("the key Kx9pel!x", ["Kx9pel!x"]) == ["Kx9pel!x"]


@pytest.mark.slow
def test_the_doors_find_what_redaction_missed(tmp_path: Path) -> None:
    cases = load_cases(_corpus(tmp_path, CASES))
    score = run_doors(cases, tmp_path / "work")
    leaked = {case for _, _, case in score.leaks}
    assert leaked == {"s2"}
    doors = {door for door, _, _ in score.leaks}
    assert doors == set(redaction_doors.DOORS)
    places = {place for _, place, _ in score.leaks}
    assert {"database", "database (sql)", "backup", "export", "search"} <= places
    assert score.altered == set()
