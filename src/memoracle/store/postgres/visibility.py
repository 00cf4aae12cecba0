"""The visibility rule as PostgreSQL SQL: `View`'s clauses in this dialect.

The rule itself is `types.visible_to` (docs/scopes.md), the one place it is written;
this module only renders its conditions, as `store.index._scope_clauses` does for
SQLite, and adds what `store.index`'s `memory_clause` and `episode_clause` add there
(live or active at `as_of`, not expired; turns held back by the write audit or taken out by a
forget left out). The tests run the same cases on both backends
(tests/pg/test_pg_repositories.py), so the two renderings cannot drift apart unseen.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memoracle.storage_types import View
from memoracle.types import Condition, visible_to

# The columns of the rule's fields (never interpolate input).
_COLUMNS = {"agent": "agent_id", "user": "user_id", "chat": "chat_id", "visibility": "visibility"}


def _conditions(conditions: Sequence[Condition], alias: str) -> tuple[list[str], list[Any]]:
    clauses: list[str] = ["TRUE"]
    params: list[Any] = []
    for c in conditions:
        column = f"{alias}.{_COLUMNS[c.field]}"
        test = f"{column} = ANY(%s)"
        clauses.append(f"({column} IS NULL OR {test})" if c.or_unset else test)
        params.append(list(c.values))
    return clauses, params


def unexpired(alias: str, at: datetime | None, params: list[Any]) -> str:
    """`alias`'s memory has not expired at `at` (TRUE when `at` is None)."""
    if at is None:
        return "TRUE"
    params.append(at)
    return f"({alias}.expires_at IS NULL OR {alias}.expires_at > %s)"


def scope_clause(view: View, alias: str) -> tuple[str, list[Any]]:
    """The visibility rule alone, over the table behind `alias`."""
    clauses, params = _conditions(visible_to(view.scope, view.own), alias)
    return " AND ".join(clauses), params


def memory_clause(view: View, alias: str = "m") -> tuple[str, list[Any]]:
    """What a search may return of memories: visible, of `view.kinds`, active now (or
    then, with `as_of`), not expired."""
    clauses, params = _conditions(visible_to(view.scope, view.own), alias)
    if view.kinds:
        clauses.append(f"{alias}.kind = ANY(%s)")
        params.append(list(view.kinds))
    if view.as_of is None:
        clauses.append(f"{alias}.status = 'active'")
    else:
        clauses.append(
            f"{alias}.observed_at <= %s AND {alias}.status != 'archived'"
            f" AND ({alias}.status IN ('active', 'disputed') OR {alias}.status_changed_at > %s)"
        )
        params += [view.as_of, view.as_of]
    clauses.append(unexpired(alias, view.as_of or view.now, params))
    return " AND ".join(clauses), params


def episode_clause(view: View, alias: str = "e") -> tuple[str, list[Any]]:
    """What a search may return of turns: visible, not held back by the write audit
    (nor a turn of the same scope saying a held text), not taken out by a forget."""
    clauses, params = _conditions(visible_to(view.scope, view.own), alias)
    clauses.append(
        f"NOT EXISTS (SELECT 1 FROM held h WHERE (h.episode_id = {alias}.id"
        f" OR (h.episode_id IS NOT NULL AND h.text = {alias}.text"
        f" AND h.agent_id IS NOT DISTINCT FROM {alias}.agent_id"
        f" AND h.user_id IS NOT DISTINCT FROM {alias}.user_id"
        f" AND h.chat_id IS NOT DISTINCT FROM {alias}.chat_id"
        f" AND h.visibility = {alias}.visibility))"
        " AND (h.decision IS NULL OR h.decision = 'reject'))"
    )
    clauses.append(
        f"NOT EXISTS (SELECT 1 FROM provenance fp JOIN memories fm ON fm.id = fp.memory_id"
        f" WHERE fp.episode_id = {alias}.id AND fm.status = 'forgotten')"
    )
    if view.as_of is not None:
        clauses.append(f"{alias}.at <= %s")
        params.append(view.as_of)
    return " AND ".join(clauses), params
