from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Collection
from pathlib import Path

import pytest
import zstandard
from pi_builders import Session

from memoracle.errors import InvalidInput
from memoracle.ingest import detect_format, read
from memoracle.types import IngestWarning, Turn

# The columns OpenClaw 2026.9.x uses (transcript_events, STRICT, keyed by session and seq).
SCHEMA = """
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL);
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL,
  event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT,
  PRIMARY KEY (session_id, seq)
) STRICT;
"""
OLD_SCHEMA = """
CREATE TABLE transcript_events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL,
  created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq)
);
"""


def build_store(
    path: Path,
    sessions: dict[str, list[str]],
    *,
    compress: Collection[tuple[str, int]] = (),
    schema: str = SCHEMA,
    wal: bool = False,
) -> Path:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(schema)
    zstd = zstandard.ZstdCompressor()
    for sid, lines in sessions.items():
        for seq, line in enumerate(lines, start=1):
            if (sid, seq) in compress:
                data = line.encode()
                conn.execute(
                    "INSERT INTO transcript_events (session_id, seq, event_json, created_at, "
                    "event_zstd, event_utf8_bytes) VALUES (?, ?, NULL, ?, ?, ?)",
                    (sid, seq, 1_700_000_000_000 + seq, zstd.compress(data), len(data)),
                )
            else:
                conn.execute(
                    "INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (sid, seq, line, 1_700_000_000_000 + seq),
                )
    conn.commit()
    conn.close()
    return path


def two_sessions() -> dict[str, list[str]]:
    a = Session("sess-a")
    a.user("I prefer PostgreSQL")
    kept = a.assistant("noted")
    a.user("use MySQL")  # abandoned by the edit below
    a.user("[Thu 2026-05-14 10:02 GMT+2] Use PostgreSQL 16", parent=kept)
    a.compaction("Summary: PostgreSQL 16 chosen.")
    b = Session("sess-b")
    b.user("second session " + "long text " * 200)
    b.assistant({"type": "thinking", "thinking": "hmm"}, "ok")
    return {"sess-a": a.lines(), "sess-b": b.lines()}


def fingerprint(path: Path) -> tuple[str, int, list[str]]:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "tmpdir"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    d = tmp_path / "agents" / "main" / "agent"
    d.mkdir(parents=True)
    return d


