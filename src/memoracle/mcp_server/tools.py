"""The seven tools as plain methods over one engine and the server's fixed scope: their
argument schemas, the descriptions a model reads, and the answer each gives (a short
text for the model plus the JSON shapes of docs/json.md as structured content).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from datetime import date, datetime, timedelta, tzinfo
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from memoracle import outbox, reports
from memoracle.clock import Clock, SystemClock, parse_duration, parse_instant, parse_until
from memoracle.config import RecallSettings, Settings
from memoracle.engine import Ambiguous, Engine, recall_anyway
from memoracle.engine.scope import fill_scope
from memoracle.errors import EngineError, InvalidInput, NotFound, StoreError, WorkspaceError
from memoracle.jobs import checkpoint, health
from memoracle.serialize import records
from memoracle.types import Hit, Memory, Scope

log = logging.getLogger(__name__)


SERVER_NAME = "memoracle"


ACTOR = "mcp"  # who the audit log says made a write


MAX_K = 50


MAX_BUDGET = 32_000


Kind = Literal[
    "fact", "preference", "decision", "task", "guardrail", "event", "error", "pattern", "insight"
]  # fmt: skip  # types.KINDS, spelled out for the schema (a test holds them equal)


INSTRUCTIONS = """\
memoracle is this agent's long-term memory: facts, preferences, decisions, tasks, \
guardrails and events from past conversations, each with an id like m_12.

- At the start of a turn, unless the host already injected a memory block, call \
memory_recall with the user's message and follow the guardrails it returns.
- To look something up, call memory_search; to see one item in full, memory_get.
- When the user asks you to remember something, call memory_remember; to forget \
something, call memory_forget with its id (from memory_search) or with what the user \
described as `query`; when that fits several, ask the user before forgetting them all.
- Before your context is compacted or a long session ends, call memory_checkpoint with \
what was said or decided that memory may not have yet.
- memory_status says how big and how healthy the memory is.

Every tool works inside this server's fixed scope (whose memory it is); there is no \
argument to change it."""


READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class MemoryTools:
    """The tools as plain methods over one engine and one fixed scope.

    `build_server` registers them; call them directly to use memoracle the MCP way from
    Python (each returns the `CallToolResult` a client would get, and raises `ToolError`
    where a client would get an error). The engine is opened on first use and kept;
    `close` closes it. Calls are serialised: one at a time on this engine."""

    def __init__(
        self, settings: Settings, scope: Scope | None = None, *, clock: Clock | None = None
    ) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        given = scope or Scope()
        self.scope = fill_scope(settings, replace(given, chat=given.chat or None))
        self._engine: Engine | None = None
        self._lock = threading.RLock()

    # -- the engine -----------------------------------------------------------------

    def engine(self) -> Engine:
        """The server's engine, opened on first use (a WorkspaceError until the home
        folder holds a store: `memoracle init` fixes that without a restart)."""
        with self._lock:
            if self._engine is None:
                # A long-lived server: a remember answers without embedding.
                self._engine = Engine.open(self.settings, clock=self.clock, land_vectors=True)
            return self._engine

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.close()
                self._engine = None

    @contextmanager
    def _call(self) -> Iterator[Engine]:
        """The engine for one tool call, one call at a time; an EngineError becomes the
        tool error the model reads, and a store error drops the engine so the next call
        opens the database again."""
        with self._lock:
            try:
                yield self.engine()
            except StoreError as exc:
                log.warning("store error, reopening on the next call: %s", exc)
                self._drop()
                raise ToolError(str(exc)) from exc
            except EngineError as exc:
                raise ToolError(str(exc)) from exc

    def _drop(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            try:
                engine.close()
            except EngineError as exc:
                log.warning("closing the engine: %s", exc)

    def _visible(self, engine: Engine, ref: str) -> Memory:
        """The memory `ref` names, if this server's scope may see it; otherwise the same
        NotFound as for an id that does not exist (nothing about it leaks)."""
        text = ref.strip()
        if text.lower().startswith("e_"):
            raise InvalidInput(
                f"{text} is a raw conversation turn, not a memory: its text is the search "
                "hit itself. memory_get and memory_forget take memory ids (m_12)."
            )
        try:
            return engine.get(text, scope=self.scope)
        except NotFound:
            raise NotFound(f"No memory {text!r}. Try memory_search to find its id.") from None

    # -- the tools ------------------------------------------------------------------

    def memory_recall(
        self,
        query: Annotated[
            str,
            Field(
                min_length=1,
                description="The user's latest message (or what you need context for).",
            ),
        ],
        budget: Annotated[
            int | None,
            Field(
                strict=True,
                ge=1,
                le=MAX_BUDGET,
                description="Most tokens the block may take (default: recall.budget_tokens, "
                f"{RecallSettings().budget_tokens}).",
            ),
        ] = None,
    ) -> CallToolResult:
        """Get the memory block for the current turn: for a question about the user
        ("where do I live?") the memory holding the current answer first, then guardrails
        (rules to follow), what was said in the last day, and the memories most relevant
        to `query`, within a
        hard token budget. Call it at the start of a turn with the user's message, unless
        the host already put a memory block in your context. Each line is
        `- [m_12 2026-05-14] text`: the id, the date it happened or was said, the text.
        Items recalled count as used (they fade more slowly)."""
        scope = self.scope
        with self._lock:
            try:
                with self._call() as engine:
                    block = engine.recall(query, budget=budget, scope=scope)
            except ToolError as exc:
                unusable = isinstance(exc.__cause__, WorkspaceError | StoreError)
                if not unusable or not self._owns_files():
                    raise
                # The store is missing or damaged: answer from MEMORY.md and the notes.
                try:
                    block = recall_anyway(
                        self.settings, query, budget=budget, scope=scope, clock=self.clock
                    )
                except EngineError as again:
                    raise ToolError(str(again)) from again
        text = block.text or "Nothing in memory fits this message yet."
        for said in (block.degraded, block.note):
            if said:
                text += f"\n(note: {said})"
        return _result(text, records.recall_block(block))

    def memory_search(
        self,
        query: Annotated[str, Field(min_length=1, description="What to look for, in words.")],
        k: Annotated[
            int | None,
            Field(
                strict=True,
                ge=1,
                le=MAX_K,
                description="How many results, at most (default: search.k, 10).",
            ),
        ] = None,
        kinds: Annotated[
            list[Kind] | None,
            Field(description="Only memories of these kinds (raw turns are left out then)."),
        ] = None,
        as_of: Annotated[
            str | None,
            Field(
                description="An ISO date or time (2026-03-01, 2026-03-01T09:00): search what "
                "was true then instead of now."
            ),
        ] = None,
    ) -> CallToolResult:
        """Search long-term memory: memories (typed facts, preferences, decisions, tasks,
        events…) and the raw conversation turns they came from, best match first, by
        words and by meaning, newer and more used items weighted up. Use it to answer a
        question about the past, or to find the id of a memory to read (memory_get) or
        forget (memory_forget). Results are `- [m_12 2026-05-14 fact] text` (a memory)
        or `- [e_7 2026-05-14 turn] user: text` (a raw turn)."""
        when = None
        if as_of is not None:
            try:
                when = parse_instant(as_of)
            except ValueError as exc:
                raise ToolError(f"as_of: {exc}. Use a date like 2026-03-01.") from None
        with self._call() as engine:
            outcome = engine.search(query, k=k, scope=self.scope, kinds=kinds or (), as_of=when)
            zone = engine.zone
        lines = [_hit_line(h, zone) for h in outcome.hits] or [outcome.no_match or "No match."]
        if outcome.note:
            lines.append(f"(note: {outcome.note})")
        data = records.envelope(
            mode=outcome.mode,
            note=outcome.note,
            no_match=outcome.no_match,
            hits=[records.hit(h) for h in outcome.hits],
        )
        return _result("\n".join(lines), data)

    def memory_get(
        self,
        id: Annotated[str, Field(min_length=1, description="A memory id, like m_12.")],
    ) -> CallToolResult:
        """Read one memory in full: its text, kind, status (active, superseded,
        forgotten…), dates, scores and the conversation turns it came from. Use it when
        a recall line or search hit needs more context or when you need to check an item
        before forgetting it."""
        with self._call() as engine:
            memory = self._visible(engine, id)
            turns = engine.episodes_of(memory, scope=self.scope)
        shaped = records.memory(memory, episodes=turns)
        text = f"{memory.ref} {memory.kind} ({memory.status}): {memory.text}"
        if memory.superseded_by:
            text += f"\nsuperseded by m_{memory.superseded_by}"
        for turn in turns:
            text += f"\nfrom {turn.ref} ({turn.at:%Y-%m-%d}) {turn.speaker or turn.role}: "
            text += " ".join(turn.text.split())[:300]
        return _result(text, records.envelope(memory=shaped))

    def memory_remember(
        self,
        text: Annotated[
            str,
            Field(
                min_length=1,
                description="The memory, as one self-contained statement (who, what, when).",
            ),
        ],
        kind: Annotated[
            Kind | None,
            Field(
                description="fact, preference, decision, task, guardrail (a rule to always "
                "follow), event, error, pattern or insight; default: inferred from the text."
            ),
        ] = None,
        ttl: Annotated[
            str | None,
            Field(
                pattern=r"^\s*(\d{1,9}\s*[mhdwMHDW]\s*)+$",
                description="Forget it after this long: a number and a unit, m h d w (90m, "
                "12h, 7d, 2w). For things true only for a while; default: kept for good.",
            ),
        ] = None,
        until: Annotated[
            str | None,
            Field(
                pattern=r"^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$",
                description="Forget it after this date (2026-12-11: to the end of that day) "
                "or at this time (2026-12-11T18:00). Give ttl or until, not both.",
            ),
        ] = None,
    ) -> CallToolResult:
        """Store something in long-term memory, as written. Call it when the user asks
        you to remember something, or states a durable fact, preference, decision or rule
        worth keeping beyond this conversation. Write it so it makes sense on its own
        later ("Alice's daughter Mia was born on 2019-04-02", not "her birthday"). Saying
        the same thing again strengthens the existing memory instead of adding a copy.
        Text that looks like an attempt to plant instructions is held for a person to
        review and not stored. With `ttl` or `until` it expires then and leaves recall
        and search ("the door code this week is 4521", ttl 7d); saying it again sets the
        expiry anew."""
        try:
            life = None if ttl is None else parse_duration(ttl)
            end = None if until is None else parse_until(until)
        except ValueError as exc:
            raise ToolError(f"{'ttl' if until is None else 'until'}: {exc}") from None
        try:
            with self._call() as engine:
                memory, inserted = engine.remember(
                    text, kind=kind, scope=self.scope, source="agent", actor=ACTOR,
                    expires_at=end, ttl=life,
                )  # fmt: skip
        except ToolError as exc:
            if not isinstance(exc.__cause__, StoreError):
                raise
            return self._queue_remember(text, kind, life, end, exc)
        verb = "Remembered" if inserted else "Already known (strengthened)"
        data = records.envelope(inserted=inserted, memory=records.memory(memory))
        return _result(f"{verb}: {memory.ref} {memory.kind}: {memory.text}", data)

    def _queue_remember(
        self,
        text: str,
        kind: str | None,
        life: timedelta | None,
        end: datetime | date | None,
        error: ToolError,
    ) -> CallToolResult:
        """The store cannot take it now: queue it (docs/outage.md), or, when the queue
        cannot be written either, the store's error stands."""
        entry = outbox.remember_entry(
            text, self.scope, now=self.clock.now(), door="mcp", actor=ACTOR, memory_kind=kind,
            source="agent", ttl_seconds=None if life is None else life.total_seconds(),
            until=end,
        )  # fmt: skip
        try:
            outbox.append(self.settings.home, entry)
        except EngineError as again:
            raise ToolError(f"{error} Not queued either: {again}") from again
        data = records.envelope(inserted=False, queued=True, queue_id=entry.id, memory=None)
        said = (
            f"Queued as {entry.id}: memory cannot store it right now ({error}); it is stored"
            " when the store works again."
        )
        return _result(said, data)

    def memory_forget(
        self,
        id: Annotated[
            str | None,
            Field(min_length=1, description="The memory id, like m_12 (or give `query`)."),
        ] = None,
        reason: Annotated[
            str | None,
            Field(max_length=500, description="Why (kept in the audit log)."),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=500,
                description="Instead of an id: what to forget, in words or as a"
                ' description ("my old job").',
            ),
        ] = None,
        all: Annotated[
            bool,
            Field(
                description="With `query`: forget every memory it fits. Only after the"
                " user confirmed the list a first call gave."
            ),
        ] = False,
    ) -> CallToolResult:
        """Forget a memory: it and the turns it came from stop appearing in recall and
        search. Call it when the user asks you to forget something or says a memory is
        wrong: with its `id` (find it with memory_search), or with `query`, what the user
        described. A `query` that fits several memories forgets none and lists them: ask
        the user, then forget one by id, or call again with `all` true. Nothing is
        deleted: the change is recorded in the audit log and a person can see it there.
        Forgetting a forgotten memory changes nothing."""
        if (id is None) == (query is None):
            raise ToolError("Give exactly one of `id` (m_12) or `query`; nothing was changed.")
        if query is not None:
            return self._forget_described(query, everything=all)
        with self._call() as engine:
            memory = self._visible(engine, id or "")
            was = memory.status
            memory = engine.forget(memory.id, actor=ACTOR, reason=reason or "")
        text = (
            f"{memory.ref} was already forgotten."
            if was == "forgotten"
            else f"Forgot {memory.ref}: {memory.text}"
        )
        data = records.envelope(dry_run=False, memories=[records.memory(memory)])
        return _result(text, data)

    def _forget_described(self, query: str, *, everything: bool) -> CallToolResult:
        """`memory_forget` by description: one memory, or several only with `all`."""
        try:
            with self._call() as engine:
                found = engine.forget_matching(
                    query, scope=self.scope, actor=ACTOR, everything=everything
                )
        except ToolError as exc:
            unclear = exc.__cause__
            if not isinstance(unclear, Ambiguous):
                raise
            lines = "\n".join(f"- {m.ref}: {m.text}" for m in unclear.candidates)
            text = (
                f"{query!r} fits {len(unclear.candidates)} memories, so none was forgotten:"
                f"\n{lines}\nAsk the user which; forget one by id, or call again with"
                " all=true to forget every one."
            )
            memories = [records.memory(m) for m in unclear.candidates]
            return _result(text, records.envelope(dry_run=True, memories=memories))
        if not found:
            return _result(
                f"No memory fits {query!r}.", records.envelope(dry_run=False, memories=[])
            )
        lines = "\n".join(f"- {m.ref}: {m.text}" for m in found)
        data = records.envelope(dry_run=False, memories=[records.memory(m) for m in found])
        return _result(f"Forgot {len(found)}:\n{lines}", data)

    def memory_checkpoint(
        self,
        text: Annotated[
            str,
            Field(
                min_length=1,
                description="What was said or decided in this session that memory may not "
                "have yet: one item per line or bullet, in the user's words; start a line "
                "with 'assistant:' for what you said or decided yourself.",
            ),
        ],
        session: Annotated[
            str | None,
            Field(
                max_length=200,
                description="The host's session id, if you know it (default: one checkpoint "
                "session per day).",
            ),
        ] = None,
    ) -> CallToolResult:
        """Save what this session said that long-term memory may not have captured yet,
        before it leaves your context: call it before compaction, before a long session
        ends, or when asked to flush memory. Each item is stored as a conversation turn
        (and what it says as typed memories) and written to today's daily note under
        `## Checkpoint [HH:MM]`. Safe to repeat: items already saved in this session are
        not stored or written again. It never fails: what could not be saved is listed in
        `problems`."""
        with self._lock:
            report = checkpoint.save(
                self.settings,
                text,
                engine=self.engine,
                clock=self.clock,
                scope=self.scope,
                session=session,
            )
            if report.store_failed:
                self._drop()  # the next call opens the database again
        return _result("\n".join(checkpoint.describe(report)), reports.checkpoint_report(report))

    def memory_status(self) -> CallToolResult:
        """How big and how healthy long-term memory is: counts of memories by status and
        kind, conversation turns and sessions, the search index, and the health check's
        status (healthy, warning, failing) with its warnings, each naming what fixes it.
        Counts are of what this server's scope may see. Call it when memory seems
        to be missing things or the user asks about it."""
        with self._call() as engine:
            stats = engine.stats(scope=self.scope)
            index = engine.index_status()
            report = health.check(engine, integrity_checked=self._integrity_passed())
        active = stats.by_status.get("active", 0)
        lines = [
            f"memory: {active} active memories ({stats.memories} in all), "
            f"{stats.episodes} turns in {stats.sessions} sessions",
            f"search: {index.vectors} vectors ({index.model or 'no embedding model'}), "
            f"{index.missing} still to embed"
            + (" (the model changed: words only until `memoracle reindex`)" if index.stale else ""),
            f"health: {report.status}, {len(report.warnings)} warning(s)",
            *(f"- [{w.code}] {w.message}" for w in report.warnings),
            f"scope: {_scope_text(self.scope)}",
        ]
        data = records.envelope(
            **records.status(self.scope, stats, index),
            health={
                "status": report.status,
                "checked_at": report.checked_at.isoformat(),
                "warnings": [w.to_json() for w in report.warnings],
            },
        )
        return _result("\n".join(lines), data)

    def _owns_files(self) -> bool:
        """Whether this server serves the workspace's own agent and user, whose memory
        MEMORY.md and the daily notes hold (they carry no scope of their own: another
        user's server must not read them)."""
        workspace = self.settings.workspace
        return self.scope.user == (workspace.user or None) and self.scope.agent == (
            workspace.agent or None
        )

    def _integrity_passed(self) -> datetime | None:
        """When SQLite's quick check last passed (from the health history), so status does
        not read the whole database each time; None runs it."""
        last = health.last_report(self.settings.home / health.HISTORY_FILE)
        database = (last or {}).get("database")
        if not isinstance(database, dict) or database.get("integrity") != "ok":
            return None
        try:
            return datetime.fromisoformat(str(database["integrity_checked_at"]))
        except (KeyError, ValueError):
            return None

    def tools(self) -> list[tuple[Any, ToolAnnotations]]:
        """Each tool method with its annotations, in the order a client lists them."""
        writes = ToolAnnotations(
            read_only_hint=False, destructive_hint=False, open_world_hint=False
        )
        return [
            (self.memory_recall, _titled(READ_ONLY, "Recall memory for this turn")),
            (self.memory_search, _titled(READ_ONLY, "Search memory")),
            (self.memory_get, _titled(READ_ONLY, "Read one memory")),
            (self.memory_remember, _titled(writes, "Remember")),
            (
                self.memory_forget,
                ToolAnnotations(
                    title="Forget a memory",
                    read_only_hint=False,
                    destructive_hint=True,
                    idempotent_hint=True,
                    open_world_hint=False,
                ),
            ),
            (
                self.memory_checkpoint,
                _titled(writes.model_copy(update={"idempotent_hint": True}), "Checkpoint"),
            ),
            (self.memory_status, _titled(READ_ONLY, "Memory status")),
        ]


def _result(text: str, data: dict[str, Any]) -> CallToolResult:
    """What a client gets: `text` for the model, `data` (docs/json.md) as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _hit_line(hit: Hit, zone: tzinfo) -> str:
    day = hit.at.astimezone(zone).date().isoformat()
    text = " ".join(hit.text.split())
    if hit.memory is not None:
        who = hit.memory.subject
        said = f"{who}: {text}" if who not in (None, "user", "assistant") else text
        return f"- [{hit.ref} {day} {hit.memory.kind}] {said}"
    who = (hit.episode.speaker or hit.episode.role) if hit.episode else "turn"
    if hit.replaced_at is not None:  # its value was since replaced
        text += f" (earlier, until {hit.replaced_at.astimezone(zone):%Y-%m})"
    return f"- [{hit.ref} {day} turn] {who}: {text}"


def _titled(annotations: ToolAnnotations, title: str) -> ToolAnnotations:
    return annotations.model_copy(update={"title": title})


def _scope_text(scope: Scope) -> str:
    parts = [f"{k}={v}" for k, v in asdict(scope).items() if v]
    return ", ".join(parts)
