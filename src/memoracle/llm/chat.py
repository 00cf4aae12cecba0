"""The ask, the same for every provider: the messages made safe to send (`outbound`), one
request per try with bounded retries and backoff (Retry-After honoured), the structured
output mode stepped down when the server refuses it (JSON schema → JSON mode → text),
the reply read up to its cap, parsed, repaired, its secrets redacted and validated, and
one RequestRecord per request. Providers say only how a request is made and where the
answer is in a reply.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from memoracle.capture.redact import redact
from memoracle.clock import Clock, SystemClock
from memoracle.llm.endpoint import Endpoint, http_client
from memoracle.llm.errors import ModelOutputInvalid, ModelUnavailable
from memoracle.llm.outbound import outbound
from memoracle.llm.reply import parse_reply
from memoracle.llm.retry import TRANSIENT, backoff, retry_after
from memoracle.llm.types import Answer, Ask, Outcome, RequestRecord

OnRequest = Callable[[RequestRecord], None]
REFUSED_MODE = frozenset({400, 404, 415, 422, 500, 501})  # a mode the server may not know


@dataclass(frozen=True)
class Exchange:
    """One HTTP request's end: `status` 0 when no response came (`detail` says why)."""

    status: int
    body: bytes = b""
    too_large: bool = False
    wait: float | None = None
    detail: str = ""


@dataclass(frozen=True)
class Options:
    """How a model is asked: the `[llm]` settings' part that is not the endpoint."""

    timeout: float = 60.0
    retries: int = 3
    scrub: tuple[str, ...] = ()
    max_reply_bytes: int = 1_000_000
    backoff: float = 1.0  # seconds before the first retry; doubled each time
    max_wait: float = 60.0  # a longer Retry-After ends the tries at once


