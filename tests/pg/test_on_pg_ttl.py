"""The behaviour suite on PostgreSQL: memories with a time to live (tests/test_ttl.py),
nightly run included, run unchanged with every engine on the session's server
(`on_postgres`). Left out: the SQLite query plan."""

from __future__ import annotations

import pytest

from test_ttl import (  # noqa: F401 - collected here on PostgreSQL
    test_a_bad_duration_is_named,
    test_a_duration_is_numbers_with_units,
    test_a_held_remember_keeps_its_expiry_through_the_confirmation,
    test_a_held_write_shows_its_expiry_in_json,
    test_a_line_with_an_until_that_is_no_date_leaves_memory_md_as_it_is,
    test_an_expired_guardrail_leaves_the_recall_block,
    test_an_expiry_in_the_past_both_at_once_or_too_far_is_refused_and_nothing_stored,
    test_cli_bad_expiry_is_exit_2_and_nothing_stored,
    test_cli_remember_ttl_and_until_with_now,
    test_mcp_remember_takes_ttl_or_until_checked_by_its_schema,
    test_memory_md_shows_the_expiry_and_a_line_added_with_one_is_remembered_with_it,
    test_remember_with_a_ttl_expires_from_search_and_recall_at_once,
    test_remembered_again_the_memory_takes_the_new_expiry_with_an_audit_entry,
    test_render_and_read_edits_are_pure_over_until,
    test_said_again_after_it_expired_is_a_new_memory,
    test_the_live_clause_leaves_out_expired_memories_only_when_given_a_time,
    test_the_markdown_importer_reads_an_until_comment_as_the_expiry,
    test_the_nightly_archives_expired_memories_and_counts_them,
    test_until_a_date_keeps_it_to_the_end_of_that_day_in_the_workspace_zone,
    test_until_is_a_date_or_a_time_and_reads_back_what_format_writes,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
