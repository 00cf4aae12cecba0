"""The behaviour suite on PostgreSQL: the lexical, vector and hybrid search modes
(tests/test_search_modes.py), run unchanged with every engine on the session's server
(`on_postgres`)."""

from __future__ import annotations

import pytest

from test_search_modes import (  # noqa: F401 - collected here on PostgreSQL
    test_a_lexical_only_search_finds_nothing_by_meaning,
    test_lexical_only_uses_no_vector_and_vector_only_no_word,
    test_the_cli_flags,
    test_vector_only_without_a_model_and_an_unknown_mode_are_refused,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
