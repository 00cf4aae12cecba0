"""A damaged store, examined and recovered: `memoracle doctor` and `doctor --fix`.

`examine` tells whether the database is a whole store (the store's maintenance: the
file's bytes, the schema against its version, SQLite's quick check or, `deep`, the full
integrity check) and whether the newest backup could be restored (opened, checked in
full, its rows counted). `plan` says how a damaged store comes back, best source first:
its permissions put back when only they are wrong (nothing lost); else the newest
backup that passes the integrity check; else a new store rebuilt from the last nightly
export (`knowledge-graph/facts.jsonl`) and the memory lines of MEMORY.md's block.
`recover` does it: the damaged file and its WAL are moved into HOME/damaged/ (kept,
never deleted), the new store is checked in full before it is renamed into place, and
the damage mark is removed. What was stored after the backup or the export is in the
file kept aside.

All of it is for the SQLite file: a workspace whose `storage.url` names a PostgreSQL
server is refused (`sqlite_only`), its database being the server's to check, back up
and restore (docs/fleet.md).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from memoracle.clock import Clock
from memoracle.config import Settings
from memoracle.engine import Engine, backend, guard
from memoracle.errors import EngineError, StoreError, WorkspaceError
from memoracle.files import read_text
from memoracle.render.memory_md import BlockError, extract_block
from memoracle.storage_types import Damage
from memoracle.store import Store
from memoracle.store.backup import taken_at
from memoracle.store.maintenance import SqliteMaintenance
from memoracle.types import KINDS, Scope
from memoracle.workspace import MEMORY_FILE

__all__ = ["BackupCheck", "Examination", "Plan", "examine", "plan", "recover"]

EXPORT = Path("knowledge-graph") / "facts.jsonl"  # under files_dir: the nightly export
LIVE_EXPORTED = ("active", "disputed")
_COMMENT = re.compile(r"<!--.*?-->")
ACTOR = "doctor-fix"  # who the audit log says stored the memories rebuilt from the files


@dataclass(frozen=True)
class BackupCheck:
    """One backup opened and checked in full: its row counts, or what is wrong."""

    path: Path
    counts: dict[str, int] | None
    problems: tuple[str, ...]

    @property
    def good(self) -> bool:
        return self.counts is not None and not self.problems


@dataclass(frozen=True)
class Examination:
    damage: Damage | None  # what is wrong with the database, or None
    life: tuple[str, ...]  # what shows the workspace was in use
    newest_backup: BackupCheck | None  # None: no backup at all
    marked: str | None  # HOME/store-damaged.txt's reason, when it is there


@dataclass
class Plan:
    """How `recover` brings the store back: `source` is "permissions", "backup",
    "rebuild" or "none" (nothing to recover from); `steps` say it for a person."""

    damage: Damage
    source: str
    steps: list[str] = field(default_factory=list)
    backup: BackupCheck | None = None
    memories: list[tuple[str, str | None, Scope | None]] = field(default_factory=list)


def sqlite_only(settings: Settings) -> None:
    """A `WorkspaceError` when the store is a server's database: nothing here applies."""
    if backend.is_server(settings):
        raise WorkspaceError(
            f"The store of {settings.home} is the PostgreSQL database"
            f" {backend.location(settings)}: examining and recovering a store is for the"
            " SQLite file only. Check and restore the database with the server's own tools"
            " (amcheck, pg_dump and pg_restore, a base backup and its WAL)."
        )


def examine(settings: Settings, *, deep: bool = False) -> Examination:
    """What is wrong with the store and its newest backup; reads only."""
    sqlite_only(settings)
    damage = SqliteMaintenance.at(settings.db_path).damage(deep=deep)
    backups = _backups(settings.home / "backups")
    newest = verify_backup(backups[0]) if backups else None
    return Examination(damage, tuple(guard.earlier_life(settings)), newest, guard.marked(settings))


def _backups(folder: Path) -> list[Path]:
    """The database backups in `folder`, newest first (by the time in their names)."""
    try:
        found = [(at, p) for p in folder.iterdir() if (at := taken_at(p.name)) is not None]
    except OSError:
        return []
    return [p for _, p in sorted(found, reverse=True)]


def verify_backup(path: Path) -> BackupCheck:
    """Open the backup at `path`, run the full integrity check and count its rows."""
    backup = SqliteMaintenance.at(path)
    found = backup.damage(deep=True)
    if found is not None:
        return BackupCheck(path, None, (found.detail,))
    try:
        return BackupCheck(path, backup.row_counts(), ())
    except StoreError as exc:
        return BackupCheck(path, None, (str(exc),))


