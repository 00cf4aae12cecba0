"""Setting up: `init`, `config show`, and `demo` (a bundled session ingested, a few
turns captured, recall printed).
"""

from __future__ import annotations

import shlex
import shutil
import sys
import tempfile
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import click

from memoracle.cli.context import (
    SAMPLE_SESSION,
    current,
    echo_json,
    engine_errors,
    home_option,
    jsonable,
    memory_line,
)
from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.config_file import toml_value
from memoracle.engine import Engine
from memoracle.serialize import records
from memoracle.types import Turn


@main.command()
@home_option
@click.option(
    "--openclaw-workspace",
    type=click.Path(path_type=Path),
    help="Render MEMORY.md and memory/ into this OpenClaw workspace folder.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Start an empty store even where a damaged or missing one was in use (the"
    " damaged file is moved into HOME/damaged/, kept). `memoracle doctor --fix` recovers"
    " it instead.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def init(openclaw_workspace: Path | None, force: bool, as_json: bool) -> None:
    """Create the workspace: config file, database, folders. Safe to run again. Where a
    store was in use and is now missing, empty or damaged, it refuses (exit 2) and names
    the recovery, `memoracle doctor --fix`, unless --force.

    \b
    Example:
      memoracle init --home ~/agent-memory --openclaw-workspace ~/.openclaw/workspace
    """
    with engine_errors():
        settings = current().settings(missing_ok=True)
        report = Engine.init(
            settings,
            clock=current().clock(settings),
            openclaw_workspace=openclaw_workspace,
            force=force,
        )
    if as_json:
        echo_json(records.init_report(report))
        return
    click.echo(f"workspace  {report.home}")
    click.echo(f"database   {report.database} (schema v{report.schema_version})")
    click.echo(f"config     {report.config}")
    click.echo(f"files      {report.files_dir}")
    click.echo(
        f"created {len(report.created)} item(s)" if report.created else "already initialised"
    )


@main.group()
def config() -> None:
    """Show the effective configuration."""


@config.command("show")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def config_show(as_json: bool) -> None:
    """Print every setting, its effective value and where it came from.

    \b
    Example:
      MEMORACLE_RECALL_BUDGET_TOKENS=1500 memoracle config show
    """
    with engine_errors():
        settings = current().settings(missing_ok=True)
    rows = settings.items()
    if as_json:
        echo_json(
            records.envelope(
                home=str(settings.home),
                config_file=str(settings.config_path),
                settings={k: {"value": jsonable(v), "source": s} for k, v, s, _ in rows},
            )
        )
        return
    click.echo(f"# home: {settings.home}")
    click.echo(
        f"# file: {settings.config_path}" + ("" if settings.config_path.exists() else " (absent)")
    )
    width = max(len(k) for k, *_ in rows)
    for key, value, source, _help in rows:
        click.echo(f"{key:<{width}} = {toml_value(value):<34} # {source}")


DEMO_ZONE = "Europe/Berlin"  # the bundled session's user writes from GMT+2


DEMO_TURNS = (
    "Remind me to renew the domain by next Tuesday.",
    "Я переехал в Лион в прошлом месяце.",
    "Je préfère les réunions le matin.",
    "Nunca despliegues los viernes.",
    "Remember that the NAS API key is sk-proj-Zq81bXc4Lm0Vt7Wn2Ry5Kd9Pf3Hs6Ju1.",
)


@main.command()
@home_option
def demo() -> None:
    """Try memoracle on a bundled OpenClaw session, in a throwaway workspace.

    Ingests the sample session (May 2026), captures a few turns in four languages as if
    the next morning, prints what was stored and the recall block for a question. Uses
    --home if given, else a new temporary folder; --now moves the clock.
    """
    ctx = current()
    home = ctx.home or Path(tempfile.mkdtemp(prefix="memoracle-demo-"))
    with engine_errors():
        settings = load(home, overrides={"workspace.timezone": DEMO_ZONE, **ctx.overrides})
        clock = ctx.clock(settings)
        if not isinstance(clock, FixedClock):
            clock = FixedClock(datetime(2026, 5, 15, 7, 0, tzinfo=UTC))
        Engine.init(settings, clock=clock)
        with (
            Engine.open(settings, clock=clock) as engine,
            resources.as_file(resources.files("memoracle.data") / SAMPLE_SESSION) as sample,
        ):
            zone = engine.zone
            prog, path = _program()
            click.echo(f"workspace: {home}")
            click.echo("To run the $ lines below yourself, first:")
            click.echo(
                f"  export MEMORACLE_HOME={shlex.quote(str(home))}"
                f" MEMORACLE_NOW={clock.now().isoformat()}"
                f" MEMORACLE_WORKSPACE_TIMEZONE={DEMO_ZONE}{path}"
            )
            click.echo(f"\n$ {prog} ingest {shlex.quote(str(sample))}")
            report = engine.ingest([sample])
            click.echo(
                f"  {report.turns} turns → {report.episodes_added} episodes, "
                f"{report.memories_added} memories, {report.skipped_noise} noise turns skipped"
            )
            for i, text in enumerate(DEMO_TURNS):
                click.echo(f"\n$ {prog} capture --user {shlex.quote(text)}")
                clock.advance(minutes=1)
                result = engine.capture([Turn("user", text, clock.now(), "demo", str(i))])
                for m in result.added:
                    click.echo(f"  added {memory_line(m, zone)}")
                if not result.added:
                    click.echo(f"  no memory ({', '.join(result.skipped) or 'no rule matched'})")
            click.echo(f"\n$ {prog} list")
            for m in engine.list_memories(limit=100):
                click.echo(memory_line(m, zone))
            question = "Can I upgrade the Nextcloud database tomorrow?"
            click.echo(f"\n$ {prog} recall {shlex.quote(question)} --budget 250")
            block = engine.recall(question, budget=250)
            click.echo(block.text)
            click.echo(f"({block.tokens}/{block.budget} tokens, {block.tokenizer})")
            s = engine.stats()
            click.echo(
                f"\n{s.memories} memories from {s.episodes} episodes in {s.sessions} sessions. "
                f"Look closer: {prog} get m_1"
            )


def _program() -> tuple[str, str]:
    """How a shell reaches this memoracle, and what to add to the demo's `export` line
    for that: `memoracle` when that name on PATH is this program; `memoracle` with the
    script's folder put on PATH (a venv not activated); else `python -m memoracle.cli`."""
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    found = shutil.which("memoracle")
    if found and script and Path(found).resolve() == script:
        return "memoracle", ""
    if script and script.name == "memoracle" and script.is_file():
        return "memoracle", f' PATH="{script.parent}:$PATH"'
    return shlex.join([sys.executable, "-m", "memoracle.cli"]), ""
