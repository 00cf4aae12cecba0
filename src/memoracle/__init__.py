"""memoracle: local-first long-term memory for LLM agents.

from memoracle import Engine, Turn, load

settings = load("~/agent-memory")
Engine.init(settings)
with Engine.open(settings) as memory:
    memory.capture([Turn("user", "Never deploy on Fridays.")])
"""

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
