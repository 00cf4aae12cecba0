"""A search only reads (`Searcher.search`): the texts without a vector are embedded and
stored before it (`Searcher.land_for_search`, which the engine calls first), so what the
engine's search finds, and the notes it gives, are as when the search stored them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from memoracle.clock import FixedClock
from memoracle.embed import Embedder
from memoracle.engine import Engine
from memoracle.errors import EngineError
from memoracle.recall import hybrid
from memoracle.storage_types import View

TEXTS = ("The garden shed needs a new roof.", "I prefer green tea in the morning.")


def _missing(engine: Engine) -> int:
    embedder = engine.searcher.embedder
    assert embedder is not None
    return engine.vectors_missing(embedder.model_id)


def test_a_search_writes_nothing(engine: Engine, clock: FixedClock) -> None:
    for text in TEXTS:
        engine.remember(text)
    missing = _missing(engine)
    assert missing >= len(TEXTS)
    before = engine._store.maintenance.change_marker()[1]
    for mode in ("hybrid", "vector", "lexical"):
        engine.searcher.search("garden shed roof", view=View(), k=5, now=clock.now(), mode=mode)
    assert engine._store.maintenance.change_marker()[1] == before
    assert _missing(engine) == missing


def test_the_engine_stores_the_missing_vectors_before_it_searches(engine: Engine) -> None:
    for text in TEXTS:
        engine.remember(text)
    outcome = engine.search("garden shed roof", mode="vector")
    assert _missing(engine) == 0
    assert outcome.mode == "vector" and outcome.note is None
    assert outcome.hits[0].text == TEXTS[0] and outcome.hits[0].scores.vector_rank == 1


def test_more_missing_than_one_search_embeds_is_said(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in TEXTS:
        engine.remember(text)
    missing = _missing(engine)
    monkeypatch.setattr(hybrid, "EMBED_AT_SEARCH", 1)
    outcome = engine.search("garden shed roof")
    assert _missing(engine) == missing - 1
    assert outcome.note == "some items have no vector yet: run memoracle reindex"


class Down:
    """The engine's embedder behind an embedding service that is down."""

    def __init__(self, inner: Embedder) -> None:
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        raise EngineError("the embedding service did not answer")

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        raise EngineError("the embedding service did not answer")


def test_an_embedding_service_down_answers_by_words(engine: Engine) -> None:
    for text in TEXTS:
        engine.remember(text)
    assert engine.searcher.embedder is not None
    engine.searcher.embedder = Down(engine.searcher.embedder)
    outcome = engine.search("garden shed roof")
    assert outcome.mode == "lexical"
    assert outcome.note == (
        "vector search unavailable (the embedding service did not answer); lexical search only"
    )
    assert outcome.hits[0].text == TEXTS[0]
