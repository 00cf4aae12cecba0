"""The PostgreSQL store as export records and back (`TransferRows`): the same records,
field for field, as the SQLite store's (`store.transfer`), so a store exported from
one backend imports into the other and back with nothing lost (`memoracle migrate`).

The sections, their nesting and their order are SQLite's (`SECTIONS`); only the
SQL and the column types differ:

- a time (`timestamptz`) is written as SQLite keeps it (`db.db_time`: UTC ISO-8601 with
  microseconds) and read back from that text;
- a flag (`boolean`) is written as 0 or 1, as SQLite's INTEGER column holds it;
- a `jsonb` column is written as the JSON value it holds (key order aside, the same
  value SQLite's JSON text gives), `held.reasons` (JSON as text, as on SQLite) likewise;
- a vector (pgvector) is written as SQLite's BLOB: float32 little-endian, in base64.

Columns PostgreSQL adds are not records' fields: the generated `tsv`, provenance's
`id` and an alias's `seq` (both identities that keep insertion order, SQLite's rowid).
Ids are kept as they were (m_42 is cited in files and the audit log); when an import's
transaction ends, each identity is set past the largest id, so the next row gets a new
one. Derived state is rebuilt as the SQLite store rebuilds it: `search_text` (here
PostgreSQL's: `lexical.search_words`, unstemmed; `tsv` follows it), each slot's `live`
flag from its memory's status, and an HNSW index for each model and dimension whose
vectors come in. The audit log is append-only here too (no UPDATE, DELETE or TRUNCATE):
an import only inserts into it.

Text columns are ordered byte-wise (`COLLATE "C"`), as SQLite's BINARY collation
orders them, so both stores write their records in one order.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pgvector import Vector
from psycopg.types.json import Jsonb

from memoracle.errors import InvalidInput, StoreError
from memoracle.store.db import db_time
from memoracle.store.postgres.connection import PgDatabase, vector_state
from memoracle.store.postgres.episodes import search_text as episode_search_text
from memoracle.store.postgres.index import PgIndex
from memoracle.store.postgres.memories import search_text as memory_search_text
from memoracle.store.transfer import (
    BY_TYPE,
    DATA_TABLES,
    PAGE,
    Column,
    Nested,
    Section,
    _db_value,
    _values,
)
from memoracle.types import LIVE

# The SQLite schema whose records this store reads and writes: its tables mirror the
# SQLite store at schema 14 (`schema`), and an export's header carries this number.
RECORD_SCHEMA = 14
# Tables that are this store's own (not rows of the memory): the migrations applied,
# the HNSW index of each model, the roles the policies map to agents.
NOT_EXPORTED = ("schema_version", "vector_indexes", "agent_roles")
# Columns PostgreSQL adds that no record has: generated from others, or identities
# standing for SQLite's rowid.
PG_ONLY = {
    ("episodes", "tsv"),
    ("memories", "tsv"),
    ("provenance", "id"),
    ("entity_aliases", "seq"),
    ("slots", "seq"),
}
# A nested table's order within one parent, in this schema (SQLite's rowid is an
# identity here; text byte-wise).
NESTED_ORDER = {
    "provenance": "id",
    "entity_aliases": "seq",
    "slots": 'subject COLLATE "C", attribute COLLATE "C"',
}
# Rows sent to the server at a time (one round trip, in a pipeline).
BATCH = 1000
# The identity of each table whose ids a record gives.
IDENTITIES = ("episodes", "entities", "relations", "memories", "audit", "runs", "held")
# How a PostgreSQL type is checked in a record: as the SQLite type it stands for.
AFFINITY = {
    "bigint": "INTEGER",
    "integer": "INTEGER",
    "smallint": "INTEGER",
    "boolean": "INTEGER",
    "double precision": "REAL",
    "real": "REAL",
    "text": "TEXT",
    "timestamp with time zone": "TEXT",
    "jsonb": "json",
}


@dataclass(frozen=True)
class PgColumn:
    column: Column  # as a record names and checks it (SQLite's affinity)
    pg_type: str  # boolean, timestamp with time zone, jsonb, vector, ...


class PgTransfer:
    """Reads the store as records (`counts`, `records` inside `snapshot`) and writes
    records into it (`insert` inside `transaction`, then `problems`)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
        self.path = Path(db.url)  # the URL, its password masked
        self.url = db.url
        self.schema_version = RECORD_SCHEMA
        self._info: dict[str, list[PgColumn]] = {}
        self._index = PgIndex(db)
        self._written = False
        self._hnsw: set[tuple[str, int]] = set()  # (model, dim) of the vectors written
        self._pending: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}
        self._pending_rows = 0
        self._cursors = 0

    def vector_models(self) -> dict[str, tuple[int, int]]:
        """model_id -> (dim, number of vectors)."""
        return self._index.vector_models()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; when it ends well, each identity is set past the
        largest id written through it (ids came from the records, not the identity)."""
        try:
            with self._db.transaction():
                yield
                self._flush()
                if self._written:
                    for model_id, dim in sorted(self._hnsw):  # built once, over the rows
                        self._index._ensure_hnsw(model_id, dim)
                    self._reset_identities()
        finally:  # rolled back or committed: nothing of it is pending any more
            self._pending, self._pending_rows = {}, 0
            self._written = False
            self._hnsw.clear()

    def _reset_identities(self) -> None:
        for table in IDENTITIES:
            self._db.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" coalesce(max(id), 0) + 1, false) FROM {table}"
            )

    # -- reading -------------------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see one moment (REPEATABLE READ); joins a transaction open."""
        with self._db.snapshot():
            yield

    def counts(self, *, vectors: bool = True) -> dict[str, int]:
        """Rows in each data table (`DATA_TABLES`); vectors as 0 unless `vectors`."""
        self._flush()
        return {
            table: 0 if table == "vectors" and not vectors else self._count(table)
            for table in DATA_TABLES
        }

    def _count(self, table: str) -> int:
        row = self._db.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    def records(self, type_: str, *, page: int | None = None) -> Iterator[dict[str, Any]]:
        """Every row of the section `type_` as a record, in key order (text byte-wise),
        `page` rows read at a time. Inside `snapshot` (or a transaction)."""
        self._flush()
        section = BY_TYPE[type_]
        columns = self._columns(section.table, section)
        streams = [(n, self._stream(n)) for n in section.nested]
        names = [c.column.name for c in columns]
        positions = [names.index(k) for k in section.key]
        key = [self._ordered(section.table, k) for k in section.key]
        select = f"SELECT {', '.join(names)} FROM {section.table}"
        after: tuple[Any, ...] | None = None
        try:
            while True:
                where, params = "", ()
                if after is not None:
                    where = f"WHERE ({', '.join(key)}) > ({', '.join(['%s'] * len(key))})"
                    params = after
                rows = self._db.execute(
                    f"{select} {where} ORDER BY {', '.join(key)} LIMIT %s", (*params, page or PAGE)
                ).fetchall()
                if not rows:
                    return
                for row in rows:
                    record: dict[str, Any] = {"type": section.type}
                    for column, value in zip(columns, row, strict=True):
                        if column.column.name not in section.derived:
                            record[column.column.field] = _out(section, column, value)
                    for nested, stream in streams:
                        record[nested.field] = stream.take(row[0])
                    yield record
                after = tuple(rows[-1][i] for i in positions)
        finally:  # a nested table with no row, or rows past the last parent: still open
            for _, stream in streams:
                stream.close()

    def _ordered(self, table: str, name: str) -> str:
        """A key column as ORDER BY and a comparison take it: text byte-wise."""
        pg_type = next(c.pg_type for c in self._columns(table) if c.column.name == name)
        return f'{name} COLLATE "C"' if pg_type == "text" else name

    def columns(self, table: str, section: Section | None = None) -> list[Column]:
        """The table's columns as a record names and types them (as SQLite's)."""
        return [c.column for c in self._columns(table, section)]

    def _columns(self, table: str, section: Section | None = None) -> list[PgColumn]:
        if table not in self._info:
            renamed = dict(section.renamed) if section else {}
            json_columns = section.json if section else ()
            key = section.key if section else ()
            found = []
            for name, data_type, udt, nullable, default, identity in self._db.execute(
                "SELECT column_name, data_type, udt_name, is_nullable = 'YES',"
                " column_default, is_identity = 'YES' FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = %s"
                " ORDER BY ordinal_position",
                (table,),
            ):
                if (table, name) in PG_ONLY:
                    continue
                pg_type = "vector" if udt == "vector" else str(data_type)
                affinity = "BLOB" if pg_type == "vector" else AFFINITY.get(pg_type, "TEXT")
                affinity = "json" if name in json_columns else affinity
                required = name in key or identity or (not nullable and default is None)
                column = Column(
                    name=str(name),
                    field=renamed.get(name, name),
                    affinity=affinity,
                    required=bool(required),
                    nullable=bool(nullable) and name not in key and not identity,
                )
                found.append(PgColumn(column, pg_type))
            if not found:
                raise StoreError(f"{self.url}: no table {table}; is this a memoracle database?")
            self._info[table] = found
        return self._info[table]

    def _nested_columns(self, nested: Nested) -> list[PgColumn]:
        return [
            c
            for c in self._columns(nested.table)
            if c.column.name != nested.parent and c.column.name not in nested.derived
        ]

    def _stream(self, nested: Nested) -> _ByParent:
        columns = self._nested_columns(nested)
        if nested.shape == "values":
            columns = [c for c in columns if c.column.name == nested.value]
        elif nested.shape == "flag":
            columns = []
        listed = ", ".join([nested.parent, *(c.column.name for c in columns)])
        order = NESTED_ORDER.get(nested.table, nested.order)
        self._cursors += 1  # a server-side cursor: the table is read as it is taken
        cursor = self._db.conn.cursor(name=f"memoracle_transfer_{self._cursors}")
        cursor.itersize = PAGE
        try:
            cursor.execute(f"SELECT {listed} FROM {nested.table} ORDER BY {nested.parent}, {order}")
        except Exception as exc:  # psycopg.Error, or used outside a transaction
            raise StoreError(f"{self.url}: reading {nested.table}: {exc}") from None
        return _ByParent(nested, cursor, columns)

    # -- writing -------------------------------------------------------------------

    def defer_foreign_keys(self) -> None:
        """Check the deferrable references (a memory superseded by a newer one) when
        the transaction ends; `problems` checks them before that."""
        self._db.execute("SET CONSTRAINTS ALL DEFERRED")

    def insert(self, record: dict[str, Any]) -> str:
        """Insert one record (and the rows nested in it) as it came; returns its type.
        InvalidInput says what is wrong with it; StoreError what PostgreSQL refused."""
        type_ = record.get("type")
        section = BY_TYPE.get(type_) if isinstance(type_, str) else None
        if section is None:
            raise InvalidInput(
                f"unknown line type {type_!r} (expected one of: {', '.join(BY_TYPE)})"
            )
        fields = {k: v for k, v in record.items() if k != "type"}
        nested = {n.field: fields.pop(n.field) for n in section.nested if n.field in fields}
        columns = [
            c for c in self._columns(section.table, section) if c.column.name not in section.derived
        ]
        values = self._row(columns, fields, section.type)
        if section.table == "memories":
            values["search_text"] = memory_search_text(
                values["text"], values.get("subject"), values.get("object")
            )
        elif section.table == "episodes":
            values["search_text"] = episode_search_text(
                values["text"], values.get("speaker"), values.get("at")
            )
        elif section.table == "vectors":
            self._hnsw.add((str(values["model_id"]), int(values["dim"])))
        self._insert(section.table, values)
        self._written = True
        parent = values[section.key[0]]
        for n in section.nested:
            if n.field in nested:
                self._insert_nested(n, parent, nested[n.field], f"{section.type} {parent}")
        if self._pending_rows >= BATCH:
            self._flush()
        return section.type

    def _row(
        self, columns: Sequence[PgColumn], fields: dict[str, Any], what: str
    ) -> dict[str, Any]:
        """The row as PostgreSQL takes it: checked as SQLite checks it, then each value
        in its PostgreSQL type."""
        values = _values([c.column for c in columns], fields, what)
        types = {c.column.name: c.pg_type for c in columns}
        return {name: _pg_value(types[name], name, v, what) for name, v in values.items()}

    def _insert(self, table: str, values: dict[str, Any]) -> None:
        names = ", ".join(values)
        marks = ", ".join(["%s"] * len(values))
        self._queue(
            table, f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(values.values())
        )

    def _queue(self, table: str, statement: str, params: tuple[Any, ...]) -> None:
        """Rows are sent a batch at a time (`_flush`), not one round trip each."""
        self._pending.setdefault(table, []).append((statement, params))
        self._pending_rows += 1

    def _flush(self) -> None:
        """Send the rows queued, table by table in the order references need (a row's
        parent's table first), each table's in the order they came, in a savepoint. A
        batch refused is sent again a row at a time, to name the row."""
        if not self._pending_rows:
            return
        pending, self._pending, self._pending_rows = self._pending, {}, 0
        for table in DATA_TABLES:
            statements = pending.get(table, [])
            try:
                with self._db.conn.transaction():  # a savepoint
                    for statement, rows in _runs(statements):
                        self._db.executemany(statement, rows)
            except StoreError:
                for statement, params in statements:
                    try:
                        with self._db.conn.transaction():
                            self._db.execute(statement, params)
                    except StoreError as exc:
                        raise StoreError(
                            f"{self.url}: {table} row {params[0]}: {_reason(exc)}"
                        ) from None
                raise

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
        columns = self._nested_columns(nested)
        if nested.shape == "values":
            column = next(c for c in columns if c.column.name == nested.value)
            for item in given:
                value = _pg_value(
                    column.pg_type, nested.value, _db_value(column.column, item, where), where
                )
                self._insert(nested.table, {nested.parent: parent, column.column.name: value})
            return
        for item in given:
            if not isinstance(item, dict):
                raise InvalidInput(f"{where} must hold objects, not {item!r}")
            values = {nested.parent: parent, **self._row(columns, item, where)}
            if nested.table == "slots":  # live: whether its memory is (kept so by trigger)
                names = tuple(values)
                self._queue(
                    "slots",
                    f"INSERT INTO slots ({', '.join(names)}, live)"
                    f" SELECT {', '.join(['%s'] * len(names))}, status = ANY(%s)"
                    " FROM memories WHERE id = %s",
                    (*values.values(), list(LIVE), parent),
                )
            else:
                self._insert(nested.table, values)

    def problems(self, expected: dict[str, int]) -> list[str]:
        """What is wrong with the store after an import, checked before it commits: row
        counts against `expected` (by table), slots' live flags, then every reference
        (the deferred ones checked now, in a savepoint). An empty list: all well."""
        self._flush()
        found: list[str] = []
        for table, count in self.counts().items():
            if count != (said := expected.get(table, 0)):
                found.append(f"{table}: {count} rows read, the header says {said}")
        stale = self._db.execute(
            "SELECT count(*) FROM slots s JOIN memories m ON m.id = s.memory_id"
            " WHERE s.live != (m.status = ANY(%s))",
            (list(LIVE),),
        ).fetchone()
        if stale and stale[0]:
            found.append(f"slots: {stale[0]} rows whose live flag disagrees with their memory")
        try:
            with self._db.conn.transaction():  # a savepoint: a failed check is undone
                self._db.execute("SET CONSTRAINTS ALL IMMEDIATE")
        except StoreError as exc:
            found.append(f"a row refers to one that is not in the file ({_reason(exc)})")
        return found


