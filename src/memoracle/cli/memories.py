"""Memories by hand: `list`, `get`, `remember`, `forget`, `stats`."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import click

from memoracle.cli.context import (
    current,
    echo_json,
    engine_errors,
    fail,
    home_option,
    memory_line,
    scope_options,
)
from memoracle.cli.main import main
from memoracle.clock import parse_duration, parse_until
from memoracle.engine import Engine
from memoracle.errors import NotFound
from memoracle.serialize import records
from memoracle.types import KINDS, STATUSES, Memory, Scope


@main.command(name="list")
@home_option
@click.option("--kind", type=click.Choice(KINDS), help="Only this kind.")
@click.option(
    "--status",
    type=click.Choice([*STATUSES, "all"]),
    default="active",
    show_default=True,
    help="Only this status.",
)
@click.option("--limit", type=click.IntRange(1, 100_000), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@scope_options
def list_(kind: str | None, status: str, limit: int, as_json: bool, scope: Scope) -> None:
    """List the memories this scope may see (default: the workspace owner's), newest
    first, with their activation decayed to now (--now).

    \b
    Example:
      memoracle list --kind guardrail
    """
    with engine_errors(), current().engine() as engine:
        found = engine.list_memories(
            kind=kind, status=None if status == "all" else status, limit=limit, scope=scope
        )
        zone = engine.zone
        now = engine.clock.now()
        activations = [engine.activation(m)[0] for m in found]
    if as_json:
        echo_json(
            records.envelope(
                memories=[
                    _with_activation(records.memory(m), a, now)
                    for m, a in zip(found, activations, strict=True)
                ]
            )
        )
        return
    for m, a in zip(found, activations, strict=True):
        click.echo(f"{memory_line(m, zone)}  (activation {a:.2f})")
    if not found:
        click.echo("no memories" + (f" of kind {kind}" if kind else ""))
    else:
        click.echo(f"activation: decayed to {now.isoformat()} (the engine clock)", err=True)


def _with_activation(shaped: dict[str, Any], value: float, now: datetime) -> dict[str, Any]:
    """A memory's JSON with `scores.activation` decayed to the engine clock's `now` (what
    search weighs and archiving compares), the stored value beside it, and that now."""
    scores = shaped["scores"]
    scores["stored_activation"] = scores["activation"]
    scores["activation"] = round(value, 4)
    scores["activation_at"] = now.isoformat()
    return shaped


@main.command()
@home_option
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON, with the source turns.")
@scope_options
def get(ref: str, as_json: bool, scope: Scope) -> None:
    """Show one memory with its dates, scores and provenance, if this scope may see it.

    \b
    Example:
      memoracle get m_12
    """
    with engine_errors(), current().engine() as engine:
        memory = engine.get(ref, scope=scope)
        episodes = engine.episodes_of(memory, scope=scope)
        activation, now = engine.activation(memory)
        successor = _successor(engine, memory, scope)
    shaped = _with_activation(records.memory(memory, episodes=episodes), activation, now)
    if as_json:
        echo_json(records.envelope(memory=shaped))
        return
    click.echo(f"{memory.ref} {memory.kind} ({memory.status}): {memory.text}")
    if successor is not None:
        click.echo(f"  superseded by {successor}")
    for key in ("subject", "predicate", "object", "source", "rule", "lang"):
        if shaped[key]:
            click.echo(f"  {key:<12} {shaped[key]}")
    for key, value in shaped["dates"].items():
        if value:
            click.echo(f"  {key:<12} {value}")
    scores = {k: v for k, v in shaped["scores"].items() if k != "activation_at"}
    click.echo("  scores       " + ", ".join(f"{k}={v}" for k, v in scores.items()))
    click.echo(f"  activation   decayed to {now.isoformat()} (the engine clock)")
    if tag := memory.details.get("model"):  # changed by a nightly model step (docs/llm.md)
        how = f"{tag['step']}: {tag['change']}, confidence {tag['confidence']}"
        click.echo(f"  model        {tag['model']} {tag['prompt']} ({how}): {tag['reason'] or '-'}")
    for d in memory.details.get("dates", []):
        click.echo(
            f"  date         {d['text']!r} → {d['start']} .. {d['end']} ({d['granularity']})"
        )
    for e in episodes:
        click.echo(
            f"  from {e.ref} [{e.session_id or '-'} {e.turn_id or ''}] {e.role}: {e.text[:100]}"
        )
    for origin in memory.origins:
        click.echo(f"  from {origin}")


def _successor(engine: Engine, memory: Memory, scope: Scope) -> str | None:
    """What replaced a superseded memory, in plain words (its id alone when this scope
    may not see it)."""
    if not memory.superseded_by:
        return None
    ref = f"m_{memory.superseded_by}"
    try:
        return f"{ref}: {engine.get(ref, scope=scope).text}"
    except NotFound:
        return ref


def _ttl(_ctx: click.Context, _param: click.Parameter, value: str | None) -> timedelta | None:
    try:
        return None if value is None else parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _until(_ctx: click.Context, _param: click.Parameter, value: str | None) -> date | None:
    try:
        return None if value is None else parse_until(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@main.command()
@home_option
@click.argument("text")
@click.option(
    "--kind", type=click.Choice(KINDS), help="Kind (default: inferred by the rules, else fact)."
)
@click.option(
    "--ttl",
    metavar="DURATION",
    callback=_ttl,
    help="Expire it after this long: a number and a unit, m h d w (90m, 12h, 7d, 2w).",
)
@click.option(
    "--until",
    metavar="DATE",
    callback=_until,
    help="Expire it after this date (to the end of that day) or at this time "
    "(2026-12-11, 2026-12-11T18:00; workspace timezone unless it has an offset).",
)
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def remember(
    text: str,
    kind: str | None,
    ttl: timedelta | None,
    until: date | datetime | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Store TEXT as a memory, as written (secrets redacted).

    With --ttl or --until it expires: from that moment search and recall leave it out,
    and the nightly run archives it (reason "expired"). Remembering it again sets the
    expiry anew (none: kept for good). An expiry already past is refused (exit 2).

    \b
    Examples:
      memoracle remember "The staging server is staging.internal:8443" --kind fact
      memoracle remember "The door code this week is 4521" --ttl 7d
      memoracle remember "Alice is on leave" --until 2026-12-11
    """
    if ttl is not None and until is not None:
        fail("Give --ttl or --until, not both.", 2)
    with engine_errors(), current().engine() as engine:
        with engine_errors(2):
            engine.expiry(expires_at=until, ttl=ttl)  # bad input: refused before any write
        memory, inserted = engine.remember(text, kind=kind, scope=scope, expires_at=until, ttl=ttl)
        zone = engine.zone
    if as_json:
        echo_json(records.envelope(inserted=inserted, memory=records.memory(memory)))
        return
    click.echo(("added   " if inserted else "seen    ") + memory_line(memory, zone))


@main.command()
@home_option
@click.argument("ref", required=False)
@click.option(
    "--query",
    help="Forget the live memory containing all these words, else the one it describes"
    ' ("my old job" finds "I work at Oracle"); several that fit are listed, not forgotten.',
)
@click.option("--dry-run", is_flag=True, help="With --query: list what would be forgotten.")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="With --query: forget every memory it fits, however many; with an empty"
    " --query, every live memory. Asks first (unless --yes).",
)
@click.option("--yes", is_flag=True, help="With --all: do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@scope_options
def forget(
    ref: str | None,
    query: str | None,
    dry_run: bool,
    everything: bool,
    yes: bool,
    as_json: bool,
    scope: Scope,
) -> None:
    """Mark a memory forgotten: a status change with an audit entry, never a delete.
    The turns it came from (and those that only repeated it) leave search and recall
    with it; memoracle restore ID brings both back. Only what this scope may see
    (default: the workspace owner's) is found or forgotten; any other id says "No
    memory", as a missing one.

    A --query that fits more than one memory forgets none and lists them (exit 1):
    forget one by id, see them with --dry-run, or pass --all to forget every one (it
    asks first, unless --yes). A --query that names nothing is refused the same way.

    \b
    Example:
      memoracle forget m_12
      memoracle forget --query "old office address" --dry-run
      memoracle forget --query "staging server" --all
    """
    if (ref is None) == (query is None):
        fail("Give exactly one of: a memory id (e.g. m_12) or --query TEXT.")
    if everything and query is None:
        fail("--all goes with --query.")
    with engine_errors(), current().engine() as engine:
        if ref is not None:
            if dry_run:
                fail("--dry-run goes with --query; forgetting one id is undone by the audit log.")
            found = [engine.forget(engine.get(ref, scope=scope).id)]
        else:
            assert query is not None
            if everything and not dry_run and not yes:
                preview = engine.forget_matching(query, scope=scope, dry_run=True, everything=True)
                click.confirm(
                    f"Forget {len(preview)} memories matching {query!r}?", abort=True, err=True
                )
            found = engine.forget_matching(
                query, scope=scope, dry_run=dry_run, everything=everything
            )
        zone = engine.zone
    if as_json:
        echo_json(records.envelope(dry_run=dry_run, memories=[records.memory(m) for m in found]))
        return
    verb = "would forget" if dry_run else "forgot"
    for m in found:
        click.echo(f"{verb}  {memory_line(m, zone)}")
    if not found:
        click.echo("no live memory matches")


@main.command()
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@scope_options
def stats(as_json: bool, scope: Scope) -> None:
    """Counts of what this scope may see (default: the workspace owner's) — memories by
    status and kind, episodes, sessions — and the database's size.

    \b
    Example:
      memoracle stats --json
    """
    with engine_errors(), current().engine() as engine:
        s = engine.stats(scope=scope)
    if as_json:
        echo_json(records.stats(s))
        return
    click.echo(f"workspace   {s.home}")
    click.echo(
        f"database    {s.database} ({s.database_bytes / 1e6:.1f} MB, schema v{s.schema_version})"
    )
    click.echo(
        f"memories    {s.memories} ("
        + ", ".join(f"{n} {k}" for k, n in sorted(s.by_status.items()))
        + ")"
    )
    for kind, n in sorted(s.active_by_kind.items(), key=lambda kv: -kv[1]):
        click.echo(f"  {kind:<10} {n}")
    click.echo(f"episodes    {s.episodes} in {s.sessions} session(s)")
    click.echo(f"audit       {s.audit_entries} entries")
    if s.last_ingest:
        click.echo(f"last ingest {s.last_ingest}")
