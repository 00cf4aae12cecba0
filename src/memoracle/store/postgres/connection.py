"""The PostgreSQL connection (psycopg 3): connect, run statements, transactions, errors.

Every statement goes through `PgDatabase.execute`, so every psycopg error comes out as a
`StoreError` naming the server by its URL with the password masked (`safe_url`): a
wrong URL, a wrong password, a server that cannot be reached, and a database without
the `vector` extension each get a message saying what to do, and no secret is printed.
A connection the server dropped is replaced at the next call (`PgDatabase`); writers
queue on advisory locks, per owner where they can (`locks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg import errors as pg_errors
from psycopg import sql

from memoracle.config import safe_url
from memoracle.errors import StoreError
from memoracle.store.postgres.locks import SHARED_ROWS_SQL, begin_sql, owner_keys
from memoracle.types import Scope

CONNECT_TIMEOUT_S = 10
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
    # libpq's reason, without its own hint line (ours below says what to check)
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    reasons = [line for line in lines if not line.startswith("Is the server running")]
    text = reasons[-1] if reasons else type(exc).__name__
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
    """One psycopg connection in autocommit mode; writes inside `transaction()`.

    A connection the server dropped (restarted, the session ended) is replaced by a new
    one at the next call: before a transaction begins, and before a statement outside
    one. What was in flight when it dropped is retried once on the new connection only
    when nothing of it can have been written: the opening of a transaction (BEGIN and
    its locks) and a read (a SELECT outside a transaction; every write of the store runs
    inside `transaction()`). A write cut in the middle fails with a `StoreError` saying
    the server kept none of it; cut at its COMMIT, saying it was kept whole or not at all.
    `session` counts the connections made: a lock held for a session (not a
    transaction) is gone once it changed."""

    def __init__(self, url: str) -> None:
        _check_url(url)
        self.url = safe_url(url)
        self._dsn = url  # with the password: for connecting again, never shown
        self._depth = 0
        self._owners: tuple[int, ...] | None = None  # the open transaction's owner keys
        self._shared_rows = False  # whether it holds SHARED_ROWS_LOCK
        self._reading = False  # the open transaction is a `snapshot` (reads only)
        self._vectors = False  # pgvector's adapters registered (`adapt_vectors`)
        self._pinned: list[str] = []  # session locks held (`pinned`)
        self.session = 0
        self.conn = self._connect()

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        password = urlsplit(self._dsn).password
        try:
            conn = psycopg.connect(
                self._dsn,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="memoracle",
            )
        except psycopg.Error as exc:
            raise _connect_error(self._dsn, exc, password) from None
        try:
            conn.execute("SET TIME ZONE 'UTC'")
            if self._vectors:
                register_vector(conn)
        except psycopg.Error as exc:
            conn.close()
            raise self.error(exc) from None
        self.session += 1
        return conn

    def adapt_vectors(self) -> None:
        """Register pgvector's adapters on this connection, and on every later one."""
        try:
            register_vector(self.conn)
        except psycopg.Error as exc:
            raise self.error(exc) from None
        self._vectors = True

    @property
    def lost(self) -> bool:
        """Whether the connection is gone (closed by us, or dropped by the server)."""
        return self.conn.closed or self.conn.broken

    def _ready(self) -> None:
        """Connect again if the connection is gone (between calls, never inside a
        transaction), unless a session lock was held on it (`pinned`)."""
        if self.lost:
            if self._pinned:
                raise StoreError(
                    f"{self.url}: the connection holding {self._pinned[-1]} was lost, and"
                    " the lock with it; stopped here so that no one else's run overlaps."
                )
            self.conn.close()
            self.conn = self._connect()

    @contextmanager
    def pinned(self, what: str) -> Iterator[None]:
        """For a block holding a session-level lock (`what`, e.g. "the nightly's lock"),
        which goes with the session: a lost connection is not replaced inside it, so
        the block fails instead of going on without its lock."""
        self._pinned.append(what)
        try:
            yield
        finally:
            self._pinned.pop()

    def error(self, exc: psycopg.Error) -> StoreError:
        text = str(exc).strip() or type(exc).__name__
        if isinstance(exc, pg_errors.UndefinedFile | pg_errors.FeatureNotSupported) and (
            "vector" in text
        ):
            return StoreError(f"{self.url}: {text}. {VECTOR_HELP}")
        return StoreError(f"{self.url}: {text}")

    def _lost_error(self, exc: psycopg.Error, *, committing: bool = False) -> StoreError:
        text = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        if committing:
            what = (
                "while committing a write: the server kept all of it or none of it (look"
                " before repeating it)"
            )
        elif self._reading:
            what = "in the middle of a read, which wrote nothing"
        else:
            what = "in the middle of a write: the server kept none of it"
        return StoreError(
            f"{self.url}: the connection to the server was lost {what} ({text})."
            " The next call connects again."
        )

    def execute(
        self, query: str | sql.Composable, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> psycopg.Cursor[tuple[Any, ...]]:
        """Run one statement (several, without `params`: a migration's script). Outside
        a transaction, a read the dropped connection cut is run again on a new one."""
        if self._depth:
            return self._run(query, params)
        self._ready()
        try:
            return self.conn.execute(query, params)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            if not (self.lost and _is_read(query)):
                raise self._failed(exc) from None
        self._ready()
        return self._run(query, params)

    def _run(
        self, query: str | sql.Composable, params: Sequence[Any] | dict[str, Any] | None
    ) -> psycopg.Cursor[tuple[Any, ...]]:
        try:
            return self.conn.execute(query, params)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise self._failed(exc) from None

    def _failed(self, exc: psycopg.Error) -> StoreError:
        if self.lost and self._depth:
            return self._lost_error(exc)
        return self.error(exc)

    def executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> None:
        if not self._depth:
            self._ready()
        try:
            with self.conn.cursor() as cursor:
                cursor.executemany(query, rows)
        except psycopg.Error as exc:
            raise self._failed(exc) from None

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction (or a snapshot) is open on this connection."""
        return self._depth > 0

    @contextmanager
    def transaction(self, scopes: Iterable[Scope] | None = None) -> Iterator[None]:
        """One write transaction, rolled back on any error; nested calls join the outer
        one. Its locks (`locks`): without `scopes`, the whole store's, exclusive — it
        runs alone; with `scopes`, only their owners' — it runs beside writes of other
        owners, and must then read and write only those owners' items (and the rows
        every owner shares, after `shared_rows()`)."""
        keys = None if scopes is None else owner_keys(scopes)
        if self._depth:
            self._join(keys)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._begin(begin_sql(keys))
        self._depth, self._owners, self._shared_rows = 1, keys, False
        try:
            yield
        except BaseException:
            self._end("ROLLBACK")
            raise
        self._end("COMMIT")

    def _join(self, keys: tuple[int, ...] | None) -> None:
        """A nested transaction runs under the outer one's locks: it may not need more."""
        if self._owners is None or (keys is not None and set(keys) <= set(self._owners)):
            return
        raise StoreError(
            f"{self.url}: a write needing "
            + ("the whole store" if keys is None else "other owners' items")
            + " was started inside a write confined to some owners; start it on its own."
        )

    def shared_rows(self) -> None:
        """Before writing rows every owner shares (the graph's entities and relations):
        an owners' write takes `SHARED_ROWS_LOCK` once, to its end; a whole-store write
        holds enough already. Nothing outside a transaction."""
        if self._depth and self._owners is not None and not self._shared_rows:
            self._run(SHARED_ROWS_SQL, None)
            self._shared_rows = True

    def _begin(self, statements: str) -> None:
        """BEGIN and the locks, in one round trip; on a connection that turns out to be
        gone, once more on a new one (nothing was written yet)."""
        for attempt in (1, 2):
            self._ready()
            try:
                self.conn.execute(statements)
                return
            except psycopg.Error as exc:
                if self.lost and attempt == 1:
                    continue
                self._end("ROLLBACK")
                raise self.error(exc) from None

    def _end(self, statement: str) -> None:
        """COMMIT or ROLLBACK the open transaction (a ROLLBACK on a connection that is
        gone is done already: the server drops what a lost session had not committed)."""
        try:
            if self.lost:
                if statement == "COMMIT":
                    raise self._lost_error(psycopg.OperationalError("connection lost"))
                return
            if self._reading:
                statement = "ROLLBACK"  # a snapshot ends the same either way
            try:
                self.conn.execute(statement)
            except psycopg.Error as exc:
                if statement == "ROLLBACK":
                    return  # the error that made us roll back is the one to report
                if self.lost:
                    raise self._lost_error(exc, committing=True) from None
                raise self.error(exc) from None  # a deferred constraint, checked at COMMIT
        finally:
            self._depth, self._owners, self._shared_rows, self._reading = 0, None, False, False

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that see one moment of the database (REPEATABLE READ, read only, no
        writer lock); inside a transaction already open, that transaction's view."""
        if self._depth:
            yield
            return
        self._begin(begin_sql(None, read_only=True))
        self._depth, self._owners, self._reading = 1, None, True
        try:
            yield
        finally:
            self._end("ROLLBACK")

    def close(self) -> None:
        self.conn.close()


def _is_read(query: str | sql.Composable) -> bool:
    """A statement that writes nothing: a SELECT (outside a transaction every statement
    of the store that writes runs inside `transaction()`)."""
    return isinstance(query, str) and query.lstrip()[:6].upper() == "SELECT"


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
