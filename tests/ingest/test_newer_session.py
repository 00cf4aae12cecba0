"""A transcript whose header says a session format newer than the readers know is still
read (as version 3), and the reader says so, once, at the header: turns it cannot read
must not go missing without a word."""

from __future__ import annotations

from pathlib import Path

import pytest
from pi_builders import Session
from test_openclaw_sqlite import build_store

from memoracle.ingest import read
from memoracle.types import IngestWarning, Turn


def _newer(version: object) -> Session:
    session = Session("sess-new")
    session.entries[0]["version"] = version
    session.user("I live in Oslo")
    return session


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_a_newer_session_format_is_read_and_named(tmp_path: Path, kind: str) -> None:
    session = _newer(7)
    if kind == "jsonl":
        path = session.write(tmp_path / "s.jsonl")
    else:
        path = build_store(tmp_path / "openclaw-agent.sqlite", {"sess-new": session.lines()})
    warnings: list[IngestWarning] = []
    turns = [t for t in read(path, on_warning=warnings.append) if isinstance(t, Turn)]
    assert [t.text for t in turns] == ["I live in Oslo"]
    assert len(warnings) == 1
    assert "session format version 7 is newer than the version 3" in warnings[0].message
    assert warnings[0].origin.startswith(str(path))


@pytest.mark.parametrize("version", [3, 1, "4", None])
def test_known_or_unreadable_versions_say_nothing(tmp_path: Path, version: object) -> None:
    warnings: list[IngestWarning] = []
    list(read(_newer(version).write(tmp_path / "s.jsonl"), on_warning=warnings.append))
    assert warnings == []
