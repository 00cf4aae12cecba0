"""The OpenClaw session bundled for the README demo (`memoracle ingest` of the packaged file)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from importlib.resources import as_file, files

from memoracle.ingest import detect_format, read
from memoracle.types import IngestWarning, Turn


def sample_turns(warnings: list[IngestWarning]) -> list[Turn]:
    with as_file(files("memoracle") / "data" / "sample-session.jsonl") as path:
        assert detect_format(path) == "openclaw-jsonl"
        return [t for t in read(path, on_warning=warnings.append) if isinstance(t, Turn)]


def test_the_bundled_sample_parses_with_the_expected_counts(warnings: list[IngestWarning]) -> None:
    got = sample_turns(warnings)
    assert warnings == []
    assert len(got) == 30
    assert Counter((t.role, t.kind) for t in got) == {
        ("user", "message"): 14,
        ("assistant", "message"): 15,
        ("system", "compaction"): 1,
    }
    assert {t.session_id for t in got} == {"0b7e4c1a-5d2f-4e8b-9a63-2f1d8c7e5b40"}
    assert len({t.turn_id for t in got}) == 30


def test_the_sample_shows_what_the_reader_handles(warnings: list[IngestWarning]) -> None:
    got = sample_turns(warnings)
    texts = [t.text for t in got]
    everything = "\n".join(texts)
    # Metadata and envelope stripped; the envelope's time and offset kept.
    assert texts[0].startswith("Morning! I'm finally starting the home server project")
    assert got[0].at is not None and got[0].at.utcoffset() == timedelta(hours=2)
    assert got[0].speaker == "Lena"
    assert "untrusted metadata" not in everything and "[Thu 2026" not in everything
    # The edited message's old branch, thinking and tool traffic are gone.
    assert "MySQL" not in everything
    assert "postgres:16\n" not in everything and "pg_isready" in everything
    assert "Restart loop with connection refused" not in everything
    # Noise is passed through for the capture layer; the compaction summary is kept.
    assert "HEARTBEAT_OK" in texts and "NO_REPLY" in texts
    assert any(t.kind == "compaction" and "Nightly backups" in t.text for t in got)
    # It carries what the demo needs.
    for needle in (
        "never run database migrations on a Friday",
        "PostgreSQL 16",
        "by Sunday, May 17",
        "yesterday I swapped",
        "SQLSTATE[08006]",
        "Кладовка",
        "Question rapide",
        "Prefiero Caddy",
        "time for lunch",
    ):
        assert needle in everything, needle
    assert all(t.at is not None and t.at.year == 2026 for t in got)
