"""The graph log's file, kept by the nightly run and `memoracle graph compact`:
`knowledge-graph/graph-log.jsonl` appended with what the store's graph has that the log
does not say yet (`append`), read back (`replay`), checked against the store (`check`),
and compacted (`compact`): after a verified backup, through a temp file whose replay
must equal the old log's, then an atomic rename. Every write holds HOME/graph-log.lock,
so an append and a compaction never interleave. The log's format — its lines, how they
fold into a state, the lines between two states — is `memoracle.graph.log`'s.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Protocol

from memoracle.clock import Clock, as_utc
from memoracle.config import Settings
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.files import os_lock, replacing
from memoracle.graph.log import (
    EMPTY,
    FORMAT_OP,
    MORE_NEXT,
    EntityLink,
    EntityRecord,
    EntityRow,
    Fold,
    GraphState,
    RelationKey,
    RelationLink,
    diff,
    differences,
    encode_ops,
    parse_line,
)
from memoracle.workspace import GRAPH_LOG_LOCK

LOG_NAME = "graph-log.jsonl"


LOCK_WAIT_SECONDS = 30.0  # as long as the store's busy timeout


BACKUPS_KEPT = 3  # graph-log backups in HOME/backups; database backups are counted apart


TEMP_PREFIX = f".{LOG_NAME}.compact-"  # a compaction's new log before its rename


BACKUP_NAME = re.compile(r"^graph-log-(\d{8}T\d{6}Z)(?:\.(\d+))?\.jsonl$")


class GraphEngine(Protocol):
    """What this module needs of the engine (an `Engine` is one): its settings, clock
    and the store's graph in one snapshot (`Engine.graph_snapshot`). A protocol, so that
    `graph/` never imports the engine or the store."""

    @property
    def settings(self) -> Settings: ...
    @property
    def clock(self) -> Clock: ...
    def graph_snapshot(
        self,
    ) -> tuple[list[EntityRow], list[RelationKey], list[EntityLink], list[RelationLink]]: ...


@dataclass(frozen=True)
class AppendReport:
    """What `append` wrote."""

    path: Path
    appended: int  # operations written
    repaired: int | None  # the line number of a cut last line it dropped, if any
    lines: int  # the log's lines afterwards
    bytes: int  # the log's size afterwards


@dataclass(frozen=True)
class CompactReport:
    """What `compact` did, or would do in a dry run. `reason` says why the log was (or
    would be) left as it is; `gain` is the share of bytes a compaction saves."""

    path: Path
    dry_run: bool
    compacted: bool
    reason: str | None
    min_gain: float
    gain: float
    bytes_before: int
    bytes_after: int
    lines_before: int
    lines_after: int
    entities: int
    relations: int
    links: int
    appended: int  # operations appended first (in a dry run: that an append would add)
    backup: Path | None  # the verified copy of the old log
    checksum: str | None  # its SHA-256, which is the old log's
    cleaned: tuple[Path, ...]  # leftovers of an interrupted compaction, removed


def log_path(settings: Settings) -> Path:
    """Where the graph log lives: `knowledge-graph/graph-log.jsonl` in the workspace."""
    return settings.files_dir / "knowledge-graph" / LOG_NAME


def replay(path: Path) -> GraphState:
    """Fold the log at `path` into the graph it describes. A line that is not a valid
    operation raises InvalidInput naming the file and line; an unterminated last line (a
    writer killed midway) is ignored and reported as `cut_line`."""
    if not path.is_file():
        raise NotFound(
            f"No graph log at {path} yet. The nightly run writes it, as does: memoracle graph"
            " compact"
        )
    return _replay(path)[0]


def store_state(engine: GraphEngine) -> GraphState:
    """The store's graph, read in one snapshot, in the shape a log replays to."""
    entities, relations, entity_links, relation_links = engine.graph_snapshot()
    return GraphState(
        {k: EntityRecord(k, n, t, a) for k, n, t, a in entities},
        frozenset(relations),
        frozenset(entity_links),
        frozenset(relation_links),
    )


def check(engine: GraphEngine) -> list[str]:
    """How the graph log disagrees with the store's graph (empty when it agrees). Right
    after an append they agree; captures since then show up here until the next one."""
    path = log_path(engine.settings)
    logged = _replay(path)[0] if path.is_file() else EMPTY
    return differences(logged, store_state(engine))


def append(engine: GraphEngine) -> AppendReport:
    """Append to the graph log what the store's graph has changed since the log's last
    line (creating the log if need be), and drop a cut last line left by a killed
    writer. Appending again with nothing new writes nothing."""
    with _locked(engine.settings.home):
        return _append(log_path(engine.settings), store_state(engine))[0]


def pending(engine: GraphEngine) -> int:
    """How many changes the next `append` would write: read only (no lock taken,
    nothing written), for a dry run."""
    path = log_path(engine.settings)
    logged = _replay(path)[0] if path.is_file() else EMPTY
    return len(diff(logged, store_state(engine)))


