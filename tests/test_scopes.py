"""The visibility rule (docs/scopes.md) is written once, in `types.visible_to`: the store's
SQL and the Python check (`types.sees`) are both read from it and agree on every item for
every request context; and every door that reads the store applies it. The rule is shown
in words first, then checked through every door on random stores (hypothesis), then one
readable scenario per door."""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine, recall_anyway
from memoracle.engine.scope import fill_scope, own_scope
from memoracle.errors import NotFound
from memoracle.jobs import transfer
from memoracle.jobs.nightly import run_nightly
from memoracle.mcp_server import MemoryTools
from memoracle.storage_types import View
from memoracle.store.index import scope_clause
from memoracle.types import Scope, Turn, sees

Row = tuple[Any, ...]

AGENTS = (None, "a", "b")
USERS = (None, "alice", "bob")
CHATS = (None, "c1", "c2")
VISIBILITIES = ("private", "shared")

SCOPES = [
    Scope(agent, user, chat, visibility)
    for agent, user, chat, visibility in itertools.product(AGENTS, USERS, CHATS, VISIBILITIES)
]
OWNS = [Scope(), Scope("a", "alice")]
T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
ITEM = re.compile(r"item(\d+)x")


# -- the rule in words ----------------------------------------------------------------


def test_a_private_context_sees_its_own_items_from_every_chat_and_nothing_of_others() -> None:
    alice = Scope(user="alice")
    assert sees(alice, Scope(user="alice"))
    assert sees(alice, Scope(user="alice", chat="tg:family", visibility="shared"))  # she said it
    assert not sees(alice, Scope(user="bob"))
    assert not sees(alice, Scope(user="bob", chat="tg:family", visibility="shared"))
    assert not sees(alice, Scope(chat="tg:family", visibility="shared"))  # the owner's, not hers
    assert not sees(alice, Scope(agent="other", user="alice"))


def test_a_group_sees_the_shared_items_of_its_chat_whoever_said_them() -> None:
    group = Scope(user="alice", chat="tg:family", visibility="shared")
    assert sees(group, Scope(user="alice", chat="tg:family", visibility="shared"))
    assert sees(group, Scope(user="bob", chat="tg:family", visibility="shared"))
    assert not sees(group, Scope(user="alice"))  # private, even her own
    assert not sees(group, Scope(user="alice", chat="tg:family"))  # private in that chat
    assert not sees(group, Scope(user="alice", chat="tg:work", visibility="shared"))
    assert not sees(group, Scope(chat=None, visibility="shared"))  # another chat: none


def test_an_unset_agent_or_user_means_the_workspaces_own() -> None:
    own = Scope(agent="main", user="olga")
    assert sees(Scope(agent="main", user="olga"), Scope(), own)
    assert sees(Scope(), Scope(agent="main", user="olga"), own)
    assert not sees(Scope(user="alice"), Scope(), own)
    assert not sees(Scope(agent="main", user="alice"), Scope(agent="main"), own)
    # With no workspace user set, unset items are the nameless owner's alone.
    assert sees(Scope(), Scope())
    assert not sees(Scope(user="alice"), Scope())
    assert not sees(Scope(), Scope(user="alice"))


# -- SQL and Python agree -------------------------------------------------------------


def _open(tmp: Path, own: Scope) -> Engine:
    overrides = {
        "embedding.model": "hash",
        "workspace.agent": own.agent or "",
        "workspace.user": own.user or "",
    }
    config = load(tmp / "home", env={}, overrides=overrides)
    clock = FixedClock(T0)
    Engine.init(config, clock=clock)
    return Engine.open(config, clock=clock)


def _rows(engine: Engine, table: str, where: str = "1", params: Sequence[object] = ()) -> list[Row]:
    conn = sqlite3.connect(engine.database_path)
    try:
        return conn.execute(
            f"SELECT id, agent_id, user_id, chat_id, visibility FROM {table} t WHERE {where}",
            list(params),
        ).fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("own", OWNS, ids=["no-owner-named", "owner-a-alice"])
