"""The visibility rule on PostgreSQL: tests/test_scopes.py's doors and scenarios (the
rendered files, the fallback recall and the scoped export too), run unchanged with
every engine on the session's server (`on_postgres`), and its property test — random
stores, every door asked by random requesters — with the database emptied before each
example. Left out: the checks that read the SQLite file with `sqlite3` (the repository
tests compare the SQL with `types.sees` on both backends: test_pg_repositories.py), and
the property test's nightly run per example (time: the scenarios above run it)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import empty_database
from memoracle.types import Scope
from test_scopes import (  # noqa: F401 - collected here on PostgreSQL
    OWNS,
    World,
    _doors,
    _open,
    household,
    scopes,
    stores,
    test_a_checkpoint_of_another_user_is_stored_but_not_noted,
    test_a_group_sees_the_shared_items_of_its_chat_whoever_said_them,
    test_a_private_context_sees_its_own_items_from_every_chat_and_nothing_of_others,
    test_a_scoped_export_holds_one_persons_memory_and_is_no_backup,
    test_an_unset_agent_or_user_means_the_workspaces_own,
    test_list_get_explain_and_stats_follow_the_rule,
    test_mcp_tools_keep_to_the_servers_scope,
    test_recall_never_carries_another_persons_memory,
    test_search_shows_each_person_their_own_and_a_group_its_own,
    test_the_fallback_answers_only_the_owner,
    test_the_graph_names_only_what_a_scope_may_see,
    test_the_rendered_files_are_the_owners,
    test_the_same_turn_id_from_two_people_is_two_turns,
)

pytestmark = [pytest.mark.pg, pytest.mark.usefixtures("on_postgres")]
_worlds = itertools.count()


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    own=st.sampled_from(OWNS),
    items=stores,
    requests=st.lists(scopes, min_size=1, max_size=3),
)
def test_no_door_shows_an_item_the_rule_hides_on_postgresql(
    on_postgres: str,
    tmp_path: Path,
    own: Scope,
    items: list[tuple[Scope, bool]],
    requests: list[Scope],
) -> None:
    empty_database(on_postgres)  # each example a store of its own
    world = World(_open(tmp_path / f"w{next(_worlds)}", own), items)
    try:
        for request in [*requests, Scope()]:
            _doors(world, request, tmp_path)
    finally:
        world.engine.close()
