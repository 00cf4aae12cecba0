"""Which store an engine opens: the SQLite file HOME/memoracle.db, or the PostgreSQL
database `storage.url` names (docs/fleet.md).

For the file, the guard comes first (`guard.check_before_open`: a missing, empty or
damaged store where the workspace shows earlier life is refused, never re-created
empty). A server is not a file that can go missing under a workspace: its database is
migrated when new and opened as it is otherwise, and its damage is the server's to
report (`health`, `doctor`). The driver is imported only when a URL is set, so a
SQLite workspace never needs it.
"""

from __future__ import annotations

from collections.abc import Callable

from memoracle.clock import Clock
from memoracle.config import Settings, safe_url
from memoracle.engine import guard
from memoracle.errors import StoreDamaged, StoreError, WorkspaceError
from memoracle.store import Store, require_fts5
from memoracle.store.protocols import StoreBackend

__all__ = ["is_server", "location", "open_store", "opener", "prepare", "start_store", "url"]


def url(settings: Settings) -> str:
    """The server's URL (`storage.url`), or "" for the SQLite file. The one place the
    choice is read: the tests run the behaviour suite on PostgreSQL by replacing it."""
    return settings.storage.url


def is_server(settings: Settings) -> bool:
    """Whether the store is a PostgreSQL server's database (`storage.url` set)."""
    return bool(url(settings))


def location(settings: Settings) -> str:
    """Where the store is, for messages: the file, or the URL with the password masked."""
    return safe_url(url(settings)) if is_server(settings) else str(settings.db_path)


def prepare(settings: Settings) -> None:
    """What `init` checks before it creates anything: SQLite's FTS5 for the file (the
    server brings its own full-text search)."""
    if not is_server(settings):
        require_fts5()


def _server(settings: Settings, clock: Clock) -> StoreBackend:
    try:
        from memoracle.store.postgres import PgStore
    except ImportError as exc:
        raise StoreError(
            f"storage.url is {location(settings)}, and the PostgreSQL driver is"
            f" not installed ({exc}): pip install 'memoracle[postgres]'."
        ) from None
    return PgStore.open(url(settings), now=clock.now(), folder=settings.home)


def open_store(settings: Settings, clock: Clock) -> StoreBackend:
    """The store of an initialised workspace: the server's database, or the file opened
    after `guard.check_before_open`; a file whose schema lacks what its version has is
    `StoreDamaged` naming the recovery."""
    if is_server(settings):
        if not settings.config_path.exists():  # HOME holds the files kept beside it
            raise WorkspaceError(
                f"No memoracle workspace at {settings.home} (no {settings.config_path.name})."
                f" Run: memoracle init --home {settings.home}"
            )
        return _server(settings, clock)
    life = guard.check_before_open(settings)
    try:
        return Store.open(settings.db_path, now=clock.now(), existing=life)
    except StoreDamaged as exc:
        life_seen = guard.earlier_life(settings)
        raise guard.refuse(settings, str(exc).rstrip("."), life_seen) from None


def start_store(settings: Settings, clock: Clock, *, force: bool) -> tuple[bool, StoreBackend]:
    """`init`'s store: (whether it existed, the store opened and migrated). On a server
    the database is migrated whether new or not (it must exist: `createdb` makes it);
    a damaged file is refused, or with `force` moved into HOME/damaged/ and replaced by
    a new, empty one."""
    if is_server(settings):
        store = _server(settings, clock)
        return store.memories.max_id() > 0 or store.episodes.count() > 0, store
    try:
        return True, open_store(settings, clock)
    except WorkspaceError:  # a new workspace: no store yet
        return False, Store.open(settings.db_path, now=clock.now())
    except StoreDamaged as exc:
        if not force:
            raise StoreDamaged(
                f"{exc} Or, to start an empty store instead: memoracle --home"
                f" {settings.home} init --force (the damaged file is kept in"
                f" {settings.home / guard.DAMAGED_DIR})."
            ) from None
    guard.set_aside(settings, clock.now())
    return False, Store.open(settings.db_path, now=clock.now())


def opener(settings: Settings, clock: Clock) -> Callable[[], StoreBackend]:
    """How a background worker opens its own connection to the same store (vector
    landing): the file as it is (it exists), or the server's database."""

    def open_again() -> StoreBackend:
        if is_server(settings):
            return _server(settings, clock)
        return Store.open(settings.db_path, now=clock.now(), existing=True)

    return open_again
