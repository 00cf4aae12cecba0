"""What is written once and shared: the rule files' checks (capture, slots and graph rules
say the same fault the same way), the prefilter's trigram index (every rule-matching
package asks it), the store's IN-list chunks, and the JSON of a value that is its fields."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoracle.capture.rules import RuleFileError, load_rules
from memoracle.graph.extract.loading import default_graph_rules, load_graph_rules
from memoracle.graph.extract.model import GraphRuleError
from memoracle.language.prefilter import GateIndex, passes, trigrams
from memoracle.lifecycle.slots import default_slots
from memoracle.lifecycle.slots.loading import load_slots
from memoracle.lifecycle.slots.model import SlotFileError
from memoracle.serialize import records
from memoracle.store.db import IN_CHUNK, in_chunks
from memoracle.types import Scope

TEXTS = [
    "I moved to Lyon last spring and we use Postgres 16 at work.",
    "My wife Anna works at Acme; my brother lives in Berlin.",
    "Я переехал в Париж, а моя сестра Мария работает в Яндексе.",
    "Je travaille chez Renault et j'habite à Nantes.",
    "Trabajo en Telefónica y vivo en Sevilla con mi marido Pablo.",
]


def test_the_gate_index_never_misses_a_passing_gate() -> None:
    gates = [("lyon",), None, ("berlin", "paris"), (), ("pos",)]
    index = GateIndex.of(gates)
    for text in TEXTS:
        lowered = text.casefold()
        wanted = {i for i, gate in enumerate(gates) if passes(gate, lowered)}
        found = index.candidates(trigrams(lowered))
        assert wanted <= set(found) and found == sorted(found)
        assert 1 in found and 3 not in found  # ungated always; an empty gate never


@pytest.mark.parametrize("code", ["en", "ru", "fr", "es"])
def test_slots_and_graph_rules_ask_the_one_index(code: str) -> None:
    slots = default_slots().language(code)
    graph = default_graph_rules().language(code)
    assert slots is not None and graph is not None
    for text in TEXTS:
        lowered = text.casefold()
        for entries, found in (
            (slots.entries, slots.candidates(lowered)),
            (graph.entries, graph.candidates(frozenset(trigrams(lowered)))),
        ):
            wanted = {i for i, (_, _, gate) in enumerate(entries) if passes(gate, lowered)}
            assert wanted <= set(found)


def _folder(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "en.toml").write_text(text, encoding="utf-8")
    return folder


def test_a_fault_reads_the_same_in_every_kind_of_rule_file(tmp_path: Path) -> None:
    cases = [
        (load_rules, RuleFileError, "capture", "rule", ""),
        (load_slots, SlotFileError, "slots", "slot", ""),
        (load_graph_rules, GraphRuleError, "graph", "rule", "[words]\n"),
    ]
    for load, error, kind, key, tables in cases:
        head = '[language]\ncode = "en"\n' + tables
        folder = _folder(tmp_path, f"{kind}-array", f"{key} = 3\n{head}")
        with pytest.raises(error, match=rf"en\.toml: \[\[{key}\]\] must be an array of tables"):
            load(folder)
        folder = _folder(tmp_path, f"{kind}-code", head.replace('"en"', '"english"'))
        with pytest.raises(error, match=r"\[language\] code must be a 2-3 letter code"):
            load(folder)


def test_in_chunks_covers_every_value_once_within_the_limit() -> None:
    values = list(range(2 * IN_CHUNK + 7))
    chunks = list(in_chunks(values))
    assert [len(chunk) for chunk, _ in chunks] == [IN_CHUNK, IN_CHUNK, 7]
    assert [v for chunk, _ in chunks for v in chunk] == values
    assert all(marks == ",".join("?" * len(chunk)) for chunk, marks in chunks)
    assert list(in_chunks([])) == []


@dataclass(frozen=True)
class _Inner:
    at: datetime
    where: Path | None


@dataclass(frozen=True)
class _Outer:
    name: str
    inner: _Inner
    counts: dict[str, int]


def test_fields_is_json_with_times_in_iso_and_paths_as_text() -> None:
    at = datetime(2026, 5, 14, 9, 30, tzinfo=UTC)
    value = _Outer("x", _Inner(at, Path("/tmp/a")), {"b": 2, "a": 1})
    out = records.fields(value)
    assert out == {
        "name": "x",
        "inner": {"at": "2026-05-14T09:30:00+00:00", "where": "/tmp/a"},
        "counts": {"b": 2, "a": 1},
    }
    assert json.loads(json.dumps(out)) == out
    assert records.fields(Scope(user="alice")) == {
        "agent": None,
        "user": "alice",
        "chat": None,
        "visibility": "private",
    }
