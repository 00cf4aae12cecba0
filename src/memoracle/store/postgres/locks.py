"""The advisory locks PostgreSQL writers queue on (docs/fleet.md#many-writers).

Three kinds of key, every one a transaction-level advisory lock, released at commit or
rollback, or when a dead client's session ends:

- `WRITER_LOCK`, the whole store's. A write that may touch anything (the nightly's
  steps, an import, a correction by hand) takes it **exclusive**: it runs alone, as
  every write did on SQLite. A write confined to some owners takes it **shared**, so it
  runs beside others of its kind and never beside a whole-store write.
- One key per owner, the (agent, user, chat) every check-then-write step of capture
  compares within (a turn already stored, a duplicate, a near duplicate, the slots it
  settles, the tasks it finishes, what a "forget …" names: `find_duplicate`,
  `in_slot`, `near`, `settle`, `relate` each look at one owner's items), taken
  **exclusive** after the shared whole-store lock, in sorted order: writers of one
  owner queue, writers of different owners run at once.
- `SHARED_ROWS_LOCK`, for the rows every owner shares (the graph's entities and
  relations, keyed by name; the vectors, keyed by content hash): an owner's write takes
  it exclusive before its first such row and keeps it to the end, so two owners' writes
  never insert the same keys in opposite orders (a deadlock). A whole-store write needs
  no more than it holds.

Locks are always taken in this order (whole store, owners sorted, shared rows), so
writers never wait on each other in a circle.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from memoracle.types import Scope

# The whole store's key ("memo_wri" folded into a bigint); the same key as before owners
# had their own, so an older host's writes (exclusive) still exclude everyone.
WRITER_LOCK = 0x6D656D6F5F777269
# The rows every owner shares ("memo_shr").
SHARED_ROWS_LOCK = 0x6D656D6F5F736872
# The owners' keys live in the two-int key space (namespace, hash of the owner), which
# never meets the one-bigint space of the two above.
OWNER_NAMESPACE = 0x6D656D6F  # "memo"

Owner = tuple[str | None, str | None, str | None]


def owner_of(scope: Scope) -> Owner:
    """The owner a scope's items belong to: its (agent, user, chat). Visibility is left
    out: a shared and a private item of one owner are compared with each other."""
    return (scope.agent, scope.user, scope.chat)


def owner_key(owner: Owner) -> int:
    """The owner's lock key, a signed 32-bit hash (two owners sharing one only queue
    together, which is safe)."""
    digest = hashlib.blake2b(repr(owner).encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


def owner_keys(scopes: Iterable[Scope]) -> tuple[int, ...]:
    """The keys of the owners of `scopes`, each once, sorted (the order they are taken)."""
    return tuple(sorted({owner_key(owner_of(s)) for s in scopes}))


def begin_sql(keys: tuple[int, ...] | None, *, read_only: bool = False) -> str:
    """The statements that open a transaction and take its locks, sent as one round
    trip: `keys` None is a whole-store write (the whole-store lock exclusive); a tuple,
    an owners' write (shared, then each owner's key); `read_only`, a snapshot (no lock).
    Only integers go into the text."""
    if read_only:
        return "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    if keys is None:
        return f"BEGIN; SELECT pg_advisory_xact_lock({WRITER_LOCK})"
    owners = "".join(f"; SELECT pg_advisory_xact_lock({OWNER_NAMESPACE}, {key})" for key in keys)
    return f"BEGIN; SELECT pg_advisory_xact_lock_shared({WRITER_LOCK}){owners}"


SHARED_ROWS_SQL = f"SELECT pg_advisory_xact_lock({SHARED_ROWS_LOCK})"
