"""The store's stored texts cleaned (`plan` reads, `apply` writes): every column of
`store.scrub.PLACES`, primary texts learned from first so a copy elsewhere is found. Each
works over an engine (the workspace's, or one over a backup's copy)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from memoracle.engine import Engine
from memoracle.jobs.scrub.clean import Cleaner
from memoracle.store.scrub import PLACES, PRIMARY, Place

REFS_SHOWN = 20  # refs a report lists per place; the count is the whole


@dataclass
class PlaceChange:
    """What the redaction changes (or would) in one column: how many rows, the first
    `REFS_SHOWN` of them by ref (m_12, e_7, audit 40), and how often each kind was found.
    Never the text."""

    place: str
    rows: int = 0
    refs: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)


@dataclass
class Plan:
    """The new values of every changed row, by place, and what to report of them."""

    values: dict[Place, list[tuple[int, str]]] = field(default_factory=dict)
    changes: list[PlaceChange] = field(default_factory=list)
    kinds: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(c.rows for c in self.changes)


def learn(engine: Engine, cleaner: Cleaner) -> None:
    """Let the cleaner learn what the redaction removes from the store's primary texts."""
    for place in PRIMARY:
        for _key, value in engine.stored_texts(place):
            cleaner.learn(value)


def plan(engine: Engine, cleaner: Cleaner) -> Plan:
    """Every stored value the cleaner changes, read only."""
    out = Plan()
    for place in PLACES:
        change = PlaceChange(place.name)
        rows: list[tuple[int, str]] = []
        for key, value in engine.stored_texts(place):
            done = cleaner.clean_json(value) if place.json else cleaner.clean(value)
            if not done.changed(value):
                continue
            rows.append((key, done.text))
            out.kinds[(place.name, key)] = done.kinds
            change.rows += 1
            change.kinds.update(done.kinds)
            if place.ref and len(change.refs) < REFS_SHOWN:
                change.refs.append(f"{place.ref}{key}")
        if rows:
            out.values[place] = rows
            out.changes.append(change)
    return out


def apply(engine: Engine, found: Plan, *, now: datetime, actor: str, audit: bool) -> int:
    """Write the plan in one transaction, each changed row audited (action `redact`,
    the place, the ref and the kinds; never the text) when `audit`; returns the vectors
    dropped. Freed pages are zeroed (`secure_delete`); VACUUM is the caller's."""
    notes = (
        (
            key if place.table in ("memories", "archive") else None,
            {
                "place": place.name,
                "ref": f"{place.ref or 'row '}{key}",
                "kinds": list(found.kinds.get((place.name, key), ())),
            },
        )
        for place, rows in found.values.items()
        for key, _value in rows
    )
    return engine.rewrite_texts(found.values, notes if audit else (), now=now, actor=actor)