def test_the_sql_and_the_python_check_agree_for_every_context(tmp_path: Path, own: Scope) -> None:
    with _open(tmp_path, own) as engine:
        for n, scope in enumerate(SCOPES):
            engine.remember(f"note {n}", scope=scope)
            engine.capture([Turn("user", f"turn {n}", turn_id=str(n))], scope=scope)
        for requester in SCOPES:
            filled = fill_scope(engine.settings, requester)
            view = View(filled, own=own_scope(engine.settings))
            for table, clause in (
                ("memories", scope_clause(view, "t")),
                ("episodes", scope_clause(view, "t")),
            ):
                by_sql = {row[0] for row in _rows(engine, table, *clause)}
                by_python = {
                    id_
                    for id_, agent, user, chat, visibility in _rows(engine, table)
                    if sees(filled, Scope(agent, user, chat, visibility), own)
                }
                assert by_sql == by_python, (table, requester)
                assert by_sql, (table, requester)  # every context sees something


# -- every door, on random stores (hypothesis) ------------------------------------------


class World:
    """A store of items in random scopes, each text carrying its number (``item7x``),
    and what each number's stored scope is."""

    def __init__(self, engine: Engine, items: Sequence[tuple[Scope, bool]]) -> None:
        self.engine = engine
        self.owner = own_scope(engine.settings)
        self.scope_of: dict[int, Scope] = {}
        self.memory_refs: list[str] = []
        for n, (scope, as_turn) in enumerate(items):
            if as_turn:
                result = engine.capture(
                    [Turn("user", f"We bought marmalade item{n}x at Lidl.", turn_id=str(n))],
                    scope=scope,
                )
                episode = engine.stored_turn(result.episodes[0])
                assert episode is not None
                self.scope_of[n] = episode.scope
            else:
                memory, _ = engine.remember(
                    f"Marmalade item{n}x is kept in Lisbon with Ottoline.", kind="fact", scope=scope
                )
                self.scope_of[n] = memory.scope
                self.memory_refs.append(memory.ref)

    def seen_by(self, request: Scope) -> set[int]:
        filled = fill_scope(self.engine.settings, request)
        return {n for n, s in self.scope_of.items() if sees(filled, s, self.owner)}

    def check(self, request: Scope, text: str, door: str) -> None:
        found = {int(n) for n in ITEM.findall(text)}
        leaked = found - self.seen_by(request)
        assert not leaked, f"{door} showed {request} items {sorted(leaked)}: {text[:400]}"


scopes = st.builds(
    Scope,
    st.sampled_from(AGENTS),
    st.sampled_from(USERS + ("carol",)),
    st.sampled_from(CHATS),
    st.sampled_from(VISIBILITIES),
)
stores = st.lists(st.tuples(scopes, st.booleans()), min_size=1, max_size=14)


@pytest.fixture
def worlds(tmp_path: Path) -> Iterator[Any]:
    count = itertools.count()

    def make(own: Scope, items: Sequence[tuple[Scope, bool]]) -> World:
        return World(_open(tmp_path / f"w{next(count)}", own), items)

    yield make


def _cli(engine: Engine, request: Scope, *args: str) -> str:
    flags = [
        *(["--agent", request.agent] if request.agent else []),
        *(["--user-id", request.user] if request.user else []),
        *(["--chat", request.chat] if request.chat else []),
        "--visibility",
        request.visibility,
    ]
    result = CliRunner().invoke(
        main,
        ["--home", str(engine.settings.home), *args, *flags],
        env={"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": T0.isoformat()},
    )
    assert result.exit_code in (0, 1), result.output
    return result.output


