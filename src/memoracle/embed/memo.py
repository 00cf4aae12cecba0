"""`Memo`: an embedder that remembers the document vectors it computed, by text, so a
process embeds a text once: the vector the comparison by meaning (`engine.near`)
computed for a new memory, or capture's learned decision for a one-sentence turn, is
the one the background worker (`recall.landing`) stores, and the one an ingest stores
after each batch (`Memo.known`), instead of embedding the text again.

A query is kept too when the model embeds queries as documents (`QUERIES_AS_DOCUMENTS`:
USE, the hash embedder; e5 prefixes them differently, so its queries are not): recall
embeds its message to search and reads the attribute it asks about from the same
vector, once. At most `KEPT` vectors are kept (16 MB at 512 floats); then it starts
again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memoracle.embed.core import Embedder, Matrix, Vector

KEPT = 8192


class Memo:
    """`inner` with a memory of its document vectors (an `Embedder` itself)."""

    def __init__(self, inner: Embedder, *, kept: int = KEPT) -> None:
        self.inner = inner
        self._kept = kept
        self._vectors: dict[str, Vector] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def known(self, text: str) -> Vector | None:
        """The vector of `text` if this process embedded it as a document."""
        return self._vectors.get(text)

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        vectors = self._vectors
        missing = list(dict.fromkeys(t for t in texts if t not in vectors))
        if not missing:
            if not texts:
                return self.inner.embed_documents(texts)
            return np.stack([vectors[t] for t in texts])
        fresh = self.inner.embed_documents(missing)
        self._keep(missing, fresh)
        if len(missing) == len(texts):
            return fresh.copy()  # the kept rows are views of it
        found = dict(zip(missing, fresh, strict=True))
        return np.stack([found[t] if t in found else vectors[t] for t in texts])

    def embed_query(self, text: str) -> Vector:
        if getattr(self.inner, "QUERIES_AS_DOCUMENTS", False):
            return np.asarray(self.embed_documents([text])[0], dtype=np.float32)
        return self.inner.embed_query(text)

    def _keep(self, texts: Sequence[str], vectors: Matrix) -> None:
        if len(self._vectors) + len(texts) > self._kept:
            self._vectors = {}
        self._vectors.update(zip(texts, vectors, strict=True))
