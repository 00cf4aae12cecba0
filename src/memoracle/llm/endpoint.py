"""Where a model is: the endpoint checked against `llm.local_only` (loopback or a unix
socket, with the same loopback test the embedder uses), and the HTTP client every
request goes through: no redirects followed, no proxy for a loopback endpoint, and a
hook that notes the SHA-256 and size of each request body sent (never its text)."""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoracle.embed.http import _is_loopback
from memoracle.errors import InvalidInput

UNIX_HOST = "http://localhost"  # the URL a request over a unix socket is addressed to


@dataclass(frozen=True)
class Endpoint:
    """`url`: the API base the client is given; `socket`: a unix socket's path, or ""."""

    url: str
    socket: str
    local: bool


def parse_endpoint(raw: str, default: str, *, api_path: str, local_only: bool) -> Endpoint:
    """`llm.endpoint` (or the provider's `default`) as an Endpoint, its path ending in
    `api_path` ("/v1" for OpenAI-compatible servers, "" for Anthropic). A remote host
    while `local_only` is on is refused, naming the key and the host."""
    text = (raw or default).strip()
    if text.startswith("unix:"):
        path = text.removeprefix("unix:").removeprefix("//")
        if not path.startswith("/"):
            raise InvalidInput(
                f"llm.endpoint {text!r}: a unix socket is given as unix:/absolute/path.sock"
            )
        return Endpoint(url=UNIX_HOST + api_path, socket=path, local=True)
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(
            f"llm.endpoint {text!r} is not an http(s) URL nor unix:PATH. Set llm.endpoint, "
            f"e.g. {default}"
        )
    local = _is_loopback(parts.hostname)
    if not local and local_only:
        raise InvalidInput(
            f"Refusing llm.endpoint {text!r}: its host {parts.hostname} is not this machine "
            "(loopback or a unix socket), and llm.local_only is true. Every request would "
            "leave this machine. Use a local server, or set llm.local_only = false to allow "
            "it on purpose (docs/llm.md#local_only)."
        )
    path = parts.path.rstrip("/")
    for tail in ("/chat/completions", "/messages"):
        path = path.removesuffix(tail)
    if api_path and not path.endswith(api_path):
        path += api_path
    url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    return Endpoint(url=url, socket="", local=local)


def http_client(endpoint: Endpoint, timeout: float, on_send: Callable[[str, int], None]) -> Any:
    """An httpx2 client for `endpoint` (the llm extra's HTTP library, imported here, only
    once a model is opened). `on_send(sha256, size)` is called with each request body."""
    import httpx2

    def note(request: Any) -> None:
        body = bytes(request.content)
        on_send(hashlib.sha256(body).hexdigest(), len(body))

    transport = httpx2.HTTPTransport(uds=endpoint.socket) if endpoint.socket else None
    return httpx2.Client(
        transport=transport,
        timeout=timeout,
        follow_redirects=False,  # a redirect could carry the text to another host
        trust_env=not endpoint.local,  # never via an HTTP(S)_PROXY to reach this machine
        event_hooks={"request": [note]},
    )
