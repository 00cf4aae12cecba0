"""The PostgreSQL connection (psycopg 3): connect, run statements, transactions, errors.

Every statement goes through `PgDatabase.execute`, so every psycopg error comes out as a
`StoreError` naming the server by its URL with the password masked (`safe_url`): a
wrong URL, a wrong password, a server that cannot be reached, and a database without
the `vector` extension each get a message saying what to do, and no secret is printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from memoracle.config import safe_url
from memoracle.errors import StoreError

CONNECT_TIMEOUT_S = 10
# The advisory lock writers queue on ("memoracle-write" folded into a bigint).
WRITER_LOCK = 0x6D656D6F5F777269
# pgvector, the extension vectors live in: how to get it where it is missing.
VECTOR_HELP = (
    "memoracle's PostgreSQL store needs the pgvector extension ('vector'). Install it on"
    " the server (a package named postgresql-16-pgvector or pgvector, or a managed"
    " PostgreSQL that offers it; https://github.com/pgvector/pgvector#installation), then"
    " run as a superuser in the database: CREATE EXTENSION vector;"
)


def _check_url(url: str) -> None:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise StoreError(f"{safe_url(url)}: not a PostgreSQL URL ({exc}).") from None
    if parts.scheme not in ("postgresql", "postgres"):
        raise StoreError(
            f"{safe_url(url)}: not a PostgreSQL URL; write"
            " postgresql://USER:PASSWORD@HOST:PORT/DATABASE."
        )


def _connect_error(url: str, exc: psycopg.Error, password: str | None) -> StoreError:
    """A one-line reason why the server refused or could not be reached."""
    text = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
    if password:
        text = text.replace(password, "***")
    low = text.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        hint = " Check the user name and password in the storage URL."
    elif "does not exist" in low and "database" in low:
        hint = " Create the database (createdb NAME) or fix its name in the URL."
    elif "connection refused" in low or "timeout" in low or "could not translate" in low:
        hint = " Is the server running, and are the host and port right?"
    else:
        hint = ""
    return StoreError(f"{safe_url(url)}: could not connect ({text}).{hint}")


class PgDatabase:
    """One psycopg connection in autocommit mode; writes inside `transaction()`."""

    def __init__(self, url: str) -> None:
        _check_url(url)
        self.url = safe_url(url)
        self._depth = 0
        password = urlsplit(url).password
        try:
            self.conn = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="memoracle",
            )
        except psycopg.Error as exc:
            raise _connect_error(url, exc, password) from None
        try:
            self.conn.execute("SET TIME ZONE 'UTC'")
        except psycopg.Error as exc:
            self.conn.close()
            raise self.error(exc) from None

    def error(self, exc: psycopg.Error) -> StoreError:
        text = str(exc).strip() or type(exc).__name__
        if isinstance(exc, pg_errors.UndefinedFile | pg_errors.FeatureNotSupported) and (
            "vector" in text
        ):
            return StoreError(f"{self.url}: {text}. {VECTOR_HELP}")
        return StoreError(f"{self.url}: {text}")

    def execute(
        self, query: str | sql.Composable, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> psycopg.Cursor[tuple[Any, ...]]:
        """Run one statement (several, without `params`: a migration's script)."""
        try:
            return self.conn.execute(query, params)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            with self.conn.cursor() as cursor:
                cursor.executemany(query, rows)
        except psycopg.Error as exc:
            raise self.error(exc) from None

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction (or a snapshot) is open on this connection."""
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested calls join the outer one. Rolled back on any
        error. Writers take `WRITER_LOCK` first (a transaction-level advisory lock,
        released at commit or rollback, or when a killed client's session ends), so they
        queue one at a time as on SQLite (BEGIN IMMEDIATE): the engine's check-then-write
        steps (a duplicate looked for, then the memory stored) stay atomic across hosts."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        try:
            with self.conn.transaction():
                self._depth = 1
                try:
                    self.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
                    yield
                finally:
                    self._depth = 0
        except psycopg.Error as exc:  # raised by COMMIT itself (a deferred constraint)
            raise self.error(exc) from None

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see one moment of the database (REPEATABLE READ, read only, no
        writer lock); inside a transaction already open, that transaction's view."""
        if self._depth:
            yield
            return
        try:
            with self.conn.transaction():
                self._depth = 1
                try:
                    self.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    yield
                finally:
                    self._depth = 0
        except psycopg.Error as exc:
            raise self.error(exc) from None

    def close(self) -> None:
        self.conn.close()


def vector_state(db: PgDatabase) -> tuple[str | None, str | None]:
    """(installed version, version the server offers) of the `vector` extension; None
    where it is not installed in this database / not on the server at all."""
    row = db.execute(
        "SELECT installed_version, default_version FROM pg_available_extensions"
        " WHERE name = 'vector'"
    ).fetchone()
    return (None, None) if row is None else (row[0], row[1])


def require_vector(db: PgDatabase) -> None:
    """Make sure the `vector` extension is installed in the database (creating it when
    the server has it and the role may), else a `StoreError` naming it and saying how."""
    installed, offered = vector_state(db)
    if installed is not None:
        return
    if offered is None:
        raise StoreError(
            f"{db.url}: the server has no 'vector' extension (pgvector). {VECTOR_HELP}"
        )
    try:
        db.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege:
        raise StoreError(
            f"{db.url}: the 'vector' extension (pgvector) is on the server but not installed"
            " in this database, and this role may not install it. Ask an administrator to"
            " run in the database: CREATE EXTENSION vector;"
        ) from None
    except psycopg.Error as exc:
        raise db.error(exc) from None
