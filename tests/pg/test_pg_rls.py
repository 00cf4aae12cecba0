"""Row-level security, the second wall (docs/fleet.md#roles-and-policies): a database
role given agent A's rows cannot read agent B's, even with hand-written SQL, and cannot
write rows in B's name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pgharness import MISSING, SKIP_REASON, PgServer

from memoracle.clock import FixedClock
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn

pytestmark = [pytest.mark.pg, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]
psycopg = pytest.importorskip("psycopg", reason=SKIP_REASON)


def _memory(text: str, clock: FixedClock, scope: Scope) -> NewMemory:
    return NewMemory(
        kind="fact",
        text=text,
        layer="semantic",
        source="capture",
        observed_at=clock.now(),
        content_hash=content_hash(text),
        scope=scope,
    )


@pytest.fixture
def fleet(pg_server: PgServer, pg_url: str, clock: FixedClock) -> Iterator[dict[str, Any]]:
    """A store holding agent a's and agent b's rows (a memory with its provenance,
    slot, audit entry and vector; a turn), written by the owner; roles `agent_a` (all of
    a's rows) and `agent_a_bob` (only bob's rows of a)."""
    from memoracle.store.postgres import PgStore

    store = PgStore.open(pg_url, now=clock.now())
    ids: dict[str, Any] = {}
    with store.transaction():
        for agent, user in (("a", "alice"), ("a", "bob"), ("b", "alice")):
            scope = Scope(agent, user)
            text = f"secret of {agent} {user}"
            mid = store.memories.insert(_memory(text, clock, scope), now=clock.now())
            eid = store.episodes.insert(
                Turn("user", text, turn_id=f"{agent}{user}"),
                at=clock.now(),
                now=clock.now(),
                scope=scope,
            )
            store.memories.add_provenance(mid, now=clock.now(), episode_id=eid)
            store.memories.set_slot(mid, "user", "secret", text, hedged=False, negated=False)
            store.audit.append(at=clock.now(), actor="test", action="add", memory_id=mid)
            store.index.put_vectors([(content_hash(text), "m", 3, bytes(12))], now=clock.now())
            ids[f"{agent}:{user}"] = mid
            ids[f"turn {agent}:{user}"] = eid
    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute("CREATE ROLE agent_a LOGIN PASSWORD 'pw-a'")
        admin.execute("CREATE ROLE agent_a_bob LOGIN PASSWORD 'pw-ab'")
    store.grant_agent("agent_a", agent="a")
    store.grant_agent("agent_a_bob", agent="a", user="bob")
    store.close()
    yield {
        "ids": ids,
        "a": pg_server.url(database, user="agent_a", password="pw-a"),
        "a_bob": pg_server.url(database, user="agent_a_bob", password="pw-ab"),
    }
    with psycopg.connect(pg_server.url(), autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {database} WITH (FORCE)")
        admin.execute("DROP ROLE agent_a")
        admin.execute("DROP ROLE agent_a_bob")


def _texts(url: str, query: str) -> list[str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return sorted(str(r[0]) for r in conn.execute(query))


def test_a_role_for_agent_a_cannot_read_agent_bs_rows_with_hand_written_sql(
    fleet: dict[str, Any],
) -> None:
    a = fleet["a"]
    assert _texts(a, "SELECT text FROM memories") == ["secret of a alice", "secret of a bob"]
    assert _texts(a, "SELECT text FROM episodes WHERE agent_id = 'b'") == []
    assert _texts(a, "SELECT text FROM memories WHERE text LIKE '%of b%' OR TRUE") == [
        "secret of a alice",
        "secret of a bob",
    ]
    b_memory = fleet["ids"]["b:alice"]
    for table in ("provenance", "slots", "audit"):
        assert _texts(a, f"SELECT memory_id FROM {table} WHERE memory_id = {b_memory}") == []
    assert _texts(a, "SELECT value FROM slots") == ["secret of a alice", "secret of a bob"]
    assert len(_texts(a, "SELECT content_hash FROM vectors")) == 2
    assert _texts(a, "SELECT count(*) FROM memories m JOIN episodes e ON true") == ["4"]


def test_a_role_for_one_user_of_an_agent_sees_only_that_users_rows(
    fleet: dict[str, Any],
) -> None:
    assert _texts(fleet["a_bob"], "SELECT text FROM memories") == ["secret of a bob"]
    assert _texts(fleet["a_bob"], "SELECT text FROM episodes") == ["secret of a bob"]


def test_a_role_cannot_write_in_another_agents_name_nor_change_its_rows(
    fleet: dict[str, Any],
) -> None:
    with psycopg.connect(fleet["a"], autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO memories (kind, text, search_text, layer, created_at, observed_at,"
                " last_accessed_at, source, content_hash, agent_id)"
                " VALUES ('fact', 'x', 'x', 'semantic', now(), now(), now(), 'capture', 'h', 'b')"
            )
        changed = conn.execute("UPDATE memories SET text = 'gone' WHERE agent_id = 'b'")
        assert changed.rowcount == 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM memories")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM agent_roles")
        b_memory = fleet["ids"]["b:alice"]
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO audit (at, actor, action, memory_id) VALUES (now(), 'a', 'x', %s)",
                (b_memory,),
            )
        conn.execute("INSERT INTO audit (at, actor, action) VALUES (now(), 'a', 'import')")


def test_a_table_of_the_roles_own_does_not_stand_in_for_the_role_map(
    fleet: dict[str, Any],
) -> None:
    # The policies' function runs as its owner: a temporary table named like the role
    # map, made by the agent's role, must not be what it reads.
    with psycopg.connect(fleet["a"], autocommit=True) as conn:
        conn.execute("CREATE TEMP TABLE agent_roles (role_name text, agent_id text, user_id text)")
        conn.execute("INSERT INTO agent_roles VALUES (current_user, 'b', NULL)")
        seen = sorted(str(r[0]) for r in conn.execute("SELECT text FROM memories"))
    assert seen == ["secret of a alice", "secret of a bob"]


def test_a_role_cannot_name_another_agents_turn_nor_change_a_vector(
    fleet: dict[str, Any],
) -> None:
    # A held write or a provenance row naming a turn hides or shows it in search.
    own, theirs = fleet["ids"]["a:alice"], fleet["ids"]["turn b:alice"]
    with psycopg.connect(fleet["a"], autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO provenance (memory_id, episode_id, added_at) VALUES (%s, %s, now())",
                (own, theirs),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(
                "INSERT INTO held (held_at, actor, level, reasons, text, source, observed_at,"
                " agent_id, user_id, visibility, episode_id) VALUES (now(), 'a', 'suspicious',"
                " 'r', 't', 'capture', now(), 'a', 'alice', 'private', %s)",
                (theirs,),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE vectors SET created_at = now()")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE audit SET actor = 'x'")