def _doors(world: World, request: Scope, tmp: Path) -> None:
    """Every read path, asked by `request`: nothing it returns crosses the rule."""
    engine = world.engine
    seen = world.seen_by(request)
    hits = engine.search("marmalade", k=200, scope=request).hits
    world.check(request, "\n".join(h.text for h in hits), "search")
    world.check(request, engine.recall("marmalade", budget=4000, scope=request).text, "recall")
    listed = engine.list_memories(status=None, limit=1000, scope=request)
    world.check(request, "\n".join(m.text for m in listed), "list")
    assert {m.scope for m in listed} <= {world.scope_of[n] for n in seen}
    for ref in world.memory_refs:
        n = int(ITEM.findall(engine.stored_memory(int(ref[2:])).text)[0])  # type: ignore[union-attr]
        try:
            memory = engine.get(ref, scope=request)
        except NotFound:
            assert n not in seen, f"get hid {ref} from {request}"
            with pytest.raises(NotFound):
                engine.explain(ref, query="marmalade", scope=request)
            continue
        assert n in seen, f"get showed {ref} to {request}"
        turns = engine.episodes_of(memory, scope=request)
        world.check(request, "\n".join(e.text for e in turns), "episodes_of")
    assert engine.stats(scope=request).memories == len(listed)
    for entity in engine.graph_entities(scope=request):
        shown = engine.graph_show(entity.name, scope=request)
        world.check(request, "\n".join(m.text for m in shown.memories), "graph show")
    tools = MemoryTools(engine.settings, request, clock=engine.clock)
    try:
        for result in (
            tools.memory_search("marmalade", k=50),
            tools.memory_recall("marmalade"),
            tools.memory_status(),
        ):
            world.check(request, result.model_dump_json(), "mcp")
    finally:
        tools.close()
    export = tmp / "scoped.jsonl"
    transfer.export_scope(engine, export, request)
    world.check(request, export.read_text(encoding="utf-8"), "export --user-id")
    for args in (("search", "marmalade", "--json"), ("list", "--json", "--status", "all")):
        world.check(request, _cli(engine, request, *args), " ".join(args[:1]))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    own=st.sampled_from(OWNS),
    items=stores,
    requests=st.lists(scopes, min_size=1, max_size=3),
)
def test_no_door_shows_an_item_the_rule_hides(
    worlds: Any, tmp_path: Path, own: Scope, items: list[tuple[Scope, bool]], requests: list[Scope]
) -> None:
    world = worlds(own, items)
    try:
        for request in [*requests, Scope()]:
            _doors(world, request, tmp_path)
        _files(world)
    finally:
        world.engine.close()


def _files(world: World) -> None:
    """The rendered files are the owner's view, and so is the fallback recall over them."""
    engine = world.engine
    run_nightly(engine)
    files = engine.settings.files_dir
    for path in sorted(p for p in files.rglob("*") if p.is_file()):
        world.check(Scope(), path.read_text(encoding="utf-8"), str(path.relative_to(files)))
    gone = load(
        engine.settings.home.parent / "no-such-home",
        env={},
        overrides={
            "workspace.files_dir": str(files),
            "workspace.agent": engine.settings.workspace.agent,
            "workspace.user": engine.settings.workspace.user,
        },
    )
    for request in (Scope(), Scope(user="carol"), Scope(chat="c1", visibility="shared")):
        block = recall_anyway(gone, "marmalade", scope=request, clock=engine.clock)
        assert block.degraded is not None
        world.check(request, block.text, "fallback recall")


# -- one scenario per door ----------------------------------------------------------------

OLGA = Scope()  # the owner (workspace.agent "main", workspace.user "olga")
ALICE = Scope(user="alice")
BOB = Scope(user="bob")
FAMILY = Scope(user="alice", chat="tg:family", visibility="shared")
WORK = Scope(user="bob", chat="tg:work", visibility="shared")


@pytest.fixture
def household(tmp_path: Path) -> Iterator[Engine]:
    """An agent serving its owner Olga, Alice and Bob in private, and two groups."""
    engine = _open(tmp_path, Scope("main", "olga"))
    engine.remember("Olga's dentist is Dr. Varga on Elm Street.", scope=OLGA)
    engine.remember("Alice's dentist appointment is on Friday.", scope=ALICE)
    engine.remember("Bob's dentist is too expensive.", scope=BOB)
    engine.remember("The family dentist outing is on Sunday.", scope=FAMILY)
    engine.remember("The work dentist plan covers two visits.", scope=WORK)
    with engine:
        yield engine


def _texts(memories: Any) -> set[str]:
    return {m.text.split()[0] for m in memories}


def test_search_shows_each_person_their_own_and_a_group_its_own(household: Engine) -> None:
    def found(scope: Scope) -> set[str]:
        return _texts(h.memory for h in household.search("dentist", scope=scope).hits if h.memory)

    assert found(OLGA) == {"Olga's"}
    assert found(ALICE) == {"Alice's", "The"}  # her private item and what she said in the group
    assert found(BOB) == {"Bob's", "The"}
    assert {h.text for h in household.search("dentist", scope=FAMILY).hits} == {
        "The family dentist outing is on Sunday."
    }


def test_recall_never_carries_another_persons_memory(household: Engine) -> None:
    block = household.recall("when is the dentist?", scope=BOB)
    assert "Alice" not in block.text and "Olga" not in block.text and "family" not in block.text