class ChatModel:
    """Base of the providers. Subclasses set `provider` and `modes` and implement
    `_client`, `_kwargs`, `_send` and `_content`."""

    provider = ""
    modes: tuple[str, ...] = ("text",)

    def __init__(
        self,
        model: str,
        endpoint: Endpoint,
        *,
        api_key: str = "",
        options: Options | None = None,
        on_request: OnRequest | None = None,
        clock: Clock | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.model_id = f"{self.provider}:{model}"
        self.endpoint = endpoint
        self.options = options or Options()
        self._on_request = on_request
        self._clock = clock or SystemClock()
        self._sleep = sleep
        self._sent = ("", 0)
        self._mode = 0
        self._proven = False  # a mode has answered once: its errors are the server's
        self._lock = threading.Lock()
        self._http = http_client(endpoint, self.options.timeout, self._note_sent)
        self._api = self._client(endpoint.url, api_key, self._http)

    def close(self) -> None:
        """Close the connections kept to the server."""
        self._http.close()

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- provider parts ----------------------------------------------------------------

    def _client(self, url: str, api_key: str, http: Any) -> Any:
        raise NotImplementedError

    def _kwargs(self, ask: Ask, system: str, user: str, mode: str) -> dict[str, Any]:
        raise NotImplementedError

    def _send(self, kwargs: dict[str, Any]) -> Exchange:
        raise NotImplementedError

    def _content(self, envelope: Any) -> tuple[str, int, int]:
        """The answer's text, tokens in and out, from a reply's decoded JSON."""
        raise NotImplementedError

    # -- the ask -----------------------------------------------------------------------

    def ask(self, ask: Ask) -> Answer:
        """Send `ask` (made safe first) and return its validated answer."""
        scrub = self.options.scrub
        system, user = outbound(ask.system, scrub), outbound(ask.user, scrub)
        with self._lock:
            return self._ask(ask, system, user)

    def _ask(self, ask: Ask, system: str, user: str) -> Answer:
        failures = 0
        while True:
            mode = self.modes[self._mode]
            started = time.perf_counter()
            self._sent = ("", 0)
            exchange = self._send(self._kwargs(ask, system, user, mode))
            took = time.perf_counter() - started
            if exchange.status == 200:
                return self._answer(ask, exchange, took)
            if self._step_down(exchange.status):
                self._record(ask, "retry", took, f"HTTP {exchange.status} to {mode} mode")
                self._mode += 1
                continue
            why = exchange.detail or f"HTTP {exchange.status}"
            transient = exchange.status == 0 or exchange.status in TRANSIENT
            wait = backoff(failures, self.options.backoff, exchange.wait)
            if not transient or failures >= self.options.retries or wait > self.options.max_wait:
                self._record(ask, "unavailable", took, why)
                raise self._unavailable(why, failures, exchange.wait, transient)
            self._record(ask, "retry", took, why)
            self._sleep(wait)
            failures += 1

    def _step_down(self, status: int) -> bool:
        return status in REFUSED_MODE and not self._proven and self._mode + 1 < len(self.modes)

    def _answer(self, ask: Ask, exchange: Exchange, took: float) -> Answer:
        tokens_in = tokens_out = 0
        try:
            if exchange.too_large:
                raise ModelOutputInvalid(
                    f"The model's reply is larger than llm.max_reply_bytes "
                    f"({self.options.max_reply_bytes}); refused unread.",
                    reason="too large",
                    raw=exchange.body[:2000].decode("utf-8", "replace"),
                )
            text, tokens_in, tokens_out = self._decoded(exchange.body)
            tokens_in = tokens_in or _estimate(self._sent[1])
            tokens_out = tokens_out or _estimate(len(text.encode("utf-8")))
            data = parse_reply(text, ask.schema, _redacted)
        except ModelOutputInvalid as err:
            err.raw = _redacted(err.raw)  # kept for a quarantine file: no secret in it
            self._record(ask, "invalid", took, err.reason, tokens_in, tokens_out)
            raise
        self._proven = True
        self._record(ask, "ok", took, "", tokens_in, tokens_out)
        return Answer(
            data=data,
            model_id=self.model_id,
            prompt_version=ask.prompt_version,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            sent_sha256=self._sent[0],
            sent_bytes=self._sent[1],
        )

    def _decoded(self, body: bytes) -> tuple[str, int, int]:
        raw = body.decode("utf-8", "replace")
        try:
            return self._content(json.loads(raw))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:
            raise ModelOutputInvalid(
                f"The {self.provider} endpoint {self.endpoint.url} sent a reply that is not "
                f"a chat completion ({err.__class__.__name__}: {str(err)[:200]}).",
                reason="not a chat completion",
                raw=raw,
            ) from None

    def _unavailable(
        self, why: str, failures: int, wait: float | None, transient: bool
    ) -> ModelUnavailable:
        n = failures + 1
        tries = f"after {n} {'try' if n == 1 else 'tries'}" if transient else "(not retried)"
        return ModelUnavailable(
            f"The model {self.model_id} at {self.endpoint.url} gave no answer {tries}: {why}. "
            "Check that the server runs and llm.endpoint and llm.model are right; the work "
            "waits for the next night.",
            retry_after=wait,
        )

    def _record(
        self,
        ask: Ask,
        outcome: Outcome,
        took: float,
        detail: str,
        tokens_in: int = 0,
        tokens_out: int = 0,
    ) -> None:
        if self._on_request is not None:
            self._on_request(
                RequestRecord(
                    purpose=ask.purpose,
                    model_id=self.model_id,
                    prompt_version=ask.prompt_version,
                    sent_sha256=self._sent[0],
                    sent_bytes=self._sent[1],
                    tokens_in=tokens_in,
                    tokens_out=tokens_out,
                    outcome=outcome,
                    duration_s=round(took, 3),
                    detail=detail,
                )
            )

    # -- helpers for providers ---------------------------------------------------------

    def _note_sent(self, sha256: str, size: int) -> None:
        self._sent = (sha256, size)

    def _read(self, headers: Any, chunks: Iterable[bytes], started: float) -> Exchange:
        """A 200 reply's body, read up to the cap: a larger one (by its Content-Length
        or as it comes) is refused unread; one slower than the timeout is a timeout."""
        cap = self.options.max_reply_bytes
        if _length(headers) > cap:
            return Exchange(200, too_large=True)
        body = bytearray()
        for chunk in chunks:
            body += chunk
            if len(body) > cap:
                return Exchange(200, body=bytes(body[:2000]), too_large=True)
            if time.perf_counter() - started > self.options.timeout:
                return Exchange(0, detail=f"timed out after {self.options.timeout:g} s")
        return Exchange(200, body=bytes(body))

    def _status(self, status: int, headers: Any, body: str) -> Exchange:
        wait = retry_after(headers.get("retry-after"), self._clock.now())
        detail = f"HTTP {status}" + (f": {body[:200]}" if body else "")
        return Exchange(status, wait=wait, detail=detail)


def _length(headers: Any) -> int:
    try:
        return int(headers.get("content-length") or 0)
    except ValueError:
        return 0


def _redacted(text: str) -> str:
    """A string of an answer with any secret in it redacted, as a stored turn would be."""
    return redact(text).text


def _estimate(size: int) -> int:
    """Tokens of `size` bytes when the server does not count them (about four a token)."""
    return math.ceil(size / 4)


def schema_instruction(schema: dict[str, Any]) -> str:
    """What a request without a server-side schema adds to its system message."""
    return "Answer with one JSON value only, no prose, satisfying this JSON schema:\n" + json.dumps(
        schema, ensure_ascii=False, separators=(",", ":")
    )


def error_message(err: Any) -> str:
    """The server's own words in an error reply of either client, cut to 200."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        return str(inner.get("message", "") if isinstance(inner, dict) else inner)[:200]
    return str(getattr(err, "message", ""))[:200]
