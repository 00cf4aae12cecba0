"""The behaviour suite on PostgreSQL: which memories a "forget …" takes
(tests/test_forget_which.py), run unchanged with every engine on the session's server
(`on_postgres`)."""

from __future__ import annotations

import pytest

from test_forget_which import (  # noqa: F401 - collected here on PostgreSQL
    settings_home,
    test_a_description_fitting_several_wholly_is_refused_too,
    test_french_chat_makes_no_candidate_of_change_or_charged,
    test_mcp_lists_them_and_forgets_all_only_with_all,
    test_said_in_conversation_it_forgets_none_and_waits_for_a_person,
    test_said_in_french_it_forgets_the_cat_and_nothing_else,
    test_spanish_gato_does_not_match_the_gate_code,
    test_the_cli_lists_them_and_forgets_all_only_when_confirmed,
    test_the_engine_refuses_several_and_names_them,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
