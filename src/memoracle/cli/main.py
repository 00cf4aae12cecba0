"""The `memoracle` group and its global options (--home, --now, --set).

The group loads a command's module when the command is asked for (`COMMANDS`), not
every module at start: `memoracle recall` as a process per turn must not pay for the
graph, the nightly jobs, the installer and the benchmark harness it does not run.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from memoracle.cli.context import (
    Context,
    parse_time,
)

#: Each command (or group) of `memoracle`, and the module under memoracle.cli defining it.
COMMANDS: dict[str, str] = {
    "capture": "capture", "ingest": "capture",
    "graph": "graph",
    "nightly": "jobs", "health": "jobs", "audit": "jobs", "doctor": "jobs",
    "pointers": "jobs", "canary": "jobs",
    "dedup": "lifecycle", "archive": "lifecycle", "restore": "lifecycle",
    "pending": "lifecycle", "resolve": "lifecycle", "score": "lifecycle",
    "list": "memories", "get": "memories", "remember": "memories", "forget": "memories",
    "stats": "memories",
    "checkpoint": "openclaw", "install": "openclaw", "uninstall": "openclaw",
    "openclaw": "openclaw",
    "schedule": "schedule", "daemon": "schedule",
    "search": "search", "recall": "search", "explain": "search", "reindex": "search",
    "serve": "serve", "mcp": "serve", "bench": "serve",
    "init": "setup", "config": "setup", "demo": "setup",
    "export": "transfer", "import": "transfer",
}  # fmt: skip


class LazyGroup(click.Group):
    """A group whose commands are registered by importing their module, on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"memoracle.cli.{COMMANDS[cmd_name]}")
        return super().get_command(ctx, cmd_name)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="memoracle")
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="MEMORACLE_HOME",
    help="Workspace home (default: $MEMORACLE_HOME, else the per-user data dir).",
)
@click.option(
    "--now",
    envvar="MEMORACLE_NOW",
    metavar="ISO",
    help="Run as if it were this time (ISO-8601; no offset = workspace.timezone).",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a setting for this run, e.g. --set recall.budget_tokens=1500.",
)
@click.pass_context
def main(
    ctx: click.Context, home: Path | None, now: str | None, overrides: tuple[str, ...]
) -> None:
    """memoracle: local-first long-term memory for LLM agents.

    \b
    Example:
      memoracle init
      memoracle capture --user "I prefer dark mode. Never push to main."
      memoracle list
    """
    at = parse_time(now, "--now / MEMORACLE_NOW")
    pairs = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        pairs[key.strip()] = value.strip()
    ctx.obj = Context(home=home, now=at, overrides=pairs)
