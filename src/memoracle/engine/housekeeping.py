"""What the jobs (nightly, health, doctor, redact, the model steps, export and import,
cron health, the graph log) ask of the store, as engine methods: the store itself is the
engine's own (`Engine._store`), so a job never holds it, and another backend answers
the same questions its own way.

`Housekeeping` is a mixin of `Engine` (`core.Engine`'s bases). Reads here are unscoped,
the whole store's: a job that shows what it reads to a person applies the visibility
rule itself (`engine.owner_sees`). The store's upkeep goes through its maintenance
object (`store.maintenance`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Self

from memoracle.config import Settings
from memoracle.engine.state import EngineState
from memoracle.storage_types import (
    ArchivedMemory,
    AuditEntry,
    BackupInfo,
    FreeSpace,
    GraphRows,
    Run,
    StoreState,
)
from memoracle.store import Store
from memoracle.store.protocols import TransferRows
from memoracle.store.scrub import Place
from memoracle.types import Episode, Memory

__all__ = ["Housekeeping"]


class Housekeeping(EngineState):
    """The jobs' questions to the store, mixed into the engine."""

    # -- the store as a whole ----------------------------------------------------------

    @property
    def database_path(self) -> Path:
        """Where the store is (named in messages and in health.json)."""
        return self._store.path

    @property
    def schema_version(self) -> int:
        return self._store.schema_version

    def store_size(self) -> int:
        """The bytes the store takes on disk."""
        return self._store.maintenance.size()

    def check_store(self, limit: int = 5) -> list[str]:
        """The store's own integrity check: ["ok"], or up to `limit` problems; a store
        too damaged to be checked is a `StoreError` naming it."""
        return self._store.maintenance.check(limit)

    def reclaimable_space(self) -> FreeSpace:
        """The store's pages, and how many a compaction would give back."""
        return self._store.maintenance.reclaimable()

    def compact_store(self) -> int:
        """Give the free pages back to the disk; returns the bytes the store shrank by."""
        return self._store.maintenance.compact()

    def exclusive(self, name: str, *, who: str) -> AbstractContextManager[None]:
        """Hold job `name`'s lock for a block: one holder among every process sharing the
        store (SQLite: HOME/NAME.lock beside the file, holding the pid; PostgreSQL: an
        advisory lock, every host). Held elsewhere: a `WorkspaceError` naming the holder
        as `who` ("Another nightly run")."""
        return self._store.maintenance.exclusive(name, who=who)

    def store_state(self) -> StoreState:
        """What health and doctor show of the store itself (the file; the server)."""
        return self._store.maintenance.state()

    def backup_to(self, folder: Path, *, now: datetime | None = None) -> BackupInfo:
        """A verified backup of the committed store in `folder` (named for `now`, by
        default the engine clock's), nothing pruned (`backup` is HOME/backups')."""
        return self._store.maintenance.backup(folder, now=now or self.clock.now())

    def over(
        self,
        path: Path,
        *,
        settings: Settings | None = None,
        now: datetime | None = None,
        readonly: bool | None = None,
        existing: bool = True,
    ) -> Self:
        """An engine with this clock and these settings (or `settings`) over the store
        at `path` (a scratch copy, a backup, a store being rebuilt), opened as
        `Store.open` opens it; the caller closes it."""
        at = now or self.clock.now()
        store = Store.open(path, now=at, readonly=readonly, existing=existing)
        return type(self)(settings or self.settings, store, self.clock)

    def scratch_copy(self, folder: Path, *, settings: Settings | None = None) -> Self:
        """An engine over a plain copy of the committed store made in `folder` (free
        pages and layout as here, unverified: to work on, not a backup)."""
        path = folder / self._store.path.name
        self._store.maintenance.scratch_copy(path)
        return self.over(path, settings=settings, existing=False)

    # -- runs ------------------------------------------------------------------------

    def last_run(self, kind: str, *, status: str | None = None) -> Run | None:
        """The latest job of `kind` recorded (that ended with `status`)."""
        return self._store.runs.latest(kind, status=status)

    def run_failed_since(self, prefix: str, since: datetime) -> bool:
        """Whether a job whose kind starts with `prefix`, started at `since` or later,
        ended "failed"."""
        return self._store.runs.failed_since(prefix, since)

    # -- memories and turns, unscoped --------------------------------------------------

    def newest_memory_id(self) -> int:
        """The highest memory id stored (0: none yet)."""
        return self._store.memories.max_id()

    def memory_counts(self) -> dict[tuple[str, str], int]:
        """(status, kind) -> how many memories, the whole store's."""
        return self._store.memories.counts()

    def capped_count(self) -> int:
        """Active memories that count against `lifecycle.max_facts`."""
        return self._store.memories.count_capped()

    def id_before_newest(self, count: int, statuses: Sequence[str]) -> int:
        """The id just before the `count` newest memories with `statuses`."""
        return self._store.memories.id_before_newest(count, statuses)

    def count_after(self, after: int, statuses: Sequence[str]) -> int:
        """Memories with `statuses` whose id is above `after`."""
        return self._store.memories.count_after(after, statuses)

    def unslotted(self, *, limit: int) -> list[int]:
        """Live memories whose slots were never read (at most `limit`)."""
        return self._store.memories.without_slot(limit=limit)

    def memories_created_since(self, since: datetime, statuses: Sequence[str]) -> list[Memory]:
        return self._store.memories.created_since(since, statuses)

    def memories_by_id(self, ids: Sequence[int]) -> list[Memory]:
        """The memories `ids` name that exist, whoever's they are."""
        return self._store.memories.get_many(ids)

    def stored_memory(self, memory_id: int) -> Memory | None:
        return self._store.memories.get(memory_id)

    def memories_with_status(self, status: str, *, limit: int) -> list[Memory]:
        return self._store.memories.select(status=status, limit=limit)

    def expired_memories(self, now: datetime) -> list[Memory]:
        """Live memories whose time to live ran out by `now`."""
        return self._store.memories.expired(now)

    def turns_by_id(self, ids: Sequence[int]) -> list[Episode]:
        """The stored turns `ids` name that exist, whoever's they are."""
        return self._store.episodes.get_many(ids)

    def stored_turn(self, episode_id: int) -> Episode | None:
        return self._store.episodes.get(episode_id)

    # -- the audit log ---------------------------------------------------------------

    def history(self, memory_id: int, *, limit: int = 100) -> list[AuditEntry]:
        """The audit entries about `memory_id`, newest first."""
        return self._store.audit.entries(memory_id=memory_id, limit=limit)

    def note(
        self,
        action: str,
        *,
        actor: str,
        at: datetime,
        memory_id: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """One entry appended to the audit log, in a transaction of its own."""
        with self._store.transaction():
            self._store.audit.append(
                at=at, actor=actor, action=action, memory_id=memory_id, detail=detail
            )

    # -- the graph -------------------------------------------------------------------

    def graph_counts(self) -> dict[str, int]:
        return self._store.graph.counts()

    def graph_snapshot(self) -> GraphRows:
        """The whole graph by entity keys, in one snapshot (what the graph log holds)."""
        return self._store.graph.snapshot()

    def memory_ids_of_entity(self, entity_id: int, *, limit: int) -> list[int]:
        """Live memories naming the entity, newest first, whoever's they are."""
        return self._store.graph.memories_of([entity_id], limit=limit)

    def entities_of(self, memory_ids: Sequence[int]) -> dict[int, list[int]]:
        """The entities each memory names, by memory id."""
        return self._store.graph.entities_of(memory_ids)

    # -- the cold tier ---------------------------------------------------------------

    def archive_memories(
        self, items: Iterable[tuple[int, str, float | None]], *, now: datetime, actor: str
    ) -> int:
        """Move each (memory id, reason, score) to the cold tier, in one transaction;
        returns how many moved."""
        with self._store.transaction():
            return self._store.archive.move(items, now=now, actor=actor)

    def archived(self, memory_id: int) -> ArchivedMemory | None:
        return self._store.archive.get(memory_id)

    def archived_count(self) -> int:
        return self._store.archive.count()

    def archived_in_order(
        self, *, after: ArchivedMemory | None = None, limit: int = 1000
    ) -> list[ArchivedMemory]:
        """Archived memories in the order they were archived, a page after `after`."""
        return self._store.archive.in_order(after=after, limit=limit)

    def archived_position(self, memory_id: int) -> int | None:
        """How many archived memories come up to `memory_id` in that order."""
        return self._store.archive.position(memory_id)

    # -- stored text, for the redaction ------------------------------------------------

    def stored_texts(self, place: Place) -> Iterator[tuple[int, str]]:
        """(key, value) of every row of one column of stored text."""
        return self._store.scrub.values(place)

    def rewrite_texts(
        self,
        values: Mapping[Place, Sequence[tuple[int, str]]],
        notes: Iterable[tuple[int | None, dict[str, Any]]] = (),
        *,
        now: datetime,
        actor: str,
    ) -> int:
        """Write the new `values` in one transaction, with each (memory id, detail) of
        `notes` audited as a `redact`; freed pages are zeroed (`secure_delete`).
        Returns the vectors dropped (their texts changed)."""
        store = self._store
        store.scrub.secure_delete()
        with store.transaction():
            dropped = store.scrub.rewrite(values)
            for memory_id, detail in notes:
                store.audit.append(
                    at=now, actor=actor, action="redact", memory_id=memory_id, detail=detail
                )
        return dropped

    def text_counts(self) -> dict[str, int]:
        """The row counts a backup is verified by."""
        return self._store.scrub.counts()

    # -- export and import -------------------------------------------------------------

    def transfer_rows(self) -> TransferRows:
        """The store read and written as export records (`memoracle export`/`import`)."""
        return self._store.transfer

    def vectors_missing(self, model_id: str) -> int:
        """Live texts with no vector of `model_id`."""
        return self._store.index.count_missing(model_id)
