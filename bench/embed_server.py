"""A loopback OpenAI-compatible /v1/embeddings endpoint over memoracle's own embedder.

Why: the peers benchmark compares retrieval, not embedding models, so a peer that
embeds through an OpenAI-style API (Mem0) is pointed here and gets the very vectors
memoracle's search uses. It binds 127.0.0.1 only, on a free port, in a daemon thread of
the benchmark's process; nothing leaves the machine.

    python bench/embed_server.py --embedder use --port 8765   # by hand, for a peer run elsewhere

Every text is embedded as a document (`embed_documents`): the OpenAI API cannot say
whether a text is a query, and the default embedder (USE) embeds both the same way.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memoracle.embed import Embedder, make_embedder


class BadRequest(ValueError):
    """A request this endpoint cannot answer; its message goes back as the 400's error."""


def parse_request(body: bytes) -> tuple[str, list[str]]:
    """The model name and the texts of an embeddings request (input: a string or a list)."""
    try:
        data = json.loads(body or b"null")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"request body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object with an 'input' field")
    raw = data.get("input")
    texts = [raw] if isinstance(raw, str) else raw
    if not isinstance(texts, list) or not texts:
        raise BadRequest(f"'input' must be a string or a non-empty list of strings, got {raw!r}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise BadRequest(f"'input'[{i}] must be a string, got {text!r} (token ids unsupported)")
    return str(data.get("model") or ""), texts


def embeddings_response(embedder: Embedder, model: str, texts: list[str]) -> dict[str, Any]:
    """OpenAI's response shape: one {"index", "embedding"} per text, in input order."""
    vectors = embedder.embed_documents(texts)
    return {
        "object": "list",
        "model": model or embedder.model_id,
        "data": [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in row]}
            for i, row in enumerate(vectors)
        ],
        "usage": {"prompt_tokens": 0, "total_tokens": 0},
    }


def make_server(embedder: Embedder, port: int = 0) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (`port` 0: a free one, see `server_address`); not started."""
    lock = threading.Lock()  # one embed at a time: local models share one handle

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
                self._send(404, {"error": {"message": f"no such path {self.path}"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                model, texts = parse_request(self.rfile.read(length))
            except BadRequest as exc:
                self._send(400, {"error": {"message": str(exc)}})
                return
            with lock:
                payload = embeddings_response(embedder, model, texts)
            self._send(200, payload)

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # quiet: thousands of requests per run

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def serve_in_background(embedder: Embedder) -> tuple[ThreadingHTTPServer, str]:
    """Start a server in a daemon thread; returns it and its API base (…/v1)."""
    server = make_server(embedder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host!s}:{port}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="use", help="memoracle embedder name")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    server = make_server(make_embedder(args.embedder), args.port)
    print(f"serving http://127.0.0.1:{server.server_address[1]}/v1/embeddings")
    server.serve_forever()


if __name__ == "__main__":
    main()