def _runs(
    statements: list[tuple[str, tuple[Any, ...]]],
) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """Consecutive statements with the same SQL, as (SQL, their parameters)."""
    run: list[tuple[Any, ...]] = []
    current = ""
    for statement, params in statements:
        if statement != current and run:
            yield current, run
            run = []
        current = statement
        run.append(params)
    if run:
        yield current, run


class _ByParent:
    """A nested table's rows in parent order, from a server-side cursor, handed out one
    parent at a time."""

    def __init__(self, nested: Nested, cursor: Any, columns: Sequence[PgColumn]) -> None:
        self._nested = nested
        self._cursor = cursor
        self._columns = columns
        self._rows = iter(cursor)  # fetched `itersize` rows at a time
        self._next = next(self._rows, None)

    def close(self) -> None:
        if not self._cursor.closed:
            self._cursor.close()

    def take(self, parent: int) -> Any:
        found: list[Any] = []
        while self._next is not None and self._next[0] <= parent:
            if self._next[0] == parent:
                found.append(self._next[1:])
            self._next = next(self._rows, None)
        if self._next is None:
            self._cursor.close()
        if self._nested.shape == "flag":
            return bool(found)
        if self._nested.shape == "values":
            return [_plain(self._columns[0], row[0]) for row in found]
        return [
            {c.column.field: _plain(c, v) for c, v in zip(self._columns, row, strict=True)}
            for row in found
        ]


