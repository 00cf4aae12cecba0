"""Values that cross between the store and the floors above it: frozen dataclasses, no
SQL, so a backend can hand them up and take them in its own way.

What a read asks for (`View`: who is asking and what they may see; `LexicalQuery`: the
words to look for in the full-text index; `Filter`: what the web page's memories list
asks for), the rows a store hands up besides memories and turns
(`AuditEntry`, `HeldWrite`, `ArchivedMemory`, `Run`, `GraphRows`), and what its upkeep
reports (`BackupInfo`, `FreeSpace`, `Damage`). The values every module shares (memories,
turns, scopes, the visibility rule) are `types`'; turning these into queries is the
store's (`store.index` holds the rule as SQL).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from memoracle.text import fts_terms, stem
from memoracle.types import Scope

__all__ = [
    "GRAPH_SAMPLE",
    "ArchivedMemory",
    "AuditEntry",
    "BackupInfo",
    "Damage",
    "Filter",
    "FreeSpace",
    "GraphRows",
    "HeldWrite",
    "LexicalQuery",
    "Run",
    "StoreState",
    "Term",
    "View",
    "any_of",
    "every_word",
]

# The newest live memories whose entities and relations the web page counts.
GRAPH_SAMPLE = 5000


@dataclass(frozen=True)
class View:
    """Who is asking and what they may see.

    What `scope` may see is the visibility rule (`types.visible_to`, docs/scopes.md),
    which the store turns into its queries; `own` is the workspace's own agent and user,
    which an unset one means. `as_of` asks what was active then instead of what is
    active now."""

    scope: Scope = Scope()
    kinds: tuple[str, ...] = ()
    as_of: datetime | None = None
    now: datetime | None = None  # the engine's clock: what expired by then is left out
    own: Scope = Scope()


@dataclass(frozen=True)
class Term:
    """One searched word in index form (`text.stem`); a prefix term also matches the
    longer words it begins."""

    text: str
    prefix: bool = False


@dataclass(frozen=True)
class LexicalQuery:
    """Words to look for in the full-text index: every one of `terms`, or any of them
    (`any`). A value, in no backend's syntax: the store renders it in its own (FTS5's
    for SQLite: `store.fts`), so no input can make a query the index refuses."""

    terms: tuple[Term, ...]
    any: bool = False


def any_of(terms: Iterable[Term]) -> LexicalQuery:
    return LexicalQuery(tuple(terms), any=True)


def every_word(text: str, *, any: bool = False) -> LexicalQuery | None:
    """Each word of `text` as the index holds it (stemmed, once each), all of them (or
    any, with `any`); None when `text` has no word."""
    terms = tuple(Term(t) for t in dict.fromkeys(stem(w) for w in fts_terms(text)))
    return LexicalQuery(terms, any=any) if terms else None


@dataclass(frozen=True)
class Filter:
    """What the memories page asks for; None or "" leaves a field out."""

    kind: str | None = None
    status: str | None = "active"
    subject: str | None = None
    since: datetime | None = None  # observed at or after
    until: datetime | None = None  # observed before
    text: str | None = None  # every word, as the full-text index matches it


@dataclass(frozen=True)
class AuditEntry:
    """One line of the append-only audit log: who did what to which memory, and why."""

    id: int
    at: datetime
    actor: str
    action: str
    memory_id: int | None
    detail: dict[str, Any]


@dataclass(frozen=True)
class HeldWrite:
    """A write the write audit held back (it looks like prompt injection) until a
    person decides, with what it takes to store it later as it would have been."""

    id: int
    held_at: datetime
    actor: str  # the door it came through: capture, cli, import, memory-md, …
    level: str  # "suspicious" | "dangerous"
    reasons: tuple[str, ...]
    text: str
    kind: str | None  # as given; None for a captured turn (its rules decide)
    source: str
    observed_at: datetime
    scope: Scope
    episode_id: int | None
    origin: str | None
    decision: str | None  # None while it waits; "confirm" | "reject"
    decided_at: datetime | None
    decided_by: str | None
    expires_at: datetime | None = None  # the time to live asked for (remember --ttl)

    @property
    def ref(self) -> str:
        return f"h_{self.id}"


@dataclass(frozen=True)
class ArchivedMemory:
    """One row of the cold tier. `record` is the memories row (every column, by name)
    plus `provenance` (a list of {episode_id, origin, added_at}) as it was archived."""

    memory_id: int
    archived_at: datetime
    reason: str
    score: float | None
    prior_status: str
    record: dict[str, Any]

    @property
    def ref(self) -> str:
        return f"m_{self.memory_id}"


@dataclass(frozen=True)
class Run:
    """One long job as recorded: its kind, when it started and ended, how it ended."""

    kind: str
    started_at: datetime
    finished_at: datetime | None
    status: str | None  # "ok" | "failed"; None while it runs (or if it was killed)
    counts: dict[str, int]


class GraphRows(NamedTuple):
    """The whole graph, by entity keys: what `graph.log` writes and compares."""

    entities: list[tuple[str, str, str, tuple[str, ...]]]  # key, name, type, aliases
    relations: list[tuple[str, str, str]]  # source key, relation, target key
    entity_links: list[tuple[str, int]]  # entity key, live memory id
    relation_links: list[tuple[str, str, str, int]]  # source, relation, target, memory id


@dataclass(frozen=True)
class BackupInfo:
    """A verified backup: its file, size, the row counts it was checked against, and
    how long it took."""

    path: Path
    bytes: int
    counts: dict[str, int]
    seconds: float


@dataclass(frozen=True)
class FreeSpace:
    """The database file's pages, and how many of them are free (SQLite's freelist:
    pages left by deleted rows and merged index segments, kept for reuse; only VACUUM
    gives them back to the disk)."""

    pages: int
    free_pages: int
    page_size: int

    @property
    def share(self) -> float:
        return self.free_pages / self.pages if self.pages else 0.0

    @property
    def free_bytes(self) -> int:
        return self.free_pages * self.page_size


@dataclass(frozen=True)
class Damage:
    """What is wrong with the database file. `code` is stable, for scripts and tests:
    missing, not_a_file, unreadable, empty, not_sqlite, truncated, tables_missing,
    integrity; `detail` says it for a person, naming the file."""

    code: str
    detail: str


@dataclass(frozen=True)
class StoreState:
    """What health and doctor show of the store itself (`Maintenance.state`): `where`
    it is for messages (a file's path; a server's URL, its password masked), `fields`
    for health.json's `database` section (JSON-ready: SQLite's path and bytes; a
    server's URL, versions, indexes, size and dead rows), what the store's `check` is
    called in a message, and `problems` a person should look at (`Damage`: a stable
    code, a message); `backend` which store it is ("sqlite", "postgresql")."""

    where: str
    fields: dict[str, object]
    check_name: str
    problems: tuple[Damage, ...] = ()
    backend: str = "sqlite"  # or "postgresql"
