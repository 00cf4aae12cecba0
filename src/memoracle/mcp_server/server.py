"""Running the tools as an MCP server: the SDK server that refuses arguments a tool does
not take, over stdio or streamable HTTP on loopback (non-loopback Host and Origin
refused).
"""

from __future__ import annotations

import inspect
import ipaddress
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from memoracle.clock import Clock
from memoracle.config import Settings, installed_version, load
from memoracle.errors import InvalidInput
from memoracle.mcp_server.tools import INSTRUCTIONS, SERVER_NAME, MemoryTools
from memoracle.types import Scope

log = logging.getLogger(__name__)


DEFAULT_PORT = 8765


HTTP_PATH = "/mcp"


class _Server(MCPServer[None]):
    """MCPServer that refuses arguments a tool does not take (a `user` or `scope` passed
    in the hope of reading someone else's memory) and says plainly which argument was
    wrong, before anything runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parameters: dict[str, frozenset[str]] = {}

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[None, Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        known = self.parameters.get(name)
        unknown = sorted(set(arguments) - known) if known is not None else []
        if unknown:
            raise ToolError(
                f"{name} refused its arguments, nothing was changed: it takes no "
                f"{', '.join(repr(a) for a in unknown)} (it takes: "
                f"{', '.join(sorted(known or ())) or 'no arguments'}). Whose memory this is "
                "(agent, user, chat, visibility) is fixed by the server."
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_refusal(name, exc.__cause__)) from exc.__cause__
            raise


def build_server(
    home: Path | str | None = None,
    *,
    scope: Scope | None = None,
    settings: Settings | None = None,
    clock: Clock | None = None,
) -> MCPServer[None]:
    """The MCP server for the memoracle workspace at `home` (or `settings`), every tool
    fixed to `scope` (agent and user default to `workspace.agent` / `workspace.user`).
    Its engine opens on the first tool call and closes when the server stops."""
    settings = settings or load(home)
    tools = MemoryTools(settings, scope, clock=clock)

    @asynccontextmanager
    async def lifespan(_: MCPServer[None]) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            tools.close()

    server = _Server(
        SERVER_NAME,
        title="memoracle long-term memory",
        instructions=INSTRUCTIONS,
        version=installed_version(),
        lifespan=lifespan,
        log_level="WARNING",
    )
    for method, hints in tools.tools():
        name = method.__name__
        server.add_tool(
            method,
            name=name,
            description=inspect.cleandoc(method.__doc__ or ""),
            annotations=hints,
            structured_output=False,
        )
        server.parameters[name] = frozenset(_parameters(method))
    return server


def run(
    home: Path | str | None = None,
    *,
    transport: Literal["stdio", "http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    scope: Scope | None = None,
    settings: Settings | None = None,
    clock: Clock | None = None,
) -> None:
    """Serve memoracle over MCP until the client disconnects (stdio: stdout carries only
    the protocol, logs go to stderr) or the process is stopped (http: streamable HTTP at
    http://HOST:PORT/mcp). Nothing guards the HTTP endpoint but the address it listens
    on: keep it on loopback."""
    if transport not in ("stdio", "http"):
        raise InvalidInput(f"transport must be stdio or http, not {transport!r}")
    settings = settings or load(home)
    if not settings.db_path.exists():
        log.warning(
            "no memoracle store at %s yet: tools will say so until `memoracle init --home %s`",
            settings.home,
            settings.home,
        )
    server = build_server(scope=scope, settings=settings, clock=clock)
    if transport == "stdio":
        server.run("stdio")
        return
    if not _is_loopback(host):
        log.warning(
            "listening on %s: anyone who can reach this address can read and change this "
            "memory (the MCP endpoint has no authentication)",
            host,
        )
    anyio.run(_serve_http, server, host, port)


async def _serve_http(server: MCPServer[None], host: str, port: int) -> None:
    import uvicorn  # the mcp SDK's own HTTP server

    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    # log_config=None: uvicorn's records go to our stderr handler, not its stdout default.
    config = uvicorn.Config(app, host=host, port=port, log_config=None, log_level="warning")
    log.info("memoracle MCP server on http://%s:%d%s", host, port, HTTP_PATH)
    await uvicorn.Server(config).serve()


def _refusal(tool: str, error: ValidationError) -> str:
    """A validation error as the model should read it: which argument, what was wrong."""
    parts = []
    for err in error.errors():
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        where = where.lstrip(".") or "arguments"
        if err["type"] == "missing":
            parts.append(f"`{where}` is required")
            continue
        got = err.get("input")
        shown = json.dumps(got, ensure_ascii=False, default=str)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        parts.append(f"`{where}`: {err['msg'].lower()} (got {type(got).__name__} {shown})")
    return f"{tool} refused its arguments, nothing was changed: {'; '.join(parts)}."


def _parameters(method: Any) -> list[str]:
    return [p for p in inspect.signature(method).parameters if p != "self"]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
