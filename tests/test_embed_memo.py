"""A text is embedded once per process (`embed.memo.Memo`): the vector the comparison by
meaning computed for a new memory is the one an ingest stores after each batch, and the
one the background worker lands, instead of embedding the text again."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memoracle.embed import HashEmbedder
from memoracle.embed.core import Matrix, Vector
from memoracle.embed.memo import Memo
from memoracle.engine import Engine


class Counted(HashEmbedder):
    """The hash embedder, with a record of every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        self.asked += texts  # a query too: the hash embedder's goes through here
        return super().embed_documents(texts)


def test_a_document_is_embedded_once_and_rows_keep_their_order() -> None:
    inner = Counted()
    memo = Memo(inner)
    assert (memo.model_id, memo.dim) == (inner.model_id, inner.dim)
    first = memo.embed_documents(["tea", "coffee", "tea"])
    assert inner.asked == ["tea", "coffee"]
    assert np.array_equal(first, HashEmbedder().embed_documents(["tea", "coffee", "tea"]))
    again = memo.embed_documents(["coffee", "milk", "tea"])
    assert inner.asked == ["tea", "coffee", "milk"]
    assert np.array_equal(again, HashEmbedder().embed_documents(["coffee", "milk", "tea"]))
    known = memo.known("milk")
    assert known is not None and np.array_equal(known, again[1])
    assert memo.known("water") is None
    again[1] = 0  # the caller's copy: what the memo keeps is unchanged
    kept = memo.known("milk")
    assert kept is not None and np.array_equal(kept, HashEmbedder().embed_query("milk"))
    assert memo.embed_documents([]).shape == (0, inner.dim)


class Prefixed(Counted):
    """An embedder whose queries differ from its documents (as e5's "query: " prefix)."""

    QUERIES_AS_DOCUMENTS = False

    def embed_query(self, text: str) -> Vector:
        return self.embed_documents([f"query: {text}"])[0]


def test_a_query_is_kept_only_when_the_model_embeds_it_as_a_document() -> None:
    inner = Counted()
    memo = Memo(inner)
    asked = memo.embed_query("tea")
    assert np.array_equal(asked, memo.embed_query("tea"))
    assert np.array_equal(asked, HashEmbedder().embed_query("tea"))
    memo.embed_documents(["tea"])
    assert inner.asked == ["tea"]
    prefixed = Prefixed()
    other = Memo(prefixed)
    other.embed_query("tea")
    other.embed_query("tea")
    assert prefixed.asked == ["query: tea", "query: tea"] and other.known("tea") is None
    other.embed_documents(["tea"])
    assert prefixed.asked[-1] == "tea"


def test_the_memo_is_bounded() -> None:
    inner = Counted()
    memo = Memo(inner, kept=3)
    memo.embed_documents(["a", "b", "c"])
    memo.embed_documents(["d"])  # over the bound: it starts again
    assert memo.known("a") is None and memo.known("d") is not None
    memo.embed_documents(["a"])
    assert inner.asked[-1] == "a"


def test_recall_embeds_its_message_once(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recall searches with the message's vector and reads the attribute it asks about
    (`settle.asked_attribute`) from the same one: the message is embedded once."""
    engine.remember("I live in Porto.")
    counted = Counted()
    memo = engine.searcher.embedder
    assert isinstance(memo, Memo)
    monkeypatch.setattr(memo, "inner", counted)
    block = engine.recall("where do I live?")
    assert "Porto" in block.text
    assert counted.asked.count("where do I live?") == 1, counted.asked


def test_ingest_stores_the_vectors_it_computed_to_compare_by_meaning(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory's vector, embedded by `near` to compare it by meaning with the subject's
    other memories, is stored with the batch: what is left for the worker (or `reindex`)
    is only what nobody embedded yet."""
    counted = Counted()
    memo = engine.searcher.embedder
    assert isinstance(memo, Memo)
    monkeypatch.setattr(memo, "inner", counted)
    said = [
        "I prefer green tea in the morning.",
        "I prefer green tea in the evening.",
        "My sister Ana lives in Porto.",
        "We decided to use PostgreSQL for billing.",
    ]
    lines = [
        {"role": "user", "content": t, "session_id": "s", "id": f"t{i}"} for i, t in enumerate(said)
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    report = engine.ingest([path])
    assert report.memories_added >= 3
    memories = engine.list_memories(limit=99)
    compared = [m for m in memories if m.text in counted.asked]
    assert len(compared) >= 2  # the two teas, compared by meaning
    hashes = [m.content_hash for m in memories]
    stored = {h: blob for h, _, blob in engine._store.index.vectors_for(counted.model_id, hashes)}
    assert set(stored) == {m.content_hash for m in compared}
    for m in compared:  # each its own text's vector
        expected = HashEmbedder().embed_documents([m.text])[0]
        assert np.frombuffer(stored[m.content_hash], dtype="<f4").tolist() == expected.tolist()
    counted.asked.clear()
    engine.reindex()  # the rest: none of the compared memories is embedded again
    assert counted.asked and not set(counted.asked) & {m.text for m in compared}