def _plain(column: PgColumn, value: Any) -> Any:
    """A value as the SQLite store holds it: a time as its text, a flag as 0 or 1."""
    if value is None:
        return None
    if column.pg_type == "timestamp with time zone":
        return db_time(value)
    if column.pg_type == "boolean":
        return int(value)
    return value


def _out(section: Section, column: PgColumn, value: Any) -> Any:
    """A value as the record holds it (as the SQLite store writes it)."""
    if value is None:
        return None
    if column.pg_type == "vector":
        return base64.b64encode(np.asarray(value.to_numpy(), dtype="<f4").tobytes()).decode()
    if column.column.affinity == "json" and column.pg_type != "jsonb":
        try:
            return json.loads(value)
        except (TypeError, ValueError) as exc:
            raise StoreError(
                f"{section.table}: {column.column.name} is not JSON ({exc}); the export"
                " was not written."
            ) from None
    return _plain(column, value)


def _pg_value(pg_type: str, name: str, value: Any, what: str) -> Any:
    """A checked record value (as SQLite takes it) in its PostgreSQL type."""
    if value is None:
        return None
    if pg_type == "boolean":
        return bool(value)
    if pg_type == "jsonb":
        return Jsonb(json.loads(value))
    if pg_type == "vector":
        return Vector(np.frombuffer(value, dtype="<f4"))
    if pg_type == "timestamp with time zone":
        try:
            return datetime.fromisoformat(value)
        except (TypeError, ValueError):
            raise InvalidInput(
                f"{what}: field {name!r} must be an ISO-8601 time, not {value!r}"
            ) from None
    return value


