"""A PostgreSQL store's backup file, read without a driver: what it is named, and its
check (`verify`: every line JSON, each table's rows counted against the counts its
header holds and, when the caller knows them, the snapshot's). `postgres.maintenance`
writes it; `doctor` checks the newest one on any machine, psycopg installed or not.

The file (`memoracle-20261202T143000Z.pg.jsonl.gz`) is a gzipped export
(docs/transfer.md, vectors included): a header line `{"type": "memoracle-export",
"format", "schema_version", "counts", ..., "server"}`, then one record a line, a
memory's provenance, slots and graph links inside it. `memoracle import` reads it back
into an empty store (docs/fleet.md#backups).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memoracle.store.backup import SERVER_NAME, backup_name
from memoracle.store.transfer import BY_TYPE, DATA_TABLES, HEADER

__all__ = ["ServerBackup", "newest", "server_backup_name", "verify"]


def server_backup_name(now: datetime, n: int = 1) -> str:
    """`memoracle-20261202T143000Z.pg.jsonl.gz`: named as `backup_name` names an SQLite
    backup, so the two rotate together (`prune_backups`)."""
    return backup_name(now, n).removesuffix(".db") + ".pg.jsonl.gz"


@dataclass(frozen=True)
class ServerBackup:
    """A backup file checked: its rows by table, and what is wrong with it."""

    path: Path
    counts: dict[str, int]
    problems: list[str]

    @property
    def good(self) -> bool:
        return not self.problems


def verify(path: Path, expected: dict[str, int] | None = None) -> ServerBackup:
    """Read the file at `path` through: its first line is an export's header, every
    line is JSON, and each table's rows (a memory's nested ones too) match the header's
    counts (and `expected`, the snapshot's, when given)."""
    counted: dict[str, int] = dict.fromkeys(DATA_TABLES, 0)
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            head = json.loads(next(lines, "{}"))
            if not isinstance(head, dict) or head.get("type") != HEADER:
                return ServerBackup(path, {}, ["the first line is not an export's header"])
            for line in lines:
                _count(json.loads(line), counted)
    except (OSError, EOFError, ValueError, AttributeError, TypeError, KeyError) as exc:
        return ServerBackup(path, counted, [f"cannot be read through ({exc})"])
    said = head.get("counts")
    problems = [
        f"{table}: {counted.get(table, 0)} rows of {n}"
        for table, n in (expected or {}).items()
        if counted.get(table, 0) != n
    ]
    if not isinstance(said, dict) or {t: counted.get(t, 0) for t in said} != said:
        problems.append("its rows differ from its header's counts: cut short or edited")
    return ServerBackup(path, counted, problems)


def _count(record: dict[str, Any], counted: dict[str, int]) -> None:
    """Add `record`'s rows to `counted`: its own, and those nested inside it."""
    section = BY_TYPE[record["type"]]
    counted[section.table] += 1
    for nested in section.nested:
        value = record.get(nested.field)
        counted[nested.table] += (1 if value else 0) if nested.shape == "flag" else len(value or ())


def newest(folder: Path) -> Path | None:
    """The newest PostgreSQL backup in `folder` (by the time in its name), or None."""
    if not folder.is_dir():
        return None
    found = [(m.group(1), int(m.group(2) or 1), p) for p in folder.iterdir()
             if (m := SERVER_NAME.match(p.name))]  # fmt: skip
    return max(found)[2] if found else None
