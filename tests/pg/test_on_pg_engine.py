"""The behaviour suite on PostgreSQL: capture, remember, search and the workspace's life
(tests/test_engine.py), run unchanged with every engine on the session's server
(`on_postgres`). Left out: reading the SQLite file's bytes for a secret, and init's
report naming a file that exists."""

from __future__ import annotations

import pytest

from test_engine import (  # noqa: F401 - collected here on PostgreSQL
    test_a_due_date_is_labelled_in_the_offset_it_was_said_in,
    test_capture_many_is_all_or_nothing,
    test_capture_stores_episode_and_typed_memories,
    test_exact_duplicate_bumps_instead_of_adding,
    test_first_person_is_attributed_to_the_speaker_and_dated,
    test_forget_in_a_turn_is_scoped_to_the_speaker_and_chat,
    test_forget_in_a_turn_marks_memories_forgotten,
    test_forget_in_a_turn_prefers_the_exact_memory_and_refuses_to_guess,
    test_forget_matching_dry_run_changes_nothing,
    test_noise_is_not_stored_at_all,
    test_open_without_init_says_what_to_run,
    test_oversized_turn_is_refused_and_nothing_is_stored,
    test_questions_hypotheticals_smalltalk_stay_episodes,
    test_remember_forget_get_by_ref,
    test_same_turn_twice_changes_nothing,
    test_scope_defaults_and_validation,
    test_stats_counts,
    test_task_gets_its_due_date,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