def plan(settings: Settings, damage: Damage) -> Plan:
    """The way back for a store with `damage`, best source first (the module says)."""
    sqlite_only(settings)
    db = settings.db_path
    aside = settings.home / guard.DAMAGED_DIR
    if damage.code == "unreadable" and _own_file(db):
        return Plan(
            damage, "permissions", [f"give {db} back its owner's read and write permission"]
        )
    moving = [] if damage.code == "missing" else [f"move {db} and its WAL aside into {aside}"]
    for path in _backups(settings.home / "backups"):
        found = verify_backup(path)
        if found.good:
            assert found.counts is not None
            n = found.counts["memories"]
            steps = [*moving, f"restore {path} ({n:,} memories; integrity check ok)"]
            return Plan(damage, "backup", steps, backup=found)
    memories, sources = _from_files(settings)
    if not memories:
        return Plan(damage, "none", [f"nothing to recover from: no good backup, and {sources}"])
    steps = [*moving, f"rebuild a store from {sources}: {len(memories):,} memories"]
    return Plan(damage, "rebuild", steps, memories=memories)


def _own_file(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()


def _from_files(settings: Settings) -> tuple[list[tuple[str, str | None, Scope | None]], str]:
    """The memories the rendered files still hold: each line of the last nightly export,
    then each memory line of MEMORY.md's block not in it; and where they came from."""
    export = settings.files_dir / EXPORT
    found: list[tuple[str, str | None, Scope | None]] = []
    seen: set[str] = set()
    for line in (read_text(export) or "").splitlines():
        try:
            record = json.loads(line)
            text, kind = str(record["text"]), record.get("kind")
            scope = Scope(**record["scope"]) if isinstance(record.get("scope"), dict) else None
        except (ValueError, KeyError, TypeError):
            continue  # a damaged line: the others still count
        if record.get("status", "active") in LIVE_EXPORTED and text not in seen:
            seen.add(text)
            found.append((text, kind if kind in KINDS else None, scope))
    from_export = len(found)
    memory_md = settings.files_dir / MEMORY_FILE
    for text in _memory_lines(memory_md):
        if text not in seen:
            seen.add(text)
            found.append((text, None, None))
    sources = f"{export} ({from_export} line(s)) and {memory_md} ({len(found) - from_export} more)"
    return found, sources


def _memory_lines(path: Path) -> list[str]:
    """The texts of MEMORY.md's block lines tagged with a memory id (`<!-- m_12 -->`)."""
    try:
        block = extract_block(read_text(path) or "")
    except BlockError:
        return []
    texts: list[str] = []
    for line in (block or "").splitlines():
        if guard.MEMORY_LINE.search(line) is None:
            continue
        text = _COMMENT.sub("", line).strip().removeprefix("- ").strip()
        text = text.removeprefix("[ ] ").removeprefix("[x] ").strip()
        if text:
            texts.append(text)
    return texts


def recover(settings: Settings, plan: Plan, clock: Clock) -> list[str]:
    """Carry out `plan`; return what was done, one line each. The store put in place
    has passed the full integrity check; the damaged one is in HOME/damaged/."""
    sqlite_only(settings)
    db, now = settings.db_path, clock.now()
    store = SqliteMaintenance.at(db)
    if plan.source == "none":
        raise StoreError(f"{db}: {plan.steps[0]}. Nothing was changed.")
    if plan.source == "permissions":
        db.chmod(0o600)
        left = store.damage(deep=True)
        if left is not None:
            raise StoreError(
                f"{left.detail}. Its permissions were put back; run doctor --fix again."
            )
        guard.unmark(settings)
        return [f"permissions of {db} put back (read and write for its owner)"]
    fresh = db.with_name(db.name + ".recovering")
    made = SqliteMaintenance.at(fresh)
    try:
        if plan.source == "backup":
            assert plan.backup is not None
            made.copy_from(plan.backup.path)
        else:
            _rebuild(settings, fresh, plan.memories, clock)
        problems = made.check_file(deep=True)
        if problems != ["ok"]:
            raise StoreError(
                f"{fresh}: the recovered store fails the integrity check ({problems[0]})."
            )
        moved = guard.set_aside(settings, now)
        store.replace_with(fresh)
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{fresh}{suffix}").unlink(missing_ok=True)
    done = [f"moved aside: {p}" for p in moved]
    n = store.row_counts()["memories"]
    what = plan.backup.path if plan.backup is not None else "the export and MEMORY.md"
    return [*done, f"restored {n:,} memories from {what}; integrity check ok"]


def _rebuild(
    settings: Settings,
    path: Path,
    memories: list[tuple[str, str | None, Scope | None]],
    clock: Clock,
) -> None:
    """A new store at `path` holding `memories`, each remembered as a person would."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with Engine(settings, Store.open(path, now=clock.now()), clock) as engine:
        for text, kind, scope in memories:
            try:
                engine.remember(text, kind=kind, scope=scope, source="import", actor=ACTOR)
            except EngineError:
                continue  # a text the write path refuses today (held, too long): skipped
