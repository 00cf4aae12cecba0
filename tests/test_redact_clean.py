"""The cleaner behind `memoracle redact`: what a redaction removed is learned and found
again as a copy elsewhere (whole words, any case), JSON lines keep their bytes but for
the strings cleaned, MEMORY.md items keep their tags; and the store's audit log is
append-only again after a redaction rewrote it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.jobs.scrub.clean import Cleaner, removed
from memoracle.store import Store
from memoracle.store.scrub import PLACES


def test_what_was_removed_is_the_secret_alone() -> None:
    assert removed("my password is hunter2x.", "my password is [REDACTED:password].") == [
        ("hunter2x", "[REDACTED:password]")
    ]
    assert removed("db postgres://app:s3cret9@db ok", "db postgres://app:[X]@db ok") == [
        ("s3cret9", "[X]")
    ]
    # Too short, or a plain short word: not looked for elsewhere.
    assert removed("token: abc", "token: [X]") == []
    assert removed("token: banana", "token: [X]") == []


def test_a_copy_is_replaced_as_a_whole_word_in_any_case() -> None:
    cleaner = Cleaner()
    assert cleaner.learn("The wifi password: Tr0ub4dor9x").text.endswith("[REDACTED:password]")
    done = cleaner.clean("tr0ub4dor9x is the value")
    assert done.text == "[REDACTED:password] is the value" and done.kinds == ("copy",)
    assert cleaner.clean("xTr0ub4dor9x and Tr0ub4dor9xy").text == "xTr0ub4dor9x and Tr0ub4dor9xy"


def test_json_lines_keep_their_bytes_and_tags_their_place() -> None:
    cleaner = Cleaner()
    cleaner.learn("password: Tr0ub4dor9x")
    compact = '{"op":"entity","key":"tr0ub4dor9x","name":"Tr0ub4dor9x","n":1}'
    assert cleaner.clean_json(compact).text == (
        '{"op":"entity","key":"[REDACTED:password]","name":"[REDACTED:password]","n":1}'
    )
    spaced = '{"text": "café Tr0ub4dor9x", "kind": "fact"}'
    assert cleaner.clean_json(spaced).text == '{"text": "café [REDACTED:password]", "kind": "fact"}'
    untouched = '{"b": 1,   "a": "x"}'
    assert cleaner.clean_json(untouched).text == untouched
    line = "- Wifi: Tr0ub4dor9x <!-- m_12 --> <!-- until 2026-12-11 -->"
    assert cleaner.clean_line(line).text == (
        "- Wifi: [REDACTED:secret] <!-- m_12 --> <!-- until 2026-12-11 -->"
    )


def test_the_audit_log_is_append_only_again_after_a_rewrite(
    tmp_path: Path, clock: FixedClock
) -> None:
    store = Store.open(tmp_path / "s.db", now=clock.now())
    with store.transaction():
        store.audit.append(at=clock.now(), actor="x", action="merge", detail={"text": "a"})
    [audit] = [p for p in PLACES if p.table == "audit"]
    store.scrub.rewrite({audit: [(1, '{"text": "b"}')]})
    assert store.audit.entries()[0].detail == {"text": "b"}
    store.close()
    conn = sqlite3.connect(tmp_path / "s.db")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("UPDATE audit SET actor = 'y'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM audit")
    conn.close()
