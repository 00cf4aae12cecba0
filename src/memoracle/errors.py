"""Errors the engine raises, named for what the caller does about them.

    EngineError                 anything memoracle refuses or fails to do
    ├── NotFound                no memory/episode/file with that id or path
    ├── InvalidInput            bad argument, bad file content, unknown format
    ├── WorkspaceError          missing, unwritable or uninitialised workspace
    ├── StoreError              the SQLite store failed (wraps sqlite3 errors, names the file)
    │   └── StoreDamaged        missing, empty or damaged where a store was in use: refused
    └── WriteHeld               the write audit held a write back (`ref` names it)

Modules refine these where they are raised (a rule file's error is an `InvalidInput`
naming the file and line), and the model path adds its own two `EngineError`s
(`llm.errors`).

Expected outcomes (no match, duplicate skipped) are return values, not errors. Messages
say what went wrong, on which thing, and what to try next.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base class of every error memoracle raises on purpose."""


class NotFound(EngineError):
    pass


class InvalidInput(EngineError):
    pass


class WorkspaceError(EngineError):
    pass


class StoreError(EngineError):
    pass


class StoreDamaged(StoreError):
    """The store is missing, empty or damaged in a workspace that was in use: writing
    commands refuse (exit 2) rather than start a new, empty store over it. The message
    names the recovery (`memoracle doctor --fix`)."""


class WriteHeld(EngineError):
    """A write the write audit held back (it looks like prompt injection): nothing was
    stored as memory; `ref` (h_N) names it for `memoracle audit --confirm / --reject`."""

    def __init__(self, message: str, ref: str) -> None:
        super().__init__(message)
        self.ref = ref
