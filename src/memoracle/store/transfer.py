"""The whole store as records and back: the SQL behind `memoracle.jobs.transfer`, which owns
the file (its header, lines, progress and refusals).

A record is one JSON-ready dict per row of a data table, keyed by column name, with a
`type` naming its table (`SECTIONS`). Ids are kept, so every reference stays valid:
`superseded_by`, provenance, graph links, held writes' episodes, `m_12` in audit
details. Rows that belong to one memory or one entity travel inside its record: a
memory carries its provenance, slots, graph links and whether it was read for the
graph; an entity its aliases. JSON columns are written as JSON values, vector BLOBs as
base64.

Derived state is rebuilt, not copied: `search_text` of memories and episodes from
their text, both FTS indexes by the schema's triggers as the rows go in, each slot's
`live` flag from its memory's status. `schema_migrations` belongs to the store written
into.

Columns are read from the schema (PRAGMA table_info), so a migration that adds a
column is carried with no change here; one that adds a table must add it to SECTIONS or
NESTED (tests/test_transfer.py holds every table of the schema against them).
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from memoracle.config import installed_version
from memoracle.errors import InvalidInput, StoreError
from memoracle.store.db import Database, from_db_time
from memoracle.store.episodes import search_text as episode_search_text
from memoracle.store.index import Index
from memoracle.store.memories import search_text as memory_search_text
from memoracle.types import LIVE

FORMAT = 1  # the line format; bumped when a reader of the old one would misread the new
HEADER = "memoracle-export"  # the first line's `type`


@dataclass(frozen=True)
class Nested:
    """Rows of `table` written inside their parent's record, as `field`."""

    field: str
    table: str
    parent: str  # the column naming the parent row
    order: str  # their order within one parent (kept on import: insertion order)
    shape: str  # "rows" (a list of objects), "values" (a list of `value`), "flag" (a bool)
    value: str = ""
    derived: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """One line type: the rows of `table`, in `key` order."""

    type: str
    table: str
    key: tuple[str, ...] = ("id",)
    json: tuple[str, ...] = ()  # JSON text, written as a JSON value (BLOBs as base64)
    derived: tuple[str, ...] = ()  # rebuilt on import, not written
    renamed: tuple[tuple[str, str], ...] = ()  # (column, field): "type" names the line
    nested: tuple[Nested, ...] = ()


MEMORY_NESTED = (
    Nested("provenance", "provenance", "memory_id", "rowid", "rows"),
    Nested("slots", "slots", "memory_id", "subject, attribute", "rows", derived=("live",)),
    Nested("entities", "entity_memories", "memory_id", "entity_id", "values", "entity_id"),
    Nested("relations", "relation_memories", "memory_id", "relation_id", "values", "relation_id"),
    Nested("graph_read", "graph_read", "memory_id", "memory_id", "flag"),
)

# In file order: whatever a line refers to comes before it, except `superseded_by`
# (a memory superseded by a newer one); foreign keys are checked at the end of an import.
SECTIONS: tuple[Section, ...] = (
    Section("episode", "episodes", derived=("search_text",)),
    Section(
        "entity",
        "entities",
        renamed=(("type", "entity_type"),),
        nested=(Nested("aliases", "entity_aliases", "entity_id", "rowid", "values", "alias"),),
    ),
    Section("relation", "relations"),
    Section(
        "memory", "memories", json=("details",), derived=("search_text",), nested=MEMORY_NESTED
    ),
    Section("archive", "archive", key=("memory_id",), json=("record",)),
    Section("audit", "audit", json=("detail",)),
    Section("run", "runs", json=("counts",)),
    Section("held", "held", json=("reasons",)),
    Section("vector", "vectors", key=("content_hash", "model_id")),
)
BY_TYPE = {s.type: s for s in SECTIONS}
NESTED_TABLES = tuple(n.table for s in SECTIONS for n in s.nested)
# Every table holding data, in file order: the keys of `counts`.
DATA_TABLES = tuple(t for s in SECTIONS for t in (s.table, *(n.table for n in s.nested)))
# Tables that are the store's own or rebuilt from the others (FTS5 adds shadow tables
# named after these: memories_fts_data, ...).
NOT_EXPORTED = ("schema_migrations", "memories_fts", "episodes_fts")
PAGE = 1000  # rows read at a time


