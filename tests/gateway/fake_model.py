"""A fake OpenAI-compatible model on loopback, for the gateway suite.

It records every request (so a test reads what the model saw: the recall block, the flush
prompt, a tool's result), answers with deterministic text made from the last user
message, and streams `chat.completion.chunk` events ending in `data: [DONE]` when asked
(the gateway always asks). Two markers in the person's message make it act as a model
would: `[call TOOL: WORDS]` makes it call the tool TOOL with `{"query": WORDS}` (once: the
request after the tool's result gets text), and `[context N%]` makes it report a prompt
of N % of the 64000-token window the suite gives it (the usage a long session reports).
Runs in a daemon thread of the test process: it ends with the session's finalizer.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL_ID = "fake-model"
CONTEXT_WINDOW = 64000  # tokens: the window conftest gives this model
_CALL = re.compile(r"\[call (\w+): ([^\]]+)\]")
_CONTEXT = re.compile(r"\[context (\d{1,3})%\]")


def _is_person(message: dict[str, Any]) -> bool:
    """A user message the person wrote. The gateway sends its own runtime context as a
    user message too, and moves it to the end of the request (after a tool's result,
    where a run calls a tool): that one is not the person's."""
    return message.get("role") == "user" and not content_text(message.get("content")).startswith(
        "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT"
    )


def _person_said(messages: list[dict[str, Any]]) -> str:
    said = [content_text(m.get("content")) for m in messages if _is_person(m)]
    return said[-1] if said else ""


def answer_for(messages: list[dict[str, Any]]) -> str | dict[str, Any]:
    """The reply to a conversation: the same words always give the same answer; a
    `[call TOOL: WORDS]` in them, not answered by a tool result yet, is a tool call."""
    text = _person_said(messages)
    if "memory flush" in text.lower() or "NO_REPLY" in text:
        return "NO_REPLY"
    # The person's own words come last in their message (a recall block may come first,
    # holding words said before): the last call and the last context share are theirs.
    calls = _CALL.findall(text)
    last_user = max((i for i, m in enumerate(messages) if _is_person(m)), default=-1)
    if calls and not any(m.get("role") == "tool" for m in messages[last_user + 1 :]):
        name, words = calls[-1]
        return {"name": name, "arguments": {"query": words.strip()}}
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"Noted ({digest}): I will keep that in mind."


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The prompt's size the model reports: `[context N%]` of the window, else 10."""
    found = _CONTEXT.findall(_person_said(messages))
    return int(found[-1]) * CONTEXT_WINDOW // 100 if found else 10


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

    def __init__(
        self, reply: Callable[[list[dict[str, Any]]], str | dict[str, Any]] = answer_for
    ) -> None:
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
                messages = list(request.get("messages") or [])
                answer = model.reply(messages)
                usage = _usage(prompt_tokens(messages))
                if isinstance(answer, dict):
                    self._stream_call(answer, usage)
                elif request.get("stream"):
                    self._stream(answer, usage)
                else:
                    self._json(200, _completion(answer, usage))

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _start_stream(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()

            def _stream(self, text: str, usage: dict[str, int]) -> None:
                self._start_stream()
                words = text.split(" ")
                for n, word in enumerate(words):
                    piece = word if n == 0 else " " + word
                    role = {"role": "assistant"} if n == 0 else {}
                    self._event(_chunk({**role, "content": piece}, None))
                self._event(_chunk({}, "stop", usage))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _stream_call(self, call: dict[str, Any], usage: dict[str, int]) -> None:
                self._start_stream()
                tool_call = {
                    "index": 0,
                    "id": "call_fake_1",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                self._event(_chunk({"role": "assistant", "tool_calls": [tool_call]}, None))
                self._event(_chunk({}, "tool_calls", usage))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _event(self, body: dict[str, Any]) -> None:
                self.wfile.write(b"data: " + json.dumps(body).encode() + b"\n\n")
                self.wfile.flush()

        return Handler


def _usage(prompt: int = 10) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": 5, "total_tokens": prompt + 5}


def _completion(text: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL_ID,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": usage,
    }


def _chunk(
    delta: dict[str, Any], finish: str | None, usage: dict[str, int] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if finish:
        body["usage"] = usage or _usage()
    return body
