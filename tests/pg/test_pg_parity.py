"""Each PostgreSQL repository answers the SQLite one's methods with the same signatures
(docs/fleet.md#status)."""

from __future__ import annotations

import inspect

import pytest
from pgharness import MISSING, SKIP_REASON

from memoracle.store.archive import Archive
from memoracle.store.audit import Audit
from memoracle.store.browse import Browse
from memoracle.store.episodes import Episodes
from memoracle.store.graph import Graph
from memoracle.store.held import Held
from memoracle.store.index import Index
from memoracle.store.memories import Memories
from memoracle.store.runs import Runs

pytestmark = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
NOT_PORTED: dict[str, set[str]] = {}


def _public(cls: type) -> dict[str, str]:
    return {
        name: str(inspect.signature(value))
        for name, value in vars(cls).items()
        if not name.startswith("_") and callable(value)
    }


@pytest.mark.parametrize(
    "sqlite", [Memories, Episodes, Audit, Runs, Index, Held, Archive, Graph, Browse]
)
def test_a_postgresql_repository_has_the_sqlite_ones_methods(sqlite: type) -> None:
    from memoracle.store import postgres

    pg = {
        "Memories": postgres.memories.PgMemories,
        "Episodes": postgres.episodes.PgEpisodes,
        "Audit": postgres.logs.PgAudit,
        "Runs": postgres.logs.PgRuns,
        "Index": postgres.index.PgIndex,
        "Held": postgres.held.PgHeld,
        "Archive": postgres.archive.PgArchive,
        "Graph": postgres.graph.PgGraph,
        "Browse": postgres.browse.PgBrowse,
    }[sqlite.__name__]
    wanted = _public(sqlite)
    for name in NOT_PORTED.get(sqlite.__name__, set()):
        wanted.pop(name)
    have = _public(pg)
    assert {n: have.get(n, "missing") for n in wanted} == wanted