class _Counted(Protocol):
    """What a header reads of a store's rows (`protocols.TransferRows` has it)."""

    @property
    def schema_version(self) -> int: ...
    def vector_models(self) -> dict[str, tuple[int, int]]: ...
    def counts(self, *, vectors: bool = True) -> dict[str, int]: ...


def export_header(
    rows: _Counted,
    *,
    vectors: bool,
    exported_at: datetime,
    embedding_model: dict[str, Any],
) -> dict[str, Any]:
    """The first line of an export of `rows` (docs/transfer.md), read inside the
    snapshot its records are read in: what it is, the schema, the counts by table."""
    models = rows.vector_models() if vectors else {}
    return {
        "type": HEADER,
        "format": FORMAT,
        "schema_version": rows.schema_version,
        "memoracle_version": installed_version(),
        "exported_at": exported_at.isoformat(),
        "embedding_model": embedding_model,
        "vectors": vectors,
        "vector_models": {m: {"dim": d, "count": n} for m, (d, n) in sorted(models.items())},
        "counts": rows.counts(vectors=vectors),
    }


@dataclass(frozen=True)
class Column:
    name: str
    field: str  # its name in a record
    affinity: str  # INTEGER REAL TEXT BLOB, or "json" for JSON text
    required: bool  # must be in a record: part of the key, or NOT NULL with no default
    nullable: bool


class _ByParent:
    """A table's rows in parent order, handed out one parent at a time: reading a
    nested table is one pass over it, however many pages its parents take."""

    def __init__(
        self, db: Database, nested: Nested, rows: Iterator[Any], fields: Sequence[str]
    ) -> None:
        self._db = db
        self._nested = nested
        self._rows = rows
        self._fields = fields
        self._next = self._advance()

    def _advance(self) -> Any:
        try:
            return next(self._rows, None)
        except sqlite3.Error as exc:  # rows are read as they are taken, past execute()
            raise self._db.error(exc) from None

    def take(self, parent: int) -> Any:
        found: list[Any] = []
        while self._next is not None and self._next[0] <= parent:
            if self._next[0] == parent:
                found.append(self._next[1:])
            self._next = self._advance()
        if self._nested.shape == "flag":
            return bool(found)
        if self._nested.shape == "values":
            return [row[0] for row in found]
        return [dict(zip(self._fields, row, strict=True)) for row in found]


