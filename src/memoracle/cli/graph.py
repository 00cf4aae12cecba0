"""The knowledge graph: `graph entities|relations|show|compact`."""

from __future__ import annotations

import click

from memoracle import reports
from memoracle.cli.context import (
    current,
    echo_json,
    engine_errors,
    home_option,
    scope_options,
)
from memoracle.cli.main import main
from memoracle.jobs import graph_log
from memoracle.serialize import records
from memoracle.types import Scope


@main.group(name="graph")
def graph_group() -> None:
    """The knowledge graph: entities (people, places, tools, projects…) and relations
    (works_at, lives_in, uses, family_of…) read by rules from the memories."""


@graph_group.command(name="entities")
@home_option
@click.option("--type", "type_", help="Only entities of this type (Person, Location, …).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@scope_options
def graph_entities(type_: str | None, limit: int, as_json: bool, scope: Scope) -> None:
    """Entities named by live memories this scope may see, most named first.

    \b
    Example:
      memoracle graph entities --type Person
    """
    with engine_errors(), current().engine() as engine:
        found = engine.graph_entities(type_=type_, limit=limit, scope=scope)
    if as_json:
        echo_json(records.envelope(entities=[records.entity(e) for e in found]))
        return
    for e in found:
        click.echo(f"{e.memories:>5}  {e.type:<14} {e.name}  ({e.key})")
    if not found:
        click.echo("no entities yet")


@graph_group.command(name="relations")
@home_option
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@scope_options
def graph_relations(limit: int, as_json: bool, scope: Scope) -> None:
    """Relations stated by live memories this scope may see, most stated first.

    \b
    Example:
      memoracle graph relations --limit 20
    """
    with engine_errors(), current().engine() as engine:
        found = engine.graph_relations(limit=limit, scope=scope)
    if as_json:
        echo_json(records.envelope(relations=[records.relation(r) for r in found]))
        return
    for r in found:
        click.echo(f"{r.memories:>5}  {r.source} {r.relation} {r.target}")
    if not found:
        click.echo("no relations yet")


@graph_group.command(name="show")
@home_option
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@scope_options
def graph_show(name: str, as_json: bool, scope: Scope) -> None:
    """One entity by any of its names: type, aliases, relations, the memories naming it
    (what this scope may see).

    \b
    Example:
      memoracle graph show "my wife Anna"
    """
    with engine_errors(), current().engine() as engine:
        view = engine.graph_show(name, scope=scope)
    if as_json:
        echo_json(
            records.envelope(
                entity=records.entity(view.entity),
                relations=[records.relation(r) for r in view.relations],
                memories=[records.memory(m) for m in view.memories],
            )
        )
        return
    e = view.entity
    also = [a for a in e.aliases if a != e.name]
    click.echo(f"{e.name} ({e.type}, key {e.key})" + (f"; also {', '.join(also)}" if also else ""))
    for r in view.relations:
        click.echo(f"  {r.source} {r.relation} {r.target}  ({r.memories})")
    for m in view.memories:
        click.echo(f"  {m.ref}  {m.text}")


@graph_group.command(name="compact")
@home_option
@click.option("--dry-run", is_flag=True, help="Report the gain; change nothing.")
@click.option(
    "--min-gain",
    type=click.FloatRange(0, 100),
    default=5.0,
    show_default=True,
    help="Skip unless the log shrinks by at least this many percent.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def graph_compact(dry_run: bool, min_gain: float, as_json: bool) -> None:
    """Rewrite the graph log (knowledge-graph/graph-log.jsonl, appended each night) as
    one line per entity, relation and link. The log is first brought up to date and
    checked against the store, then copied to HOME/backups (checksum verified); the new
    log is written beside the old one and swapped in only if replaying it gives exactly
    the same graph. Interrupted at any point, the old log stays whole and the next run
    cleans up. Skipped when it would shrink by less than --min-gain percent.

    \b
    Example:
      memoracle graph compact --dry-run
      memoracle graph compact --min-gain 10
    """
    with engine_errors(), current().engine() as engine:
        report = graph_log.compact(engine, min_gain=min_gain / 100, dry_run=dry_run)
    if as_json:
        echo_json(reports.graph_compact_report(report))
        return
    sizes = (
        f"{report.lines_before:,} → {report.lines_after:,} lines, {report.bytes_before:,} →"
        f" {report.bytes_after:,} bytes ({report.gain:.0%} smaller)"
    )
    if report.compacted:
        click.echo(f"compacted {report.path}: {sizes}; backup {report.backup}")
    elif report.dry_run and report.reason is None:
        click.echo(f"would compact {report.path}: {sizes}")
    else:
        click.echo(f"left as it is ({report.reason}): {report.path}, {sizes}")
