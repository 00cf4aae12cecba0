"""The behaviour suite on PostgreSQL: search and recall: lists, fusion, slots, dates,
budget (tests/test_engine_retrieval.py), run unchanged with every engine on the
session's server (`on_postgres`). Left out: a vector BLOB corrupted in the SQLite file
with sqlite3."""

from __future__ import annotations

import pytest

from test_engine_retrieval import (  # noqa: F401 - collected here on PostgreSQL
    test_a_huge_query_is_answered,
    test_a_memory_untouched_for_a_year_is_still_found,
    test_a_non_positive_budget_is_refused,
    test_as_of_returns_what_was_active_then,
    test_common_words_search_the_newest_rows_and_rare_words_all,
    test_empty_query_is_refused_clearly,
    test_explain_says_why,
    test_model_change_makes_search_lexical_until_reindex,
    test_private_memories_never_reach_another_user_or_a_group,
    test_recall_never_exceeds_a_tiny_budget,
    test_recall_slots_dates_ids_budget_and_boost,
    test_search_finds_memories_and_turns_with_scores,
    test_shared_memories_reach_their_group,
    test_the_fresh_item_a_message_touches_comes_first_in_the_fresh_slot,
    test_the_rule_a_message_touches_comes_first_in_the_guardrail_slot,
    test_time_in_the_query_boosts_that_time,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
