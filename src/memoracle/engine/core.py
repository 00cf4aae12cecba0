"""The engine: one object per workspace, one method per user action.

The doors (CLI, MCP, Python callers) open an `Engine` and call it; it composes the
capture rules, the ingest readers and the store. It owns the write path's decisions —
which turns become episodes, which proposals become memories, what an exact duplicate
does — and leaves SQL to `store`, rules to `capture`, file formats to `ingest`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle import ingest as readers
from memoracle.capture.dates import find_dates
from memoracle.capture.extract import extract
from memoracle.capture.injection import classify
from memoracle.capture.lang import detect_language
from memoracle.capture.pipeline import Proposal, prepare, propose
from memoracle.clock import Clock, SystemClock
from memoracle.config import Settings, render_toml, set_key
from memoracle.embed import Embedder, from_blob, make_embedder
from memoracle.errors import (
    EngineError,
    InvalidInput,
    NotFound,
    StoreError,
    WorkspaceError,
    WriteHeld,
)
from memoracle.graph import extract as graph_rules
from memoracle.graph.ontology import Ontology, load_ontology
from memoracle.ingest.callbacks import OnProgress, OnWarning
from memoracle.lifecycle import dedup, scoring
from memoracle.lifecycle.conflicts import Verdict, graver, judge, same_value
from memoracle.lifecycle.dedup import DedupScore
from memoracle.lifecycle.scoring import MemoryScore
from memoracle.lifecycle.slots import Slot, slots_of
from memoracle.recall.budget import TokenCounter, default_counter, format_line, pack
from memoracle.recall.fallback import recall_from_files
from memoracle.recall.fuse import token_set
from memoracle.recall.hybrid import Searcher, SearchOutcome, TimeWindow
from memoracle.recall.query import fts_queries, is_when_question
from memoracle.store import Store, View, require_fts5
from memoracle.store.audit import AuditEntry
from memoracle.store.backup import BackupInfo, prune_backups
from memoracle.store.held import HeldWrite
from memoracle.store.memories import LIVE
from memoracle.text import clean, content_hash
from memoracle.types import (
    Candidate,
    CaptureResult,
    Dispute,
    DuplicateSet,
    Entity,
    EntityView,
    Episode,
    Explanation,
    Hit,
    ImportedNote,
    IndexStatus,
    IngestReport,
    IngestWarning,
    InitReport,
    Memory,
    NewMemory,
    RecallBlock,
    RecallLine,
    Relation,
    Scope,
    Stats,
    Turn,
)

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
# (importance, confidence) of memories stated whole, by source; a "remember …" said in a
# turn gets the same as one typed by hand.
STATED_SCORES = {
    "manual": (0.8, 0.95),
    "user-stated": (0.8, 0.95),
    "agent": (0.7, 0.9),
    "import": (0.6, 0.9),
}
WORKSPACE_DIRS = ("memory", "reference", "knowledge-graph")
HOME_DIRS = ("archive", "backups")
INGEST_BATCH = 200
EXPLAIN_DEPTH = 200
BACKUPS_KEPT = 7  # verified backups kept in HOME/backups
NO_SLOT = "-"  # a slots row saying: looked for, none found
CONFIRM_STEP = 0.1  # confidence a memory gains when something says it again
NEAR_CANDIDATES = 3  # memories FTS offers the capture-time dedup check (best BM25 first)
log = logging.getLogger(__name__)

ONTOLOGY_FILE = "ontology.yaml"  # in HOME: the user's entity and relation types, added
DEDUP_CANDIDATES = 20  # old memories FTS offers the nightly dedup for each new one
# Past one new memory in this many live ones, comparing the whole live store is cheaper
# than asking FTS for each new one (measured at 40k: FTS costs 0.5 µs per live memory per
# new one, the whole store about 4e-8·n² seconds).
WHOLE_STORE_RATIO = 12
NEAR_OVERLAP = 0.5  # share of words a candidate must share before it is scored
RECALL_DEPTH = 60  # search hits offered to the recall block's third slot
FRESH_DEPTH = 50  # fresh memories offered to the second slot (30 % of 2,000 tokens holds ~30)
# Longer queries are cut: a pasted document is not a question.
MAX_QUERY_CHARS = 2000


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
        self.zone = settings.zone
        self._searcher: Searcher | None = None
        self._token_counter: TokenCounter | None = None
        self._stale: bool | None = None
        self._ontology: Ontology | None = None

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
        require_fts5()  # before anything is created
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
        settings.zone  # noqa: B018 - a bad timezone is refused before the store is opened
        return cls(settings, Store.open(settings.db_path, now=clock.now()), clock)

    def close(self) -> None:
        if self._searcher is not None:
            self._searcher.close()
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
        role) changes nothing; an exact duplicate memory is bumped, not added. A turn
        time without an offset is a wall-clock time in `workspace.timezone`.
        """
        return self.capture_many([(turns, scope)], actor=actor)[0]

    def capture_many(
        self, batches: Sequence[tuple[Sequence[Turn], Scope | None]], *, actor: str = "capture"
    ) -> list[CaptureResult]:
        """`capture` for several batches, each with its own scope, all or nothing."""
        scoped = [(turns, self._scope(scope)) for turns, scope in batches]
        for turns, _ in scoped:
            for turn in turns:
                self._check_size(turn, origin=turn.origin or "capture")
        outcomes: list[list[_Outcome]] = []
        with self.store.transaction():
            for turns, scope in scoped:
                outcomes.append([self._capture_one(turn, scope, actor) for turn in turns])
        return [self._result(batch) for batch in outcomes]

    def _check_size(self, turn: Turn, *, origin: str) -> None:
        limit = self.settings.capture.max_turn_chars
        if len(turn.text) > limit:
            raise InvalidInput(
                f"{origin}: turn of {len(turn.text):,} characters is over the limit of {limit:,} "
                "(capture.max_turn_chars). Split it, or raise the limit in config.toml."
            )

    def _capture_one(self, turn: Turn, scope: Scope, actor: str) -> _Outcome:
        now = self.clock.now()
        prepared = prepare(turn.text)
        if prepared.noise is not None:
            return _Outcome(skipped=(f"noise:{prepared.noise}",))
        stored = replace(
            turn,
            text=prepared.text,
            at=self._local(turn.at) if turn.at else now,
            session_id=clean(turn.session_id) if turn.session_id else None,
            turn_id=clean(turn.turn_id) if turn.turn_id else None,
            speaker=clean(turn.speaker) if turn.speaker else None,
        )
        key = _turn_key(stored, scope)
        if self.store.episodes.has_key(key):
            return _Outcome(skipped=("duplicate-turn",), duplicate=True)
        assert stored.at is not None
        episode_id = self.store.episodes.insert(stored, key=key, at=stored.at, now=now, scope=scope)
        assert episode_id is not None  # the key was checked inside this transaction
        if prepared.redacted:
            self.store.audit.append(
                at=now,
                actor=actor,
                action="redact",
                detail={"episode": episode_id, "kinds": list(prepared.redacted)},
            )
        if stored.kind == "message":
            verdict = classify(stored.text)
            if verdict.level != "clean":  # kept as an episode, out of search and memory
                held = self._hold(
                    stored.text, level=verdict.level, reasons=verdict.reasons, kind=None,
                    source=_source_of(stored), observed_at=stored.at, scope=scope, actor=actor,
                    now=now, episode_id=episode_id,
                )  # fmt: skip
                return _Outcome(episodes=(episode_id,), skipped=(f"held:{held.ref}",))
        return self._extract_turn(stored, episode_id, scope, actor, now)

    def _extract_turn(
        self, stored: Turn, episode_id: int, scope: Scope, actor: str, now: datetime
    ) -> _Outcome:
        """The memories the rules find in a stored turn, stored (`_capture_one`'s second
        half, and what confirming a held turn does)."""
        assert stored.at is not None
        if stored.kind != "message" or not self._extracts_from(stored.role):
            return _Outcome(episodes=(episode_id,))
        found = propose(
            stored.text,
            role=stored.role,
            speaker=stored.speaker,
            at=self._anchor(stored.at),
            day_first=self.settings.workspace.day_first,
            languages=tuple(self.settings.capture.languages),
        )
        outcome = _Outcome(episodes=(episode_id,), skipped=found.skipped)
        for proposal in found.proposals:
            candidate = proposal.candidate
            if candidate.action == "forget":
                forgotten = self._forget_said(candidate, scope, now=now, episode_id=episode_id)
                if forgotten is None:
                    outcome.skipped += ("forget:ambiguous",)
                elif not forgotten:
                    outcome.skipped += ("forget:no-match",)
                outcome.forgotten += forgotten or []
                continue
            new = self._new_memory(
                proposal, observed_at=stored.at, scope=scope, source=_source_of(stored)
            )
            memory_id, inserted = self._store_memory(
                new,
                now=now,
                actor=actor,
                episode_id=episode_id,
                speaker=stored.speaker if stored.role == "speaker" else None,
            )
            (outcome.added if inserted else outcome.bumped).append(memory_id)
        return outcome

    def _extracts_from(self, role: str) -> bool:
        """Memories come from people (user, a named speaker) and, if configured, the
        assistant; system and tool messages are kept as episodes only."""
        if role == "assistant":
            return self.settings.capture.assistant_memories
        return role in ("user", "speaker")

    def _local(self, at: datetime) -> datetime:
        """A time without an offset is a wall-clock time in the workspace timezone."""
        return at if at.tzinfo is not None else at.replace(tzinfo=self.zone)

    def _anchor(self, at: datetime) -> datetime:
        """Where relative dates are counted from: the turn's own offset if it said one,
        else the workspace timezone (a bare UTC stamp says nothing about the speaker)."""
        return at.astimezone(self.zone) if at.utcoffset() == timedelta(0) else at

    def _result(self, outcomes: Sequence[_Outcome]) -> CaptureResult:
        get = self.store.memories.get_many
        return CaptureResult(
            episodes=tuple(e for o in outcomes for e in o.episodes),
            added=tuple(get([m for o in outcomes for m in o.added])),
            bumped=tuple(get([m for o in outcomes for m in o.bumped])),
            forgotten=tuple(get([m for o in outcomes for m in o.forgotten])),
            skipped=tuple(s for o in outcomes for s in o.skipped),
            duplicate_turn=bool(outcomes) and all(o.duplicate for o in outcomes),
        )

    def _new_memory(
        self, proposal: Proposal, *, observed_at: datetime, scope: Scope, source: str
    ) -> NewMemory:
        c = proposal.candidate
        first = proposal.dates[0] if proposal.dates else None
        remembered = c.action == "remember"
        return NewMemory(
            kind=c.kind,
            text=c.text,
            layer=LAYER_OF_KIND[c.kind],
            source="user-stated" if remembered else source,
            observed_at=observed_at,
            content_hash=content_hash(c.text),
            scope=scope,
            subject=c.subject,
            predicate=c.predicate,
            object=c.object,
            valid_from=first.start if first and c.kind == "event" else None,
            valid_to=first.end if first and c.kind == "event" else None,
            due_at=first.start if first and c.kind == "task" else None,
            importance=max(c.importance, STATED_SCORES["user-stated"][0])
            if remembered
            else c.importance,
            confidence=max(c.confidence, STATED_SCORES["user-stated"][1])
            if remembered
            else c.confidence,
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
        speaker: str | None = None,
    ) -> tuple[int, bool]:
        """Insert, or bump the exact duplicate; a new memory is then settled against
        what it may contradict (`_settle`). Returns (id, inserted)."""
        memories = self.store.memories
        existing = memories.find_duplicate(new.content_hash, new.subject, new.scope)
        slots: tuple[Slot, ...] = ()
        if existing is None:
            slots = slots_of(new.text, lang=new.lang, speaker=speaker)
        near = None if existing is not None else self._near_duplicate(new, slots)
        if near is not None:
            existing = near[0]
            memories.confirm(existing, step=CONFIRM_STEP)  # said again, in other words
            self.store.audit.append(
                at=now,
                actor=actor,
                action="merge",
                memory_id=existing,
                detail={"text": new.text, "score": round(near[1].score, 3)},
            )
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
        self._settle(memory_id, new, slots, now=now, actor=actor)
        self._read_graph(memory_id, new.text, lang=new.lang, speaker=speaker, now=now)
        return memory_id, True

    def _near_duplicate(
        self, new: NewMemory, slots: Sequence[Slot]
    ) -> tuple[int, DedupScore] | None:
        """A live memory of the same owner, subject and kind that already says what `new`
        says, in other words (dedup score ≥ `lifecycle.dedup_threshold`), if any. A new
        text with more words than the old one is news, not a repeat, and so is one that
        gives a slot another value ("I prefer tea over coffee" after "I prefer coffee
        over tea": the same words, the opposite choice). Only the few memories FTS finds
        and that hold half of the new words are scored (fast)."""
        words = token_set(new.text)
        if not words:
            return None
        queries = fts_queries(new.text, prefixes=False)  # [AND] or [AND, OR]: take the last
        if not queries:
            return None
        found = self.store.index.lexical_memories(
            queries[-1].expression, View(new.scope), limit=NEAR_CANDIDATES
        )
        owner = (new.scope.agent, new.scope.user, new.scope.chat)
        candidates = [
            (memory.id, memory.text)
            for memory in self.store.memories.get_many([i for i, _ in found])
            if memory.kind == new.kind
            and memory.subject == new.subject
            and (memory.scope.agent, memory.scope.user, memory.scope.chat) == owner
            and len(words) <= len(other := token_set(memory.text))  # saying more is news
            and len(words & other) >= NEAR_OVERLAP * len(words)
        ]
        if candidates and slots:
            held = self.store.memories.slot_values([i for i, _ in candidates])
            said = {(s.subject, s.attribute): s.value for s in slots}
            candidates = [(i, text) for i, text in candidates if _slots_agree(said, held[i])]
        if not candidates:
            return None
        best = dedup.query(new.text, candidates, limit=1)  # the new text prepared once
        threshold = self.settings.lifecycle.dedup_threshold
        return best[0] if best and dedup.is_duplicate(best[0][1], threshold) else None

    def _settle(
        self,
        memory_id: int,
        new: NewMemory,
        slots: Sequence[Slot],
        *,
        now: datetime,
        actor: str,
    ) -> None:
        """Contradictions at capture (SPEC §6): every slot the new memory fills ("We
        upgraded to PostgreSQL 17": what is used, and its version), against the live
        memories of the same owner in those slots. Per old memory the gravest verdict
        acts: a clear contradiction supersedes it (kept, linked, timed), a hedged one
        disputes it (`pending`), the same value raises its confidence. `slots` are
        `slots_of` the new text, with "I" its speaker."""
        memories = self.store.memories
        if not slots:
            memories.set_slot(memory_id, NO_SLOT, NO_SLOT, "", hedged=False, negated=False)
            return
        verdicts: dict[int, Verdict] = {}
        for slot in slots:
            memories.set_slot(
                memory_id,
                slot.subject,
                slot.attribute,
                slot.value,
                hedged=slot.hedged,
                negated=slot.negated,
            )
            held = memories.in_slot(slot.subject, slot.attribute, new.scope, exclude=memory_id)
            for old_id, value, hedged, negated in held:
                verdict = judge(slot, Slot(slot.subject, slot.attribute, value, hedged, negated))
                if old_id not in verdicts or graver(verdict, verdicts[old_id]):
                    verdicts[old_id] = verdict
        for old_id, verdict in verdicts.items():
            if verdict.kind == "REDUNDANT":
                memories.confirm(old_id, step=CONFIRM_STEP)
                action = "confirm"
            elif verdict.supersedes:
                memories.supersede(old_id, memory_id, now=now)
                action = "supersede"
            elif verdict.disputes:
                memories.set_status(old_id, "disputed", now=now)
                action = "dispute"
            else:
                continue
            self.store.audit.append(
                at=now,
                actor=actor,
                action=action,
                memory_id=old_id,
                detail={"by": f"m_{memory_id}", "reason": verdict.reason},
            )

    # -- knowledge graph ----------------------------------------------------------

    @property
    def ontology(self) -> Ontology:
        """The entity and relation types: the defaults, plus HOME/ontology.yaml if it
        exists (`InvalidInput` naming its file and line when it is wrong)."""
        if self._ontology is None:
            path = self.settings.home / ONTOLOGY_FILE
            self._ontology = load_ontology(path if path.exists() else None)
        return self._ontology

    def _read_graph(
        self, memory_id: int, text: str, *, lang: str | None, speaker: str | None, now: datetime
    ) -> None:
        """Store the entities and relations `text` names, linked to `memory_id`. With an
        ontology file that does not load, the memory is left unread (the nightly graph
        step names the problem) and capture goes on."""
        try:
            ontology = self.ontology
        except InvalidInput as exc:
            log.warning("knowledge graph not updated: %s", exc)
            return
        found = graph_rules.extract(text, lang=lang, speaker=speaker, ontology=ontology)
        graph = self.store.graph
        ids = {e.key: graph.entity(e.key, e.name, e.type, now=now) for e in found.entities}
        relations = [
            graph.relation(ids[r.source], r.relation, ids[r.target], now=now)
            for r in found.relations
            if r.source in ids and r.target in ids
        ]
        graph.link(memory_id, entities=ids.values(), relations=relations)

    def read_graph_backlog(self) -> int:
        """Read the live memories never read for the graph (stored before it existed, or
        while the ontology file was broken). Returns how many were read; raises
        `InvalidInput` for an ontology file that does not load."""
        self.ontology  # noqa: B018 - fail before any write, naming the file and line
        done = 0
        while ids := self.store.graph.unread(limit=500):
            now = self.clock.now()
            with self.store.transaction():
                for memory in self.store.memories.get_many(ids):
                    speaker = memory.subject if memory.subject not in (None, "user") else None
                    self._read_graph(
                        memory.id, memory.text, lang=memory.lang, speaker=speaker, now=now
                    )
            done += len(ids)
        return done

    def graph_entities(self, *, type_: str | None = None, limit: int = 1_000_000) -> list[Entity]:
        """Entities named by live memories, most named first."""
        return self.store.graph.entities(type_=type_, limit=limit)

    def graph_relations(self, *, limit: int = 1_000_000) -> list[Relation]:
        """Relations stated by live memories, most stated first."""
        return self.store.graph.relations(limit=limit)

    def graph_show(self, name: str, *, limit: int = 20) -> EntityView:
        """One entity by any of its names ("Anna", "my wife Anna", "Anna's"): its type,
        aliases, relations and the newest live memories naming it."""
        key = graph_rules.canonical_key(name)
        entity = self.store.graph.find(key) if key else None
        if entity is None:
            raise NotFound(f"No entity named {name!r}. Try: memoracle graph entities")
        memories = self.store.memories.get_many(
            self.store.graph.memories_of([entity.id], limit=limit)
        )
        return EntityView(
            entity, tuple(self.store.graph.relations(entity=entity.id)), tuple(memories)
        )

    # -- ingest --------------------------------------------------------------------

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
            for given in path_list:
                path = Path(given).expanduser().resolve()  # origins name the file absolutely
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
        warn: OnWarning,
    ) -> None:
        batch: list[Turn | ImportedNote] = []

        def flush() -> None:
            with self.store.transaction():
                for item in batch:
                    if isinstance(item, ImportedNote):
                        try:
                            imported = self._import_note(item, scope)
                        except WriteHeld as exc:
                            warn(IngestWarning(item.origin or "?", str(exc)))
                            continue
                        if imported is not None:
                            counts["added" if imported else "bumped"] += 1
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

    def _import_note(self, note: ImportedNote, scope: Scope) -> bool | None:
        """Store one imported bullet. True: added; False: an existing memory seen again;
        None: this very line was imported before, and nothing changed."""
        now = self.clock.now()
        text = prepare(note.text).text.strip()
        if not text:
            return None
        existing = self.store.memories.find_duplicate(content_hash(text), None, scope)
        if existing is not None and self.store.memories.has_origin(existing, note.origin):
            return None
        observed = (
            datetime.combine(note.day, time(), tzinfo=self.zone).astimezone(UTC)
            if note.day
            else now
        )
        details = {"heading": note.heading} if note.heading else {}
        verdict = classify(text)
        if verdict.level != "clean":
            held = self._hold(
                text, level=verdict.level, reasons=verdict.reasons, kind=note.kind,
                source="import", observed_at=observed, scope=scope, actor="import", now=now,
                origin=note.origin,
            )  # fmt: skip
            raise WriteHeld(_held_message(held), held.ref)
        new = self._stated(
            text,
            kind=note.kind,
            source="import",
            observed_at=observed,
            scope=scope,
            details=details,
        )
        return self._store_memory(new, now=now, actor="import", origin=note.origin)[1]

    def _hold(
        self,
        text: str,
        *,
        level: str,
        reasons: Sequence[str],
        kind: str | None,
        source: str,
        observed_at: datetime,
        scope: Scope,
        actor: str,
        now: datetime,
        episode_id: int | None = None,
        origin: str | None = None,
    ) -> HeldWrite:
        """Hold a write the audit flagged (the same text from the same place held before,
        and not confirmed, is that write again), with an audit entry."""
        held = self.store.held
        same = None if episode_id is not None else held.same(text, source, scope)
        if same is not None:
            return same
        held_id = held.add(
            now=now, actor=actor, level=level, reasons=reasons, text=text, kind=kind,
            source=source, observed_at=observed_at, scope=scope, episode_id=episode_id,
            origin=origin,
        )  # fmt: skip
        self.store.audit.append(
            at=now,
            actor=actor,
            action="hold",
            detail={"held": f"h_{held_id}", "level": level, "reasons": list(reasons)},
        )
        log.warning("write held for review (h_%d, %s): %s", held_id, level, ", ".join(reasons))
        return held.get(held_id)

    def held_writes(
        self, *, since: datetime | None = None, waiting: bool = False
    ) -> list[HeldWrite]:
        """Writes the write audit held back, newest first (see `confirm_held`)."""
        return self.store.held.list(since=since, waiting=waiting)

    def audit_entries(
        self, *, since: datetime | None = None, limit: int = 1000
    ) -> list[AuditEntry]:
        """The audit log (every write through every door, with who made it), newest first."""
        return self.store.audit.entries(since=since, limit=limit)

    def confirm_held(self, ref: str | int, *, actor: str = "cli") -> list[Memory]:
        """A person vouches for a held write: it is stored as it would have been (a
        captured turn's memories found by the rules, its episode searchable again; a
        stated text as one memory). Returns the memories stored or bumped."""
        held = self._waiting(ref)
        now = self.clock.now()
        with self.store.transaction():
            self.store.held.decide(held.id, "confirm", now=now, actor=actor)
            self.store.audit.append(
                at=now, actor=actor, action="confirm-held", detail={"held": held.ref}
            )
            if held.episode_id is not None:
                episode = self.store.episodes.get(held.episode_id)
                if episode is None:
                    return []
                turn = Turn(
                    episode.role, episode.text, episode.at, episode.session_id,
                    episode.turn_id, speaker=episode.speaker, kind=episode.kind,
                    origin=episode.origin,
                )  # fmt: skip
                outcome = self._extract_turn(turn, episode.id, held.scope, actor, now)
                ids = [*outcome.added, *outcome.bumped]
            else:
                new = self._stated(
                    held.text, kind=held.kind, source=held.source,
                    observed_at=held.observed_at, scope=held.scope,
                )  # fmt: skip
                ids = [self._store_memory(new, now=now, actor=actor, origin=held.origin)[0]]
        return self.store.memories.get_many(ids)

    def reject_held(self, ref: str | int, *, actor: str = "cli") -> HeldWrite:
        """A person turns a held write down: it stays held, for the record."""
        held = self._waiting(ref)
        now = self.clock.now()
        with self.store.transaction():
            self.store.held.decide(held.id, "reject", now=now, actor=actor)
            self.store.audit.append(
                at=now, actor=actor, action="reject-held", detail={"held": held.ref}
            )
        return self.store.held.get(held.id)

    def _waiting(self, ref: str | int) -> HeldWrite:
        text = str(ref)
        number = text[2:] if text.startswith("h_") else text
        if not number.isdigit():
            raise InvalidInput(f"{text!r} is not a held write's id (h_12, or 12).")
        held = self.store.held.get(int(number))
        if held.decision is not None:
            raise InvalidInput(f"{held.ref} was already decided ({held.decision}).")
        return held

    def _stated(
        self,
        text: str,
        *,
        kind: str | None,
        source: str,
        observed_at: datetime,
        scope: Scope,
        details: dict[str, Any] | None = None,
    ) -> NewMemory:
        """A memory stated as a whole (remembered by hand, imported from a note): its kind
        is given or inferred by the rules, else fact; trusted as the person wrote it."""
        if kind is None:
            found = extract(text, role="user")
            kind = found.candidates[0].kind if found.candidates else "fact"
        importance, confidence = STATED_SCORES[source]
        return NewMemory(
            kind=kind,
            text=text,
            layer=LAYER_OF_KIND[kind],
            source=source,
            observed_at=observed_at,
            content_hash=content_hash(text),
            scope=scope,
            pinned=kind == "guardrail",
            importance=importance,
            confidence=confidence,
            lang=detect_language(text),
            details=details or {},
        )

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
        said = prepare(text).text.strip()
        if not said:
            raise InvalidInput("Nothing to remember: the text is empty.")
        self._check_size(Turn(role="user", text=said), origin="remember")
        now = self.clock.now()
        new = self._stated(
            said, kind=kind, source=source, observed_at=now, scope=self._scope(scope)
        )
        verdict = classify(said, lang=new.lang)
        if verdict.level != "clean":
            with self.store.transaction():
                held = self._hold(
                    said, level=verdict.level, reasons=verdict.reasons, kind=kind,
                    source=source, observed_at=now, scope=new.scope, actor=actor, now=now,
                )  # fmt: skip
            raise WriteHeld(_held_message(held), held.ref)
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
        found = self.store.memories.get_many(self.store.memories.match(query, limit=limit))
        if dry_run or not found:
            return found
        now = self.clock.now()
        with self.store.transaction():
            for memory in found:
                self._set_forgotten(memory, now=now, actor=actor, detail={"query": query})
        return self.store.memories.get_many([m.id for m in found])

    def _forget_said(
        self, candidate: Candidate, scope: Scope, *, now: datetime, episode_id: int
    ) -> list[int] | None:
        """A "forget …" said in a turn: the speaker's own memory in this scope with exactly
        that text, else the single one containing all its words. Several candidates are
        ambiguous (None) and nothing is forgotten: a person may say more than they mean."""
        memories = self.store.memories
        exact = memories.find_duplicate(content_hash(candidate.text), candidate.subject, scope)
        ids = (
            [exact]
            if exact is not None
            else memories.match(candidate.text, scope=scope, subject=candidate.subject, limit=2)
        )
        if len(ids) > 1:
            return None
        detail = {"said": candidate.text, "episode": episode_id}
        for memory in memories.get_many(ids):
            self._set_forgotten(memory, now=now, actor="capture", detail=detail)
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

    # -- retrieval -----------------------------------------------------------------

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            self._searcher = Searcher(self.store, self.settings, self._embedder())
        return self._searcher

    def _embedder(self) -> Embedder | None:
        e = self.settings.embedding
        if e.provider in ("", "none"):
            return None
        name = e.model if e.provider == "local" else e.provider
        return make_embedder(name, endpoint=e.endpoint, model=e.model)

    def index_status(self) -> IndexStatus:
        """Which embedding model the store's vectors belong to, and whether search can
        use them: a model change makes search lexical-only until `reindex`."""
        models = self.store.index.vector_models()
        embedder = self.searcher.embedder
        if embedder is None:
            return IndexStatus(None, None, 0, 0, models, stale=False)
        have = models.get(embedder.model_id, (embedder.dim, 0))[1]
        missing = self.store.index.count_missing(embedder.model_id)
        stale = have == 0 and any(m != embedder.model_id for m in models)
        return IndexStatus(
            embedder.model_id,
            embedder.dim,
            have,
            missing,
            models,
            stale=stale,
            ann=self.searcher.ann_state(),
        )

    def reindex(self, *, on_progress: OnProgress | None = None) -> int:
        """Embed every live memory and turn that has no vector for the configured model,
        then build the HNSW graph if the store is big enough for one and it is missing
        or damaged (`embedding.ann_threshold`, the `ann` extra); returns how many texts
        were embedded."""
        searcher = self.searcher
        if searcher.embedder is None:
            raise InvalidInput("No embedding model is configured (embedding.provider).")
        total = self.store.index.count_missing(searcher.embedder.model_id)
        done = 0
        while done < total:
            step = searcher.embed_missing(now=self.clock.now(), limit=min(1024, total - done))
            if step == 0:
                break
            done += step
            if on_progress is not None:
                on_progress(done, total)
        self._stale = None
        searcher.build_graph_if_needed()
        return done

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        scope: Scope | None = None,
        kinds: Sequence[str] = (),
        as_of: datetime | None = None,
    ) -> SearchOutcome:
        """Hybrid search (SPEC §4) over what `scope` may see; only active memories unless
        `as_of`, which returns what was active then."""
        text = self._query(query)
        then = self._local(as_of) if as_of else None
        view = View(self._scope(scope), tuple(kinds), then)
        now = self.clock.now()
        searcher = self.searcher
        embedder = searcher.embedder
        stale = self._model_changed()
        if stale:
            searcher.embedder = None
        try:
            outcome = searcher.search(
                text,
                view=view,
                k=k or self.settings.search.k,
                now=then or now,
                window=self._window(text, now),
                when_question=is_when_question(text),
            )
        finally:
            searcher.embedder = embedder
        if stale and embedder is not None:
            return replace(
                outcome,
                note=f"embedding model changed to {embedder.model_id}: search is lexical-only "
                "until you run: memoracle reindex",
            )
        return outcome

    def _model_changed(self) -> bool:
        """Vectors exist only for other models (checked once per process and reindex)."""
        if self._stale is None:
            embedder = self.searcher.embedder
            models = self.store.index.vector_models()
            self._stale = embedder is not None and embedder.model_id not in models and bool(models)
        return self._stale

    def recall(
        self, message: str, *, budget: int | None = None, scope: Scope | None = None
    ) -> RecallBlock:
        """The block injected before a turn (SPEC §4): guardrails (10 %), items of the
        last `recall.fresh_hours` by importance (30 %), search hits for `message` (60 %
        plus what the others left). Never over `budget` tokens; each memory returned
        gets its recall boost. A shared context sees no private item and no guardrail."""
        budget = self.settings.recall.budget_tokens if budget is None else budget
        if budget <= 0:
            raise InvalidInput(
                f"The recall budget must be a positive number of tokens, not {budget}."
            )
        settings = self.settings.recall
        view = View(self._scope(scope))
        now = self.clock.now()
        index, memories = self.store.index, self.store.memories
        guardrails = memories.get_many(index.guardrails(view))
        fresh = memories.get_many(
            index.fresh(view, since=now - timedelta(hours=settings.fresh_hours), limit=FRESH_DEPTH)
        )
        text = clean(message).strip()
        outcome = self.search(text, k=RECALL_DEPTH, scope=scope) if text else None
        hits = {h.ref: h for h in outcome.hits} if outcome else {}
        slots = [
            (
                "guardrail",
                settings.guardrail_share,
                [(m.ref, self._line(m.ref, m, None)) for m in guardrails],
            ),
            ("fresh", settings.fresh_share, [(m.ref, self._line(m.ref, m, None)) for m in fresh]),
            (
                "search",
                settings.search_share,
                [(h.ref, self._line(h.ref, h.memory, h.episode)) for h in hits.values()],
            ),
        ]
        packed = pack(slots, budget, self._counter())
        recalled = [int(line.ref[2:]) for line in packed.lines if line.ref.startswith("m_")]
        if recalled:
            with self.store.transaction():
                memories.touch(recalled, now=now, boost=settings.boost)
        return RecallBlock(
            text=packed.text,
            lines=tuple(
                RecallLine(line.slot, line.ref, line.text, line.tokens, hits.get(line.ref))  # type: ignore[arg-type]
                for line in packed.lines
            ),
            budget=budget,
            tokens=packed.tokens,
            tokenizer=packed.tokenizer,
            degraded=outcome.note if outcome else None,
        )

    def _counter(self) -> TokenCounter:
        if self._token_counter is None:
            self._token_counter = default_counter()
        return self._token_counter

    def _line(self, ref: str, memory: Memory | None, episode: Episode | None) -> str:
        """'- [m_12 2023-05-07] Caroline: text': dated, tagged, and whose words."""
        if memory is not None:
            said = memory.details.get("dates") or []
            when = (
                date.fromisoformat(str(said[0]["start"])[:10])
                if said and (memory.valid_from or memory.due_at)
                else memory.observed_at.astimezone(self.zone).date()
            )
            who = memory.subject if memory.subject not in (None, "user", "assistant") else None
            text = f"{who}: {memory.text}" if who else memory.text
            if memory.kind == "task" and memory.due_at:
                text = f"{text} (due {when.isoformat()})"
            return format_line(ref, text, when)
        assert episode is not None
        who = episode.speaker or episode.role
        return format_line(ref, f"{who}: {episode.text}", episode.at.astimezone(self.zone).date())

    def explain(self, ref: str, *, query: str, scope: Scope | None = None) -> Explanation:
        """Why `ref` (m_… or e_…) ranks where it does for `query`, signal by signal."""
        text = ref.strip().lower()
        source = "episode" if text.startswith("e") else "memory"
        item_id = parse_ref(text, "e" if source == "episode" else "m")
        if source == "memory":
            self.get(item_id)
        elif self.store.episodes.get(item_id) is None:
            raise NotFound(f"No episode 'e_{item_id}'.")
        outcome = self.search(query, k=EXPLAIN_DEPTH, scope=scope)
        for rank, hit in enumerate(outcome.hits, 1):
            if hit.source == source and hit.id == item_id:
                return Explanation(hit.ref, query, rank, hit, _reasons(hit, rank, outcome.mode))
        reasons = [
            f"not among the first {EXPLAIN_DEPTH} hits ({outcome.mode} search)",
            "it shares no content word with the query, is not among the nearest vectors, "
            "is not active, is out of this scope, or is a faded weak match "
            f"(activation under {self.settings.search.activation_threshold})",
        ]
        if outcome.note:
            reasons.append(outcome.note)
        return Explanation(f"{source[0]}_{item_id}", query, None, None, tuple(reasons))

    def _query(self, query: str) -> str:
        text = clean(query).strip()
        if not text:
            raise InvalidInput('The query is empty. Try: memoracle search "what I said about …"')
        if len(text) > MAX_QUERY_CHARS:
            text = text[:MAX_QUERY_CHARS]
        return text

    def _window(self, query: str, now: datetime) -> TimeWindow | None:
        found = find_dates(
            query,
            self._anchor(now),
            detect_language(query),
            day_first=self.settings.workspace.day_first,
        )
        return TimeWindow(found[0].start, found[0].end) if found else None

    # -- lifecycle -------------------------------------------------------------------

    def duplicates(self, *, after: int | None = None) -> list[DuplicateSet]:
        """Near-duplicate groups among live memories (SPEC §6 dedup: Jaccard, containment,
        entity overlap, segments, and vector similarity where vectors exist; threshold
        `lifecycle.dedup_threshold`), compared within one owner, subject and kind. Each
        group keeps its fullest text (then the most used, then the oldest).

        With `after` (a memory id), only the memories stored since are looked at: each
        against the others and the `DEDUP_CANDIDATES` live memories FTS finds for it, and
        only groups holding one of them are returned (when they are many, more than one
        in `WHOLE_STORE_RATIO` of the live ones, the whole store is compared instead:
        that is then cheaper). The nightly run compares the whole store once, then this
        way, so a night costs what the day added."""
        live_count = sum(n for (status, _), n in self.store.memories.counts().items()
                         if status in LIVE)  # fmt: skip
        if after is not None and (
            self.store.memories.count_after(after, LIVE) * WHOLE_STORE_RATIO <= live_count
        ):
            live = self._fresh_and_near(after)
        else:
            live = [m for status in LIVE for m in self.all_memories(status)]
        vectors = self._vectors_of(live)
        groups: dict[tuple[Any, ...], list[Memory]] = {}
        for m in live:
            key = (m.scope.agent, m.scope.user, m.scope.chat, m.subject, m.kind)
            groups.setdefault(key, []).append(m)
        found: list[DuplicateSet] = []
        for members in groups.values():
            if len(members) < 2:
                continue
            by_id = {m.id: m for m in members}

            def fullest(i: int, by_id: dict[int, Memory] = by_id) -> tuple[int, int, int]:
                return (-len(by_id[i].text), -by_id[i].access_count, i)

            near = dedup.find_duplicates(
                [(m.id, m.text) for m in members],
                vectors={m.id: vectors[m.id] for m in members if m.id in vectors},
                threshold=self.settings.lifecycle.dedup_threshold,
                rank=fullest,
            )
            held = self.store.memories.slot_values(
                [i for g in near for i in (g.keep, *g.merge_ids)]
            )
            for group in near:
                if after is not None and max(group.keep, *group.merge_ids) <= after:
                    continue  # old memories only: compared on an earlier night
                merge = tuple(
                    (by_id[i], score)
                    for i, score in group.merge
                    if _slots_agree(held[group.keep], held[i])  # same words, another value
                )
                if merge:
                    found.append(DuplicateSet(by_id[group.keep], merge))
        return sorted(found, key=lambda g: g.keep.id)

    def _fresh_and_near(self, after: int) -> list[Memory]:
        """The live memories stored after id `after`, and those FTS finds nearest each."""
        fresh = [m for status in LIVE for batch in self.store.memories.pages(status, after=after)
                 for m in batch]  # fmt: skip
        near: set[int] = set()
        for memory in fresh:
            queries = fts_queries(memory.text, prefixes=False)  # [AND] or [AND, OR]
            if queries:
                found = self.store.index.lexical_memories(
                    queries[-1].expression, View(memory.scope), limit=DEDUP_CANDIDATES
                )
                near.update(i for i, _ in found if i <= after)
        old = [m for m in self.store.memories.get_many(sorted(near)) if m.status in LIVE]
        return fresh + old

    def merge_duplicates(self, groups: Sequence[DuplicateSet], *, actor: str = "cli") -> int:
        """Merge each group into its kept memory: every provenance moves over, the kept
        one gains confidence, the others are marked superseded by it (never deleted),
        with an audit entry on both sides. Returns how many memories were merged."""
        now = self.clock.now()
        merged = 0
        with self.store.transaction():
            memories = self.store.memories
            for group in groups:
                for other, score in group.merge:
                    for episode_id in other.episode_ids:
                        memories.add_provenance(group.keep.id, now=now, episode_id=episode_id)
                    for origin in other.origins:
                        memories.add_provenance(group.keep.id, now=now, origin=origin)
                    memories.supersede(other.id, group.keep.id, now=now)
                    memories.confirm(group.keep.id, step=CONFIRM_STEP)
                    detail = {"score": round(score.score, 3), "reason": score.reason}
                    self.store.audit.append(
                        at=now,
                        actor=actor,
                        action="merge",
                        memory_id=group.keep.id,
                        detail={"merged": other.ref, **detail},
                    )
                    self.store.audit.append(
                        at=now,
                        actor=actor,
                        action="merged-into",
                        memory_id=other.id,
                        detail={"into": group.keep.ref, **detail},
                    )
                    merged += 1
        return merged

    def dedup_query(
        self, text: str, *, scope: Scope | None = None, limit: int = 5
    ) -> list[tuple[Memory, DedupScore]]:
        """The live memories closest to `text` by the dedup score, best first (whether or
        not they pass the threshold: `dedup.is_duplicate` says)."""
        said = clean(text).strip()
        if not said:
            raise InvalidInput("Nothing to compare: the text is empty.")
        view = View(self._scope(scope))
        ids: list[int] = []
        for fts_query in fts_queries(said)[:2]:
            found = self.store.index.lexical_memories(fts_query.expression, view, limit=50)
            ids += [i for i, _ in found if i not in ids]
        candidates = self.store.memories.get_many(ids)
        by_id = {m.id: m for m in candidates}
        scored = dedup.query(said, [(m.id, m.text) for m in candidates], limit=limit)
        return [(by_id[i], score) for i, score in scored]

    def _vectors_of(self, memories: Sequence[Memory]) -> dict[int, npt.NDArray[np.float32]]:
        """Stored vectors of the configured model for `memories`, by memory id."""
        embedder = self.searcher.embedder
        if embedder is None:
            return {}
        by_hash: dict[str, list[int]] = {}
        for m in memories:
            by_hash.setdefault(m.content_hash, []).append(m.id)
        out: dict[int, npt.NDArray[np.float32]] = {}
        for h, dim, blob in self.store.index.vectors_for(embedder.model_id, list(by_hash)):
            if dim != embedder.dim:
                continue
            try:
                vector = from_blob(blob, dim)
            except EngineError:
                continue
            for memory_id in by_hash[h]:
                out[memory_id] = vector
        return out

    def all_memories(self, status: str, page: int = 2000) -> list[Memory]:
        """Every memory with `status`, newest first, read a page at a time."""
        found = [m for batch in self.store.memories.pages(status, size=page) for m in batch]
        found.sort(key=lambda m: (m.observed_at, m.id), reverse=True)
        return found

    def settle_unslotted(self, *, actor: str = "nightly") -> int:
        """Look for the slot of live memories that never had it looked for (imported, or
        stored before slots existed) and settle them in order, as capture would have.
        Returns how many were looked at."""
        done = 0
        while ids := self.store.memories.without_slot(limit=500):
            now = self.clock.now()
            with self.store.transaction():
                for memory in self.store.memories.get_many(ids):
                    new = NewMemory(
                        kind=memory.kind,
                        text=memory.text,
                        layer=memory.layer,
                        source=memory.source,
                        observed_at=memory.observed_at,
                        content_hash=memory.content_hash,
                        scope=memory.scope,
                        lang=memory.lang,
                    )
                    speaker = memory.subject if memory.subject not in (None, "user") else None
                    slots = slots_of(memory.text, lang=memory.lang, speaker=speaker)
                    self._settle(memory.id, new, slots, now=now, actor=actor)
            done += len(ids)
        return done

    def pending(self) -> list[Dispute]:
        """Disputed memories (a hedged contradiction put them in doubt), oldest first,
        each with the memory that disputed it."""
        disputed = self.store.memories.select(status="disputed", limit=10_000)
        return [self._dispute(memory) for memory in reversed(disputed)]

    def _dispute(self, memory: Memory) -> Dispute:
        """`memory` with what last disputed it (its newest `dispute` audit entry)."""
        entry = next(
            (e for e in self.store.audit.entries(memory_id=memory.id) if e.action == "dispute"),
            None,
        )
        if entry is None:
            return Dispute(memory, None, "", None)
        by = entry.detail.get("by")
        found = self.store.memories.get(parse_ref(by)) if isinstance(by, str) else None
        return Dispute(memory, found, str(entry.detail.get("reason", "")), entry.at)

    def resolve(
        self,
        ref: str | int,
        *,
        confirm: bool,
        replacement: str | None = None,
        actor: str = "cli",
    ) -> Memory:
        """Settle a disputed memory: `confirm` keeps it (active again); otherwise it is
        superseded — by `replacement`, stored as a user-stated memory, or else by the
        memory that disputed it. Returns the memory as it is now."""
        memory = self.get(ref)
        if memory.status != "disputed":
            raise InvalidInput(
                f"{memory.ref} is not disputed (it is {memory.status}); nothing to resolve. "
                "See: memoracle pending"
            )
        if confirm and replacement:
            raise InvalidInput("--replacement goes with --reject, not --confirm.")
        now = self.clock.now()
        by = self._dispute(memory).by
        with self.store.transaction():
            memories = self.store.memories
            if confirm:
                memories.set_status(memory.id, "active", now=now)
                detail: dict[str, Any] = {"decision": "confirm"}
            else:
                if replacement is not None:
                    said = prepare(replacement).text.strip()
                    if not said:
                        raise InvalidInput("The replacement text is empty.")
                    new = self._stated(
                        said,
                        kind=memory.kind,
                        source="user-stated",
                        observed_at=now,
                        scope=memory.scope,
                    )
                    new_id, _ = self._store_memory(new, now=now, actor=actor)
                    by = memories.get(new_id)
                if self.get(memory.id).status != "superseded":  # the replacement may have
                    if by is not None:
                        memories.supersede(memory.id, by.id, now=now)
                    else:
                        memories.set_status(memory.id, "superseded", now=now)
                detail = {"decision": "reject", "by": by.ref if by else None}
            self.store.audit.append(
                at=now, actor=actor, action="resolve", memory_id=memory.id, detail=detail
            )
        return self.get(memory.id)

    def backup(self) -> BackupInfo:
        """A verified copy of the database in HOME/backups (the newest `BACKUPS_KEPT`
        are kept), taken before any bulk change."""
        folder = self.settings.home / "backups"
        info = self.store.backup(folder, now=self.clock.now())
        prune_backups(folder, keep=BACKUPS_KEPT)
        return info

    def record_run(self, kind: str, counts: dict[str, int]) -> None:
        """Note a finished job (nightly, …) in the runs table, for health and stats."""
        self._finish_run(self._start_run(kind), "ok", counts)

    def start_run(self, kind: str) -> int:
        """Open a job record (nightly steps): its start time; `finish_run` closes it."""
        return self._start_run(kind)

    def finish_run(
        self, run: int, status: str, counts: dict[str, int], error: str | None = None
    ) -> None:
        self._finish_run(run, status, counts, error)

    def restore(self, ref: str | int, *, actor: str = "cli") -> Memory:
        """Bring an archived memory back from the cold tier, as it was (status, text,
        provenance), and count the restore as a use: its activation is refreshed as a
        recall would, so the next night does not archive it again."""
        memory_id = parse_ref(ref) if isinstance(ref, str) else ref
        now = self.clock.now()
        with self.store.transaction():
            self.store.archive.restore(memory_id, now=now, actor=actor)
            self.store.memories.touch([memory_id], now=now, boost=self.settings.recall.boost)
        return self.get(memory_id)

    def score(self) -> list[tuple[Memory, MemoryScore]]:
        """Active memories ranked by the promotion/archival score (SPEC §6: kind weight ×
        recency × frequency × entity boost × completion), best first; computed from
        time, nothing written."""
        memories = {m.id: m for m in self.all_memories("active")}
        ranked = scoring.rank(memories.values(), self.clock.now(), self.settings.decay)
        return [(memories[s.memory_id], s) for s in ranked]

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


