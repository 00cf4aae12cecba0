"""The workspace's file and folder names, and the locks over them.

Every module that reads or writes the files the agent sees (MEMORY.md, the session-start
snapshot, the daily notes) or that must not run beside a nightly run names them from
here. The folder they sit in is `Settings.files_dir` (the OpenClaw workspace, or HOME);
the locks live in HOME.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

from memoracle.files import os_lock

__all__ = [
    "DAEMON_LOCK",
    "GRAPH_LOG_LOCK",
    "LAST_BLOCK",
    "MEMORY_FILE",
    "CACHE_DIR",
    "MODELS_DIR",
    "NIGHTLY_LOCK",
    "NOTES_DIR",
    "NOTES_LOCK",
    "NOTE_LOCK_WAIT_SECONDS",
    "SNAPSHOT_FILE",
    "note_lock",
]

MEMORY_FILE = "MEMORY.md"
SNAPSHOT_FILE = "SESSION-START.md"
NOTES_DIR = "memory"
NOTES_LOCK = "notes.lock"  # in HOME; see note_lock
NIGHTLY_LOCK = "nightly.lock"  # in HOME, the pid of the run under way
DAEMON_LOCK = "daemon.lock"  # in HOME, the pid of `memoracle daemon`
GRAPH_LOG_LOCK = "graph-log.lock"  # in HOME; never deleted (flock)
NOTE_LOCK_WAIT_SECONDS = 30.0
LAST_BLOCK = Path("render") / "MEMORY.block.md"  # under HOME: what we last wrote
CACHE_DIR = Path("cache")  # under HOME: what a process may rebuild (rule regexes compiled, …)
MODELS_DIR = CACHE_DIR / "models"  # under HOME: the embedding model, ready to map


def note_lock(home: Path) -> AbstractContextManager[None]:
    """HOME/notes.lock, held while a daily note is read and written again (the nightly
    run, a checkpoint), so one writer's lines are never lost to the other's."""
    path = home / NOTES_LOCK
    return os_lock(
        path,
        wait_seconds=NOTE_LOCK_WAIT_SECONDS,
        busy=f"Another memoracle process has held {path} for {NOTE_LOCK_WAIT_SECONDS:.0f} s.",
    )
