"""A PostgreSQL store's backup file, read without a driver: what it is named, and its
check (`verify`: every line JSON, each table's rows counted against the counts its last
line holds and, when the caller knows them, the snapshot's). `postgres.maintenance`
writes it; `doctor` checks the newest one on any machine, psycopg installed or not.

The file (`memoracle-20261202T143000Z.pg.jsonl.gz`) is gzipped JSON lines: a first line
`{"format": "memoracle-pg-rows/1", "server", "schema_version", "taken_at"}`, one
`{"table", "row"}` line a row (the row as PostgreSQL's `to_jsonb` gives it), and a last
line `{"counts": {table: rows}}`.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memoracle.store.backup import SERVER_NAME, backup_name

__all__ = ["BACKUP_FORMAT", "ServerBackup", "newest", "server_backup_name", "verify"]

BACKUP_FORMAT = "memoracle-pg-rows/1"  # the first line of a backup says it


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
    """Read the file at `path` through: its first line names the format, every line is
    JSON, and each table's rows match its last line's counts (and `expected`, the
    snapshot's, when given)."""
    counted: dict[str, int] = dict.fromkeys(expected or {}, 0)
    last: object = None
    try:
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            head = json.loads(next(lines, "{}"))
            if not isinstance(head, dict) or head.get("format") != BACKUP_FORMAT:
                return ServerBackup(path, {}, ["the first line does not name the format"])
            for line in lines:
                item = json.loads(line)
                if "table" in item:
                    counted[item["table"]] = counted.get(item["table"], 0) + 1
                else:
                    last = item.get("counts")
    except (OSError, EOFError, ValueError, AttributeError, TypeError) as exc:
        return ServerBackup(path, counted, [f"cannot be read through ({exc})"])
    problems = [
        f"{table}: {counted.get(table, 0)} rows of {n}"
        for table, n in (expected or {}).items()
        if counted.get(table, 0) != n
    ]
    if not isinstance(last, dict) or {t: counted.get(t, 0) for t in last} != last:
        problems.append("its last line's counts differ from its rows, or it is cut short")
    return ServerBackup(path, counted, problems)


def newest(folder: Path) -> Path | None:
    """The newest PostgreSQL backup in `folder` (by the time in its name), or None."""
    if not folder.is_dir():
        return None
    found = [(m.group(1), int(m.group(2) or 1), p) for p in folder.iterdir()
             if (m := SERVER_NAME.match(p.name))]  # fmt: skip
    return max(found)[2] if found else None
