"""Getting turns in: `capture` (one turn, or JSON turns on stdin; queued while the store
is unusable), `ingest` (files) and `queue` (what waits to be stored: docs/outage.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from memoracle import outbox, reports
from memoracle.cli.context import (
    current,
    echo_json,
    engine_errors,
    fail,
    home_option,
    memory_line,
    parse_time,
    progress,
    read_stdin,
    scope_options,
)
from memoracle.cli.main import main
from memoracle.engine.scope import can_see, fill_scope, own_scope
from memoracle.errors import InvalidInput, StoreError, WorkspaceError
from memoracle.serialize import records
from memoracle.serve.protocol import turn_pair, turns_of
from memoracle.types import IngestWarning, Scope, Turn


@main.command()
@home_option
@click.option("--user", "user_text", help="What the user said.")
@click.option("--assistant", "assistant_text", help="What the assistant answered.")
@click.option(
    "--at",
    "at",
    metavar="ISO",
    help="When it was said (default: now; no offset = workspace.timezone).",
)
@click.option("--session", help="Session id.")
@click.option("--turn", help="Turn id; capturing the same session+turn twice changes nothing.")
@click.option("--speaker", help="Name of the person speaking (default: the role).")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print what was stored as JSON.")
def capture(
    user_text: str | None,
    assistant_text: str | None,
    at: str | None,
    session: str | None,
    turn: str | None,
    speaker: str | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Store one turn and the typed memories the rules find in it (no LLM, no network).

    Without --user/--assistant, reads JSON from stdin: one turn or a list of turns, each
    {"user": ..., "assistant": ..., "at": ..., "session": ..., "turn": ..., "speaker": ...,
    "agent": ..., "user_id": ..., "chat": ..., "visibility": ...}.

    When the store cannot take it (missing, damaged, locked past its timeout) the turn
    is queued instead (redacted) and stored when the store works again; it exits 0 and
    says so (--json: "queued": true). See `memoracle queue`.

    \b
    Example:
      memoracle capture --user "Remind me to renew the domain by next Tuesday" --json
      echo '{"user": "Я живу в Лионе"}' | memoracle capture
    """
    if user_text is None and assistant_text is None:
        if sys.stdin.isatty():
            fail("Nothing to capture. Pass --user TEXT and/or --assistant TEXT, or JSON on stdin.")
        batches, many = _turns_from_stdin(read_stdin(), scope)
    else:
        when = parse_time(at, "--at")
        batches = [(turn_pair(user_text, assistant_text, when, session, turn, speaker), scope)]
        many = False
    with engine_errors():
        try:
            with current().engine() as engine:
                results = engine.capture_many(batches)
                zone = engine.zone
        except StoreError as exc:  # the store cannot take it now: queued (docs/outage.md)
            _queue(batches, exc, as_json=as_json, many=many)
            return
    if as_json:
        shaped = [records.capture_result(r) for r in results]
        echo_json(records.envelope(results=shaped) if many else shaped[0])
        return
    for result in results:
        if result.duplicate_turn:
            click.echo("turn already captured: nothing changed")
        for m in result.added:
            click.echo(f"added   {memory_line(m, zone)}")
        for m in result.bumped:
            click.echo(f"seen    {memory_line(m, zone)}")
        for m in result.forgotten:
            click.echo(f"forgot  {memory_line(m, zone)}")
        for m in result.superseded:
            click.echo(f"superseded {m.ref} by m_{m.superseded_by}: {m.text}")
        if not (result.added or result.bumped or result.forgotten or result.duplicate_turn):
            reason = ", ".join(sorted(set(result.skipped))) or "no rule matched"
            stored = "stored as an episode" if result.episodes else "not stored"
            click.echo(f"no memory ({reason}); turn {stored}")


def _queue(
    batches: list[tuple[Sequence[Turn], Scope | None]],
    error: StoreError,
    *,
    as_json: bool,
    many: bool,
) -> None:
    """Queue `batches` the store refused with `error` and say so; when the queue cannot
    be written either, `error` stands (and the queue's own problem is said)."""
    ctx = current()
    settings = ctx.settings()
    filled = [(turns, fill_scope(settings, scope)) for turns, scope in batches]
    entry = outbox.capture_entry(filled, now=ctx.clock(settings).now(), door="cli capture")
    try:
        where = outbox.append(settings.home, entry)
    except WorkspaceError as exc:
        click.echo(f"not queued either: {exc}", err=True)
        raise error from None
    click.echo(
        f"queued: the store cannot take it now ({str(error).rstrip('.')}). The turn waits in"
        f" {where} as {entry.id} and is stored when the store works again (see: memoracle queue).",
        err=True,
    )
    if as_json:
        shaped = [reports.queued_capture(entry.id, len(turns)) for turns, _ in batches]
        echo_json(records.envelope(results=shaped) if many else shaped[0])
    else:
        click.echo(f"queued  {entry.id}: {entry.items} turn(s), not stored yet")


