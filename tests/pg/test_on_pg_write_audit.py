"""The behaviour suite on PostgreSQL: held writes — the write audit holds, confirms and
rejects, and nothing held reaches a rendered file (tests/test_write_audit.py) — run
unchanged with every engine on the session's server (`on_postgres`)."""

from __future__ import annotations

import pytest

from test_write_audit import (  # noqa: F401 - collected here on PostgreSQL
    test_a_captured_injection_is_held_out_of_memory_and_search_until_confirmed,
    test_a_line_added_to_memory_md_that_looks_like_injection_leaves_the_block_until_confirmed,
    test_an_imported_note_that_looks_like_injection_is_a_named_warning,
    test_audit_cli_lists_confirms_and_rejects,
    test_nothing_held_at_any_door_is_rendered_into_a_file_the_agent_reads,
    test_remember_refuses_a_held_text_and_the_same_text_is_the_same_held_write,
    test_text_that_only_mentions_such_things_is_stored,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
