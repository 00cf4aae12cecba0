"""A fake OpenAI-compatible model on loopback, for the gateway suite.

It records every request (so a test reads what the model saw: the recall block, the flush
prompt), answers with deterministic text made from the last user message, and streams
`chat.completion.chunk` events ending in `data: [DONE]` when asked (the gateway always
asks). Runs in a daemon thread of the test process: it ends with the session's finalizer.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "fake-model"


def answer_for(messages: list[dict[str, Any]]) -> str:
    """The reply to a conversation: the same words always give the same answer."""
    said = [content_text(m.get("content")) for m in messages if m.get("role") == "user"]
    # The gateway appends its own context as a user message: answer the person's words.
    said = [t for t in said if not t.startswith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT")]
    text = said[-1] if said else ""
    if "memory flush" in text.lower() or "NO_REPLY" in text:
        return "NO_REPLY"
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"Noted ({digest}): I will keep that in mind."


def content_text(content: Any) -> str:
    """A message's text whether it is a string or a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


class FakeModel:
    """The server and what it has seen; `requests` is appended to under a lock."""

    def __init__(self, reply: Callable[[list[dict[str, Any]]], str] = answer_for) -> None:
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.reply = reply
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> FakeModel:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def chats(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if "messages" in r]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:  # noqa: N802
                body = {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]}
                self._json(200, body)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    request = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._json(400, {"error": {"message": "not JSON"}})
                    return
                request["_path"] = self.path
                with model.lock:
                    model.requests.append(request)
                text = model.reply(list(request.get("messages") or []))
                if request.get("stream"):
                    self._stream(text)
                else:
                    self._json(200, _completion(text))

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                words = text.split(" ")
                for n, word in enumerate(words):
                    piece = word if n == 0 else " " + word
                    role = {"role": "assistant"} if n == 0 else {}
                    self._event(_chunk({**role, "content": piece}, None))
                self._event(_chunk({}, "stop"))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, body: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(body).encode() + b"\n\n")
                self.wfile.flush()

        return Handler


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_ID,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": _usage(),
    }


def _chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if finish:
        body["usage"] = _usage()
    return body
