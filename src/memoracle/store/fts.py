"""A lexical query in FTS5's syntax: the one place it is written.

Each term double-quoted with inner quotes doubled (so no input can produce an FTS5
syntax error), a prefix term followed by `*`, the terms joined by AND (every one) or OR
(any of them). What to look for is the `LexicalQuery` the floors above hand down
(`memoracle.storage_types`).
"""

from __future__ import annotations

from memoracle.storage_types import LexicalQuery, Term

__all__ = ["match_expression"]


def _term(term: Term) -> str:
    return '"' + term.text.replace('"', '""') + '"' + ("*" if term.prefix else "")


def match_expression(query: LexicalQuery) -> str:
    """`query` as an FTS5 MATCH expression: ``"a" AND "b"``, ``"a" OR "b"*``."""
    return (" OR " if query.any else " AND ").join(_term(t) for t in query.terms)
