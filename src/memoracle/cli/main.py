"""The `memoracle` group and its global options (--home, --now, --set)."""

from __future__ import annotations

from pathlib import Path

import click

from memoracle.cli.context import (
    Context,
    parse_time,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
