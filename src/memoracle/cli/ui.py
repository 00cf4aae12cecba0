"""`memoracle ui`: the web page to see and correct what the agent remembers."""

from __future__ import annotations

import sys

import click

from memoracle.cli.context import current, engine_errors, home_option
from memoracle.cli.main import main
from memoracle.types import Scope


@main.command(name="ui")
@home_option
@click.option("--port", type=int, default=8766, show_default=True, help="The port to listen on.")
@click.option(
    "--host",
    default=None,
    help="Listen on this address instead of 127.0.0.1. Another than loopback is allowed only "
    "when named here, with a warning: anyone who reaches it could try the token.",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser.")
@click.option("--agent", help="Whose view: the agent (default: workspace.agent).")
@click.option("--user-id", help="Whose view: the user (default: workspace.user, the owner).")
def ui_command(
    port: int, host: str | None, open_browser: bool, agent: str | None, user_id: str | None
) -> None:
    """Serve a local web page to see and correct what the agent remembers: memories
    (filtered, paged), one memory (its turns, what it replaced, its history, why it
    comes up), recall as the agent gets it, review (held writes, disputes, duplicates,
    forget by description), health and the graph. Edits, pins, forgets, restores, times
    to live and decisions go through the same engine calls as the CLI, audited as "ui".

    One person's private view at a time (the owner's unless --agent/--user-id), on
    127.0.0.1, behind a random token printed in the URL (then kept in a cookie).

    \b
    Example:
      memoracle ui --open
      memoracle ui --port 9000 --user-id alice
    """
    from memoracle import ui  # starlette, jinja2, uvicorn: loaded for this command only

    ctx = current()
    with engine_errors(2):
        settings = ctx.settings()
        try:
            ui.run(
                settings,
                host=host or "127.0.0.1",
                port=port,
                scope=Scope(agent=agent, user=user_id),
                clock=ctx.clock(settings),
                open_browser=open_browser,
                say=lambda line: click.echo(line, err=line.startswith("warning")),
            )
        except OSError as exc:
            where = f"[{host}]:{port}" if host and ":" in host else f"{host or '127.0.0.1'}:{port}"
            click.echo(f"error: cannot listen on {where}: {exc.strerror or exc}", err=True)
            sys.exit(2)
