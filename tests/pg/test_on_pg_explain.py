"""The behaviour suite on PostgreSQL: `explain` for every reason an item is or is not
returned (tests/test_explain.py), run unchanged with every engine on the session's
server (`on_postgres`)."""

from __future__ import annotations

import pytest

from test_explain import (  # noqa: F401 - collected here on PostgreSQL
    test_a_faded_weak_match,
    test_a_match_of_the_looser_query_the_search_did_not_run,
    test_a_memory_and_its_turn_are_one_hit,
    test_a_memory_out_of_search_by_status,
    test_a_returned_item_gives_its_rank_and_signals,
    test_a_superseded_memory_names_what_superseded_it,
    test_a_turn_held_by_the_write_audit,
    test_an_item_sharing_no_word_ranks_no_match,
    test_an_old_match_of_common_words_only,
    test_beyond_the_lists_and_the_candidates_scored,
    test_no_lexical_match_and_no_vector_yet,
    test_out_of_scope_is_no_memory_and_a_kind_filter_is_named,
    test_without_an_embedding_model_there_is_no_vector_search,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
