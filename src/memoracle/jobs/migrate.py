"""Moving a store between SQLite and PostgreSQL: `memoracle migrate` (docs/fleet.md,
"Moving a store").

Built on export and import (`jobs.transfer`), not a copier of its own: the source is
exported, vectors included, to a JSONL file in a private temporary folder (mode 0700,
removed afterwards), and that file is imported into the destination, which must be
empty, as it was written (not redacted again: the rows were redacted when stored).
The destination is written in one transaction that also holds the check: the
destination's row counts and content hash, read back before it commits, must equal the
source's, read in the same snapshot as the export. Anything wrong (a row the
destination refuses, a count or hash that differs, the connection lost) rolls it all
back: the destination is left as empty as it was (its schema, made when it was opened,
stays). A new SQLite file made for the migration is removed again.

The content hash is order-independent: the sum, modulo 2^256, of the SHA-256 of each
record's canonical JSON (keys sorted, no spaces, UTF-8), over every record of every
section, vectors included. Both backends write the same records for the same rows
(`store.postgres.transfer`), so the same memory gives the same hash on either.

Nothing here switches the workspace: the report says which setting would (`Switch`).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoracle.clock import Clock, SystemClock
from memoracle.engine import Engine
from memoracle.errors import EngineError, InvalidInput, StoreError
from memoracle.ingest.callbacks import OnProgress
from memoracle.jobs import transfer
from memoracle.jobs.transfer import HasRows
from memoracle.store import Store
from memoracle.store.protocols import TransferRows
from memoracle.store.transfer import SECTIONS

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
ENV_URL = "MEMORACLE_STORAGE_URL"
_MOD = 1 << 256

OnStep = Callable[[str], None]


@dataclass(frozen=True)
class Target:
    """Where a store is: a PostgreSQL database (`url`) or a SQLite file (`path`)."""

    kind: str  # "postgresql" or "sqlite"
    url: str = ""  # as given, password and all: never shown
    path: Path | None = None

    @property
    def shown(self) -> str:
        """What messages show: the URL with its password as ***, or the path."""
        if self.kind == "postgresql":
            from memoracle.store.postgres.connection import safe_url

            return safe_url(self.url)
        return str(self.path)


@dataclass(frozen=True)
class Switch:
    """How to make the workspace use the destination (never done by `migrate`)."""

    config: str  # the lines for HOME/config.toml
    env: str | None  # or this environment variable
    note: str


@dataclass(frozen=True)
class MigrateReport:
    source: str  # the URL (password masked) or the path
    destination: str
    destination_kind: str  # "postgresql" or "sqlite"
    dry_run: bool
    counts: dict[str, int]  # rows copied (with --dry-run: to copy), by table
    destination_state: str  # before: "new" (no store there yet) or "empty"
    source_hash: str | None  # None in a dry run (nothing read but the counts)
    destination_hash: str | None
    verified: bool  # counts and hashes equal, checked before the commit
    seconds: float
    export_bytes: int  # the size of the intermediate export file
    switch: Switch | None = None
    problems: list[str] = field(default_factory=list)  # a dry run's: why it would stop


def store_name(rows: TransferRows) -> str:
    """What messages call a store: its URL (the password masked) or its path."""
    url = getattr(rows, "url", None)
    return url if isinstance(url, str) else str(rows.path)


def parse_target(text: str) -> Target:
    """`postgresql://…` (or `postgres://…`) or a path to a SQLite file."""
    if text.startswith(POSTGRES_SCHEMES):
        return Target("postgresql", url=text)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise InvalidInput(
            f"{scheme}://…: not a store memoracle can move to; give a PostgreSQL URL"
            " (postgresql://USER:PASSWORD@HOST:PORT/DATABASE) or the path of a SQLite file."
        )
    return Target("sqlite", path=Path(text).expanduser())


def content_digest(rows: TransferRows) -> str:
    """The order-independent hash of every record of the store (module docstring).
    Joins a snapshot or transaction already open, else reads in one snapshot."""
    total = 0
    with rows.snapshot():
        for section in SECTIONS:
            for record in rows.records(section.type):
                total = (total + _record_hash(record)) % _MOD
    return f"{total:064x}"


def _record_hash(record: dict[str, Any]) -> int:
    text = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")


def open_store(target: Target, *, clock: Clock, create: bool) -> HasRows:
    """The store at `target`, migrated to the current schema (and made, when `create`
    and it is a new SQLite file)."""
    if target.kind == "postgresql":
        try:
            from memoracle.store.postgres import PgStore
        except ImportError:
            raise InvalidInput(
                "PostgreSQL needs the postgres extra: pip install 'memoracle[postgres]'"
            ) from None
        return PgStore.open(target.url, now=clock.now())
    assert target.path is not None
    if not create and not target.path.is_file():
        raise InvalidInput(f"{target.path}: no such store (no such file).")
    if not target.path.parent.is_dir():
        raise InvalidInput(f"{target.path}: no folder {target.path.parent} to put it in.")
    return Store.open(target.path, now=clock.now(), existing=target.path.exists())


def migrate(
    source: Engine | HasRows,
    to: Target,
    *,
    dry_run: bool = False,
    home: Path | None = None,
    on_step: OnStep | None = None,
    on_progress: OnProgress | None = None,
    clock: Clock | None = None,
) -> MigrateReport:
    """Copy the whole store `source` into the empty
    store at `to`, keeping every id, and check the copy before committing it (module
    docstring). `dry_run`: read the source's counts and what is at `to`, write nothing.
    InvalidInput: `to` is the source, or not empty; StoreError: the destination cannot
    be reached or refused a row, or the copy does not match (rolled back)."""
    clock = clock or (source.clock if isinstance(source, Engine) else SystemClock())
    step = on_step or (lambda _: None)
    rows = source.transfer_rows() if isinstance(source, Engine) else source.transfer
    source_name = store_name(rows)
    _refuse_same(rows, source_name, to)
    started = time.monotonic()
    if dry_run:
        return _dry_run(rows, source_name, to, clock, started)
    state, _ = _look_at(to, clock)  # before: new or empty (a filled one is refused below)
    step(f"opening {to.shown}")
    with _destination(to, clock) as dest:
        _refuse_filled(dest.transfer, to)
        with tempfile.TemporaryDirectory(prefix="memoracle-migrate-") as folder:
            file = Path(folder) / "export.jsonl"
            with rows.snapshot():  # the export, its counts and its hash: one moment
                counts = rows.counts()
                step(f"exporting {sum(counts.values())} rows from {source_name}")
                exported = transfer.export(
                    source, file, vectors=True, on_progress=on_progress, clock=clock
                )
                source_hash = content_digest(rows)
            step(f"importing into {to.shown}")
            with dest.transfer.transaction():  # import and check: one transaction
                transfer.import_(dest, file, on_progress=on_progress, redact_text=False)
                step("checking counts and content hash")
                dest_counts = dest.transfer.counts()
                dest_hash = content_digest(dest.transfer)
                _refuse_mismatch(counts, dest_counts, source_hash, dest_hash, to)
    return MigrateReport(
        source=source_name,
        destination=to.shown,
        destination_kind=to.kind,
        dry_run=False,
        counts=counts,
        destination_state=state,
        source_hash=source_hash,
        destination_hash=dest_hash,
        verified=True,
        seconds=round(time.monotonic() - started, 3),
        export_bytes=exported.bytes,
        switch=switch_for(to, home),
    )


@contextmanager
def _destination(to: Target, clock: Clock) -> Iterator[HasRows]:
    """The destination opened (made, for a new SQLite file) and closed; a SQLite file
    made here is removed again when the migration fails."""
    made = to.kind == "sqlite" and to.path is not None and not to.path.exists()
    store = open_store(to, clock=clock, create=True)
    try:
        yield store
    except BaseException:
        close_store(store)
        if made and to.path is not None:
            for suffix in ("", "-wal", "-shm", "-writer", "-journal"):
                Path(f"{to.path}{suffix}").unlink(missing_ok=True)
        raise
    close_store(store)


def close_store(store: HasRows) -> None:
    """Close a store `open_store` opened."""
    close = getattr(store, "close", None)
    if close is not None:
        close()


def _refuse_same(rows: TransferRows, source_name: str, to: Target) -> None:
    if to.kind == "sqlite" and to.path is not None:
        mine = {Path(f"{rows.path}{s}").resolve() for s in ("", "-wal", "-shm")}
        if to.path.resolve() in mine:
            raise InvalidInput(
                f"{to.path} is the source store itself: migrate copies into another store."
                " Give a new file or a PostgreSQL URL."
            )
    if to.kind == "postgresql" and to.shown == source_name:
        raise InvalidInput(f"{to.shown} is the source store itself: give another database.")


def _refuse_filled(rows: TransferRows, to: Target) -> None:
    filled = {t: n for t, n in rows.counts().items() if n}
    if filled:
        held = ", ".join(f"{t}: {n}" for t, n in filled.items())
        fix = (
            "create an empty database (createdb NAME) and migrate into it"
            if to.kind == "postgresql"
            else "give the path of a new file"
        )
        raise InvalidInput(
            f"{to.shown} is not empty ({held}): migrate keeps every id, so it copies only"
            f" into an empty store and never merges. {fix.capitalize()}. Nothing was copied."
        )


def _refuse_mismatch(
    counts: dict[str, int], found: dict[str, int], source_hash: str, dest_hash: str, to: Target
) -> None:
    wrong = [f"{t}: {counts.get(t, 0)} → {n}" for t, n in found.items() if n != counts.get(t, 0)]
    if wrong or source_hash != dest_hash:
        said = "; ".join(wrong) or f"content hash {source_hash[:12]}… → {dest_hash[:12]}…"
        raise StoreError(
            f"{to.shown}: the copy does not match the source ({said}); it was rolled back"
            " and nothing was kept there."
        )


def _dry_run(
    rows: TransferRows, source_name: str, to: Target, clock: Clock, started: float
) -> MigrateReport:
    with rows.snapshot():
        counts = rows.counts()
    state, problems = _look_at(to, clock)
    return MigrateReport(
        source=source_name,
        destination=to.shown,
        destination_kind=to.kind,
        dry_run=True,
        counts=counts,
        destination_state=state,
        source_hash=None,
        destination_hash=None,
        verified=False,
        seconds=round(time.monotonic() - started, 3),
        export_bytes=0,
        problems=problems,
    )


def _look_at(to: Target, clock: Clock) -> tuple[str, list[str]]:
    """(state, problems) of the destination, read without writing to it."""
    if to.kind == "postgresql":
        from memoracle.store.postgres.transfer import probe

        found = probe(to.url)
        problems = [] if found.vector else [f"{to.shown}: the server has no pgvector"]
        state = "new" if found.schema_version is None else "empty"
        return _filled(state, found.counts, to, problems)
    assert to.path is not None
    if not to.path.exists():
        if not to.path.parent.is_dir():
            return "new", [f"{to.path}: no folder {to.path.parent} to put it in"]
        return "new", []
    try:
        store = Store.open(to.path, now=clock.now(), readonly=True, existing=True)
    except EngineError as exc:
        return "unusable", [str(exc)]
    try:
        counts = store.transfer.counts()
    finally:
        store.close()
    return _filled("empty", counts, to, [])


def _filled(
    state: str, counts: dict[str, int], to: Target, problems: list[str]
) -> tuple[str, list[str]]:
    filled = {t: n for t, n in counts.items() if n}
    if filled:
        held = ", ".join(f"{t}: {n}" for t, n in filled.items())
        return "not empty", [*problems, f"{to.shown} is not empty ({held})"]
    return state, problems


def switch_for(to: Target, home: Path | None) -> Switch:
    """The setting that would make the workspace at `home` use `to`."""
    where = f"{home}/config.toml" if home else "HOME/config.toml"
    if to.kind == "postgresql":
        shown = to.shown
        masked = shown != to.url
        return Switch(
            config=f'[storage]\nurl = "{shown}"',
            env=f"{ENV_URL}='{shown}'",
            note=f"add to {where} (or set the environment variable)"
            + (", writing the password where *** is" if masked else "")
            + "; the workspace keeps using its SQLite file until then",
        )
    return Switch(
        config="[storage]\n# no url: the workspace's own memoracle.db",
        env=None,
        note=(
            f"the workspace reads {home or 'HOME'}/memoracle.db: move the current one aside,"
            f" put {to.path} there, and remove `url` from [storage] in {where} (and"
            f" {ENV_URL} from the environment)"
        ),
    )


__all__ = [
    "MigrateReport",
    "close_store",
    "Switch",
    "Target",
    "content_digest",
    "migrate",
    "open_store",
    "parse_target",
    "store_name",
    "switch_for",
]