@dataclass(frozen=True)
class Probe:
    """What a database holds, read without writing to it (`memoracle migrate --dry-run`)."""

    url: str  # the password masked
    schema_version: int | None  # None: memoracle's tables are not there yet
    counts: dict[str, int]  # rows by data table; {} when the tables are not there
    vector: str | None  # the pgvector version installed, or offered by the server


def probe(url: str) -> Probe:
    """Connect to `url` and read what is there, changing nothing (no migration, no
    extension created). StoreError as `PgStore.open` gives it: a wrong URL or password
    (never shown), a server that cannot be reached, a missing database."""
    db = PgDatabase(url)
    try:
        installed, offered = vector_state(db)
        row = db.execute("SELECT to_regclass('schema_version') IS NOT NULL").fetchone()
        version = None
        if row and row[0]:
            found = db.execute("SELECT max(version) FROM schema_version").fetchone()
            version = int(found[0]) if found and found[0] is not None else None
        counts = PgTransfer(db).counts() if version is not None else {}
        return Probe(db.url, version, counts, installed or offered)
    finally:
        db.close()


def _reason(exc: StoreError) -> str:
    text = str(exc)
    return text.split(": ", 1)[1].rstrip(".") if ": " in text else text


if TYPE_CHECKING:  # mypy proves it is what export and import need
    from memoracle.store.protocols import TransferRows

    def _satisfies(rows: PgTransfer) -> TransferRows:
        return rows


__all__ = ["NOT_EXPORTED", "RECORD_SCHEMA", "PgTransfer", "Probe", "probe"]
