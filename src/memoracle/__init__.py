"""memoracle: local-first long-term memory for LLM agents.

from memoracle import Engine, Turn, load

settings = load("~/agent-memory")
Engine.init(settings)
with Engine.open(settings) as memory:
    memory.capture([Turn("user", "Never deploy on Fridays.")])
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoracle.clock import Clock, FixedClock, SystemClock
    from memoracle.config import Settings, load
    from memoracle.engine import Engine, recall_anyway
    from memoracle.errors import EngineError, InvalidInput, NotFound, StoreError, WorkspaceError
    from memoracle.types import (
        CaptureResult,
        Episode,
        ImportedNote,
        IngestReport,
        IngestWarning,
        Memory,
        Scope,
        Stats,
        Turn,
    )

# Where each public name lives. They are imported on first use (PEP 562), not when
# `memoracle` is: the command line imports this package first, and a `memoracle recall`
# process must not load the whole engine before it knows what it runs.
_HOMES = {
    "Clock": "clock", "FixedClock": "clock", "SystemClock": "clock",
    "Settings": "config", "load": "config",
    "Engine": "engine", "recall_anyway": "engine",
    "EngineError": "errors", "InvalidInput": "errors", "NotFound": "errors",
    "StoreError": "errors", "WorkspaceError": "errors",
    "CaptureResult": "types", "Episode": "types", "ImportedNote": "types",
    "IngestReport": "types", "IngestWarning": "types", "Memory": "types", "Scope": "types",
    "Stats": "types", "Turn": "types",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'memoracle' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"memoracle.{home}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CaptureResult",
    "Clock",
    "Engine",
    "EngineError",
    "Episode",
    "FixedClock",
    "ImportedNote",
    "IngestReport",
    "IngestWarning",
    "InvalidInput",
    "Memory",
    "NotFound",
    "Scope",
    "Settings",
    "Stats",
    "StoreError",
    "SystemClock",
    "Turn",
    "WorkspaceError",
    "load",
    "recall_anyway",
]
