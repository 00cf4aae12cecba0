"""A hostile fake model: a real HTTP server on a random loopback port, in a thread of the
test process, speaking OpenAI's /v1/chat/completions and Anthropic's /v1/messages.

Scripted per request: each request takes the next entry of `script`, a `Reply` or a
function of the request's JSON giving one (an exhausted script answers HTTP 599, so a
test that sends more than it meant to fails visibly). Every request's path, headers and
raw body are kept in `log`, so a test reads exactly what left the process.
"""

from __future__ import annotations

import json
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memoracle.llm import Ask


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a slow or hung model)
    length: bool = True  # False: no Content-Length, the body ends when the socket closes


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


# What the tests ask: up to three facts, each a short string.
FACTS = {
    "type": "object",
    "properties": {
        "facts": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 200}}
    },
    "required": ["facts"],
    "additionalProperties": False,
}


def facts_ask(user: str = "I moved to Berlin in May.", system: str = "List the facts.") -> Ask:
    return Ask("extract", "extract-v1", system, user, FACTS, 120)


Entry = Reply | Callable[[dict[str, Any]], Reply]


def chat(content: str, *, tokens: tuple[int, int] = (11, 7)) -> Reply:
    """An OpenAI chat completion whose message content is `content`."""
    envelope = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": tokens[0], "completion_tokens": tokens[1]},
    }
    return Reply(body=json.dumps(envelope).encode())


def answer(value: Any) -> Reply:
    """A chat completion whose content is `value` as JSON."""
    return chat(json.dumps(value))


def anthropic_tool(value: Any) -> Reply:
    """An Anthropic message that calls the answer tool with `value`."""
    block = {"type": "tool_use", "id": "toolu_1", "name": "answer", "input": value}
    return _anthropic(block, "tool_use")


def anthropic_text(text: str) -> Reply:
    """An Anthropic message of one text block."""
    return _anthropic({"type": "text", "text": text}, "end_turn")


def _anthropic(block: dict[str, Any], stop: str) -> Reply:
    envelope = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "fake",
        "content": [block],
        "stop_reason": stop,
        "usage": {"input_tokens": 13, "output_tokens": 5},
    }
    return Reply(body=json.dumps(envelope).encode())


def error(status: int, message: str = "", **headers: str) -> Reply:
    body = json.dumps({"error": {"message": message or f"fake {status}", "type": "fake"}})
    return Reply(status=status, body=body.encode(), headers=headers)


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


class FakeModelServer:
    """On a random loopback port, or on the unix socket `socket` when given."""

    def __init__(self, socket: str = "") -> None:
        self.script: list[Entry] = []
        self.log: list[Received] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                server._answer(
                    self, Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )

            def log_message(self, *args: Any) -> None:
                pass

            def address_string(self) -> str:
                return "fake"  # a unix socket's peer has no (host, port)

        self._http: socketserver.BaseServer
        if socket:
            self._http = _UnixHTTPServer(socket, Handler)
            self.url = f"unix:{socket}"
        else:
            http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            http.daemon_threads = True
            self._http = http
            self.url = f"http://127.0.0.1:{http.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def _answer(self, handler: BaseHTTPRequestHandler, received: Received) -> None:
        with self._lock:
            self.log.append(received)
            entry = self.script.pop(0) if self.script else error(599, "script exhausted")
        reply = entry(received.json) if callable(entry) else entry
        if reply.delay:
            time.sleep(reply.delay)
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            if reply.length:
                handler.send_header("Content-Length", str(len(reply.body)))
            else:
                handler.send_header("Connection", "close")
                handler.close_connection = True
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): what a hung model sees

    def bodies(self) -> list[str]:
        """Every request body received, as text."""
        return [r.body.decode("utf-8", "replace") for r in self.log]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@contextmanager
def fake_model_server(socket: str = "") -> Iterator[FakeModelServer]:
    server = FakeModelServer(socket)
    server.start()
    try:
        yield server
    finally:
        server.stop()
