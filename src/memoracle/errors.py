"""Errors the engine raises, named for what the caller does about them.

    EngineError                 anything memoracle refuses or fails to do
    ├── NotFound                no memory/episode/file with that id or path
    ├── InvalidInput            bad argument, bad file content, unknown format
    ├── WorkspaceError          missing, unwritable or uninitialised workspace
    └── StoreError              the SQLite store failed (wraps sqlite3 errors, names the file)

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
