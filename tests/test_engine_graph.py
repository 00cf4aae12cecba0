"""The knowledge graph through the engine: read at capture, caught up at night, a broken
ontology file named and never in the way of capture, and the files written from it."""

from __future__ import annotations

import json
import sqlite3

import pytest

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.errors import NotFound
from memoracle.jobs import nightly


def test_remembered_memories_feed_the_graph_and_any_name_finds_an_entity(
    engine: Engine,
) -> None:
    engine.remember("My wife Anna works at Acme.")
    engine.remember("Anna's sister Lea lives in Lyon.")
    view = engine.graph_show("my wife Anna")
    assert (view.entity.key, view.entity.type, view.entity.memories) == ("anna", "Person", 2)
    assert {(r.source, r.relation, r.target) for r in view.relations} == {
        ("anna", "family_of", "user"),
        ("anna", "works_at", "acme"),
        ("lea", "family_of", "anna"),
    }
    assert engine.graph_show("Anna's").entity.id == view.entity.id
    assert {e.key for e in engine.graph_entities(type_="Location")} == {"lyon"}
    with pytest.raises(NotFound, match="No entity named 'Bob'"):
        engine.graph_show("Bob")
    engine.forget(view.memories[0].ref)  # the sister: Lea's relations go with it
    assert ("lea", "lives_in", "lyon") not in {
        (r.source, r.relation, r.target) for r in engine.graph_relations()
    }


def test_a_broken_ontology_file_never_stops_capture_and_the_night_names_it(
    engine: Engine, clock: FixedClock
) -> None:
    (engine.settings.home / "ontology.yaml").write_text("entity_types:\n  Robot: [oops\n")
    memory, _ = engine.remember("Marc works at Acme.")
    assert engine._store.graph.unread(limit=5) == [memory.id]
    report = nightly.run_nightly(engine)
    assert len(report.problems) == 1 and report.problems[0].startswith("graph: ")
    assert "ontology.yaml:3: not valid YAML" in report.problems[0]
    (engine.settings.home / "ontology.yaml").unlink()
    engine._ontology = None  # a new process would read the file again
    assert nightly.run_nightly(engine).steps["graph"]["read"] == 1
    assert [e.key for e in engine.graph_entities(type_="Organization")] == ["acme"]


def test_memories_stored_before_the_graph_are_read_at_night_and_exported(
    engine: Engine, clock: FixedClock
) -> None:
    engine.remember("We use Postgres for billing.")
    with sqlite3.connect(engine.settings.db_path) as db:  # as a store from before the graph
        for table in ("entity_memories", "relation_memories", "graph_read"):
            db.execute(f"DELETE FROM {table}")
    assert engine.graph_entities() == []
    report = nightly.run_nightly(engine)
    assert report.steps["graph"]["read"] == 1
    folder = engine.settings.files_dir / "knowledge-graph"
    entities = [json.loads(line) for line in (folder / "entities.jsonl").read_text().splitlines()]
    assert {e["key"] for e in entities} == {"postgresql", "user"}
    relations = (folder / "relations.jsonl").read_text().splitlines()
    assert [json.loads(r) for r in relations] == [
        {"source": "user", "relation": "uses", "target": "postgresql", "memories": 1}
    ]
    entities_md = (engine.settings.files_dir / "reference" / "entities.md").read_text()
    assert "## Infrastructure\n- **Postgres** (`postgresql`), 1 memory" in entities_md
    assert nightly.run_nightly(engine).steps["graph"]["read"] == 0


def test_an_entity_named_often_gets_a_topic_file_and_a_pointer_in_memory_md(
    engine: Engine, clock: FixedClock
) -> None:
    for n in range(5):
        engine.remember(f"My wife Anna booked table {n} at the bistro.")
        clock.advance(hours=1)
    nightly.run_nightly(engine)
    topic = engine.settings.files_dir / "memory" / "topics" / "anna.md"
    lines = topic.read_text().splitlines()
    assert (
        lines[0] == "# Anna"
        and lines[4] == "- My wife Anna booked table 4 at the bistro. <!-- m_5 -->"
    )
    memory_md = (engine.settings.files_dir / "MEMORY.md").read_text()
    assert "- Anna → memory/topics/anna.md" in memory_md
    assert nightly.run_nightly(engine).memory_md.changed is False  # type: ignore[union-attr]
