"""The behaviour suite on PostgreSQL: supersede, contradictions, disputes and their
lifecycle (tests/test_engine_lifecycle.py), run unchanged with every engine on the
session's server (`on_postgres`)."""

from __future__ import annotations

import pytest

from test_engine_lifecycle import (  # noqa: F401 - collected here on PostgreSQL
    test_a_clear_contradiction_supersedes_the_old_memory,
    test_a_hedged_contradiction_disputes_and_resolve_settles_it,
    test_a_replacement_keeps_the_kind_and_slot_of_what_it_replaces,
    test_a_speakers_replacement_stays_about_the_speaker,
    test_a_task_reported_done_scores_lower,
    test_resolve_refuses_what_is_not_disputed,
    test_speakers_and_owners_do_not_contradict_each_other,
    test_the_same_value_again_raises_confidence,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
