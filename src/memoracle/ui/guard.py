"""Who may use the web page, checked before any page runs: a pure ASGI middleware.

- The Host header must name the address the page listens on (a DNS-rebinding page under
  another name gets nothing).
- A random token, printed in the URL `memoracle ui` shows, is traded once for an
  HttpOnly, SameSite=Strict cookie; every route but `/static/` needs that cookie: no
  token, no data.
- Every change is a POST of a urlencoded form carrying the CSRF token (derived from the
  token, written into each page's forms) and coming from the page's own origin (the
  Origin header, else the Referer).
- Every answer carries a strict Content-Security-Policy (scripts and styles from
  `/static/` only, no inline script), no framing, no sniffing, no caching.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "memoracle_ui"
CSRF_FIELD = "csrf"
STATIC = "/static/"
MAX_FORM_BYTES = 64 * 1024  # a memory's text is far smaller; more is refused (413)
SAFE_METHODS = frozenset({"GET", "HEAD"})
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def new_token() -> str:
    """A fresh random token (192 bits), for one run of the page."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Access:
    """The token of this run and the addresses the page answers under (host:port)."""

    token: str
    hosts: frozenset[str]
    csrf: str = field(init=False)

    def __post_init__(self) -> None:
        digest = hmac.new(self.token.encode(), b"csrf", hashlib.sha256).hexdigest()[:32]
        object.__setattr__(self, "csrf", digest)

    @classmethod
    def for_address(cls, token: str, host: str, port: int) -> Access:
        """The page on `host`:`port`: answered under that name, and under localhost's
        names when it is a loopback address."""
        names = {host.strip("[]")}
        if names & LOOPBACK:
            names |= LOOPBACK
        return cls(token, frozenset(f"[{n}]:{port}" if ":" in n else f"{n}:{port}" for n in names))

    def origins(self) -> set[str]:
        return {f"http://{h}" for h in self.hosts}

    def valid(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())


class Guard:
    """The checks above, around the page's app."""

    def __init__(self, app: App, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send, scope["path"].startswith(STATIC))
        headers = _headers(scope)
        if headers.get("host") not in self.access.hosts:
            await _plain(send, 400, "This page answers only under the address it printed.")
            return
        if scope["path"].startswith(STATIC) and scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if "token" in query:
            await self._login(scope, query, send)
            return
        if not self.access.valid(_cookie(headers.get("cookie", ""))):
            await _plain(
                send, 401, "No access: open the address `memoracle ui` printed (with ?token=)."
            )
            return
        if scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        refusal = self._refuse_change(scope["method"], headers)
        if refusal:
            await _plain(send, 403, refusal)
            return
        body = await _body(receive)
        if body is None:
            await _plain(send, 413, "The form is too large.")
            return
        form = parse_qs(body.decode("utf-8", "replace"))
        given = (form.get(CSRF_FIELD) or [""])[0]
        if not hmac.compare_digest(given.encode(), self.access.csrf.encode()):
            await _plain(send, 403, "Refused: the form's CSRF token is missing or wrong.")
            return
        await self.app(scope, _replay(body), send)

    async def _login(self, scope: Scope, query: dict[str, list[str]], send: Send) -> None:
        if scope["method"] not in SAFE_METHODS or not self.access.valid(query["token"][0]):
            await _plain(send, 403, "Wrong token: open the address `memoracle ui` printed.")
            return
        rest = {k: v for k, v in query.items() if k != "token"}
        target = scope["path"] + ("?" + urlencode(rest, doseq=True) if rest else "")
        cookie = f"{COOKIE}={self.access.token}; HttpOnly; SameSite=Strict; Path=/"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", target.encode()), (b"set-cookie", cookie.encode())],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _refuse_change(self, method: str, headers: dict[str, str]) -> str | None:
        if method != "POST":
            return f"Refused: {method} changes nothing here; changes are POSTed forms."
        kind = headers.get("content-type", "").split(";")[0].strip()
        if kind != "application/x-www-form-urlencoded":
            return "Refused: a change is a urlencoded form."
        origin = headers.get("origin")
        if origin is not None:
            return None if origin in self.access.origins() else "Refused: another origin."
        referer = headers.get("referer", "")
        if any(referer.startswith(o + "/") for o in self.access.origins()):
            return None
        return "Refused: a change must come from this page (no Origin or Referer)."


def _headers(scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        found.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
    return found


def _cookie(header: str) -> str | None:
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name == COOKIE:
            return value
    return None


async def _body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _with_headers(send: Send, cacheable: bool) -> Send:
    extra: Iterable[tuple[bytes, bytes]] = (
        HEADERS if cacheable else (*HEADERS, (b"cache-control", b"no-store"))
    )

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return wrapped


async def _plain(send: Send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})