def test_list_get_explain_and_stats_follow_the_rule(household: Engine) -> None:
    assert _texts(household.list_memories(scope=ALICE)) == {"Alice's", "The"}
    olgas = household.list_memories(scope=OLGA)[0]
    with pytest.raises(NotFound, match="No memory"):
        household.get(olgas.ref, scope=ALICE)
    with pytest.raises(NotFound, match="No memory"):
        household.explain(olgas.ref, query="dentist", scope=ALICE)
    assert household.get(olgas.ref).text.startswith("Olga's")
    assert household.stats(scope=ALICE).memories == 2
    assert household.stats(scope=WORK).memories == 1


def test_the_same_turn_id_from_two_people_is_two_turns(household: Engine) -> None:
    said = [Turn("user", "I moved to Porto.", session_id="s", turn_id="1")]
    assert household.capture(said, scope=ALICE).episodes
    assert household.capture(said, scope=BOB).episodes  # not "seen again"
    assert not household.capture(said, scope=BOB).episodes  # but this is
    assert household.stats(scope=ALICE).episodes == household.stats(scope=BOB).episodes == 1


def test_mcp_tools_keep_to_the_servers_scope(household: Engine) -> None:
    tools = MemoryTools(household.settings, BOB, clock=household.clock)
    try:
        alices = household.list_memories(scope=ALICE)[0].ref
        with pytest.raises(Exception, match="No memory"):
            tools.memory_get(alices)
        assert "Alice" not in tools.memory_search("dentist").model_dump_json()
    finally:
        tools.close()


def test_the_graph_names_only_what_a_scope_may_see(household: Engine) -> None:
    household.remember("Anna's sister Lea lives in Lyon.", scope=ALICE)
    names = {e.key for e in household.graph_entities(scope=ALICE)}
    assert {"anna", "lea"} <= names
    assert not {"anna", "lea"} & {e.key for e in household.graph_entities(scope=BOB)}
    assert not household.graph_relations(scope=BOB)
    assert household.graph_show("Lea", scope=ALICE).memories
    with pytest.raises(NotFound):
        household.graph_show("Lea", scope=BOB)


def test_a_scoped_export_holds_one_persons_memory_and_is_no_backup(
    household: Engine, tmp_path: Path
) -> None:
    path = tmp_path / "alice.jsonl"
    env = {"MEMORACLE_EMBEDDING_MODEL": "hash"}
    home = str(household.settings.home)
    result = CliRunner().invoke(
        main,
        ["--home", home, "export", str(path), "--agent", "main", "--user-id", "alice"],
        env=env,
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["type"] == "memoracle-scoped-export" and lines[0]["scope"]["user"] == "alice"
    assert {line["text"].split()[0] for line in lines[1:]} == {"Alice's", "The"}
    other = tmp_path / "other"
    Engine.init(load(other, env=env))
    refused = CliRunner().invoke(main, ["--home", str(other), "import", str(path)], env=env)
    assert refused.exit_code != 0 and "scoped export" in refused.output


def test_the_rendered_files_are_the_owners(household: Engine) -> None:
    run_nightly(household)
    files = household.settings.files_dir
    written = "\n".join(p.read_text(encoding="utf-8") for p in files.rglob("*") if p.is_file())
    assert "Olga's dentist" in written
    for other in ("Alice's", "Bob's", "family dentist", "work dentist"):
        assert other not in written


def test_a_checkpoint_of_another_user_is_stored_but_not_noted(household: Engine) -> None:
    from memoracle.jobs import checkpoint

    report = checkpoint.save(
        household.settings,
        "user: my locker code is kept at the gym front desk",
        engine=lambda: household,
        clock=household.clock,
        scope=ALICE,
    )
    assert report.episodes and report.note is None
    notes = household.settings.files_dir / "memory"
    assert not any("locker" in p.read_text(encoding="utf-8") for p in notes.glob("*.md"))


def test_the_fallback_answers_only_the_owner(household: Engine) -> None:
    run_nightly(household)
    gone = load(
        household.settings.home.parent / "missing",
        env={},
        overrides={
            "workspace.files_dir": str(household.settings.files_dir),
            "workspace.agent": "main",
            "workspace.user": "olga",
        },
    )
    mine = recall_anyway(gone, "dentist", scope=OLGA)
    assert "Olga's dentist" in mine.text and mine.degraded
    theirs = recall_anyway(gone, "dentist", scope=ALICE)
    assert theirs.text == "" and "the workspace owner's" in (theirs.degraded or "")
