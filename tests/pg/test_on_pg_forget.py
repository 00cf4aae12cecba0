"""The behaviour suite on PostgreSQL: forget means forget
(tests/test_forget_means_forget.py), run unchanged with every engine on the session's
server (`on_postgres`). Left out: the nightly dry run (it works on a scratch copy of the
SQLite file; a server refuses one)."""

from __future__ import annotations

import pytest

from test_forget_means_forget import (  # noqa: F401 - collected here on PostgreSQL
    test_a_forget_that_repeats_the_fact_leaves_with_it,
    test_forget_by_id_hides_the_turns_through_the_cli_and_mcp,
    test_in_every_language_the_turn_goes_with_the_memory,
    test_later_turns_that_only_repeat_it_leave_too_but_not_those_saying_more,
    test_restore_brings_the_memory_and_its_turns_back,
    test_the_rendered_files_and_the_fallback_leave_it_out,
    test_the_reported_case_the_raw_turn_leaves_search_and_recall,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