def _slots_agree(a: dict[tuple[str, str], str], b: dict[tuple[str, str], str]) -> bool:
    """Whether two memories give the same value to every slot they share: "I prefer tea
    over coffee" and "I prefer coffee over tea" have the same words and are no repeat."""
    return all(same_value(key[1], value, b[key]) for key, value in a.items() if key in b)


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
    budget = settings.recall.budget_tokens if budget is None else budget
    try:
        with Engine.open(settings, clock=clock) as engine:
            return engine.recall(message, budget=budget, scope=scope)
    except (WorkspaceError, StoreError) as exc:
        return recall_from_files(
            settings.files_dir,
            message,
            budget=budget,
            counter=default_counter(),
            visibility=(scope or Scope()).visibility,
            reason=f"database unavailable ({exc})",
        )


@dataclass
class _Outcome:
    """What capturing one turn did, as ids (memories are loaded once, for the result)."""

    episodes: tuple[int, ...] = ()
    added: list[int] = field(default_factory=list)
    bumped: list[int] = field(default_factory=list)
    forgotten: list[int] = field(default_factory=list)
    skipped: tuple[str, ...] = ()
    duplicate: bool = False


def _source_of(turn: Turn) -> str:
    """The source of what a turn says: a checkpoint's turns (origin "checkpoint", or
    "checkpoint:FILE:LINE" for a transcript's) are the checkpoint's; others, capture's."""
    origin = turn.origin or ""
    return "checkpoint" if origin.split(":", 1)[0] == "checkpoint" else "capture"


