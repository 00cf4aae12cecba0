"""The vector index seam (`store.protocols.VectorIndex`): search hands the index the
view it searches for, so an index that keeps its vectors where the visibility rule can
be applied (a database) may filter there; and whatever the index does, search looks the
items up through the view."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.engine.scope import view_for
from memoracle.recall.hybrid import Searcher
from memoracle.recall.vectors import in_process_index
from memoracle.storage_types import View
from memoracle.store.protocols import StoreBackend, VectorIndex
from memoracle.types import Scope

Matrix = npt.NDArray[np.float32]
OWNER = Scope()  # the workspace's owner, "olga"
BOB = Scope(user="bob")


class VisibleOnly:
    """A `VectorIndex` that applies the view where the vectors are, as one inside a
    database would: of the nearest texts it keeps those the view sees a memory or turn
    of (the store's own visibility rule, `SearchIndex.*_with_hashes`), looking deeper
    until it has `k` or has looked at every vector. Its vectors are today's index's."""

    def __init__(self, store: StoreBackend, inner: VectorIndex) -> None:
        self.store = store
        self.inner = inner
        self.views: list[View | None] = []  # the view of each `nearest`

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __len__(self) -> int:
        return len(self.inner)

    def refresh(self) -> int:
        return self.inner.refresh()

    def add(self, hashes: Sequence[str], vectors: Matrix) -> int:
        return self.inner.add(hashes, vectors)

    def nearest(
        self, query: Matrix, k: int, *, view: View | None = None
    ) -> list[tuple[str, float]]:
        self.views.append(view)
        pairs = self.inner.nearest(query, len(self.inner))
        if view is None:
            return pairs[:k]
        hashes = [h for h, _ in pairs]
        seen = {h for _, h in self.store.index.memories_with_hashes(hashes, view)}
        seen |= {h for _, h in self.store.index.episodes_with_hashes(hashes, view)}
        return [(h, s) for h, s in pairs if h in seen][:k]

    def state(self) -> str:
        return self.inner.state()

    def rebuild_if_needed(self) -> bool:
        return self.inner.rebuild_if_needed()

    def persist(self) -> None:
        self.inner.persist()


def _household(tmp_path: Path) -> tuple[Settings, FixedClock]:
    settings = load(
        tmp_path / "home",
        env={},
        overrides={"embedding.model": "hash", "workspace.agent": "main", "workspace.user": "olga"},
    )
    clock = FixedClock(datetime(2026, 3, 2, 10, tzinfo=UTC))
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.remember("Olga's dentist is Dr. Varga on Elm Street.", scope=OWNER)
        engine.remember("Bob's dentist is too expensive.", scope=BOB)
        engine.reindex()
    return settings, clock


def _found(searcher: Searcher, settings: Settings, clock: FixedClock, scope: Scope) -> list[str]:
    view = view_for(settings, scope, now=clock.now())
    outcome = searcher.search("dentist", view=view, k=5, now=clock.now(), mode="vector")
    return [h.text for h in outcome.hits]


def test_search_hands_the_index_the_view_and_finds_the_same(tmp_path: Path) -> None:
    settings, clock = _household(tmp_path)
    with Engine.open(settings, clock=clock) as engine:
        opened: list[VisibleOnly] = []

        def visible_only(
            store: StoreBackend, settings: Settings, model_id: str, dim: int
        ) -> VectorIndex:
            opened.append(VisibleOnly(store, in_process_index(store, settings, model_id, dim)))
            return opened[-1]

        embedder = engine.searcher.embedder
        today = Searcher(engine._store, settings, embedder)
        filtering = Searcher(engine._store, settings, embedder, open_index=visible_only)
        try:
            for scope in (OWNER, BOB):
                assert _found(filtering, settings, clock, scope) == _found(
                    today, settings, clock, scope
                )
            assert _found(filtering, settings, clock, BOB) == ["Bob's dentist is too expensive."]
        finally:
            today.close()
            filtering.close()
        (index,) = opened
        bob = view_for(settings, BOB, now=clock.now())
        assert index.views[-1] == bob  # the index was told whose search it was
