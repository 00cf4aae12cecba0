"""What every command shares: the global options' values (`Context`), opening an engine
with errors turned into one-line messages and exit codes, `--json` output, time and
scope options, reading JSON from stdin, progress bars.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, NoReturn

import click

from memoracle.clock import Clock, FixedClock, SystemClock, format_until, parse_instant
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.errors import EngineError, StoreDamaged
from memoracle.types import Memory, Scope

__all__ = [
    "Context",
    "Refusal",
    "SAMPLE_SESSION",
    "batch_lines",
    "clip",
    "current",
    "date_label",
    "echo_json",
    "engine_errors",
    "executable",
    "fail",
    "home_option",
    "jsonable",
    "memory_line",
    "parse_time",
    "progress",
    "read_stdin",
    "scope_options",
]

SAMPLE_SESSION = "sample-session.jsonl"


@dataclass
class Context:
    home: Path | None
    now: datetime | None
    overrides: dict[str, str]

    def settings(self, home: Path | None = None, *, missing_ok: bool = False) -> Settings:
        """The settings of the workspace at `home` (default: --home, $MEMORACLE_HOME, the
        per-user data dir). A home folder that does not exist is refused with exit 2 and
        the command that makes one, unless this command makes it or reads nothing there
        (`missing_ok`: init, install, config show): a typo in --home must not look like
        an empty memory."""
        settings = load(home or self.home, overrides=self.overrides)
        if not missing_ok and not settings.home.is_dir():
            fail(
                f"No memoracle workspace at {settings.home} (no such folder)."
                f" Run: memoracle init --home {settings.home}",
                2,
            )
        return settings

    def clock(self, settings: Settings) -> Clock:
        """`--now` as a clock; a time without an offset is in `workspace.timezone`."""
        if self.now is None:
            return SystemClock()
        return FixedClock(self.now if self.now.tzinfo else self.now.replace(tzinfo=settings.zone))

    def engine(self) -> Engine:
        settings = self.settings()
        return Engine.open(settings, clock=self.clock(settings))


class Refusal(click.ClickException):
    """A one-line error with exit status 2: for commands whose 1 means an answer."""

    exit_code = 2


def fail(message: str, code: int = 1) -> NoReturn:
    raise (Refusal if code == 2 else click.ClickException)(message)


@contextmanager
def engine_errors(code: int = 1) -> Iterator[None]:
    try:
        yield
    except StoreDamaged as exc:  # a damaged store: refused, whatever the command's codes
        fail(str(exc), 2)
    except EngineError as exc:
        fail(str(exc), code)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def parse_time(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_instant(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=what) from None


def date_label(memory: Memory, zone: tzinfo) -> str:
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


def memory_line(memory: Memory, zone: tzinfo) -> str:
    """One memory on one line: id, kind, its date in the workspace timezone, text, and
    its expiry when it has one."""
    who = f"{memory.subject}: " if memory.subject and memory.subject not in ("user",) else ""
    if memory.subject and memory.text.startswith(memory.subject):  # it names them already
        who = ""
    status = "" if memory.status == "active" else f" [{memory.status}]"
    if memory.expires_at is not None:
        status += f" (until {format_until(memory.expires_at, zone)})"
    when = date_label(memory, zone)
    return f"{memory.ref:>7}  {memory.kind:<10} {when:<14} {who}{memory.text}{status}"


def current() -> Context:
    obj = click.get_current_context().obj
    assert isinstance(obj, Context)
    return obj


def home_option(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def jsonable(value: Any) -> Any:
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def scope_options(fn: Callable[..., Any]) -> Callable[..., Any]:
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


@contextmanager
def progress(label: str = "ingesting") -> Iterator[Callable[[int, int], None] | None]:
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


def clip(text: str, width: int = 70) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def batch_lines(path: Path | None) -> list[str]:
    assert path is not None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"{path}: cannot read it as UTF-8 text ({exc}).", 2)
    texts = [line.strip() for line in lines if line.strip()]
    if not texts:
        fail(f"{path}: no text in it (one text per line).", 2)
    return texts


def read_stdin() -> str:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(f"stdin is not UTF-8 text (bad byte at offset {exc.start}). Send UTF-8 JSON.")


def executable() -> str:
    """This memoracle's own program, so a schedule runs the same install."""
    found = Path(sys.argv[0])
    return str(found.resolve()) if found.name == "memoracle" and found.exists() else "memoracle"