class Transfer:
    """Reads the store as records (`counts`, `records` inside `snapshot`) and writes
    records into it (`insert` inside `transaction`, then `problems`); says where the
    store is (`path`), its schema version and the models of its vectors."""

    def __init__(self, db: Database, *, schema_version: int) -> None:
        self._db = db
        self.path = db.path
        self.schema_version = schema_version
        self._info: dict[str, list[Column]] = {}
        self._sql: dict[tuple[str, tuple[str, ...]], str] = {}

    def vector_models(self) -> dict[str, tuple[int, int]]:
        """model_id -> (dim, number of vectors)."""
        return Index(self._db).vector_models()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The store's write transaction (`Store.transaction`)."""
        with self._db.transaction():
            yield

    # -- reading -------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: counts and records describe the same moment, while
        other connections keep writing to the WAL. Joins a transaction already open."""
        if self._db.conn.in_transaction:
            yield
            return
        self._db.execute("BEGIN")  # deferred: a read snapshot, no write lock
        try:
            yield
        finally:
            self._db.execute("COMMIT")  # nothing was written: this ends the snapshot

    def counts(self, *, vectors: bool = True) -> dict[str, int]:
        """Rows in each data table (`DATA_TABLES`); vectors as 0 unless `vectors`."""
        return {
            table: 0
            if table == "vectors" and not vectors
            else int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in DATA_TABLES
        }

    def records(self, type_: str, *, page: int | None = None) -> Iterator[dict[str, Any]]:
        """Every row of the section `type_` as a record, in key order, `page` rows read
        at a time (each page starting where the last ended, not at an OFFSET)."""
        section = BY_TYPE[type_]
        columns = self.columns(section.table, section)
        streams = [(n, self._stream(n)) for n in section.nested]
        key = section.key
        positions = [[c.name for c in columns].index(k) for k in key]
        select = f"SELECT {', '.join(c.name for c in columns)} FROM {section.table}"
        page = page or PAGE
        after: tuple[Any, ...] | None = None
        while True:
            where, params = "", ()
            if after is not None:
                where = f"WHERE ({', '.join(key)}) > ({', '.join('?' * len(key))})"
                params = after
            rows = self._db.execute(
                f"{select} {where} ORDER BY {', '.join(key)} LIMIT ?", (*params, page)
            ).fetchall()
            if not rows:
                return
            for row in rows:
                record: dict[str, Any] = {"type": section.type}
                for column, value in zip(columns, row, strict=True):
                    if column.name not in section.derived:
                        record[column.field] = self._out(section, column, value, row[0])
                for nested, stream in streams:
                    record[nested.field] = stream.take(row[0])
                yield record
            after = tuple(rows[-1][i] for i in positions)

    def columns(self, table: str, section: Section | None = None) -> list[Column]:
        """The table's columns as a record names and types them."""
        if table not in self._info:
            renamed = dict(section.renamed) if section else {}
            json_columns = section.json if section else ()
            key = section.key if section else ()
            found = []
            for _, name, declared, notnull, default, pk in self._db.execute(
                f"PRAGMA table_info({table})"
            ):
                affinity = "json" if name in json_columns else str(declared).upper()
                found.append(
                    Column(
                        name=str(name),
                        field=renamed.get(name, name),
                        affinity=affinity,
                        required=name in key or bool(pk) or (bool(notnull) and default is None),
                        nullable=not notnull and name not in key and not pk,
                    )
                )
            self._info[table] = found
        return self._info[table]

    def _stream(self, nested: Nested) -> _ByParent:
        columns = [
            c.name
            for c in self.columns(nested.table)
            if c.name != nested.parent and c.name not in nested.derived
        ]
        if nested.shape == "values":
            columns = [nested.value]
        elif nested.shape == "flag":
            columns = []
        listed = ", ".join([nested.parent, *columns])
        cursor = self._db.execute(
            f"SELECT {listed} FROM {nested.table} ORDER BY {nested.parent}, {nested.order}"
        )
        return _ByParent(self._db, nested, iter(cursor), columns)

    def _out(self, section: Section, column: Column, value: Any, row_id: Any) -> Any:
        if value is None:
            return None
        if column.affinity == "BLOB":
            return base64.b64encode(bytes(value)).decode("ascii")
        if column.affinity == "json":
            try:
                return json.loads(value)
            except (TypeError, ValueError) as exc:
                raise StoreError(
                    f"{self._db.path}: {section.table} row {row_id}: {column.name} is not"
                    f" JSON ({exc}); the export was not written."
                ) from None
        return value

    # -- writing -------------------------------------------------------------------

    def defer_foreign_keys(self) -> None:
        """Check foreign keys when the transaction ends, not row by row: a memory may be
        superseded by a newer one, whose line comes later. `problems` reports them."""
        self._db.execute("PRAGMA defer_foreign_keys = ON")

    def insert(self, record: dict[str, Any]) -> str:
        """Insert one record (and the rows nested in it) as it came; returns its type.
        InvalidInput says what is wrong with it; StoreError what SQLite refused (a
        duplicate id, a CHECK)."""
        type_ = record.get("type")
        section = BY_TYPE.get(type_) if isinstance(type_, str) else None
        if section is None:
            raise InvalidInput(
                f"unknown line type {type_!r} (expected one of: {', '.join(BY_TYPE)})"
            )
        fields = {k: v for k, v in record.items() if k != "type"}
        nested = {n.field: fields.pop(n.field) for n in section.nested if n.field in fields}
        columns = [c for c in self.columns(section.table, section) if c.name not in section.derived]
        values = _values(columns, fields, section.type)
        if section.table == "memories":
            values["search_text"] = memory_search_text(
                values["text"], values.get("subject"), values.get("object")
            )
        elif section.table == "episodes":
            at = values.get("at")
            values["search_text"] = episode_search_text(
                values["text"], values.get("speaker"), from_db_time(at) if at else None
            )
        self._insert(section.table, values)
        parent = values[section.key[0]]
        for n in section.nested:
            if n.field in nested:
                self._insert_nested(n, parent, nested[n.field], f"{section.type} {parent}")
        return section.type

    def _insert(self, table: str, values: dict[str, Any]) -> None:
        names = tuple(values)
        sql = self._sql.get((table, names))
        if sql is None:
            sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
            self._sql[(table, names)] = sql
        self._db.execute(sql, tuple(values.values()))

    def _insert_nested(self, nested: Nested, parent: Any, given: Any, what: str) -> None:
        where = f"{what}: {nested.field}"
        if nested.shape == "flag":
            if not isinstance(given, bool):
                raise InvalidInput(f"{where} must be true or false, not {given!r}")
            if given:
                self._insert(nested.table, {nested.parent: parent})
            return
        if not isinstance(given, list):
            raise InvalidInput(f"{where} must be a list, not {given!r}")
        columns = [
            c
            for c in self.columns(nested.table)
            if c.name != nested.parent and c.name not in nested.derived
        ]
        if nested.shape == "values":
            column = next(c for c in columns if c.name == nested.value)
            for item in given:
                value = _db_value(column, item, where)
                self._insert(nested.table, {nested.parent: parent, column.name: value})
            return
        for item in given:
            if not isinstance(item, dict):
                raise InvalidInput(f"{where} must hold objects, not {item!r}")
            values = {nested.parent: parent, **_values(columns, item, where)}
            if nested.table == "slots":  # live: whether its memory is (kept so by trigger)
                names = tuple(values)
                self._db.execute(
                    f"INSERT INTO slots ({', '.join(names)}, live)"
                    f" SELECT {', '.join('?' * len(names))},"
                    f" status IN ({', '.join('?' * len(LIVE))}) FROM memories WHERE id = ?",
                    (*values.values(), *LIVE, parent),
                )
            else:
                self._insert(nested.table, values)

    def problems(self, expected: dict[str, int]) -> list[str]:
        """What is wrong with the store after an import, checked before it commits: row
        counts against `expected` (by table), foreign keys, both FTS indexes against
        their tables, slots' live flags. An empty list: all well."""
        found: list[str] = []
        for table, count in self.counts().items():
            if count != (said := expected.get(table, 0)):
                found.append(f"{table}: {count} rows read, the header says {said}")
        for table, rowid, parent, _ in self._db.execute("PRAGMA foreign_key_check").fetchmany(5):
            where = f" row {rowid}" if rowid is not None else ""
            found.append(f"{table}{where} refers to a {parent} row that is not in the file")
        for fts in ("memories_fts", "episodes_fts"):
            try:
                self._db.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")
            except StoreError:
                found.append(f"{fts} does not match its table")
        stale = self._db.execute(
            "SELECT count(*) FROM slots s JOIN memories m ON m.id = s.memory_id"
            f" WHERE s.live != (m.status IN ({', '.join('?' * len(LIVE))}))",
            LIVE,
        ).fetchone()[0]
        if stale:
            found.append(f"slots: {stale} rows whose live flag disagrees with their memory")
        return found


