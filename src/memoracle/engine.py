"""The engine: one object per workspace, one method per user action.

The doors (CLI, MCP, Python callers) open an `Engine` and call it; it composes the
capture rules, the ingest readers and the store. It owns the write path's decisions —
which turns become episodes, which proposals become memories, what an exact duplicate
does — and leaves SQL to `store`, rules to `capture`, file formats to `ingest`.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, time
from pathlib import Path
from types import TracebackType
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from memoracle import ingest as readers
from memoracle.capture.extract import extract
from memoracle.capture.lang import detect_language
from memoracle.capture.pipeline import Proposal, analyse
from memoracle.capture.redact import redact
from memoracle.clock import Clock, SystemClock
from memoracle.config import Settings, render_toml, toml_value
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.store import Store
from memoracle.text import content_hash
from memoracle.types import (
    CaptureResult,
    Episode,
    ImportedNote,
    IngestReport,
    IngestWarning,
    InitReport,
    Memory,
    NewMemory,
    Scope,
    Stats,
    Turn,
)

log = logging.getLogger(__name__)

LAYER_OF_KIND = {
    "fact": "semantic",
    "preference": "semantic",
    "decision": "semantic",
    "insight": "semantic",
    "event": "episodic",
    "error": "episodic",
    "task": "episodic",
    "guardrail": "procedural",
    "pattern": "procedural",
}
WORKSPACE_DIRS = ("memory", "reference", "knowledge-graph")
HOME_DIRS = ("archive", "backups")
INGEST_BATCH = 200

ProgressCallback = Callable[[int, int], None]
WarningCallback = Callable[[IngestWarning], None]


def parse_ref(ref: str | int, prefix: str = "m") -> int:
    """'m_42', 'm42' or '42' -> 42; anything else is InvalidInput."""
    text = str(ref).strip().lower()
    for head in (f"{prefix}_", prefix):
        if text.startswith(head):
            text = text[len(head) :]
            break
    if not text.isdigit():
        raise InvalidInput(f"Not a {prefix}_ id: {ref!r}. Ids look like {prefix}_42.")
    return int(text)


class Engine:
    def __init__(self, settings: Settings, store: Store, clock: Clock) -> None:
        self.settings = settings
        self.store = store
        self.clock = clock
        self.zone = _zone(settings.workspace.timezone)

    # -- workspace -----------------------------------------------------------------

    @classmethod
    def init(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        openclaw_workspace: Path | None = None,
    ) -> InitReport:
        """Create (or complete) the home folder, config file, store and file layout.

        Safe to run again: nothing that exists is overwritten except that
        `openclaw_workspace` is recorded in the config file when given.
        """
        clock = clock or SystemClock()
        home = settings.home
        created: list[str] = []
        if openclaw_workspace is not None:
            openclaw_workspace = openclaw_workspace.expanduser().resolve()
            if not openclaw_workspace.is_dir():
                raise WorkspaceError(
                    f"OpenClaw workspace {openclaw_workspace} is not a folder. "
                    "Pass the folder that holds AGENTS.md and MEMORY.md "
                    "(e.g. ~/.openclaw/workspace)."
                )
        try:
            for folder in (home, *(home / d for d in HOME_DIRS)):
                if not folder.exists():
                    folder.mkdir(parents=True)
                    created.append(str(folder))
            if not settings.config_path.exists():
                settings.config_path.write_text(render_toml(settings), encoding="utf-8")
                created.append(str(settings.config_path))
            if openclaw_workspace is not None:
                _set_config_key(
                    settings.config_path, "workspace", "files_dir", str(openclaw_workspace)
                )
            files_dir = openclaw_workspace or settings.files_dir
            for folder in (files_dir, *(files_dir / d for d in WORKSPACE_DIRS)):
                if not folder.exists():
                    folder.mkdir(parents=True)
                    created.append(str(folder))
        except OSError as exc:
            raise WorkspaceError(
                f"Cannot create the workspace at {home}: {exc.strerror or exc}. "
                "Choose a writable folder with --home or MEMORACLE_HOME."
            ) from None
        existed = settings.db_path.exists()
        store = Store.open(settings.db_path, now=clock.now())
        version = store.schema_version
        store.close()
        if not existed:
            created.append(str(settings.db_path))
        return InitReport(
            home=str(home),
            database=str(settings.db_path),
            config=str(settings.config_path),
            files_dir=str(files_dir),
            created=tuple(created),
            schema_version=version,
        )

    @classmethod
    def open(cls, settings: Settings, *, clock: Clock | None = None) -> Engine:
        """Open an initialised workspace; a missing one is a WorkspaceError saying what to run."""
        if not settings.db_path.exists():
            raise WorkspaceError(
                f"No memoracle workspace at {settings.home} (no {settings.db_path.name}). "
                f"Run: memoracle init --home {settings.home}"
            )
        clock = clock or SystemClock()
        return cls(settings, Store.open(settings.db_path, now=clock.now()), clock)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- capture -------------------------------------------------------------------

    def capture(
        self, turns: Sequence[Turn], *, scope: Scope | None = None, actor: str = "capture"
    ) -> CaptureResult:
        """Store turns as episodes and the typed memories the rules find in them.

        One transaction for the batch. A turn already stored (same session, turn id and
        role) changes nothing; an exact duplicate memory is bumped, not added.
        """
        scope = self._scope(scope)
        for turn in turns:
            self._check_size(turn, origin=turn.origin or "capture")
        results: list[CaptureResult] = []
        with self.store.transaction():
            for turn in turns:
                results.append(self._capture_one(turn, scope, actor))
        return _merge(results)

    def _check_size(self, turn: Turn, *, origin: str) -> None:
        limit = self.settings.capture.max_turn_chars
        if len(turn.text) > limit:
            raise InvalidInput(
                f"{origin}: turn of {len(turn.text):,} characters is over the limit of {limit:,} "
                "(capture.max_turn_chars). Split it, or raise the limit in config.toml."
            )

    def _capture_one(self, turn: Turn, scope: Scope, actor: str) -> CaptureResult:
        now = self.clock.now()
        at = turn.at or now
        anchor = at.astimezone(self.zone) if at.utcoffset() == UTC.utcoffset(None) else at
        extract_memories = turn.role != "assistant" or self.settings.capture.assistant_memories
        analysis = analyse(
            turn,
            anchor,
            day_first=self.settings.workspace.day_first,
            extract_memories=extract_memories,
            languages=tuple(self.settings.capture.languages),
        )
        if analysis.noise is not None:
            return CaptureResult((), (), (), (), (f"noise:{analysis.noise}",))
        stored = Turn(
            role=turn.role,
            text=analysis.text,
            at=at,
            session_id=turn.session_id,
            turn_id=turn.turn_id,
            speaker=turn.speaker,
            kind=turn.kind,
            origin=turn.origin,
        )
        episode_id = self.store.episodes.insert(
            stored, key=_turn_key(stored, scope), at=at, now=now, scope=scope
        )
        if episode_id is None:
            return CaptureResult((), (), (), (), ("duplicate-turn",), duplicate_turn=True)
        if analysis.redacted:
            self.store.audit.append(
                at=now,
                actor=actor,
                action="redact",
                detail={"episode": episode_id, "kinds": list(analysis.redacted)},
            )
        added: list[int] = []
        bumped: list[int] = []
        forgotten: list[int] = []
        for proposal in analysis.proposals:
            if proposal.candidate.action == "forget":
                forgotten += self._forget_matching(
                    proposal.candidate.text, now=now, actor=actor, episode_id=episode_id
                )
                continue
            new = self._new_memory(proposal, observed_at=at, scope=scope)
            memory_id, is_new = self._store_memory(new, now=now, actor=actor, episode_id=episode_id)
            (added if is_new else bumped).append(memory_id)
        return CaptureResult(
            episodes=(episode_id,),
            added=tuple(self.store.memories.get_many(added)),
            bumped=tuple(self.store.memories.get_many(bumped)),
            forgotten=tuple(self.store.memories.get_many(forgotten)),
            skipped=analysis.skipped,
        )

    def _new_memory(self, proposal: Proposal, *, observed_at: datetime, scope: Scope) -> NewMemory:
        c = proposal.candidate
        first = proposal.dates[0] if proposal.dates else None
        remembered = c.action == "remember"
        return NewMemory(
            kind=c.kind,
            text=c.text,
            layer=LAYER_OF_KIND[c.kind],
            source="user-stated" if remembered else "capture",
            observed_at=observed_at,
            content_hash=content_hash(c.text),
            scope=scope,
            subject=c.subject,
            predicate=c.predicate,
            object=c.object,
            valid_from=first.start if first and c.kind == "event" else None,
            valid_to=first.end if first and c.kind == "event" else None,
            due_at=first.start if first and c.kind == "task" else None,
            importance=max(c.importance, 0.8) if remembered else c.importance,
            confidence=max(c.confidence, 0.95) if remembered else c.confidence,
            pinned=c.kind == "guardrail",
            lang=c.lang,
            rule=c.rule,
            details={
                "hedged": c.hedged,
                "dates": [
                    {
                        "text": d.text,
                        "start": d.start.isoformat(),
                        "end": d.end.isoformat(),
                        "granularity": d.granularity,
                        "rule": d.rule,
                    }
                    for d in proposal.dates
                ],
            },
        )

    def _store_memory(
        self,
        new: NewMemory,
        *,
        now: datetime,
        actor: str,
        episode_id: int | None = None,
        origin: str | None = None,
    ) -> tuple[int, bool]:
        """Insert, or bump the exact duplicate. Returns (id, inserted)."""
        memories = self.store.memories
        existing = memories.find_duplicate(new.content_hash, new.subject, new.scope)
        if existing is not None:
            memories.bump(existing, now=now, boost=self.settings.recall.boost)
            memories.add_provenance(existing, now=now, episode_id=episode_id, origin=origin)
            return existing, False
        memory_id = memories.insert(new, now=now)
        memories.add_provenance(memory_id, now=now, episode_id=episode_id, origin=origin)
        self.store.audit.append(
            at=now,
            actor=actor,
            action="add",
            memory_id=memory_id,
            detail={"kind": new.kind, "rule": new.rule, "source": new.source},
        )
        return memory_id, True

    # -- ingest --------------------------------------------------------------------

    def ingest(
        self,
        paths: Iterable[Path],
        *,
        fmt: str | None = None,
        scope: Scope | None = None,
        on_progress: ProgressCallback | None = None,
        on_warning: WarningCallback | None = None,
    ) -> IngestReport:
        """Read transcripts, exports and notes; capture every turn, import every note.

        A malformed line is a warning (file:line) and the rest is read. A path that
        cannot be read at all raises, unless other paths were read: then it is a warning
        too, so one bad file in a batch does not stop the others.
        """
        scope = self._scope(scope)
        warnings: list[IngestWarning] = []

        def warn(w: IngestWarning) -> None:
            warnings.append(w)
            if on_warning is not None:
                on_warning(w)

        counts = {"turns": 0, "episodes": 0, "added": 0, "bumped": 0, "noise": 0}
        formats: dict[str, int] = {}
        files = 0
        run = self._start_run("ingest")
        path_list = list(paths)
        try:
            for path in path_list:
                try:
                    kind = fmt or readers.detect_format(path)
                    items = readers.read(path, kind, on_warning=warn, on_progress=on_progress)
                    self._ingest_items(items, scope, counts, warn)
                except (InvalidInput, NotFound) as exc:
                    if len(path_list) == 1:
                        raise
                    warn(IngestWarning(str(path), str(exc)))
                    continue
                files += 1
                formats[kind] = formats.get(kind, 0) + 1
        except BaseException as exc:
            self._finish_run(run, "failed", counts, error=str(exc))
            raise
        self._finish_run(run, "ok", counts)
        return IngestReport(
            files=files,
            format_counts=formats,
            turns=counts["turns"],
            episodes_added=counts["episodes"],
            memories_added=counts["added"],
            memories_bumped=counts["bumped"],
            skipped_noise=counts["noise"],
            warnings=tuple(warnings),
        )

    def _ingest_items(
        self,
        items: Iterable[Turn | ImportedNote],
        scope: Scope,
        counts: dict[str, int],
        warn: WarningCallback,
    ) -> None:
        batch: list[Turn | ImportedNote] = []

        def flush() -> None:
            with self.store.transaction():
                for item in batch:
                    if isinstance(item, ImportedNote):
                        _, inserted = self._import_note(item, scope)
                        counts["added" if inserted else "bumped"] += 1
                        continue
                    counts["turns"] += 1
                    result = self._capture_one(item, scope, "ingest")
                    counts["episodes"] += len(result.episodes)
                    counts["added"] += len(result.added)
                    counts["bumped"] += len(result.bumped)
                    counts["noise"] += sum(s.startswith("noise:") for s in result.skipped)
            batch.clear()

        for item in items:
            if isinstance(item, Turn) and len(item.text) > self.settings.capture.max_turn_chars:
                warn(
                    IngestWarning(
                        item.origin or "?",
                        f"turn of {len(item.text):,} characters skipped: over "
                        f"capture.max_turn_chars ({self.settings.capture.max_turn_chars:,})",
                    )
                )
                continue
            batch.append(item)
            if len(batch) >= INGEST_BATCH:
                flush()
        if batch:
            flush()

    def _import_note(self, note: ImportedNote, scope: Scope) -> tuple[int, bool]:
        now = self.clock.now()
        text = redact(note.text).text
        kind = note.kind or self._infer_kind(text)
        observed = (
            datetime.combine(note.day, time(), tzinfo=self.zone).astimezone(UTC)
            if note.day
            else now
        )
        new = NewMemory(
            kind=kind,
            text=text,
            layer=LAYER_OF_KIND[kind],
            source="import",
            observed_at=observed,
            content_hash=content_hash(text),
            scope=scope,
            pinned=kind == "guardrail",
            importance=0.6,
            confidence=0.9,
            lang=detect_language(text),
            details={"heading": note.heading} if note.heading else {},
        )
        return self._store_memory(new, now=now, actor="import", origin=note.origin)

    def _infer_kind(self, text: str) -> str:
        found = extract(text, role="user")
        return found.candidates[0].kind if found.candidates else "fact"

    # -- everyday ------------------------------------------------------------------

    def get(self, ref: str | int) -> Memory:
        memory_id = parse_ref(ref)
        memory = self.store.memories.get(memory_id)
        if memory is None:
            raise NotFound(f"No memory 'm_{memory_id}'. Try: memoracle list, or memoracle search")
        return memory

    def episodes_of(self, memory: Memory) -> list[Episode]:
        found = (self.store.episodes.get(i) for i in memory.episode_ids)
        return [e for e in found if e is not None]

    def list_memories(
        self, *, kind: str | None = None, status: str | None = "active", limit: int = 50
    ) -> list[Memory]:
        return self.store.memories.select(kind=kind, status=status, limit=limit)

    def remember(
        self,
        text: str,
        *,
        kind: str | None = None,
        scope: Scope | None = None,
        source: str = "manual",
        actor: str = "cli",
    ) -> tuple[Memory, bool]:
        """Store `text` as a memory as it is (secrets redacted). Returns (memory, inserted);
        an exact duplicate is bumped instead."""
        clean = redact(text).text.strip()
        if not clean:
            raise InvalidInput("Nothing to remember: the text is empty.")
        self._check_size(Turn(role="user", text=clean), origin="remember")
        kind = kind or self._infer_kind(clean)
        now = self.clock.now()
        new = NewMemory(
            kind=kind,
            text=clean,
            layer=LAYER_OF_KIND[kind],
            source=source,
            observed_at=now,
            content_hash=content_hash(clean),
            scope=self._scope(scope),
            pinned=kind == "guardrail",
            importance=0.8,
            confidence=0.95,
            lang=detect_language(clean),
        )
        with self.store.transaction():
            memory_id, inserted = self._store_memory(new, now=now, actor=actor)
        return self.get(memory_id), inserted

    def forget(self, ref: str | int, *, actor: str = "cli", reason: str = "") -> Memory:
        """Mark one memory forgotten (a status change with an audit entry, never a delete)."""
        memory = self.get(ref)
        if memory.status == "forgotten":
            return memory
        now = self.clock.now()
        with self.store.transaction():
            self._set_forgotten(
                memory, now=now, actor=actor, detail={"reason": reason} if reason else {}
            )
        return self.get(memory.id)

    def forget_matching(
        self, query: str, *, dry_run: bool = False, actor: str = "cli", limit: int = 20
    ) -> list[Memory]:
        """Forget every live memory containing all words of `query` (or list them, dry run)."""
        if dry_run:
            return self.store.memories.get_many(self.store.memories.match(query, limit=limit))
        now = self.clock.now()
        with self.store.transaction():
            ids = self._forget_matching(query, now=now, actor=actor, limit=limit)
        return self.store.memories.get_many(ids)

    def _forget_matching(
        self,
        query: str,
        *,
        now: datetime,
        actor: str,
        episode_id: int | None = None,
        limit: int = 20,
    ) -> list[int]:
        ids = self.store.memories.match(query, limit=limit)
        detail: dict[str, Any] = {"query": query}
        if episode_id is not None:
            detail["episode"] = episode_id
        for memory in self.store.memories.get_many(ids):
            self._set_forgotten(memory, now=now, actor=actor, detail=detail)
        return ids

    def _set_forgotten(
        self, memory: Memory, *, now: datetime, actor: str, detail: dict[str, Any]
    ) -> None:
        self.store.memories.set_status(memory.id, "forgotten", now=now)
        self.store.audit.append(
            at=now,
            actor=actor,
            action="forget",
            memory_id=memory.id,
            detail={"from": memory.status, **detail},
        )

    def stats(self) -> Stats:
        counts = self.store.memories.counts()
        by_status: dict[str, int] = {}
        active_by_kind: dict[str, int] = {}
        for (status, kind), n in counts.items():
            by_status[status] = by_status.get(status, 0) + n
            if status == "active":
                active_by_kind[kind] = n
        last = self.store.runs.last("ingest")
        return Stats(
            home=str(self.settings.home),
            database=str(self.store.path),
            schema_version=self.store.schema_version,
            database_bytes=self.store.size_bytes(),
            memories=sum(counts.values()),
            by_status=by_status,
            active_by_kind=active_by_kind,
            episodes=self.store.episodes.count(),
            episodes_by_kind=self.store.episodes.count_by_kind(),
            sessions=self.store.episodes.count_sessions(),
            audit_entries=self.store.audit.count(),
            last_ingest=last[1] if last else None,
        )

    # -- helpers -------------------------------------------------------------------

    def _scope(self, scope: Scope | None) -> Scope:
        scope = scope or Scope()
        if scope.visibility not in ("private", "shared"):
            raise InvalidInput(f"visibility must be private or shared, not {scope.visibility!r}")
        return Scope(
            agent=scope.agent or self.settings.workspace.agent or None,
            user=scope.user or self.settings.workspace.user or None,
            chat=scope.chat,
            visibility=scope.visibility,
        )

    def _start_run(self, kind: str) -> int:
        with self.store.transaction():
            return self.store.runs.start(kind, now=self.clock.now())

    def _finish_run(
        self, run: int, status: str, counts: dict[str, int], error: str | None = None
    ) -> None:
        with self.store.transaction():
            self.store.runs.finish(
                run, now=self.clock.now(), status=status, counts=counts, error=error
            )


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidInput(
            f"workspace.timezone: unknown timezone {name!r}. Use an IANA name such as Europe/Paris."
        ) from None


def _turn_key(turn: Turn, scope: Scope) -> str:
    """Identity of a turn: (agent, session, turn id, role, speaker) when a turn id is
    given, else the content and time, so re-reading a transcript adds nothing."""
    parts: list[str] = [scope.agent or "", turn.session_id or "", turn.role, turn.speaker or ""]
    if turn.turn_id:
        parts.append(turn.turn_id)
    else:
        parts += [turn.at.isoformat() if turn.at else "", turn.text]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _merge(results: Sequence[CaptureResult]) -> CaptureResult:
    return CaptureResult(
        episodes=tuple(e for r in results for e in r.episodes),
        added=tuple(m for r in results for m in r.added),
        bumped=tuple(m for r in results for m in r.bumped),
        forgotten=tuple(m for r in results for m in r.forgotten),
        skipped=tuple(s for r in results for s in r.skipped),
        duplicate_turn=bool(results) and all(r.duplicate_turn for r in results),
    )


def _set_config_key(path: Path, section: str, key: str, value: str) -> None:
    """Set `section.key` in a config file, keeping every other line (and comment) as is."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = f"[{section}]"
    setting = f"{key} = {toml_value(value)}"
    if header not in lines:
        lines += ["", header, setting]
    else:
        start = lines.index(header) + 1
        end = next((i for i in range(start, len(lines)) if lines[i].startswith("[")), len(lines))
        for i in range(start, end):
            if lines[i].split("=")[0].strip() == key:
                lines[i] = setting
                break
        else:
            lines.insert(start, setting)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)
