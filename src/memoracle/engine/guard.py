"""The guard against a store silently re-created: what a workspace shows of earlier
life, and the refusal to open (or `init`) a missing, empty or damaged store in one.

A store that was in use and is now empty must not be given fresh tables and written
to: the nightly run would then render an empty MEMORY.md over the copy fallback recall
reads, and the next backup rotation would age out the last good copies. So opening
refuses (`StoreDamaged`, exit 2 at the doors) and names the recovery, `memoracle doctor
--fix`. Damage the file's bytes do not show (a page overwritten in the middle) is found
by `doctor` or the nightly integrity check; `doctor` then leaves HOME/store-damaged.txt,
and every open refuses until a fix or a clean check removes it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path

from memoracle.config import Settings
from memoracle.errors import StoreDamaged, WorkspaceError
from memoracle.files import read_text, write_atomically
from memoracle.render.memory_md import BlockError, extract_block
from memoracle.storage_types import Damage
from memoracle.store.backup import taken_at
from memoracle.store.maintenance import SqliteMaintenance
from memoracle.workspace import LAST_BLOCK, MEMORY_FILE

__all__ = [
    "DAMAGED_DIR",
    "DAMAGED_MARK",
    "MEMORY_LINE",
    "check_before_open",
    "earlier_life",
    "mark_damaged",
    "marked",
    "refuse",
    "set_aside",
    "unmark",
]

DAMAGED_DIR = "damaged"  # in HOME: damaged stores moved aside, kept
DAMAGED_MARK = "store-damaged.txt"  # in HOME: why the store was found damaged, and when
MEMORY_LINE = re.compile(r"<!--\s*m_\d+\s*-->")  # a rendered memory line's tag
INSTALL_RECORD = "install.json"  # HOME/install.json (openclaw.install.manifest's)
HISTORY = ("health.json", "health-history.jsonl")  # in HOME, written by each check
EXPORTS = ("facts.jsonl", "archived-facts.jsonl")  # in files_dir/knowledge-graph


def earlier_life(settings: Settings, *, first_only: bool = False) -> list[str]:
    """What in the workspace shows a store was in use here (each named for a person):
    an install record, MEMORY.md's block with memory lines, backups, the nightly
    exports, health history, a rendered block. Empty for a new workspace. With
    `first_only`, stops at the first sign (the cheap ones are looked at first)."""
    home, files = settings.home, settings.files_dir
    signs: list[Callable[[], str | None]] = [
        partial(_installed, home / INSTALL_RECORD),
        partial(_backups, home / "backups"),
        *(partial(_file, home / name, "health history") for name in HISTORY),
        partial(_file, home / LAST_BLOCK, "a rendered MEMORY.md block"),
        *(partial(_file, files / "knowledge-graph" / name, "a nightly export") for name in EXPORTS),
        partial(_memory_md, files / MEMORY_FILE),
    ]
    found: list[str] = []
    for sign in signs:
        seen = sign()
        if seen is not None:
            found.append(seen)
            if first_only:
                break
    return found


def _file(path: Path, what: str) -> str | None:
    try:
        return f"{what} ({path})" if path.stat().st_size > 0 else None
    except OSError:
        return None


def _installed(path: Path) -> str | None:
    """An install record whose import finished (install writes it first, before the
    store is made, and again with `imported_at` once the transcripts are in)."""
    text = read_text(path)
    try:
        done = text is not None and bool(json.loads(text).get("imported_at"))
    except (ValueError, AttributeError):
        done = False
    return f"an install record ({path})" if done else None


def _backups(folder: Path) -> str | None:
    try:
        n = sum(taken_at(p.name) is not None for p in folder.iterdir())
    except OSError:
        return None
    return f"{n} backup(s) in {folder}" if n else None


def _memory_md(path: Path) -> str | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        block = extract_block(text)
    except BlockError:
        return None
    lines = 0 if block is None else len(MEMORY_LINE.findall(block))
    return f"{lines} memory line(s) in {path}'s block" if lines else None


def marked(settings: Settings) -> str | None:
    """Why HOME/store-damaged.txt says the store is damaged, or None when it is not there."""
    text = read_text(settings.home / DAMAGED_MARK)
    return None if text is None else text.strip() or "(no reason given)"


def mark_damaged(settings: Settings, why: str) -> None:
    """Leave HOME/store-damaged.txt saying `why`: every open refuses until it goes."""
    write_atomically(settings.home / DAMAGED_MARK, why.strip() + "\n")


def unmark(settings: Settings) -> bool:
    """Remove HOME/store-damaged.txt; whether it was there."""
    path = settings.home / DAMAGED_MARK
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot remove it ({exc.strerror or exc}).") from None
    return True


def refuse(settings: Settings, damage: Damage | str, life: list[str]) -> StoreDamaged:
    """The refusal for a store found damaged (`damage`) in a workspace with `life`:
    what is wrong, why it is not started afresh, and the recovery."""
    what = damage if isinstance(damage, str) else damage.detail
    shown = f" ({'; '.join(life[:3])})" if life else ""
    home = settings.home
    return StoreDamaged(
        f"{what}. The store was in use{shown}, so no new, empty store is started"
        f" over it and nothing was written. Recover with: memoracle --home {home} doctor"
        " --fix (it restores the newest good backup, or rebuilds from the last export and"
        " MEMORY.md; add --dry-run to see what it would do first)."
    )


def check_before_open(settings: Settings) -> bool:
    """Raise `StoreDamaged` when the store may not be opened: marked damaged, or
    missing, unreadable, empty or not a whole SQLite file in a workspace with earlier
    life; a missing store in a new workspace is the WorkspaceError saying to run init.
    Returns whether the workspace shows earlier life (the store must have its tables)."""
    damage = SqliteMaintenance.at(settings.db_path).probe()
    life = earlier_life(settings, first_only=True)
    if damage is not None and life:
        raise refuse(settings, damage, earlier_life(settings))
    why = marked(settings)
    if why is not None:
        raise refuse(settings, f"`memoracle doctor` found the store damaged: {why}", [])
    if damage is not None and damage.code == "missing":
        raise WorkspaceError(
            f"No memoracle workspace at {settings.home} (no {settings.db_path.name}). "
            f"Run: memoracle init --home {settings.home}"
        )
    return bool(life)


def set_aside(settings: Settings, now: datetime) -> list[Path]:
    """Move the store (and its WAL, shm) into HOME/damaged/, named for `now`, and
    remove the damage mark: the way clear for a restored or new store. Returns the
    paths the files now have."""
    stamp = f"{now:%Y%m%dT%H%M%S}"
    moved = SqliteMaintenance.at(settings.db_path).set_aside(settings.home / DAMAGED_DIR, stamp)
    unmark(settings)
    return moved
