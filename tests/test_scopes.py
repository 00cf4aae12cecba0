"""The visibility rule (docs/scopes.md) is written once, in `types.visible_to`: the store's
SQL and the Python check (`types.sees`, which the MCP server uses) are both read from it,
and they agree on every item for every request context."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest

from memoracle.engine import Engine
from memoracle.store import View
from memoracle.types import Scope, Turn, sees

Row = tuple[Any, ...]

AGENTS = (None, "a", "b")
USERS = (None, "alice", "bob")
CHATS = (None, "c1", "c2")
VISIBILITIES = ("private", "shared")
KINDS = ("fact", "guardrail")

SCOPES = [
    Scope(agent, user, chat, visibility)
    for agent, user, chat, visibility in itertools.product(AGENTS, USERS, CHATS, VISIBILITIES)
]


def test_a_shared_context_sees_only_shared_items_of_its_chat_and_no_guardrail() -> None:
    group = Scope(user="alice", chat="tg:family", visibility="shared")
    shared = Scope(user="alice", chat="tg:family", visibility="shared")
    assert sees(group, shared, "fact")
    assert not sees(group, shared, "guardrail")
    assert sees(group, shared)  # a turn has no kind
    assert not sees(group, Scope(user="alice"), "fact")  # private
    assert not sees(group, Scope(chat="tg:work", visibility="shared"), "fact")
    assert sees(Scope(user="alice"), Scope(), "fact")  # unowned
    assert not sees(Scope(user="alice"), Scope(user="bob"), "fact")
    assert not sees(Scope(agent="a"), Scope(agent="b"), "fact")


@pytest.fixture
def every_scope(engine: Engine) -> Engine:
    """A memory of each kind and a turn in each scope: 108 memories, 54 turns."""
    for n, (scope, kind) in enumerate(itertools.product(SCOPES, KINDS)):
        engine.remember(f"item {n} of {kind}", kind=kind, scope=scope)
    for n, scope in enumerate(SCOPES):
        engine.capture([Turn("user", f"turn {n}", turn_id=str(n))], scope=scope)
    return engine


def _rows(engine: Engine, table: str, where: str = "1", params: Sequence[object] = ()) -> list[Row]:
    conn = sqlite3.connect(engine.store.path)
    try:
        return conn.execute(
            f"SELECT id, agent_id, user_id, chat_id, visibility, kind FROM {table} t WHERE {where}",
            list(params),
        ).fetchall()
    finally:
        conn.close()


def test_the_sql_and_the_python_check_agree_for_every_context(every_scope: Engine) -> None:
    engine = every_scope
    memories = _rows(engine, "memories")
    turns = _rows(engine, "episodes")
    assert len(memories) == 2 * len(SCOPES) and len(turns) == len(SCOPES)
    for requester in SCOPES:
        for table, items, clause, of_memories in (
            ("memories", memories, View(requester).memory_clause("t"), True),
            ("episodes", turns, View(requester).episode_clause("t"), False),
        ):
            by_sql = {row[0] for row in _rows(engine, table, *clause)}
            by_python = {
                id_
                for id_, agent, user, chat, visibility, kind in items
                if sees(
                    requester, Scope(agent, user, chat, visibility), kind if of_memories else None
                )
            }
            assert by_sql == by_python, (table, requester)
            assert by_sql, (table, requester)  # every context sees something