def test_reads_every_session_live_branch_and_compressed_rows(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    db = build_store(
        agent_dir / "openclaw-agent.sqlite", two_sessions(), compress={("sess-a", 5), ("sess-b", 2)}
    )
    assert detect_format(db) == "openclaw-sqlite"
    got = [t for t in read(db, on_warning=warnings.append) if isinstance(t, Turn)]
    assert [(t.session_id, t.role, t.kind, t.text[:24]) for t in got] == [
        ("sess-a", "user", "message", "I prefer PostgreSQL"),
        ("sess-a", "assistant", "message", "noted"),
        ("sess-a", "user", "message", "Use PostgreSQL 16"),
        ("sess-a", "system", "compaction", "Summary: PostgreSQL 16 c"),
        ("sess-b", "user", "message", "second session long text"),
        ("sess-b", "assistant", "message", "ok"),
    ]
    assert got[2].at is not None and got[2].at.utcoffset() is not None
    assert got[2].origin == f"{db}#sess-a:5"
    assert warnings == []


def test_the_original_is_untouched_and_the_copy_is_removed(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    db = build_store(agent_dir / "openclaw-agent.sqlite", two_sessions())
    before = fingerprint(db)
    items = read(db, on_warning=warnings.append)
    next(items)
    assert len(list(private_tmp.iterdir())) == 1  # the private copy, while reading
    list(items)
    assert fingerprint(db) == before
    assert list(private_tmp.iterdir()) == []


def test_a_wal_database_is_copied_without_leaving_files_beside_it(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    db = build_store(agent_dir / "openclaw-agent.sqlite", two_sessions(), wal=True)
    before = fingerprint(db)
    assert len([t for t in read(db, on_warning=warnings.append)]) == 6
    assert fingerprint(db) == before
    assert list(private_tmp.iterdir()) == []


def test_reads_while_the_gateway_holds_the_database_open(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    db = build_store(agent_dir / "openclaw-agent.sqlite", two_sessions(), wal=True)
    live = sqlite3.connect(db)
    try:
        line = json.dumps(
            {
                "type": "message",
                "id": "late",
                "parentId": None,
                "message": {"role": "user", "content": "written after"},
            }
        )
        live.execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
            "VALUES ('sess-c', 1, ?, 1)",
            (line,),
        )
        live.commit()  # in the WAL, not yet checkpointed
        got = [t.text for t in read(db, on_warning=warnings.append) if isinstance(t, Turn)]
    finally:
        live.close()
    assert "written after" in got


def test_closing_early_removes_the_copy(agent_dir: Path, private_tmp: Path) -> None:
    db = build_store(agent_dir / "openclaw-agent.sqlite", two_sessions())
    items = read(db, on_warning=lambda w: None)
    next(items)
    items.close()  # type: ignore[attr-defined]
    assert list(private_tmp.iterdir()) == []


def test_an_older_schema_without_compression_columns(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    db = build_store(agent_dir / "openclaw-agent.sqlite", two_sessions(), schema=OLD_SCHEMA)
    assert len(list(read(db, on_warning=warnings.append))) == 6
    assert warnings == []


def test_bad_rows_warn_and_the_rest_is_read(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    s = Session("sess-x")
    s.user("one")
    s.user("two")
    db = build_store(agent_dir / "openclaw-agent.sqlite", {"sess-x": [*s.lines(), "{broken"]})
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, "
        "event_utf8_bytes) VALUES ('sess-x', 9, NULL, 9, ?, 10)",
        (b"not zstd at all",),
    )
    conn.execute(
        "INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
        "VALUES ('sess-x', 10, NULL, 10)"
    )
    conn.commit()
    conn.close()
    got = [t.text for t in read(db, on_warning=warnings.append) if isinstance(t, Turn)]
    assert got == ["one", "two"]
    assert [w.origin for w in warnings] == [f"{db}#sess-x:4", f"{db}#sess-x:9", f"{db}#sess-x:10"]


def test_an_oversized_compressed_event_is_skipped_before_inflating(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    s = Session("sess-z")
    s.user("small")
    s.assistant("w" * 50_000)
    s.user("after")
    db = build_store(
        agent_dir / "openclaw-agent.sqlite", {"sess-z": s.lines()}, compress={("sess-z", 3)}
    )
    got = [
        t.text
        for t in read(db, on_warning=warnings.append, max_text_bytes=1_000)
        if isinstance(t, Turn)
    ]
    assert got == ["small", "after"]  # its id and parent were read from the head
    assert len(warnings) == 1
    assert "assistant" in warnings[0].message and warnings[0].origin.endswith("#sess-z:3")


def test_an_oversized_plain_event_keeps_the_branch_whole(
    agent_dir: Path, private_tmp: Path, warnings: list[IngestWarning]
) -> None:
    s = Session("sess-p")
    s.user("small")
    s.tool_result("t" * 50_000)  # not spoken: skipped without a word
    s.user("after")
    db = build_store(agent_dir / "openclaw-agent.sqlite", {"sess-p": s.lines()})
    got = list(read(db, on_warning=warnings.append, max_text_bytes=1_000))
    assert [t.text for t in got if isinstance(t, Turn)] == ["small", "after"]
    assert warnings == []


def test_not_an_openclaw_store(agent_dir: Path, private_tmp: Path) -> None:
    db = agent_dir / "other.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    with pytest.raises(InvalidInput, match="transcript_events"):
        list(read(db, on_warning=lambda w: None))
    assert list(private_tmp.iterdir()) == []


def test_a_corrupt_database_raises_invalid_input(agent_dir: Path, private_tmp: Path) -> None:
    db = agent_dir / "openclaw-agent.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + b"\x07" * 300)
    with pytest.raises(InvalidInput, match="openclaw-agent.sqlite"):
        list(read(db, on_warning=lambda w: None))
    assert list(private_tmp.iterdir()) == []


def test_progress_counts_rows(agent_dir: Path, private_tmp: Path) -> None:
    db = build_store(agent_dir / "openclaw-agent.sqlite", two_sessions())
    seen: list[tuple[int, int]] = []
    list(read(db, on_warning=lambda w: None, on_progress=lambda d, t: seen.append((d, t))))
    assert seen[-1] == (9, 9)  # rows: a header and five entries, a header and two entries
