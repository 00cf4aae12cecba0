"""The `memoracle` group and its global options (--home, --now, --set).

The group loads a command's module when the command is asked for (`COMMANDS`), not
every module at start: `memoracle recall` as a process per turn must not pay for the
graph, the nightly jobs, the installer and the benchmark harness it does not run.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from memoracle.cli.context import (
    Context,
    parse_time,
)

#: Each command (or group) of `memoracle`, and the module under memoracle.cli defining it.
COMMANDS: dict[str, str] = {
    "capture": "capture", "ingest": "capture", "queue": "capture",
    "graph": "graph",
    "nightly": "jobs", "health": "jobs", "audit": "jobs", "doctor": "jobs",
    "pointers": "jobs", "canary": "jobs", "redact": "jobs",
    "dedup": "lifecycle", "archive": "lifecycle", "restore": "lifecycle",
    "pending": "lifecycle", "resolve": "lifecycle", "score": "lifecycle", "check": "lifecycle",
    "list": "memories", "get": "memories", "remember": "memories", "forget": "memories",
    "stats": "memories",
    "checkpoint": "openclaw", "install": "openclaw", "uninstall": "openclaw",
    "openclaw": "openclaw",
    "schedule": "schedule", "daemon": "schedule",
    "search": "search", "recall": "search", "explain": "search", "reindex": "search",
    "serve": "serve", "mcp": "serve", "bench": "bench",
    "init": "setup", "config": "setup", "demo": "setup",
    "undo-model": "thinking",
    "export": "transfer", "import": "transfer", "migrate": "migrate",
    "complete": "tidy", "advise": "tidy",
    "ui": "ui",
}  # fmt: skip


def _import_all() -> None:
    for module in sorted(set(COMMANDS.values())):
        importlib.import_module(f"memoracle.cli.{module}")


class _Commands(dict[str, click.Command]):
    """The group's table: whoever reads it whole (help, completion, a test walking every
    command) gets every command, their modules imported first; one command is looked up
    by `LazyGroup.get_command` without that."""

    def __iter__(self) -> Iterator[str]:
        _import_all()
        return super().__iter__()

    def __len__(self) -> int:
        _import_all()
        return super().__len__()

    def __contains__(self, key: object) -> bool:
        _import_all()
        return super().__contains__(key)

    def __getitem__(self, key: str) -> click.Command:
        _import_all()
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        _import_all()
        return super().get(key, default)

    def keys(self) -> Any:
        _import_all()
        return super().keys()

    def values(self) -> Any:
        _import_all()
        return super().values()

    def items(self) -> Any:
        _import_all()
        return super().items()


class LazyGroup(click.Group):
    """A group whose commands are registered by importing their module, on first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._table = _Commands(self.commands)
        self.commands = self._table

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is not None:
            importlib.import_module(f"memoracle.cli.{module}")
        return dict.get(self._table, cmd_name)  # this one, not the whole table


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