def _append(path: Path, current: GraphState) -> tuple[AppendReport, GraphState]:
    """Append what takes the log to `current`; also return what it replayed to before."""
    logged, good_bytes = _replay(path) if path.is_file() else (EMPTY, 0)
    ops = diff(logged, current)
    if not ops and logged.cut_line is None:
        return AppendReport(path, 0, None, logged.lines, good_bytes), logged
    payload = encode_ops(([FORMAT_OP] if good_bytes == 0 else []) + ops)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        with os.fdopen(fd, "r+b") as f:
            f.truncate(good_bytes)  # the cut line, if any; a whole log keeps every byte
            f.seek(good_bytes)
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot append to the graph log ({exc.strerror or exc}); check free "
            "space and the folder's permissions."
        ) from None
    lines = logged.lines + payload.count(b"\n")
    report = AppendReport(path, len(ops), logged.cut_line, lines, good_bytes + len(payload))
    return report, logged


def compact(engine: GraphEngine, *, min_gain: float = 0.05, dry_run: bool = False) -> CompactReport:
    """Rewrite the graph log as one line per entity, relation and link, when that saves
    at least `min_gain` (a share, 0.05 = 5%) of its bytes.

    First the log is brought up to date (`append`) and checked against the store's
    graph (InvalidInput names the differences). Then: a verified copy of the old log in
    HOME/backups, the new log in a temp file of the same folder, its replay compared
    with the old log's (WorkspaceError when they differ: nothing is changed), and an
    atomic rename. Killed or failing at any point before the rename, the old log stays
    whole, and the next run removes what was left behind. A dry run changes nothing and
    reports the gain the real run would see."""
    if not 0 <= min_gain < 1:
        raise InvalidInput(
            f"min_gain must be a share between 0 and 1 (got {min_gain}); 0.05 means 5%."
        )
    settings = engine.settings
    path = log_path(settings)
    backups = settings.home / "backups"
    with nullcontext() if dry_run else _locked(settings.home):  # a dry run writes nothing
        current = store_state(engine)
        cleaned: tuple[Path, ...] = ()
        if dry_run:
            logged, good_bytes = _replay(path) if path.is_file() else (EMPTY, 0)
            pending = diff(logged, current)
            extra = encode_ops(([FORMAT_OP] if good_bytes == 0 and pending else []) + pending)
            appended = len(pending)
            bytes_before = good_bytes + len(extra)
            lines_before = logged.lines + extra.count(b"\n")
        else:
            cleaned = _clean_leftovers(path, backups)
            report, logged = _append(path, current)
            appended, bytes_before = report.appended, report.bytes
            if appended or report.repaired is not None:  # read back what was written
                logged, bytes_before = _replay(path)
            lines_before = logged.lines
            problems = differences(logged, current)
            if problems:
                raise InvalidInput(
                    f"{path}: the graph log disagrees with the store after an append: "
                    + "; ".join(problems)
                    + "."
                    + MORE_NEXT
                )
        body = _compacted(current if dry_run else logged)
        gain = 0.0 if bytes_before == 0 else 1 - len(body) / bytes_before
        if bytes_before == 0:
            reason: str | None = "there is no graph log yet (the graph is empty)"
        elif len(body) >= bytes_before:
            reason = "the log is already compact"
        elif gain < min_gain:
            reason = f"the gain, {gain:.1%}, is below the minimum of {min_gain:.1%}"
        else:
            reason = None
        result = CompactReport(
            path=path,
            dry_run=dry_run,
            compacted=False,
            reason=reason,
            min_gain=min_gain,
            gain=round(gain, 4),
            bytes_before=bytes_before,
            bytes_after=bytes_before if reason else len(body),
            lines_before=lines_before,
            lines_after=lines_before if reason else body.count(b"\n"),
            entities=len(current.entities),
            relations=len(current.relations),
            links=len(current.entity_links) + len(current.relation_links),
            appended=appended,
            backup=None,
            checksum=None,
            cleaned=cleaned,
        )
        if dry_run or reason:
            return result
        backup, checksum = _backup(path, backups, engine.clock.now())
        _swap_in(path, body, logged, backup=backup, expected_size=bytes_before)
        _prune_backups(backups)
    return replace(result, compacted=True, backup=backup, checksum=checksum)


def _compacted(state: GraphState) -> bytes:
    """The compact log of `state`: one line per entity, relation and link."""
    return encode_ops([FORMAT_OP, *diff(EMPTY, state)])


