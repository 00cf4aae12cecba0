"""The engine: one façade (`Engine`) with a method per user action, over the store
and the domain packages."""

from memoracle.engine.core import Engine, parse_ref, recall_anyway

__all__ = ["Engine", "parse_ref", "recall_anyway"]
