"""The engine: one object per workspace, one method per user action.

The doors (CLI, MCP, Python callers) open an `Engine` and call it. `Engine` is a
façade: each method hands the work to a focused module — the write path (`write`),
memories by hand and held writes (`memories`), reading files (`ingest`), retrieval
(`search`), upkeep (`upkeep`), the knowledge graph (`graph`) — over the state they
share (`state`). SQL is `store`'s, rules `capture`'s, formulas `lifecycle`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from memoracle.clock import Clock, SystemClock
from memoracle.config import Settings
from memoracle.config_file import render_toml, set_key
from memoracle.engine import backend, graph, memories, search, upkeep, write
from memoracle.engine.housekeeping import Housekeeping
from memoracle.engine.repeats import Repeats
from memoracle.engine.replay import Replay, deliver
from memoracle.engine.scope import can_see, fill_scope, is_owner, own_scope
from memoracle.engine.state import EngineState, parse_ref
from memoracle.errors import StoreError, WorkspaceError
from memoracle.lifecycle import scoring
from memoracle.lifecycle.dedup import DedupScore
from memoracle.lifecycle.scoring import MemoryScore
from memoracle.recall.budget import default_counter
from memoracle.recall.fallback import FORGOTTEN_FILE, forgotten_marks, recall_from_files
from memoracle.recall.hybrid import SearchOutcome
from memoracle.recall.lists import Mode
from memoracle.storage_types import AuditEntry, BackupInfo, HeldWrite
from memoracle.types import (
    CaptureResult,
    Dispute,
    DuplicateSet,
    Entity,
    EntityView,
    Episode,
    Explanation,
    IndexStatus,
    IngestReport,
    InitReport,
    Memory,
    RecallBlock,
    Relation,
    Scope,
    Stats,
    Turn,
)

if TYPE_CHECKING:  # the readers load with `ingest`, not with every engine
    from memoracle.ingest.callbacks import OnProgress, OnWarning

WORKSPACE_DIRS = ("memory", "reference", "knowledge-graph")
HOME_DIRS = ("archive", "backups")

__all__ = ["Engine", "parse_ref", "recall_anyway"]


class Engine(Housekeeping, Repeats, EngineState):
    replayed: Replay | None = None  # what `open` delivered of the write queue

    # -- workspace -----------------------------------------------------------------

    @classmethod
    def init(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        openclaw_workspace: Path | None = None,
        force: bool = False,
    ) -> InitReport:
        """Create (or complete) the home folder, config file, store and file layout.

        Safe to run again: nothing that exists is overwritten except that
        `openclaw_workspace` is recorded in the config file when given. A store that is
        missing, empty or damaged in a workspace that was in use is `StoreDamaged`
        (`memoracle doctor --fix` recovers it), unless `force`: then the damaged file
        is moved into HOME/damaged/ (kept) and a new, empty store takes its place.
        """
        clock = clock or SystemClock()
        home = settings.home
        created: list[str] = []
        backend.prepare(settings)  # before anything is created
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
                set_key(settings.config_path, "workspace", "files_dir", str(openclaw_workspace))
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
        existed, store = backend.start_store(settings, clock, force=force)
        version = store.schema_version
        store.close()
        if not existed:
            created.append(backend.location(settings))
        return InitReport(
            home=str(home),
            database=backend.location(settings),
            config=str(settings.config_path),
            files_dir=str(files_dir),
            created=tuple(created),
            schema_version=version,
        )

    @classmethod
    def open(
        cls, settings: Settings, *, clock: Clock | None = None, land_vectors: bool = False,
        replay: bool = True,
    ) -> Engine:  # fmt: skip
        """Open an initialised workspace (missing: a WorkspaceError saying what to run). A
        store missing, empty or damaged where the workspace shows earlier life, or marked
        damaged by `doctor`, is `StoreDamaged` naming the recovery; nothing is written.
        `replay` (not for a dry run or a check): the write queue stored first
        (docs/outage.md). `land_vectors` (serve, mcp): vectors land in a worker of their
        own; when it cannot start, the engine is closed before the error is raised."""
        clock = clock or SystemClock()
        settings.zone  # noqa: B018 - a bad timezone is refused before the store is opened
        engine = cls(settings, backend.open_store(settings, clock), clock)
        try:  # what was said while the store was unusable
            engine.replayed = engine.replay_queue() if replay else None
        except Exception as exc:  # the queue waits for the next open; this one goes on
            engine.replayed = Replay(error=f"{type(exc).__name__}: {exc}")
        if land_vectors:
            try:
                engine.land_vectors_in_background()
            except BaseException:
                engine.close()  # not left open for the host's next call to open another
                raise
        return engine

    def replay_queue(self) -> Replay:  # the write queue's lines, once each, in order
        return deliver(self)

    @property
    def readonly(self) -> bool:
        """The workspace was not writable, so the store was opened read-only: reads
        work, writes are a `StoreError`, and recall does not record uses."""
        return self._store.readonly

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()  # a background worker stops first, its batch stored
        self._store.close()

    def land_vectors_in_background(self) -> bool:
        """For a long-running host: from now on a worker thread, on its own connection,
        embeds the texts that have no vector yet (at once, and after each capture) and
        adds them to the vectors search uses; a capture never waits for it, and a search
        answers with what has landed (the rest by its words, said in its note) instead of
        embedding first. `close` stops it cleanly. False when there is no embedding
        model or the store is read-only (nothing to land)."""
        opener = backend.opener(self.settings, self.clock)
        return self.searcher.land_in_background(opener, self.clock) is not None

    def _stored_texts(self) -> None:
        """New texts were stored: a background worker, if any, lands their vectors."""
        if self._searcher is not None:
            self._searcher.poke()

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the actions, each in its module ---------------------------------------------

    def capture(
        self, turns: Sequence[Turn], *, scope: Scope | None = None, actor: str = "capture"
    ) -> CaptureResult:
        """Store turns as episodes and the typed memories the rules find in them.

        One transaction for the batch. A turn already stored (same session, turn id and
        role) changes nothing; an exact duplicate memory is bumped, not added. A turn
        time without an offset is a wall-clock time in `workspace.timezone`.
        """
        result = write.capture(self, turns, scope=scope, actor=actor)
        self._stored_texts()
        return result

    def capture_many(
        self, batches: Sequence[tuple[Sequence[Turn], Scope | None]], *, actor: str = "capture"
    ) -> list[CaptureResult]:
        """`capture` for several batches, each with its own scope, all or nothing."""
        results = write.capture_many(self, batches, actor=actor)
        self._stored_texts()
        return results

    def read_graph_backlog(self) -> int:
        """Read the live memories never read for the graph (stored before it existed, or
        while the ontology file was broken). Returns how many were read; raises
        `InvalidInput` for an ontology file that does not load."""
        return graph.read_graph_backlog(self)

    def graph_entities(
        self, *, type_: str | None = None, limit: int = 1_000_000, scope: Scope | None = None
    ) -> list[Entity]:
        """Entities named by live memories that `scope` may see (no scope: the workspace
        owner's), most named first."""
        return graph.graph_entities(self, type_=type_, limit=limit, scope=scope)

    def graph_relations(
        self, *, limit: int = 1_000_000, scope: Scope | None = None
    ) -> list[Relation]:
        """Relations stated by live memories that `scope` may see, most stated first."""
        return graph.graph_relations(self, limit=limit, scope=scope)

    def graph_show(self, name: str, *, limit: int = 20, scope: Scope | None = None) -> EntityView:
        """One entity by any of its names ("Anna", "my wife Anna", "Anna's"): its type,
        aliases, relations and the newest live memories naming it, as `scope` sees them."""
        return graph.graph_show(self, name, limit=limit, scope=scope)

    def ingest(
        self,
        paths: Iterable[Path],
        *,
        fmt: str | None = None,
        scope: Scope | None = None,
        on_progress: OnProgress | None = None,
        on_warning: OnWarning | None = None,
    ) -> IngestReport:
        """Read transcripts, exports and notes; capture every turn, import every note.

        A malformed line is a warning (file:line) and the rest is read. A path that
        cannot be read at all raises, unless other paths were read: then it is a warning
        too, so one bad file in a batch does not stop the others.
        """
        from memoracle.engine import ingest  # the file readers: loaded when read from

        try:
            return ingest.ingest(
                self, paths, fmt=fmt, scope=scope, on_progress=on_progress, on_warning=on_warning
            )
        finally:
            self._stored_texts()

    def held_writes(
        self, *, since: datetime | None = None, waiting: bool = False
    ) -> list[HeldWrite]:
        """Writes the write audit held back, newest first (see `confirm_held`)."""
        return memories.held_writes(self, since=since, waiting=waiting)

    def audit_entries(
        self, *, since: datetime | None = None, limit: int = 1000
    ) -> list[AuditEntry]:
        """The audit log (every write through every door, with who made it), newest first."""
        return memories.audit_entries(self, since=since, limit=limit)

    def confirm_held(self, ref: str | int, *, actor: str = "cli") -> list[Memory]:
        """A person vouches for a held write: it is stored as it would have been (a
        captured turn's memories found by the rules, its episode searchable again; a
        stated text as one memory). Returns the memories stored or bumped."""
        stored = memories.confirm_held(self, ref, actor=actor)
        self._stored_texts()
        return stored

    def reject_held(self, ref: str | int, *, actor: str = "cli") -> HeldWrite:
        """A person turns a held write down: it stays held, for the record."""
        return memories.reject_held(self, ref, actor=actor)

    def get(self, ref: str | int, *, scope: Scope | None = None) -> Memory:
        """The memory `ref` (m_12 or 12) names, if `scope` may see it (docs/scopes.md;
        no scope: the workspace owner's); `NotFound` otherwise, as for a missing id."""
        return memories.get(self, ref, scope=scope)

    def episodes_of(self, memory: Memory, *, scope: Scope | None = None) -> list[Episode]:
        """The turns `memory` came from that `scope` may see."""
        return memories.episodes_of(self, memory, scope=scope)

    def turns(self, *, scope: Scope | None = None) -> Iterator[list[Episode]]:
        """Every stored turn `scope` may see (no scope: the workspace owner's), a page
        at a time, oldest first."""
        return memories.turns(self, scope=scope)

    def list_memories(
        self,
        *,
        kind: str | None = None,
        status: str | None = "active",
        limit: int = 50,
        scope: Scope | None = None,
    ) -> list[Memory]:
        """The newest memories `scope` may see (no scope: the workspace owner's)."""
        return memories.list_memories(self, kind=kind, status=status, limit=limit, scope=scope)

    def remember(
        self,
        text: str,
        *,
        kind: str | None = None,
        scope: Scope | None = None,
        source: str = "manual",
        actor: str = "cli",
        expires_at: datetime | date | None = None,
        ttl: timedelta | None = None,
    ) -> tuple[Memory, bool]:
        """Store `text` as a memory as it is (secrets redacted). Returns (memory, inserted);
        an exact duplicate is bumped instead. With `ttl` (a timedelta from now) or
        `expires_at` (a time, or a date: to the end of that day; without an offset in
        `workspace.timezone`) it expires then: search and recall leave it out from that
        moment and the nightly archives it. Remembering a live memory again sets its
        expiry to this call's (none: kept for good). An expiry already past, or both
        given, is `InvalidInput`."""
        found = memories.remember(
            self, text, kind=kind, scope=scope, source=source, actor=actor,
            expires_at=expires_at, ttl=ttl,
        )  # fmt: skip
        self._stored_texts()
        return found

    def expiry(
        self, *, expires_at: datetime | date | None = None, ttl: timedelta | None = None
    ) -> datetime | None:
        """The UTC instant `remember` would give as the expiry for these arguments (None:
        never), checked as `remember` checks them: a door can refuse bad input first."""
        return memories.expiry_of(self, self.clock.now(), expires_at=expires_at, ttl=ttl)

    def forget(self, ref: str | int, *, actor: str = "cli", reason: str = "") -> Memory:
        """Mark one memory forgotten (a status change with an audit entry, never a delete)."""
        return memories.forget(self, ref, actor=actor, reason=reason)

    def forget_matching(
        self,
        query: str,
        *,
        scope: Scope | None = None,
        dry_run: bool = False,
        actor: str = "cli",
        limit: int = 20,
        everything: bool = False,
    ) -> list[Memory]:
        """Forget every live memory `scope` may see (no scope: the workspace owner's)
        containing all words of `query`, else those it describes, in any language (or
        list them, dry run); a query naming nothing, fitting more than `limit`, or
        fitting more than one (`Ambiguous`, with the candidates) is refused unless
        `everything`. docs/lifecycle.md."""
        return memories.forget_matching(
            self, query, scope=scope, dry_run=dry_run, actor=actor, limit=limit,
            everything=everything,
        )  # fmt: skip

    def index_status(self) -> IndexStatus:
        """Which embedding model the store's vectors belong to, and whether search can
        use them: a model change makes search lexical-only until `reindex`."""
        return search.index_status(self)

    def reindex(self, *, on_progress: OnProgress | None = None) -> int:
        """Embed every live memory and turn that has no vector for the configured model,
        then build the HNSW graph if the store is big enough for one and it is missing
        or damaged (`embedding.ann_threshold`, the `ann` extra); returns how many texts
        were embedded."""
        return search.reindex(self, on_progress=on_progress)

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        scope: Scope | None = None,
        kinds: Sequence[str] = (),
        as_of: datetime | None = None,
        mode: Mode = "hybrid",
    ) -> SearchOutcome:
        """Hybrid search (docs/retrieval.md) over what `scope` may see; only active memories unless
        `as_of`, which returns what was active then; `mode` "lexical" / "vector": one kind only."""
        return search.search(self, query, k=k, scope=scope, kinds=kinds, as_of=as_of, mode=mode)

    def recall(
        self, message: str, *, budget: int | None = None, scope: Scope | None = None
    ) -> RecallBlock:
        """The block injected before a turn (docs/retrieval.md): the memory holding the
        current value of the attribute `message` asks about, if any (10 %); guardrails
        (10 %), the items of the last `recall.fresh_hours` that `message` touches
        (30 %), search hits (60 % plus what the others left). Never over `budget` tokens;
        each memory returned gets its recall boost. What `scope` may see is
        docs/scopes.md's rule."""
        return search.recall(self, message, budget=budget, scope=scope)

    def explain(
        self,
        ref: str,
        *,
        query: str,
        scope: Scope | None = None,
        kinds: Sequence[str] = (),
    ) -> Explanation:
        """Why `ref` (m_… or e_…) ranks where it does for `query` (searched as `scope`,
        for `kinds`), signal by signal; when it is not returned, what kept it out: a
        filter (status, scope, kind, a held turn) or the stage of the search where it
        fell out (no lexical match, no vector yet, below the candidates scored, faded,
        the same evidence as a better hit, ...)."""
        return search.explain(self, ref, query=query, scope=scope, kinds=kinds)

    def duplicates(self, *, after: int | None = None) -> list[DuplicateSet]:
        """Near-duplicate groups among live memories (docs/lifecycle.md: Jaccard, containment,
        entity overlap, segments, and vector similarity where vectors exist; threshold
        `lifecycle.dedup_threshold`), compared within one owner, subject and kind. Each
        group keeps its fullest text (then the most used, then the oldest).

        With `after` (a memory id), only the memories stored since are looked at: each
        against the others and the `DEDUP_CANDIDATES` live memories FTS finds for it, and
        only groups holding one of them are returned (when they are many, more than one
        in `WHOLE_STORE_RATIO` of the live ones, the whole store is compared instead:
        that is then cheaper). The nightly run compares the whole store once, then this
        way, so a night costs what the day added."""
        return upkeep.duplicates(self, after=after)

    def merge_duplicates(self, groups: Sequence[DuplicateSet], *, actor: str = "cli") -> int:
        """Merge each group into its kept memory: every provenance moves over, the kept
        one gains confidence, the others are marked superseded by it (never deleted),
        with an audit entry on both sides. Returns how many memories were merged."""
        return upkeep.merge_duplicates(self, groups, actor=actor)

    def dedup_query(
        self, text: str, *, scope: Scope | None = None, limit: int = 5
    ) -> list[tuple[Memory, DedupScore]]:
        """The live memories closest to `text` by the dedup score, best first (whether or
        not they pass the threshold: `dedup.is_duplicate` says)."""
        return upkeep.dedup_query(self, text, scope=scope, limit=limit)

    def all_memories(
        self, status: str, page: int = 2000, *, seen_by: Scope | None = None
    ) -> list[Memory]:
        """Every memory with `status`, newest first, read a page at a time: the whole
        store's for the lifecycle jobs, or only what `seen_by` may see (the rendered
        files pass `owner`)."""
        return upkeep.all_memories(self, status, page, seen_by=seen_by)

    def settle_unslotted(self, *, actor: str = "nightly") -> int:
        """Look for the slot of live memories that never had it looked for (imported, or
        stored before slots existed) and settle them in order, as capture would have.
        Returns how many were looked at."""
        return upkeep.settle_unslotted(self, actor=actor)

    def pending(self) -> list[Dispute]:
        """Disputed memories (a hedged contradiction put them in doubt), oldest first,
        each with the memory that disputed it; then memories a "forget …" fitted along
        with others (`by` None), waiting for `resolve`."""
        return upkeep.pending(self)

    def resolve(
        self,
        ref: str | int,
        *,
        confirm: bool,
        replacement: str | None = None,
        actor: str = "cli",
    ) -> Memory:
        """Settle a disputed memory: `confirm` keeps it (active again); otherwise it is
        superseded — by `replacement`, stored as a user-stated memory with the kind,
        subject, attribute and slots of the one it replaces, or else by the memory that
        disputed it. A memory a "forget …" left waiting: `confirm` keeps it, otherwise
        it is forgotten. Returns the memory as it is now."""
        return upkeep.resolve(self, ref, confirm=confirm, replacement=replacement, actor=actor)

    def backup(self) -> BackupInfo:
        """A verified copy of the database in HOME/backups (the newest
        `lifecycle.backups_kept` are kept), taken before any bulk change."""
        return upkeep.backup(self)

    def record_run(self, kind: str, counts: dict[str, int]) -> None:
        """Note a finished job (nightly, …) in the runs table, for health and stats."""
        upkeep.record_run(self, kind, counts)

    def restore(self, ref: str | int, *, actor: str = "cli") -> Memory:
        """Bring an archived memory back from the cold tier, as it was (status, text,
        provenance), and count the restore as a use: its activation is refreshed as a
        recall would, so the next night does not archive it again. A forgotten memory
        comes back to the status it had, with the turns it hid."""
        return upkeep.restore(self, ref, actor=actor)

    def activation(self, memory: Memory) -> tuple[float, datetime]:
        """`memory`'s activation now and that now (the engine's clock, `--now`): the
        stored strength decayed from its last access, what search weighs and archiving
        compares (docs/lifecycle.md)."""
        now = self.clock.now()
        return scoring.activation(memory, now, self.settings.decay), now

    def score(self, *, seen_by: Scope | None = None) -> list[tuple[Memory, MemoryScore]]:
        """Active memories (that `seen_by` may see, when given) ranked by the
        promotion/archival score (docs/lifecycle.md: kind weight × recency × frequency ×
        entity boost × completion), best first; computed from time, nothing written."""
        return upkeep.score(self, seen_by=seen_by)

    def filled(self, scope: Scope | None) -> Scope:
        """`scope` as a request: its agent and user defaulted to the workspace's."""
        return fill_scope(self.settings, scope)

    @property
    def owner(self) -> Scope:
        """The workspace owner's private context (`workspace.agent`, `workspace.user`):
        whose views MEMORY.md, SESSION-START.md, the daily notes and the other rendered
        files are (docs/scopes.md)."""
        return own_scope(self.settings)

    def owner_sees(self, item: Scope) -> bool:
        """Whether the workspace owner's private context may see an item of `item`'s
        scope: what may go into a rendered file."""
        return can_see(self.settings, self.owner, item)

    def stats(self, *, scope: Scope | None = None) -> Stats:
        """Counts of what `scope` sees (no scope: the workspace owner's)."""
        return upkeep.stats(self, scope=scope)


def recall_anyway(
    settings: Settings,
    message: str,
    *,
    budget: int | None = None,
    scope: Scope | None = None,
    clock: Clock | None = None,
) -> RecallBlock:
    """`Engine.recall`, or, when the database is missing or corrupt, a plain-text search
    over MEMORY.md and the daily notes that still fits the budget and says why in
    `degraded`. For hosts that inject a block before every turn: a broken store must
    not leave the agent with nothing."""
    budget = search.recall_budget(settings, budget)
    try:
        with Engine.open(settings, clock=clock) as engine:
            return engine.recall(message, budget=budget, scope=scope)
    except (WorkspaceError, StoreError) as exc:
        return recall_from_files(
            settings.files_dir,
            message,
            budget=budget,
            counter=default_counter(),
            for_owner=is_owner(settings, scope),
            reason=f"database unavailable ({exc})",
            forgotten=forgotten_marks(settings.home / FORGOTTEN_FILE),
        )