def _swap_in(path: Path, body: bytes, old: GraphState, *, backup: Path, expected_size: int) -> None:
    """Write `body` beside `path`, check that it replays to `old` (what the log at
    `path` replays to) and rename it over `path`; on any failure, remove it."""
    fd, name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    os.close(fd)
    try:
        with replacing(path, temp=Path(name), durable=True) as temp:
            temp.write_bytes(body)
            _validate(path, temp, old, backup=backup, expected_size=expected_size)
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot compact the graph log ({exc.strerror or exc}); the old log is "
            "as it was. Check free space and the folder's permissions."
        ) from None


def _validate(path: Path, temp: Path, old: GraphState, *, backup: Path, expected_size: int) -> None:
    """Refuse the compacted log at `temp` unless it replays to `old` and the log at
    `path` is still the size it had when the compaction read it."""
    try:
        new = _replay(temp, hint="")[0]
    except InvalidInput as exc:
        problems = [f"it does not read back: {exc}"]
    else:
        problems = differences(old, new, a_name="the old log", b_name="the compacted one")
        if new.cut_line is not None:
            problems.append("its last line is cut")
    if problems:
        raise WorkspaceError(
            f"{path}: the compacted log would not replay to the same graph ("
            + "; ".join(problems)
            + f"). Nothing was changed; the old log is also in {backup}."
        )
    if path.stat().st_size != expected_size:  # an append without the lock
        raise WorkspaceError(
            f"{path}: the graph log changed while it was being compacted; nothing was "
            "changed. Run the compaction again."
        )


def _backup(path: Path, folder: Path, now: datetime) -> tuple[Path, str]:
    """A verified copy of the log in `folder` (its SHA-256 read back equals the
    original's); written under a `.partial` name and renamed only once verified."""
    stamp = f"{as_utc(now):%Y%m%dT%H%M%SZ}"
    dest = folder / f"graph-log-{stamp}.jsonl"
    n = 0
    while dest.exists():  # two compactions in one second keep both copies
        n += 1
        dest = folder / f"graph-log-{stamp}.{n}.jsonl"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        original = hashlib.sha256()
        partial = dest.with_name(dest.name + ".partial")
        with replacing(dest, temp=partial, durable=True):
            with open(path, "rb") as src, open(partial, "wb") as out:
                while chunk := src.read(1 << 20):
                    original.update(chunk)
                    out.write(chunk)
            if _sha256(partial) != original.hexdigest():
                raise WorkspaceError(
                    f"{dest}: the backup of the graph log does not read back as written; "
                    "nothing was changed. Check the disk and free space."
                )
    except OSError as exc:
        raise WorkspaceError(
            f"{dest}: cannot back up the graph log ({exc.strerror or exc}); nothing was "
            "changed. Check free space and the folder's permissions."
        ) from None
    return dest, original.hexdigest()


def _prune_backups(folder: Path) -> None:
    """Keep the newest `BACKUPS_KEPT` graph-log backups; other files are never touched."""
    found = []
    for p in folder.iterdir():
        if m := BACKUP_NAME.match(p.name):
            found.append(((m.group(1), int(m.group(2) or 0)), p))
    for _, p in sorted(found, reverse=True)[BACKUPS_KEPT:]:
        p.unlink(missing_ok=True)


def _clean_leftovers(path: Path, backups: Path) -> tuple[Path, ...]:
    """Remove what a killed compaction left: its temp log, a half-written backup."""
    found = [p for p in path.parent.glob(TEMP_PREFIX + "*") if p.is_file()]
    if backups.is_dir():
        found += [
            p
            for p in backups.glob("graph-log-*.jsonl.partial")
            if BACKUP_NAME.match(p.name.removesuffix(".partial"))
        ]
    for p in found:
        p.unlink(missing_ok=True)
    return tuple(sorted(found))


def _replay(path: Path, *, hint: str = MORE_NEXT) -> tuple[GraphState, int]:
    """The state `path` replays to, and the bytes its complete lines take; `hint` ends
    the message of a bad line."""
    fold = Fold()
    apply = fold.apply
    good_bytes, lines, cut = 0, 0, None
    try:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if raw[-1:] != b"\n":
                    cut = number  # always the last line: its newline was never written
                    break
                try:
                    apply(parse_line(raw), number)
                except InvalidInput as exc:
                    raise InvalidInput(f"{path}:{number}: {exc}.{hint}") from None
                good_bytes += len(raw)
                lines = number
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot read the graph log ({exc.strerror or exc})."
        ) from None
    return fold.state(lines=lines, cut_line=cut), good_bytes


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _locked(home: Path) -> AbstractContextManager[None]:
    """Hold HOME/graph-log.lock, waiting up to `LOCK_WAIT_SECONDS` for another writer
    of the log."""
    path = home / GRAPH_LOG_LOCK
    return os_lock(
        path,
        wait_seconds=LOCK_WAIT_SECONDS,
        busy=(
            f"Another memoracle process has been writing the graph log for "
            f"{LOCK_WAIT_SECONDS:.0f} s ({path}); try again when it is done."
        ),
    )
