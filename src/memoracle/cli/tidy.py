"""Tidying by hand: `complete` (compress on completion) and `advise` (the advisor)."""

from __future__ import annotations

import click

from memoracle.cli.context import clip, current, echo_json, engine_errors, home_option
from memoracle.cli.main import main
from memoracle.jobs import advise as advisor
from memoracle.jobs.nightly import topics
from memoracle.serialize import records


@main.command(name="complete")
@home_option
@click.argument("topic")
@click.option("--dry-run", is_flag=True, help="Show the files it would write; change nothing.")
@click.option("--undo", is_flag=True, help="Reopen the topic: its topic file lists all again.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def complete_command(topic: str, dry_run: bool, undo: bool, as_json: bool) -> None:
    """Mark TOPIC (an entity of the knowledge graph: a project, a trip, a task) complete:
    its topic file, memory/topics/<topic>.md, becomes a short summary, and its full
    notes move beside it to memory/topics/<topic>_full.md. Every memory stays stored and
    searchable (marked completed, audited); a backup is taken first. The nightly run
    does the same by itself for a project whose tasks a turn said were all done.

    \b
    Example:
      memoracle complete "Atlas" --dry-run
      memoracle complete "Atlas"
      memoracle complete "Atlas" --undo
    """
    with engine_errors(), current().engine() as engine:
        report = topics.complete_topic(engine, topic, dry_run=dry_run, undo=undo)
    if as_json:
        echo_json(records.envelope(**report.to_json()))
        return
    verb = ("would reopen" if undo else "would complete") if dry_run else (
        "reopened" if undo else "completed")  # fmt: skip
    n = len(report.memories)
    click.echo(f"{verb} {report.topic}: {n} {'memory' if n == 1 else 'memories'}")
    for change in report.changes:
        added, removed = change.size()
        click.echo(f"  {change.path} (+{added} -{removed})")
        if dry_run:
            click.echo(change.diff(), nl=False)
    if report.backup:
        click.echo(f"backup: {report.backup}")


@main.command(name="advise")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the advice as JSON.")
@click.option(
    "--apply-promotions",
    "apply",
    metavar="IDS",
    help="Promote these memories (m_12,m_40) to MEMORY.md's block from the next night.",
)
@click.option(
    "--dry-run", is_flag=True, help="With --apply-promotions: check them, change nothing."
)
def advise_command(as_json: bool, apply: str | None, dry_run: bool) -> None:
    """The advisor: clusters of related memories (by meaning, with the embedder; by shared
    words without one), promotion candidates for MEMORY.md (recalled often, long-lived),
    stale memories, near-duplicates (`dedup --fix` merges them) and unresolved disputes
    (`resolve`). It changes nothing, unless --apply-promotions names the candidates you
    accept: each is put in MEMORY.md's block at the next render, audited.

    \b
    Example:
      memoracle advise
      memoracle advise --apply-promotions m_12,m_40 --dry-run
      memoracle advise --apply-promotions m_12,m_40
    """
    refs = [r.strip() for r in (apply or "").split(",") if r.strip()]
    if dry_run and not refs:
        raise click.UsageError("--dry-run goes with --apply-promotions IDS.")
    with engine_errors(), current().engine() as engine:
        if refs:
            applied = advisor.apply_promotions(engine, refs, dry_run=dry_run)
            body = {"dry_run": dry_run, "promoted": [m.ref for m in applied]}
            if as_json:
                echo_json(records.envelope(**body))
                return
            verb = "would promote" if dry_run else "promoted"
            for m in applied:
                click.echo(f"{verb} {m.ref}: {clip(m.text)}")
            return
        advice = advisor.advise(engine)
    if as_json:
        echo_json(records.envelope(**advice.to_json()))
        return
    for line in advice.lines():
        click.echo(line)