def _turn_key(turn: Turn, scope: Scope) -> str:
    """Identity of a turn: (agent, session, role, speaker, turn id) when a turn id is
    given, else its time and text. Readers give every turn of a file an id (the entry id,
    or the line), so reading a file again adds nothing; a turn captured with neither id
    nor time is stamped now, and saying the same thing later is a new utterance."""
    parts = [scope.agent or "", turn.session_id or "", turn.role, turn.speaker or ""]
    if turn.turn_id:
        parts.append(turn.turn_id)
    else:
        assert turn.at is not None
        parts += [turn.at.isoformat(), turn.text]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _reasons(hit: Hit, rank: int, mode: str) -> tuple[str, ...]:
    sc = hit.scores
    lines = [f"rank {rank} ({mode} search), final score {sc.final:.4f}"]
    lines.append(
        f"lexical (BM25) rank {sc.lexical_rank}" if sc.lexical_rank else "no lexical match"
    )
    if sc.vector_rank:
        lines.append(f"vector rank {sc.vector_rank}, cosine similarity {sc.similarity:.3f}")
    else:
        lines.append("not among the nearest vectors")
    lines.append(f"rank fusion (RRF) {sc.rrf:.4f}")
    lines.append(f"recency weight {sc.recency:.3f}, activation weight {sc.activation:.3f}")
    return tuple(lines)


def _held_message(held: HeldWrite) -> str:
    return (
        f"Held for review ({held.ref}): this looks like prompt injection ({held.level}:"
        f" {', '.join(held.reasons)}), so it was not stored as memory. A person decides:"
        f" `memoracle audit --confirm {held.ref}` stores it, `--reject {held.ref}` drops it."
    )
