"""OpenClaw: `checkpoint`, `install`, `uninstall`, `openclaw snippets`."""

from __future__ import annotations

import functools
import sys
from contextlib import ExitStack
from pathlib import Path

import click

from memoracle import reports
from memoracle.cli.context import (
    current,
    echo_json,
    engine_errors,
    executable,
    fail,
    home_option,
    read_stdin,
    scope_options,
)
from memoracle.cli.main import main
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.errors import EngineError
from memoracle.jobs import (
    checkpoint,
    schedule,
)
from memoracle.openclaw import install
from memoracle.openclaw import workspace as openclaw
from memoracle.serialize import records
from memoracle.types import Scope


@main.command(name="checkpoint")
@home_option
@click.option(
    "--text",
    metavar="TEXT|-",
    help="What to save: bullets or 'user:'/'assistant:' lines; - reads it from stdin.",
)
@click.option(
    "--session-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A session transcript: capture every turn of it not captured yet.",
)
@click.option(
    "--openclaw-agent",
    metavar="ID",
    help="The OpenClaw agent whose live session transcript to capture.",
)
@click.option("--session", help="Session id for --text (default: checkpoint-YYYY-MM-DD).")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def checkpoint_command(
    text: str | None,
    session_file: Path | None,
    openclaw_agent: str | None,
    session: str | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Save what the live session said that memory may not have yet, before the host
    compacts it: the turns of a transcript not captured yet (by session and turn id, so
    a second checkpoint changes nothing), and/or a text, tagged as a checkpoint, with a
    "## Checkpoint [HH:MM]" section in today's daily note. Always exits 0, so it never
    fails the host's compaction: problems are printed on stderr.

    \b
    Example:
      memoracle checkpoint --openclaw-agent main
      echo "- Decided to ship on Monday" | memoracle checkpoint --text -
    """
    ctx = current()
    done: list[checkpoint.CheckpointReport] = []
    problems: list[str] = []
    if session_file is not None and openclaw_agent is not None:
        problems.append(f"--openclaw-agent {openclaw_agent} ignored: --session-file was given.")
    try:
        settings = ctx.settings()
        clock = ctx.clock(settings)
        with ExitStack() as stack:

            def engine() -> Engine:
                return stack.enter_context(Engine.open(settings, clock=clock))

            opened = functools.cache(engine)
            transcript = session_file
            if transcript is None and openclaw_agent is not None:
                try:
                    transcript = openclaw.session_file(openclaw_agent)
                except EngineError as exc:  # the text, if any, is still saved
                    problems.append(str(exc))
            if transcript is not None:
                done.append(
                    checkpoint.save_session(
                        settings, transcript, engine=opened, clock=clock, scope=scope
                    )
                )
            if text is not None:
                said = read_stdin() if text == "-" else text
                done.append(
                    checkpoint.save(
                        settings, said, engine=opened, clock=clock, scope=scope, session=session
                    )
                )
            if not done and not problems:
                problems.append(
                    "Nothing to save: pass --text TEXT (or - for stdin), --session-file PATH"
                    " or --openclaw-agent ID."
                )
    except click.ClickException as exc:  # stdin that is not UTF-8
        problems.append(exc.format_message())
    except Exception as exc:  # never fail the host: say it and exit 0
        problems.append(
            str(exc) if isinstance(exc, EngineError) else f"{type(exc).__name__}: {exc}"
        )
    if as_json:
        echo_json(
            records.envelope(
                checkpoints=[reports.checkpoint_report(r) for r in done], problems=problems
            )
        )
    else:
        for report in done:
            for line in checkpoint.describe(report):
                click.echo(line, err=line.startswith("problem: "))
    for problem in problems:
        click.echo(f"problem: {problem}", err=True)


@main.command(name="install")
@home_option
@click.option(
    "--openclaw-workspace",
    "workspace",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="The OpenClaw workspace folder (by default ~/.openclaw/workspace).",
)
@click.option("--yes", is_flag=True, help="Also put the schedule in your crontab, unasked.")
@click.option("--dry-run", is_flag=True, help="Say what it would do; change nothing.")
@click.option("--force", is_flag=True, help="Use a folder that does not look like a workspace.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def install_command(workspace: Path, yes: bool, dry_run: bool, force: bool, as_json: bool) -> None:
    """Set memoracle up for an OpenClaw workspace: check that SQLite has FTS5, copy
    MEMORY.md (and every file memoracle rewrites) to HOME/backups first, create the
    store with the workspace as the place for rendered files, import the existing
    MEMORY.md and daily notes, then print the snippets to paste into OpenClaw (nothing
    edits your config) and offer the schedule. Safe to run again: the first backups are
    kept, nothing is imported twice. `memoracle uninstall` undoes it.

    \b
    Example:
      memoracle --home ~/agent-memory install --openclaw-workspace ~/.openclaw/workspace
    """
    ctx = current()
    with engine_errors():
        settings = ctx.settings(missing_ok=True)
        report = install.install(
            settings, workspace, clock=ctx.clock(settings), dry_run=dry_run, force=force
        )
    if as_json:
        echo_json(reports.install_report(report))
        return
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    would = "would " if dry_run else ""
    if report.already_installed:
        click.echo(f"already installed into {report.workspace}: first backups kept")
    for backup in report.backups:
        click.echo(
            f"{would}back up {backup.path} -> {backup.backup} (sha256 {backup.sha256[:12]}…)"
        )
    if report.ingest is not None:
        i = report.ingest
        click.echo(
            f"imported {i.files} file(s): {i.memories_added} memories added,"
            f" {i.memories_bumped} seen again"
        )
    elif dry_run and report.to_import:
        click.echo(f"would import {', '.join(p.name for p in report.to_import)}")
    if dry_run:
        click.echo("nothing changed (dry run)")
        return
    click.echo(f"installed into {report.workspace} (home {report.home})\n")
    click.echo(openclaw.render_text(openclaw.snippets(settings, executable=executable())))
    click.echo("")
    _offer_schedule(settings, yes=yes)


def _offer_schedule(settings: Settings, *, yes: bool) -> None:
    """Put the jobs in the crontab when asked to (--yes, or yes at the prompt)."""
    later = f"memoracle --home {settings.home} schedule install"
    if not yes and not (
        sys.stdin.isatty()
        and click.confirm(
            "Run the nightly job, the health check and the weekly probe from your crontab?",
            default=False,
        )
    ):
        click.echo(f"schedule: not installed; later: {later} (or memoracle daemon)")
        return
    try:
        lines = schedule.install_crontab(settings, executable=executable())
    except EngineError as exc:
        click.echo(f"schedule: {exc}", err=True)
        return
    click.echo(f"schedule: {len(lines) - 1} job(s) in your crontab (memoracle schedule remove)")


@main.command(name="uninstall")
@home_option
@click.option("--keep-db", is_flag=True, help="Keep memoracle.db (everything else is undone).")
@click.option("--force", is_flag=True, help="Delete the database without asking.")
@click.option(
    "--export",
    "export_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Where the export goes (default: HOME/uninstall/<time>/memoracle-export.jsonl).",
)
@click.option("--dry-run", is_flag=True, help="Show the plan; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def uninstall_command(
    keep_db: bool, force: bool, export_path: Path | None, dry_run: bool, as_json: bool
) -> None:
    """Take memoracle out of the workspace it was installed into: export the whole
    memory first (nothing else happens if that fails), put MEMORY.md and the other
    backed-up files back (the current ones saved beside the export), move the files
    memoracle created there too, remove this HOME's crontab lines, and delete the
    database only when asked, after showing how many memories it holds.

    \b
    Example:
      memoracle uninstall --dry-run
      memoracle uninstall --keep-db
    """
    ctx = current()
    with engine_errors():
        settings = ctx.settings()
        clock = ctx.clock(settings)
        plan = install.uninstall(
            settings, keep_db=keep_db, export_path=export_path, dry_run=True, clock=clock
        )
    if dry_run:
        if as_json:
            echo_json(reports.uninstall_report(plan))
        else:
            _echo_uninstall(plan)
            click.echo("nothing changed (dry run)")
        return
    if not keep_db and not force and plan.database.exists():
        if not sys.stdin.isatty():
            fail(
                f"{plan.database} holds {plan.memories} memories: pass --force to delete it,"
                " or --keep-db to keep it. Nothing was changed."
            )
        if not click.confirm(
            f"Delete {plan.database} with {plan.memories} memories (exported first)?",
            default=False,
            err=True,
        ):
            fail("Nothing was changed. Use --keep-db to uninstall and keep the database.")
    with engine_errors():
        done = install.uninstall(
            settings, keep_db=keep_db, export_path=export_path, dry_run=False, clock=clock
        )
    if as_json:
        echo_json(reports.uninstall_report(done))
        return
    _echo_uninstall(done)
    if done.crontab_removed is not None:
        click.echo(f"removed {done.crontab_removed} crontab line(s)")
    click.echo(f"{'deleted' if done.db_deleted else 'kept'} {done.database}")


def _echo_uninstall(report: install.UninstallReport) -> None:
    would = "would " if report.dry_run else ""
    if report.export is not None:
        click.echo(f"{would}export {report.memories} memories to {report.export}")
    click.echo(f"{would}save the current files in {report.saved}")
    for action in report.actions:
        click.echo(f"  {action.kind:<13} {action.path} ({action.detail})")
    for note in report.notes:
        click.echo(f"note: {note}", err=True)


@main.group(name="openclaw")
def openclaw_group() -> None:
    """OpenClaw: what to paste into it (memoracle never edits its config)."""


@openclaw_group.command(name="snippets")
@home_option
@click.option("--agent", metavar="ID", help="Checkpoint this agent's live session transcript.")
@click.option("--json", "as_json", is_flag=True, help="Print the snippets as JSON.")
def openclaw_snippets(agent: str | None, as_json: bool) -> None:
    """Print the block for AGENTS.md, the agents.defaults.compaction.memoryFlush
    object (only keys OpenClaw 2026.9.6 takes) with the flush prompt that runs a
    checkpoint before compaction (memoracle's memory plugin sends it), and the
    mcp.servers entry that starts `memoracle mcp`, each with where it goes. Nothing is
    written.

    \b
    Example:
      memoracle openclaw snippets --agent main
    """
    with engine_errors():
        settings = current().settings()
        found = openclaw.snippets(settings, executable=executable(), openclaw_agent=agent)
    if as_json:
        echo_json(records.envelope(**openclaw.as_json(found)))
        return
    click.echo(openclaw.render_text(found))