@main.command(name="queue")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print what waits as JSON.")
def queue_command(as_json: bool) -> None:
    """What waits in the write queue: captures, checkpoints and remembers said while the
    store was unusable, stored (once each, in order) when it works again — at the next
    open for writing, `memoracle doctor --fix` or the nightly run (docs/outage.md).
    The first words of each (redacted) are shown when the workspace owner may see what
    it stores (docs/scopes.md); another user's or a group's are not. Lines that cannot
    be read are counted; lines put aside are in HOME/queue/set-aside.jsonl. Always
    exits 0.

    \b
    Example:
      memoracle queue
      memoracle queue --json
    """
    ctx = current()
    settings = ctx.settings()
    now = ctx.clock(settings).now()
    with engine_errors():
        state = outbox.status(settings.home)
        lines = outbox.read(settings.home)
    entries = [line.entry for line in lines if line.entry is not None]
    owner = own_scope(settings)

    def shown(entry: outbox.Entry, width: int) -> str | None:
        """Its first words, if the owner may see every scope it stores (docs/scopes.md)."""
        if all(can_see(settings, owner, scope) for scope in entry.scopes):
            return entry.summary(width)
        return None

    if as_json:
        waiting = [
            {"id": e.id, "kind": e.kind, "door": e.door, "said_at": e.said_at.isoformat(),
             "items": e.items, "text": shown(e, 200)}
            for e in entries
        ]  # fmt: skip
        bad = [{"line": line.number, "problem": line.problem} for line in lines if not line.entry]
        echo_json(records.envelope(**state.to_json(now), entries=waiting, unreadable_lines=bad))
        return
    age = state.age_hours(now)
    click.echo(
        f"{state.pending} write(s) waiting in {state.path}"
        + (f", the oldest {age:.1f} h old" if age is not None else "")
    )
    for e in entries:
        when = e.said_at.astimezone(settings.zone)
        text = shown(e, 60) or "(another scope: not shown)"
        click.echo(f"{e.id}  {when:%Y-%m-%d %H:%M}  {e.door:<12} {e.items} item(s)  {text}")
    for line in lines:
        if line.entry is None:
            click.echo(f"line {line.number}: cannot be read ({line.problem}); it is set aside"
                       " at the next delivery", err=True)  # fmt: skip
    if state.set_aside:
        click.echo(f"{state.set_aside} line(s) set aside in {state.aside_path}: see why there")


def _turns_from_stdin(
    raw: str, default: Scope
) -> tuple[list[tuple[Sequence[Turn], Scope | None]], bool]:
    """The turns on stdin, each with its scope, and whether a list was given (checked as
    the warm server checks them: serve.protocol)."""
    if not raw.strip():
        fail("stdin is empty: nothing to capture. Pass --user TEXT, or JSON on stdin.")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(f"stdin: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
    except RecursionError:
        fail("stdin: not valid JSON (nested too deeply)")
    try:
        return turns_of(data, default, "stdin"), isinstance(data, list)
    except InvalidInput as exc:
        fail(str(exc))


@main.command()
@home_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(
        ["openclaw-jsonl", "openclaw-sqlite", "jsonl", "locomo", "memory-md", "daily-note"]
    ),
    help="Read every file given in this format (no detection); in a folder, read only "
    "the files detected as it.",
)
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def ingest(
    paths: tuple[Path, ...],
    fmt: str | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Read transcripts and notes: OpenClaw session JSONL or SQLite store, generic
    {role, content, timestamp} JSONL, LoCoMo JSON, MEMORY.md, memory/YYYY-MM-DD.md.

    Each PATH is a file or a folder. A folder is walked recursively in sorted order:
    every file of a known format is read, every other file is skipped and named (links
    are followed only to files inside the folder); version-control folders, .env files,
    keys and files named like secrets (credentials.md, api_token.md, пароли.md) are
    skipped and named. The format is detected per file;
    with --format, a folder's files of other formats are skipped. Malformed lines are
    reported as file:line and skipped; the exit status is non-zero only if nothing
    could be read.

    \b
    Example:
      memoracle ingest ~/.openclaw/agents/main/sessions/
      memoracle ingest ~/.openclaw/agents/main/sessions/*.jsonl
      memoracle --now 2023-10-22 ingest locomo10.json
    """
    warnings = 0

    def on_warning(w: IngestWarning) -> None:
        nonlocal warnings
        warnings += 1
        if warnings <= 20:
            click.echo(f"warning: {w.origin}: {w.message}", err=True)
        elif warnings == 21:
            click.echo("warning: more warnings follow; see --json for all", err=True)

    with engine_errors(), current().engine() as engine, progress() as on_progress:
        report = engine.ingest(
            list(paths), fmt=fmt, scope=scope, on_progress=on_progress, on_warning=on_warning
        )
    if as_json:
        echo_json(records.ingest_report(report))
    else:
        for skipped in report.skipped_files:
            click.echo(f"skipped {skipped.path}: {skipped.reason}")
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.format_counts.items()))
        others = f"; {len(report.skipped_files)} skipped" if report.skipped_files else ""
        click.echo(f"read {report.files} file(s) ({kinds or 'none'}{others})")
        click.echo(
            f"{report.turns} turns → {report.episodes_added} new episodes, "
            f"{report.memories_added} new memories, {report.memories_bumped} seen again, "
            f"{report.skipped_noise} noise turns skipped, {len(report.warnings)} warning(s)"
        )
    if report.files == 0:
        sys.exit(1)
