"""The page built and served: `build_app` (the routes of `pages` and `actions` and the
static files, behind the `Guard`; `routes` is the table a test walks, so no route can be
added without the token check being tried on it), and `run` (the address, loopback unless
a host is named; the URL with its token; uvicorn until stopped)."""

from __future__ import annotations

import ipaddress
import logging
import socket
import webbrowser
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles

from memoracle.clock import Clock, SystemClock
from memoracle.config import Settings
from memoracle.engine.scope import fill_scope
from memoracle.errors import EngineError, InvalidInput, NotFound, WriteHeld
from memoracle.types import Scope
from memoracle.ui import actions, pages
from memoracle.ui.app import Ui, error_page, held_redirect
from memoracle.ui.guard import Access, Guard, new_token

log = logging.getLogger(__name__)

DEFAULT_PORT = 8766


def build_app(
    settings: Settings,
    *,
    access: Access,
    scope: Scope | None = None,
    clock: Clock | None = None,
) -> Guard:
    """The page for `scope`'s view (default: the workspace owner's private one; one
    view, never a mix), behind the token and CSRF checks."""
    filled = fill_scope(settings, Scope(agent=scope.agent, user=scope.user) if scope else None)
    ui = Ui(settings, filled, access, clock or SystemClock())
    app = Starlette(routes=[*pages.ROUTES, *actions.ROUTES, _static()])
    app.state.ui = ui
    app.add_exception_handler(InvalidInput, _engine_error)
    app.add_exception_handler(NotFound, _engine_error)
    app.add_exception_handler(WriteHeld, _held)
    return Guard(app, access)


def routes(app: Guard) -> list[BaseRoute]:
    """The app's routes (what the token test walks)."""
    inner = app.app
    assert isinstance(inner, Starlette)
    return list(inner.routes)


def ui_of(app: Guard) -> Ui:
    inner = app.app
    assert isinstance(inner, Starlette)
    found = inner.state.ui
    assert isinstance(found, Ui)
    return found


def _static() -> Mount:
    return Mount("/static", app=StaticFiles(packages=[("memoracle.ui", "static")]), name="static")


async def _engine_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, EngineError)
    return error_page(request.app.state.ui, request, exc)


async def _held(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, WriteHeld)
    return held_redirect(exc)


def is_loopback(host: str) -> bool:
    """Whether `host` is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/memories?token={token}"


def run(
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    scope: Scope | None = None,
    clock: Clock | None = None,
    open_browser: bool = False,
    say: Callable[[str], None] = print,
) -> None:
    """Serve the page on `host`:`port` until stopped (Ctrl-C). `say` prints the URL
    with its token (and a warning for an address other than loopback)."""
    import uvicorn  # loaded only when serving

    if not 0 < port < 65536:
        raise InvalidInput(f"--port: {port} is not a port (1-65535)")
    if not is_loopback(host):
        say(
            f"warning: listening on {host}: anyone who can reach it and has the token can "
            "read and change this memory, over plain HTTP."
        )
    listener = listen(host, port)  # an address taken or not ours: OSError, before any URL
    token = new_token()
    app = build_app(
        settings, access=Access.for_address(token, host, port), scope=scope, clock=clock
    )
    address = url(host, port, token)
    say(f"memoracle ui: {address}")
    say("Open it in your browser; the token is needed once (then a cookie). Ctrl-C stops.")
    if open_browser:
        webbrowser.open(address)
    config = uvicorn.Config(app, log_config=None, log_level="warning")
    with listener:
        uvicorn.Server(config).run(sockets=[listener])


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` and listening (OSError when it cannot be)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family, backlog=64)
