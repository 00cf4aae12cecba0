"""The whole memory as JSONL: `export`, `import`."""

from __future__ import annotations

from pathlib import Path

import click

from memoracle import reports
from memoracle.cli.context import (
    current,
    echo_json,
    engine_errors,
    fail,
    home_option,
    progress,
    scope_options,
)
from memoracle.cli.main import main
from memoracle.jobs import (
    transfer,
)
from memoracle.types import Scope


@main.command(name="export")
@home_option
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--vectors", is_flag=True, help="Write the stored vectors too (large).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@scope_options
def export_command(path: Path, vectors: bool, as_json: bool, scope: Scope) -> None:
    """Write the whole memory to PATH as JSONL: memories with their lifecycle and
    provenance, turns, the knowledge graph, the audit log and the embedding model id
    (one line each, after a header). Read in one snapshot; PATH is replaced only by a
    whole export.

    With --user-id, --agent, --chat or --visibility: only what that context may see
    (docs/scopes.md) — its memories with their turns, then its turns — to read or hand
    over; such a file is not a backup, and `import` refuses it.

    \b
    Examples:
      memoracle export ~/memoracle-export.jsonl
      memoracle export ~/alice.jsonl --user-id alice
    """
    scoped = scope != Scope()
    if scoped and vectors:
        fail("--vectors goes with a whole export, not with --user-id/--agent/--chat.", code=2)
    with engine_errors(), current().engine() as engine, progress("exporting") as on_progress:
        if scoped:
            report = transfer.export_scope(engine, path, scope, on_progress=on_progress)
        else:
            report = transfer.export(engine, path, vectors=vectors, on_progress=on_progress)
    if as_json:
        echo_json(reports.export_report(report))
        return
    rows = ", ".join(f"{table} {n}" for table, n in report.counts.items() if n)
    click.echo(f"exported {report.lines} line(s), {report.bytes} bytes, to {report.path}")
    click.echo(f"  {rows or 'an empty store'}")


@main.command(name="import")
@home_option
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_command(path: Path, as_json: bool) -> None:
    """Load a file written by `memoracle export` (or a PostgreSQL store's backup,
    HOME/backups/*.pg.jsonl.gz: an export gzipped) into this store, which must be empty
    (`memoracle --home NEW init` first), keeping every id. All or nothing: a file from a
    newer memoracle, a damaged line (named by number) or a file cut short is refused
    and the store stays as it was.

    \b
    Example:
      memoracle --home ~/new-memory init
      memoracle --home ~/new-memory import ~/memoracle-export.jsonl
    """
    with engine_errors(), current().engine() as engine, progress("importing") as on_progress:
        report = transfer.import_(engine, path, on_progress=on_progress)
    if as_json:
        echo_json(reports.import_report(report))
        return
    rows = ", ".join(f"{table} {n}" for table, n in report.counts.items() if n)
    click.echo(
        f"imported {report.lines} line(s) from {report.path}"
        f" (memoracle {report.memoracle_version}, exported {report.exported_at})"
    )
    click.echo(f"  {rows or 'an empty store'}")
    if report.needs_reindex:
        click.echo("some memories or turns have no vector for this model. Run: memoracle reindex")
