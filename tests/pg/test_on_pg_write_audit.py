"""The behaviour suite on PostgreSQL: held writes: the write audit holds, confirms and
rejects (tests/test_write_audit.py), run unchanged with every engine on the session's
server (`on_postgres`). Left out: MEMORY.md's block read back by the nightly run (a
backup first: not there yet on PostgreSQL)."""

from __future__ import annotations

import pytest

from test_write_audit import (  # noqa: F401 - collected here on PostgreSQL
    test_a_captured_injection_is_held_out_of_memory_and_search_until_confirmed,
    test_an_imported_note_that_looks_like_injection_is_a_named_warning,
    test_audit_cli_lists_confirms_and_rejects,
    test_remember_refuses_a_held_text_and_the_same_text_is_the_same_held_write,
    test_text_that_only_mentions_such_things_is_stored,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