def _values(columns: Sequence[Column], fields: dict[str, Any], what: str) -> dict[str, Any]:
    """The row `fields` describe, by column, as SQLite takes it; InvalidInput naming the
    first field that is unknown, missing or of the wrong type."""
    known = {c.field: c for c in columns}
    for name in fields:
        if name not in known:
            raise InvalidInput(f"{what}: unknown field {name!r}")
    values: dict[str, Any] = {}
    for column in columns:
        if column.field not in fields:
            if column.required:
                raise InvalidInput(f"{what}: missing field {column.field!r}")
            continue
        values[column.name] = _db_value(column, fields[column.field], what)
    return values


_TYPES = {
    "INTEGER": ("an integer", (int,)),
    "REAL": ("a number", (int, float)),
    "TEXT": ("a string", (str,)),
    "BLOB": ("base64 text", (str,)),
}


def _db_value(column: Column, value: Any, what: str) -> Any:
    if value is None:
        if column.nullable:
            return None
        raise InvalidInput(f"{what}: field {column.field!r} may not be null")
    if column.affinity == "json":
        return json.dumps(value, ensure_ascii=False)
    expected = _TYPES.get(column.affinity)
    if expected is None:
        return value
    label, types = expected
    if isinstance(value, bool) or not isinstance(value, types):
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise InvalidInput(f"{what}: field {column.field!r} must be {label}, not {shown}")
    if column.affinity == "BLOB":
        try:
            return base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput(f"{what}: field {column.field!r} is not valid base64") from None
    return value


__all__ = ["DATA_TABLES", "NOT_EXPORTED", "SECTIONS", "Section", "Transfer"]
