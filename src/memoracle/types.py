"""Values passed between the modules: frozen dataclasses, no behaviour.

Owns the vocabulary (kinds, layers, statuses, sources) and the shapes that cross module
boundaries. Validation happens at the doors (CLI, MCP, config load); inside, these types
are trusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

KINDS: tuple[str, ...] = (
    "fact",
    "preference",
    "decision",
    "task",
    "guardrail",
    "event",
    "error",
    "pattern",
    "insight",
)
LAYERS: tuple[str, ...] = ("episodic", "semantic", "procedural")
STATUSES: tuple[str, ...] = ("active", "superseded", "disputed", "archived", "forgotten")
LIVE: tuple[str, ...] = ("active", "disputed")  # the statuses of a memory still in force
# Kinds never archived to hold `lifecycle.max_facts`, nor counted against it (pinned
# memories neither): the archive's policy and health's count read this one set.
CAP_EXEMPT_KINDS = frozenset({"guardrail"})
SOURCES: tuple[str, ...] = (
    "user-stated",
    "agent",
    "capture",
    "checkpoint",
    "import",
    "llm",
    "manual",
)
VISIBILITIES: tuple[str, ...] = ("private", "shared")
# How a shared photo's caption is written into a turn's text: "[shares photo: a dog]".
PHOTO_CAPTION = "[shares photo: "

Granularity = Literal["time", "part_of_day", "day", "week", "month", "season", "year"]
Action = Literal["store", "remember", "forget"]


@dataclass(frozen=True)
class DateMention:
    """A time expression found in text, resolved against an anchor time.

    `start` and `end` are aware datetimes in the anchor's timezone; `end` is exclusive
    ("yesterday" said on 2023-05-08 13:56 is 2023-05-07T00:00 .. 2023-05-08T00:00).
    """

    text: str
    span: tuple[int, int]
    start: datetime
    end: datetime
    granularity: Granularity
    rule: str


@dataclass(frozen=True)
class Candidate:
    """One typed memory proposed by the rules for one sentence of a turn."""

    kind: str
    text: str
    rule: str
    lang: str
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    importance: float = 0.5
    confidence: float = 0.8
    action: Action = "store"
    hedged: bool = False


@dataclass(frozen=True)
class Extraction:
    """What the rules made of one text: its language, candidates, and why other
    sentences yielded nothing (e.g. ``("question", "smalltalk")``), and the statements
    of a person no rule matched (sentence, language), for the learned decision."""

    lang: str
    candidates: tuple[Candidate, ...]
    skipped: tuple[str, ...] = ()
    unmatched: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Turn:
    """One utterance read from a transcript or given to `capture`.

    `role` is user, assistant or system for agent sessions; `speaker` is the person's
    name when there is one (LoCoMo's two speakers). `origin` names file:line.
    `kind` is "message" or "compaction" (a compaction summary kept as its own episode).
    """

    role: str
    text: str
    at: datetime | None = None
    session_id: str | None = None
    turn_id: str | None = None
    speaker: str | None = None
    kind: str = "message"
    origin: str | None = None


@dataclass(frozen=True)
class ImportedNote:
    """A bullet from an existing MEMORY.md or a daily note, imported as a memory."""

    text: str
    origin: str
    heading: str | None = None
    kind: str | None = None
    day: date | None = None
    until: date | datetime | None = None  # its <!-- until … --> comment (workspace zone)


@dataclass(frozen=True)
class IngestWarning:
    origin: str
    message: str


@dataclass(frozen=True)
class Scope:
    """Whose an item is (agent, user, chat, private or shared), or who is asking."""

    agent: str | None = None
    user: str | None = None
    chat: str | None = None
    visibility: str = "private"


@dataclass(frozen=True)
class Condition:
    """One thing an item must satisfy to be visible: its `field` ("agent", "user",
    "chat" or "visibility") holds one of `values`, or is unset when `or_unset`. The
    store turns it into SQL, `sees` evaluates it."""

    field: str
    values: tuple[str, ...]
    or_unset: bool = False

    def holds(self, value: str | None) -> bool:
        return self.or_unset if value is None else value in self.values


def _same(field: str, asked: str | None, own: str | None) -> Condition:
    """The item's `field` is the one `asked` for, an unset one counting as the
    workspace's `own`: so a request for the workspace's own value also matches unset
    items, and a request with the field unset matches only unset items (and, when the
    workspace has an own value, items of that value)."""
    asked = asked or own
    return Condition(field, (asked,) if asked else (), or_unset=asked == own)


def visible_to(requester: Scope, own: Scope = Scope()) -> tuple[Condition, ...]:
    """The visibility rule, the one place it is written (docs/scopes.md): what
    `requester` may see of stored items (memories and turns). `own` is the workspace's
    own agent and user (`workspace.agent`, `workspace.user`): an unset agent or user,
    on an item or in a request, means those.

    A private context sees the items of its agent and its user, private or shared, from
    any chat: what that person said or was told. A group (shared) context sees the shared
    items of its agent said in its chat, whoever said them, and nothing private. Nothing
    else: no other user's private item, no other chat's group talk, no other agent's."""
    conditions = [_same("agent", requester.agent, own.agent)]
    if requester.visibility == "shared":
        conditions.append(Condition("visibility", ("shared",)))
        conditions.append(
            Condition(
                "chat", (requester.chat,) if requester.chat else (), or_unset=not requester.chat
            )
        )
    else:
        conditions.append(_same("user", requester.user, own.user))
    return tuple(conditions)


def sees(requester: Scope, item: Scope, own: Scope = Scope()) -> bool:
    """Whether `requester` may see an item of scope `item`: `visible_to`, evaluated in
    Python (for items already in hand)."""
    fields = {
        "agent": item.agent,
        "user": item.user,
        "chat": item.chat,
        "visibility": item.visibility,
    }
    return all(c.holds(fields[c.field]) for c in visible_to(requester, own))


@dataclass(frozen=True)
class Episode:
    id: int
    role: str
    text: str
    at: datetime
    created_at: datetime
    kind: str = "message"
    session_id: str | None = None
    turn_id: str | None = None
    speaker: str | None = None
    origin: str | None = None
    scope: Scope = field(default_factory=Scope)

    @property
    def ref(self) -> str:
        return f"e_{self.id}"


@dataclass(frozen=True)
class Memory:
    id: int
    kind: str
    text: str
    layer: str
    status: str
    created_at: datetime
    observed_at: datetime
    last_accessed_at: datetime
    activation: float
    importance: float
    access_count: int
    confidence: float
    pinned: bool
    source: str
    content_hash: str
    scope: Scope = field(default_factory=Scope)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    due_at: datetime | None = None
    expires_at: datetime | None = None
    superseded_by: int | None = None
    lang: str | None = None
    rule: str | None = None
    episode_ids: tuple[int, ...] = ()
    origins: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"m_{self.id}"


@dataclass(frozen=True)
class DuplicateSet:
    """Memories that say the same thing: the one kept, and the others with their dedup
    score against it (a `lifecycle.dedup.DedupScore`)."""

    keep: Memory
    merge: tuple[tuple[Memory, Any], ...]


@dataclass(frozen=True)
class Dispute:
    """A memory a hedged contradiction put in doubt, what did it, and why."""

    memory: Memory
    by: Memory | None
    reason: str
    at: datetime | None


@dataclass(frozen=True)
class CaptureResult:
    """What one `capture` call did: episodes written, memories added or bumped, and the
    memories the added ones superseded."""

    episodes: tuple[int, ...]
    added: tuple[Memory, ...]
    bumped: tuple[Memory, ...]
    forgotten: tuple[Memory, ...]
    skipped: tuple[str, ...]
    duplicate_turn: bool = False
    superseded: tuple[Memory, ...] = ()


@dataclass(frozen=True)
class SkippedFile:
    """A file in a folder given to ingest that was not read (no reader takes it, a link
    out of the folder, not a regular file), and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class IngestReport:
    files: int
    format_counts: dict[str, int]
    turns: int
    episodes_added: int
    memories_added: int
    memories_bumped: int
    skipped_noise: int
    warnings: tuple[IngestWarning, ...]
    skipped_files: tuple[SkippedFile, ...] = ()


@dataclass(frozen=True)
class NewMemory:
    """A memory about to be stored: what the engine hands to the store."""

    kind: str
    text: str
    layer: str
    source: str
    observed_at: datetime
    content_hash: str
    scope: Scope = field(default_factory=Scope)
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    due_at: datetime | None = None
    expires_at: datetime | None = None
    activation: float = 1.0
    importance: float = 0.5
    confidence: float = 0.8
    pinned: bool = False
    lang: str | None = None
    rule: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stats:
    home: str
    database: str
    schema_version: int
    database_bytes: int
    memories: int
    by_status: dict[str, int]
    active_by_kind: dict[str, int]
    episodes: int
    episodes_by_kind: dict[str, int]
    sessions: int
    audit_entries: int
    last_ingest: str | None


@dataclass(frozen=True)
class InitReport:
    home: str
    database: str
    config: str
    files_dir: str
    created: tuple[str, ...]
    schema_version: int


@dataclass(frozen=True)
class Scores:
    """Why a hit ranks where it does: each signal, then the fused result.

    Ranks are 1-based positions in that signal's own list (None: not found by it).
    `rrf` is the Reciprocal Rank Fusion of the ranks, after the context: `fused` (the
    lists' weighted RRF plus the `neighbours`' share; None when no context was
    applied: then `rrf` itself) × `session` × `speaker`. `recency` and `activation` are
    the weights applied to it (1.0 for evergreen items), `boost` the time the query
    names; `final` = rrf × recency × activation × boost is what the order uses. `via`:
    a memory ranked in the place of the turn it came from carries that turn's scores,
    and names it (docs/retrieval.md, "Explain").
    """

    lexical_rank: int | None
    vector_rank: int | None
    similarity: float | None
    rrf: float
    recency: float
    activation: float
    final: float
    fused: float | None = None
    neighbours: float = 0.0
    session: float = 1.0
    speaker: float = 1.0
    boost: float = 1.0
    via: str | None = None


@dataclass(frozen=True)
class Hit:
    """One search result: a memory or a raw turn (episode), with scores and provenance."""

    source: Literal["memory", "episode"]
    id: int
    text: str
    at: datetime
    scores: Scores
    memory: Memory | None = None
    episode: Episode | None = None
    turn_ids: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()
    replaced_at: datetime | None = None  # a turn that only states a value since replaced

    @property
    def ref(self) -> str:
        return f"m_{self.id}" if self.source == "memory" else f"e_{self.id}"


@dataclass(frozen=True)
class RecallLine:
    """One line of the recall block: which slot put it there, and what it cost."""

    slot: Literal["answer", "guardrail", "fresh", "search"]
    ref: str
    text: str
    tokens: int
    hit: Hit | None = None


@dataclass(frozen=True)
class RecallBlock:
    """The context injected before a turn. `tokens` ≤ `budget`, always; `tokenizer`
    names how tokens were counted; `degraded` says why the answer is partial, if it is;
    `note` why the search slot is empty, if the message is under the noise floor."""

    text: str
    lines: tuple[RecallLine, ...]
    budget: int
    tokens: int
    tokenizer: str
    degraded: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class IndexStatus:
    """The vector index against the configured model. `stale`: vectors exist only for
    other models, so search is lexical until `reindex`. `ann`: how vectors are searched:
    "exact" (numpy), "hnsw" (the graph file exists), "missing" (enough vectors for the
    graph but it is not built: run `reindex`) or "unavailable" (enough vectors, but the
    `ann` extra is not installed)."""

    model: str | None
    dim: int | None
    vectors: int
    missing: int
    models: dict[str, tuple[int, int]]
    stale: bool
    ann: str = "exact"


@dataclass(frozen=True)
class Explanation:
    """Why `ref` ranks where it does for `query`: its rank among the hits (None: not
    returned) and the reasons, signal by signal."""

    ref: str
    query: str
    rank: int | None
    hit: Hit | None
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Entity:
    """A knowledge-graph entity: its canonical key ("anna"), the name it was first seen
    under, its ontology type, every name it was seen under, and how many live memories
    name it."""

    id: int
    key: str
    name: str
    type: str
    aliases: tuple[str, ...]
    memories: int


@dataclass(frozen=True)
class Relation:
    """A knowledge-graph relation between two entities (by key), and how many live
    memories state it."""

    id: int
    source: str
    relation: str
    target: str
    memories: int


@dataclass(frozen=True)
class EntityView:
    """One entity with its relations and the newest live memories naming it."""

    entity: Entity
    relations: tuple[Relation, ...]
    memories: tuple[Memory, ...]
