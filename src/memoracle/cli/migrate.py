"""A store moved between SQLite and PostgreSQL: `migrate`."""

from __future__ import annotations

from contextlib import ExitStack

import click

from memoracle import reports
from memoracle.cli.context import current, echo_json, engine_errors, home_option, progress
from memoracle.cli.main import main
from memoracle.engine import Engine
from memoracle.jobs import migrate
from memoracle.jobs.transfer import HasRows


@main.command(name="migrate")
@home_option
@click.option(
    "--to",
    "to",
    required=True,
    metavar="URL|PATH",
    help="The empty store to copy into: postgresql://USER:PASSWORD@HOST:PORT/DATABASE,"
    " or the path of a SQLite file (a new one, or an empty store).",
)
@click.option(
    "--from",
    "from_",
    metavar="URL|PATH",
    help="Copy this store instead of the workspace's: a PostgreSQL URL or a SQLite file.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be copied; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def migrate_command(to: str, from_: str | None, dry_run: bool, as_json: bool) -> None:
    """Copy the whole store (memories, turns, provenance, audit log, runs, vectors,
    slots, the cold tier, the graph, held writes) into an empty PostgreSQL database or
    SQLite file, keeping every id. Built on export and import; one transaction on the
    destination, checked before it commits by row counts and a content hash computed
    the same way on both sides: a failure anywhere leaves the destination empty. A
    destination that holds anything is refused (never merged). Progress goes to
    stderr; the password is never printed.

    It does not switch the workspace: it prints the setting that would (storage.url).

    \b
    Examples:
      memoracle migrate --to postgresql://memoracle@db.internal:5432/memory --dry-run
      memoracle migrate --to postgresql://memoracle@db.internal:5432/memory
      memoracle migrate --from postgresql://memoracle@db.internal/memory --to back.db
    """
    with engine_errors(), ExitStack() as stack:
        target = migrate.parse_target(to)
        settings = current().settings(missing_ok=from_ is not None)
        source: Engine | HasRows
        if from_ is not None:
            opened = migrate.open_store(
                migrate.parse_target(from_), clock=current().clock(settings), create=False
            )
            stack.callback(migrate.close_store, opened)
            source = opened
        else:
            source = stack.enter_context(current().engine())
        home = settings.home
        on_progress = stack.enter_context(progress("migrating"))
        report = migrate.migrate(
            source,
            target,
            dry_run=dry_run,
            home=home,
            on_step=None if dry_run else _step,
            on_progress=on_progress,
        )
    if as_json:
        echo_json(reports.migrate_report(report))
    else:
        _print(report)
    if report.problems:
        raise SystemExit(1)


def _step(text: str) -> None:
    click.echo(f"migrate: {text}", err=True)


def _print(report: migrate.MigrateReport) -> None:
    rows = ", ".join(f"{table} {n}" for table, n in report.counts.items() if n)
    total = sum(report.counts.values())
    if report.dry_run:
        click.echo(
            f"dry run, nothing written: would copy {total} row(s) from {report.source}"
            f" to {report.destination} ({report.destination_state})"
        )
        click.echo(f"  {rows or 'an empty store'}")
        for problem in report.problems:
            click.echo(f"would stop: {problem}")
        return
    click.echo(
        f"migrated {total} row(s) from {report.source} to {report.destination}"
        f" in {report.seconds:.1f} s; checked: row counts and content hash"
        f" {(report.destination_hash or '')[:16]} equal on both sides"
    )
    click.echo(f"  {rows or 'an empty store'}")
    if report.switch is not None:
        click.echo(f"The workspace was not switched. To use the copy, {report.switch.note}:")
        for line in report.switch.config.splitlines():
            click.echo(f"  {line}")
        if report.switch.env:
            click.echo(f"or: export {report.switch.env}")
