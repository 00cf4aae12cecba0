"""Getting turns in: `capture` (one turn, or JSON turns on stdin) and `ingest` (files)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import click

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
from memoracle.serialize import records
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
        batches = [(_turn_pair(user_text, assistant_text, when, session, turn, speaker), scope)]
        many = False
    with engine_errors(), current().engine() as engine:
        results = engine.capture_many(batches)
        zone = engine.zone
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
        if not (result.added or result.bumped or result.forgotten or result.duplicate_turn):
            reason = ", ".join(sorted(set(result.skipped))) or "no rule matched"
            stored = "stored as an episode" if result.episodes else "not stored"
            click.echo(f"no memory ({reason}); turn {stored}")


def _turn_pair(
    user_text: str | None,
    assistant_text: str | None,
    at: datetime | None,
    session: str | None,
    turn: str | None,
    speaker: str | None,
) -> list[Turn]:
    turns = []
    if user_text is not None:
        turns.append(Turn("user", user_text, at, session, turn, speaker, origin="capture"))
    if assistant_text is not None:
        turns.append(Turn("assistant", assistant_text, at, session, turn, None, origin="capture"))
    return turns


def _turns_from_stdin(
    raw: str, default: Scope
) -> tuple[list[tuple[Sequence[Turn], Scope | None]], bool]:
    """The turns on stdin, each with its scope, and whether a list was given."""
    if not raw.strip():
        fail("stdin is empty: nothing to capture. Pass --user TEXT, or JSON on stdin.")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        fail(f"stdin: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
    except RecursionError:
        fail("stdin: not valid JSON (nested too deeply)")
    items = data if isinstance(data, list) else [data]
    if not items:
        fail("stdin: an empty list; nothing to capture.")
    known = {
        "user",
        "assistant",
        "at",
        "session",
        "turn",
        "speaker",
        "agent",
        "user_id",
        "chat",
        "visibility",
    }
    out: list[tuple[Sequence[Turn], Scope | None]] = []
    for i, item in enumerate(items):
        where = f"stdin item {i}" if isinstance(data, list) else "stdin"
        if not isinstance(item, dict):
            fail(
                f"{where}: expected an object with 'user' and/or 'assistant', "
                f"got {type(item).__name__}"
            )
        unknown = set(item) - known
        if unknown:
            fail(
                f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )
        for name in known:
            if item.get(name) is not None and not isinstance(item[name], str):
                fail(f"{where}: field '{name}' must be a string")
        if item.get("user") is None and item.get("assistant") is None:
            fail(f"{where}: needs 'user' and/or 'assistant' text")
        visibility = item.get("visibility") or default.visibility
        if visibility not in ("private", "shared"):
            fail(f"{where}: field 'visibility' must be private or shared")
        scope = Scope(
            agent=item.get("agent") or default.agent,
            user=item.get("user_id") or default.user,
            chat=item.get("chat") or default.chat,
            visibility=visibility,
        )
        at = parse_time(item.get("at"), f"{where} field 'at'")
        out.append(
            (
                _turn_pair(
                    item.get("user"),
                    item.get("assistant"),
                    at,
                    item.get("session"),
                    item.get("turn"),
                    item.get("speaker"),
                ),
                scope,
            )
        )
    return out, isinstance(data, list)


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
    are followed only to files inside the folder). The format is detected per file;
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
