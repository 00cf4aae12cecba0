"""Long-running doors: `serve` (the warm server) and `mcp` (the MCP server)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from memoracle.cli.context import current, engine_errors, home_option, scope_options
from memoracle.cli.main import main
from memoracle.types import Scope


@main.command(name="serve")
@home_option
@click.option(
    "--socket",
    "socket_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The unix socket to listen on (default: serve.sock in the home folder).",
)
@click.option(
    "--idle-exit",
    type=click.FloatRange(min=0),
    default=0,
    show_default=True,
    metavar="SECONDS",
    help="Exit after this long without a request (0: never).",
)
@scope_options
def serve_command(socket_file: Path | None, idle_exit: float, scope: Scope) -> None:
    """Keep one engine open and answer JSON requests on a unix socket, one object per
    line: ping, recall, capture, checkpoint, status (docs/cli.md). A host that calls
    memoracle on every turn (the OpenClaw plugin) saves a process start per call. The
    engine is opened, the model loaded and a recall previewed (nothing stored changes)
    before the socket appears.

    The scope given here is the default; a request may name its own agent, user_id,
    chat and visibility, checked as `capture` checks them. The socket is mode 0600: it
    trusts every process of this account, and no one else. A socket left behind by a
    server that died is replaced; a live one is refused. SIGTERM stops it cleanly.
    Vectors of new texts are embedded in a background thread: a capture never waits
    for them, and a recall finds what has no vector yet by its words.

    \b
    Example:
      memoracle serve
      memoracle serve --socket /run/user/1000/memoracle.sock --idle-exit 3600
    """
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    from memoracle.serve.server import WarmServer, socket_path

    ctx = current()
    with engine_errors(2):
        settings = ctx.settings()
        server = WarmServer(settings, scope=scope, clock=ctx.clock(settings), idle_exit=idle_exit)
        server.serve(socket_path(settings, socket_file))


@main.command(name="mcp")
@home_option
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts the server; http for streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="http: the address.")
@click.option("--port", type=int, help="http: the port (default: 8765, mcp_server.DEFAULT_PORT).")
@scope_options
def mcp_command(transport: str, host: str, port: int | None, scope: Scope) -> None:
    """Serve the memory tools over MCP: memory_recall, memory_search, memory_get,
    memory_remember, memory_forget, memory_checkpoint and memory_status. Every tool
    works inside the scope given here (--agent, --user-id, --chat, --visibility); a
    client cannot name another. On stdio, stdout carries only the protocol and logs go
    to stderr. The HTTP endpoint has no authentication: keep it on loopback.

    \b
    Example:
      memoracle mcp --user-id alice
      memoracle mcp --transport http --port 8765
    """
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    from memoracle import mcp_server  # the MCP SDK is heavy: loaded for this command only

    ctx = current()
    with engine_errors(2):
        settings = ctx.settings()
        try:
            mcp_server.run(
                transport="http" if transport == "http" else "stdio",
                host=host,
                port=port or mcp_server.DEFAULT_PORT,
                scope=scope,
                settings=settings,
                clock=ctx.clock(settings),
            )
        except KeyboardInterrupt:
            pass
