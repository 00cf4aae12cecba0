"""The engine: one façade (`Engine`) with a method per user action, over the store
and the domain packages."""

from memoracle.engine.core import Engine, parse_ref, recall_anyway
from memoracle.engine.memories import Ambiguous

__all__ = ["Ambiguous", "Engine", "parse_ref", "recall_anyway"]
