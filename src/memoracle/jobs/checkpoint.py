"""A checkpoint: what the live session said that memory has not captured yet, saved now.

An agent about to lose its context (compaction, the end of a long session) hands over a
text, or the host names its session transcript. `save_session` reads the transcript and
captures every turn not yet captured (a turn already stored, by its session and turn
id, changes nothing), tagged as a checkpoint, and notes the memories it found in today's
daily note. `save` cuts a text into items, captures each as a turn tagged as a checkpoint (origin
"checkpoint", session and turn ids that make saying it again change nothing) through
`Engine.capture_many`, and appends the items to today's daily note under a
``## Checkpoint [HH:MM]`` section. It never raises: a capture that fails, a note that
cannot be written, an item the write audit held back are each noted in the report, and
what could be saved is saved (the note is the record of last resort when the store is
unusable). A capture the store cannot take (missing, damaged, locked past its timeout)
is queued in HOME/queue/pending-writes.jsonl (`memoracle.outbox`) and stored, once and in
order, when the store works again (docs/outage.md).

Owns the cutting into items, the ids and which items reach the note. The note's layout
is `render.daily.checkpoint`'s; extraction and the write audit are the engine's.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from memoracle import outbox
from memoracle.capture.redact import redact
from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.engine import Engine
from memoracle.engine.scope import can_see, fill_scope, own_scope
from memoracle.errors import EngineError, StoreError, WorkspaceError
from memoracle.files import read_text, write_atomically
from memoracle.ingest import read as read_transcript
from memoracle.render.daily import checkpoint as render_checkpoint
from memoracle.render.memory_md import one_line
from memoracle.types import CaptureResult, IngestWarning, Memory, Scope, Turn
from memoracle.workspace import NOTES_DIR, note_lock

__all__ = [
    "CheckpointItem",
    "CheckpointReport",
    "describe",
    "items_of",
    "save",
    "save_session",
    "save_turns",
]

ORIGIN = "checkpoint"  # the episodes' origin: what tags a turn as a checkpoint
ACTOR = "checkpoint"
ROLES = ("user", "assistant")

log = logging.getLogger(__name__)

_BULLET = re.compile(r"^(?:[-*+•]|\d{1,3}[.)])(?:\s+|$)")
_ROLE = re.compile(r"^(user|assistant)\s*:\s*", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")


@dataclass(frozen=True)
class CheckpointItem:
    """One item of a checkpoint: whose words (user or assistant) and what was said."""

    role: str
    text: str

    @property
    def turn_id(self) -> str:
        """Stable for the same words from the same role: saying it again is a duplicate."""
        digest = hashlib.sha256(f"{self.role}\x1f{self.text}".encode()).hexdigest()
        return f"checkpoint:{digest[:16]}"

    @property
    def note_line(self) -> str:
        """The item's bullet in the daily note, its secrets redacted as capture redacts
        them (the note is read by the agent and copied into SESSION-START.md)."""
        text = one_line(redact(self.text).text)
        return f"- assistant: {text}" if self.role == "assistant" else f"- {text}"


@dataclass
class CheckpointReport:
    """What a checkpoint did. `problems` says what went wrong (empty when all went well);
    `held` names the items the write audit held back (neither stored nor noted)."""

    session: str
    items: int = 0
    episodes: list[str] = field(default_factory=list)  # e_… newly stored
    already_stored: int = 0  # items this session had already captured
    added: list[Memory] = field(default_factory=list)
    bumped: list[Memory] = field(default_factory=list)
    forgotten: list[Memory] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # h_…
    skipped: list[str] = field(default_factory=list)
    note: str | None = None  # the daily note's path
    section: str | None = None  # the heading appended, when one was
    noted: int = 0  # items written to the note this time
    store_failed: bool = False  # the store could not be opened or written: note only
    queued: str | None = None  # the write queue's entry (q_…) holding the items, if queued
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def items_of(text: str) -> list[CheckpointItem]:
    """Cut a checkpoint text into items: a bullet (-, *, +, •, 1.), a line starting
    ``user:`` or ``assistant:`` or a blank line starts a new one, other lines continue
    it; Markdown headings are dropped. An item starting
    ``assistant:`` is the agent's own words, ``user:`` (or no prefix) the user's. The
    same item twice counts once."""
    items: list[CheckpointItem] = []
    current: list[str] = []

    def close() -> None:
        if current:
            said = " ".join(current)
            role = "user"
            if m := _ROLE.match(said):
                role = m.group(1).lower()
                said = said[m.end() :]
            said = said.strip()
            has_words = any(ch.isalnum() for ch in said)
            if has_words and (item := CheckpointItem(role, said)) not in items:
                items.append(item)
            current.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if not line or _HEADING.match(line):
            close()
            continue
        if _BULLET.match(line) or _ROLE.match(line):
            close()
            while bullet := _BULLET.match(line):  # "- - item" is one item too
                line = line[bullet.end() :]
        current.append(line)
    close()
    return items


def save(
    settings: Settings,
    text: str,
    *,
    engine: Callable[[], Engine],
    clock: Clock,
    scope: Scope | None = None,
    session: str | None = None,
) -> CheckpointReport:
    """Capture `text` as checkpoint turns of `session` (default: ``checkpoint-YYYY-MM-DD``,
    today in the workspace timezone) and append it to today's daily note — when the
    workspace owner may see what `scope` stores (docs/scopes.md: the notes are the
    owner's; another user's or a group's checkpoint is stored only).

    `engine` opens (or hands back) the engine; when it cannot (no store, a damaged one),
    the items still go to the note. Never raises for what goes wrong in the store or the
    files: see `CheckpointReport.problems`."""
    now = clock.now()
    problems: list[str] = []
    local = _local_now(settings, clock, problems)
    session = (session or "").strip() or f"checkpoint-{local.date().isoformat()}"
    report = CheckpointReport(session=session, problems=problems)
    # Redacted whole before it is cut into items: a private key pasted with blank lines,
    # or a label on one line and its value on the next, is one secret, not two items.
    items = items_of(redact(text).text)
    report.items = len(items)
    if not items:
        report.problems.append("Nothing to save: the checkpoint text has no words.")
        return report

    limit = settings.capture.max_turn_chars
    fits = [i for i in items if len(i.text) <= limit]
    for item in items:
        if item not in fits:
            report.problems.append(
                f"An item of {len(item.text):,} characters is over capture.max_turn_chars "
                f"({limit:,}); it was written to the daily note only. Split it to store it."
            )
    noted = list(items)
    batches = [([_turn(i, session, now)], scope) for i in fits]
    results = _capture(settings, engine, batches, report, now, "; written to the daily note")
    if results is not None:
        for item, result in zip(fits, results, strict=True):
            if _record(report, result):
                noted.remove(item)  # held for review: kept out of the note the agent reads

    _append_note(settings, scope, report, noted, local)
    return report


def save_session(
    settings: Settings,
    path: Path,
    *,
    engine: Callable[[], Engine],
    clock: Clock,
    scope: Scope | None = None,
) -> CheckpointReport:
    """Capture every turn of the session transcript at `path` (any format `memoracle
    ingest` reads) that is not stored yet, tagged as a checkpoint (origin
    ``checkpoint:FILE:LINE``, source "checkpoint"), and append the memories found to
    today's daily note. Turns already captured (by the host, an earlier checkpoint, an
    ingest) change nothing. Never raises: see `CheckpointReport.problems`."""
    problems: list[str] = []
    local = _local_now(settings, clock, problems)
    report = CheckpointReport(session="", problems=problems)
    warnings: list[IngestWarning] = []
    try:
        turns = [
            replace(item, origin=f"{ORIGIN}:{item.origin or path}")
            for item in read_transcript(Path(path).expanduser(), on_warning=warnings.append)
            if isinstance(item, Turn)
        ]
    except (EngineError, OSError) as exc:  # no such file, not a transcript, unreadable
        report.problems.append(f"{str(exc).rstrip('.')}. Nothing was saved.")
        return report
    report.problems += [f"{w.origin}: {w.message}" for w in warnings]
    limit = settings.capture.max_turn_chars
    fits = [t for t in turns if len(t.text) <= limit]
    if len(fits) < len(turns):
        report.problems.append(
            f"{len(turns) - len(fits)} turn(s) over capture.max_turn_chars ({limit:,}) were"
            " not saved."
        )
    report.items = len(fits)
    report.session = ", ".join(sorted({t.session_id for t in fits if t.session_id})) or str(path)
    if not fits:
        report.problems.append(f"{path}: no turns to save.")
        return report
    batches = [([t], scope) for t in fits]
    return _store_and_note(settings, engine, batches, report, clock.now(), scope, local)


def save_turns(
    settings: Settings,
    batches: Sequence[tuple[Sequence[Turn], Scope | None]],
    *,
    engine: Callable[[], Engine],
    clock: Clock,
    scope: Scope | None = None,
) -> CheckpointReport:
    """Capture the turns a host hands over from its live session (each with the id its
    transcript gives it, as `capture` reads them), tagged as a checkpoint, and append the
    memories found to today's daily note (when the owner sees `scope`: as `save`). A turn
    already stored (the host's per-turn capture, an earlier checkpoint) changes nothing:
    the OpenClaw plugin's heartbeat checkpoints send the whole session each time. Never
    raises: see `CheckpointReport.problems`."""
    problems: list[str] = []
    local = _local_now(settings, clock, problems)
    tagged = [
        ([replace(t, origin=ORIGIN) for t in turns], where) for turns, where in batches if turns
    ]
    sessions = {t.session_id for turns, _ in tagged for t in turns if t.session_id}
    report = CheckpointReport(session=", ".join(sorted(sessions)), problems=problems)
    limit = settings.capture.max_turn_chars
    fits = [(turns, where) for turns, where in tagged if all(len(t.text) <= limit for t in turns)]
    if len(fits) < len(tagged):
        report.problems.append(
            f"{len(tagged) - len(fits)} turn(s) over capture.max_turn_chars ({limit:,}) were"
            " not saved."
        )
    report.items = sum(len(turns) for turns, _ in fits)
    if not fits:
        report.problems.append("Nothing to save: no turns were given.")
        return report
    return _store_and_note(settings, engine, fits, report, clock.now(), scope, local)


def _store_and_note(
    settings: Settings,
    engine: Callable[[], Engine],
    batches: Sequence[tuple[Sequence[Turn], Scope | None]],
    report: CheckpointReport,
    now: datetime,
    scope: Scope | None,
    local: datetime,
) -> CheckpointReport:
    """Capture `batches` as a checkpoint and append what they made to today's note."""
    results = _capture(settings, engine, batches, report, now, "")
    if results is None:
        return report
    for result in results:
        _record(report, result)
    owner = own_scope(settings)  # the notes are the owner's: what another scope stored stays out
    noted = [
        CheckpointItem("user", m.text) for m in report.added if can_see(settings, owner, m.scope)
    ]
    _append_note(settings, scope, report, noted, local)
    return report


def _capture(
    settings: Settings,
    engine: Callable[[], Engine],
    batches: Sequence[tuple[Sequence[Turn], Scope | None]],
    report: CheckpointReport,
    now: datetime,
    otherwise: str,
) -> list[CaptureResult] | None:
    """Capture each batch (one turn each), or None when the store could not take them:
    then they are queued when the store is unusable (a `StoreError`), and `report` says
    so (with `otherwise`, what happened besides). Never raises: a checkpoint is never
    the caller's problem."""
    try:
        return engine().capture_many(batches, actor=ACTOR)
    except Exception as exc:
        if isinstance(exc, EngineError):
            log.warning("checkpoint: capture failed: %s", exc)
        else:
            log.exception("checkpoint: capture failed")
        report.store_failed = True
        where = _queue(settings, batches, report, now) if isinstance(exc, StoreError) else None
        if where is None:
            report.problems.append(f"Not stored in memory ({exc}){otherwise} only.")
        else:
            report.problems.append(
                f"Not stored in memory yet ({exc}): queued in {where}, stored when the store"
                f" works again{otherwise}."
            )
        return None


def _queue(
    settings: Settings,
    batches: Sequence[tuple[Sequence[Turn], Scope | None]],
    report: CheckpointReport,
    now: datetime,
) -> Path | None:
    """Queue `batches` (docs/outage.md); the queue file's path, or None when it cannot
    be written either (said in `report`)."""
    filled = [(turns, fill_scope(settings, scope)) for turns, scope in batches]
    entry = outbox.capture_entry(filled, now=now, door="checkpoint", actor=ACTOR)
    try:
        where = outbox.append(settings.home, entry)
    except WorkspaceError as exc:
        report.problems.append(f"Not queued either: {exc}")
        return None
    report.queued = entry.id
    return where


def _local_now(settings: Settings, clock: Clock, problems: list[str]) -> datetime:
    """Now in the workspace timezone (in UTC, said in `problems`, when it is unknown)."""
    now = clock.now()
    try:
        return now.astimezone(settings.zone)
    except EngineError as exc:
        problems.append(f"{exc} The daily note's day and time are in UTC.")
        return now.astimezone(UTC)


def describe(report: CheckpointReport) -> list[str]:
    """The report in a few lines, for a person or a model."""
    if not report.items:
        return [f"problem: {p}" for p in report.problems]
    memories = [m.ref for m in report.added]
    lines = [
        f"Checkpoint of {report.items} item(s), session {report.session}:"
        f" {len(report.episodes)} stored, {report.already_stored} already saved before"
        + (f"; new memories {', '.join(memories)}" if memories else "")
        + "."
    ]
    if report.section:
        lines.append(f"Daily note {report.note}: {report.section}, {report.noted} line(s).")
    elif report.note:
        lines.append(f"Daily note {report.note}: nothing new to add.")
    if report.queued:
        lines.append(
            f"Queued as {report.queued}: stored when the store works again (docs/outage.md)."
        )
    if report.held:
        lines.append(
            f"Held for a person to review (looks like prompt injection): {', '.join(report.held)}."
        )
    return lines + [f"problem: {p}" for p in report.problems]


def _turn(item: CheckpointItem, session: str, now: datetime) -> Turn:
    return Turn(
        role=item.role,
        text=item.text,
        at=now,
        session_id=session,
        turn_id=item.turn_id,
        origin=ORIGIN,
    )


def _record(report: CheckpointReport, result: CaptureResult) -> bool:
    """Fold one item's capture into the report; True when the write audit held it."""
    report.episodes += [f"e_{e}" for e in result.episodes]
    report.already_stored += int(result.duplicate_turn)
    report.added += result.added
    report.bumped += result.bumped
    report.forgotten += result.forgotten
    held = [s.removeprefix("held:") for s in result.skipped if s.startswith("held:")]
    report.held += held
    report.skipped += [s for s in result.skipped if not s.startswith("held:")]
    return bool(held)


def _append_note(
    settings: Settings,
    scope: Scope | None,
    report: CheckpointReport,
    items: list[CheckpointItem],
    local: datetime,
) -> None:
    """Append `items` to the daily note of `local`'s day, if the workspace owner may see
    what `scope` stores: the notes are the owner's (docs/scopes.md), so another user's
    or a group's checkpoint is stored only."""
    if not can_see(settings, own_scope(settings), fill_scope(settings, scope)):
        log.info("checkpoint: not the workspace owner's scope; the daily note is left as it is")
        return
    day, at = local.date(), local.time()
    path = settings.files_dir / NOTES_DIR / f"{day:%Y-%m-%d}.md"
    report.note = str(path)
    try:
        with note_lock(settings.home):
            existing = read_text(path)
            present = {line.rstrip("\r") for line in (existing or "").split("\n")}
            lines = [i.note_line for i in items if i.note_line not in present]
            if not lines:
                return
            updated = render_checkpoint(existing, day, at, lines)
            write_atomically(path, updated)
    except WorkspaceError as exc:
        log.warning("checkpoint: daily note not written: %s", exc)
        report.problems.append(str(exc))
        return
    report.section = f"## Checkpoint [{at:%H:%M}]"
    report.noted = len(lines)
