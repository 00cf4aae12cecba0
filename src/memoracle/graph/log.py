"""The knowledge graph's append-only log and its compaction by replay (SPEC §7).

`knowledge-graph/graph-log.jsonl` in the workspace holds one JSON operation a line:

    {"op":"format","version":1}
    {"op":"entity","key":"anna","name":"Anna","type":"Person","aliases":["Anna","Annie"]}
    {"op":"relation","source":"anna","relation":"works_at","target":"acme"}
    {"op":"link","entity":"anna","memory":"m_12"}
    {"op":"link","relation":["anna","works_at","acme"],"memory":"m_12"}
    {"op":"unlink","entity":"anna","memory":"m_12"}
    {"op":"remove","relation":["anna","works_at","acme"]}
    {"op":"remove","entity":"anna"}

`format` opens a new log. `entity` states everything known about a key (a later line
for the same key replaces it); `relation` and `link` must follow the entities they name.
`unlink` is written when a memory stops being live (forgotten, archived, superseded);
`remove` when the store no longer has an entity or relation at all (a database restored
from an older copy) and takes its links, and an entity's relations, along.

`replay` folds the lines into a `GraphState`: every stored entity and relation, and the
links to live memories. A line counts once its newline is written: a last line without
one (a writer killed midway) is ignored by `replay` and cut off by the next `append`.

`append` writes what the store's graph has that the log does not say yet, by replaying
the log and comparing it with the store: the log itself is the watermark, so appending
twice writes nothing the second time, and a cut line, a lost append or a store restored
from a backup are all caught up by the next one. `compact` rewrites the log as one line
per entity, relation and link — superseded entity lines, unlinked links and removed
records dropped — after a verified backup, through a temp file whose replay must equal
the old log's, then an atomic rename; the old log is whole until that rename.

What it leaves to others: the graph itself (the store's tables are the truth; this log
is a view of them, like entities.jsonl), reading entities from text (`extract`), and
when to append or compact (the nightly run, the CLI). Every write here holds
HOME/graph-log.lock, so an append and a compaction never interleave.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from memoracle.clock import Clock, as_utc
from memoracle.config import Settings
from memoracle.errors import InvalidInput, NotFound, WorkspaceError
from memoracle.files import os_lock, replacing

LOG_NAME = "graph-log.jsonl"
FORMAT_VERSION = 1
LOCK_NAME = "graph-log.lock"  # in HOME, next to nightly.lock; never deleted (flock)
LOCK_WAIT_SECONDS = 30.0  # as long as the store's busy timeout
BACKUPS_KEPT = 3  # graph-log backups in HOME/backups; database backups are counted apart
TEMP_PREFIX = f".{LOG_NAME}.compact-"  # a compaction's new log before its rename
BACKUP_NAME = re.compile(r"^graph-log-(\d{8}T\d{6}Z)(?:\.(\d+))?\.jsonl$")
MORE_NEXT = (
    " The store is the truth and the log only a view of it: move the file aside and the"
    " next append writes it again from the store."
)

EntityRow = tuple[str, str, str, tuple[str, ...]]  # key, name, type, aliases
RelationKey = tuple[str, str, str]  # source key, relation, target key
EntityLink = tuple[str, int]  # entity key, memory id
RelationLink = tuple[str, str, str, int]  # source key, relation, target key, memory id


class GraphTables(Protocol):
    """The store's graph, as far as this module reads it (`memoracle.store.graph.Graph`)."""

    def snapshot(
        self,
    ) -> tuple[list[EntityRow], list[RelationKey], list[EntityLink], list[RelationLink]]: ...


class _Store(Protocol):
    @property
    def graph(self) -> GraphTables: ...


class GraphEngine(Protocol):
    """What this module needs of the engine (an `Engine` is one): its settings, clock
    and store. A protocol, so that `graph/` never imports the engine or the store."""

    @property
    def settings(self) -> Settings: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def store(self) -> _Store: ...


@dataclass(frozen=True)
class EntityRecord:
    """An entity as the log says it: canonical key, first name, type, every name."""

    key: str
    name: str
    type: str
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class GraphState:
    """The graph a log replays to (or the store holds): entities by key, relations, and
    which live memories name each entity or state each relation. Two states are equal
    when these are; `lines` and `cut_line` only say how the log read."""

    entities: Mapping[str, EntityRecord]
    relations: frozenset[RelationKey]
    entity_links: frozenset[EntityLink]
    relation_links: frozenset[RelationLink]
    lines: int = field(default=0, compare=False)  # complete lines read
    cut_line: int | None = field(default=None, compare=False)  # unterminated last line


EMPTY = GraphState({}, frozenset(), frozenset(), frozenset())


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


# -- reading ------------------------------------------------------------------------


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
    entities, relations, entity_links, relation_links = engine.store.graph.snapshot()
    return GraphState(
        {k: EntityRecord(k, n, t, a) for k, n, t, a in entities},
        frozenset(relations),
        frozenset(entity_links),
        frozenset(relation_links),
    )


def differences(
    a: GraphState, b: GraphState, *, a_name: str = "the log", b_name: str = "the store"
) -> list[str]:
    """How `a` and `b` differ, one sentence per kind of record with a few examples;
    empty when they are the same graph."""
    found: list[str] = []

    def say(what: str, only: Sequence[str], where: str, other: str) -> None:
        if only:
            shown = ", ".join(only[:5]) + (f" and {len(only) - 5} more" if len(only) > 5 else "")
            found.append(f"{len(only)} {what} in {where} but not in {other}: {shown}")

    for x, y, x_name, y_name in ((a, b, a_name, b_name), (b, a, b_name, a_name)):
        say("entities", sorted(set(x.entities) - set(y.entities)), x_name, y_name)
        say("relations", [_rel(r) for r in sorted(x.relations - y.relations)], x_name, y_name)
        say(
            "entity links",
            [f"{k} ← m_{m}" for k, m in sorted(x.entity_links - y.entity_links)],
            x_name,
            y_name,
        )
        say(
            "relation links",
            [f"{_rel(r[:3])} ← m_{r[3]}" for r in sorted(x.relation_links - y.relation_links)],
            x_name,
            y_name,
        )
    changed = sorted(k for k in set(a.entities) & set(b.entities) if a.entities[k] != b.entities[k])
    for key in changed[:5]:
        found.append(
            f"entity {key!r} is {_entity_text(a.entities[key])} in {a_name} but"
            f" {_entity_text(b.entities[key])} in {b_name}"
        )
    if len(changed) > 5:
        found.append(f"and {len(changed) - 5} more entities differ")
    return found


def check(engine: GraphEngine) -> list[str]:
    """How the graph log disagrees with the store's graph (empty when it agrees). Right
    after an append they agree; captures since then show up here until the next one."""
    path = log_path(engine.settings)
    logged = _replay(path)[0] if path.is_file() else EMPTY
    return differences(logged, store_state(engine))


# -- appending ----------------------------------------------------------------------


def append(engine: GraphEngine) -> AppendReport:
    """Append to the graph log what the store's graph has changed since the log's last
    line (creating the log if need be), and drop a cut last line left by a killed
    writer. Appending again with nothing new writes nothing."""
    with _locked(engine.settings.home):
        return _append(log_path(engine.settings), store_state(engine))[0]


def _append(path: Path, current: GraphState) -> tuple[AppendReport, GraphState]:
    """Append what takes the log to `current`; also return what it replayed to before."""
    logged, good_bytes = _replay(path) if path.is_file() else (EMPTY, 0)
    ops = diff(logged, current)
    if not ops and logged.cut_line is None:
        return AppendReport(path, 0, None, logged.lines, good_bytes), logged
    payload = _encode(([_FORMAT] if good_bytes == 0 else []) + ops)
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


def diff(logged: GraphState, current: GraphState) -> list[dict[str, Any]]:
    """The operations that take a log replaying to `logged` to `current`, in an order
    that names nothing before it exists: unlinks and removals, then entities,
    relations and links. From an empty state, this is a compact log's body."""
    ops: list[dict[str, Any]] = []
    for key, memory in sorted(logged.entity_links - current.entity_links):
        ops.append({"op": "unlink", "entity": key, "memory": f"m_{memory}"})
    for s, r, t, memory in sorted(logged.relation_links - current.relation_links):
        ops.append({"op": "unlink", "relation": [s, r, t], "memory": f"m_{memory}"})
    for rel in sorted(logged.relations - current.relations):
        ops.append({"op": "remove", "relation": list(rel)})
    for key in sorted(set(logged.entities) - set(current.entities)):
        ops.append({"op": "remove", "entity": key})
    for key in sorted(current.entities):
        entity = current.entities[key]
        if logged.entities.get(key) != entity:
            ops.append(
                {
                    "op": "entity",
                    "key": key,
                    "name": entity.name,
                    "type": entity.type,
                    "aliases": list(entity.aliases),
                }
            )
    for source, relation, target in sorted(current.relations - logged.relations):
        ops.append({"op": "relation", "source": source, "relation": relation, "target": target})
    for key, memory in sorted(current.entity_links - logged.entity_links):
        ops.append({"op": "link", "entity": key, "memory": f"m_{memory}"})
    for s, r, t, memory in sorted(current.relation_links - logged.relation_links):
        ops.append({"op": "link", "relation": [s, r, t], "memory": f"m_{memory}"})
    return ops


# -- compacting ---------------------------------------------------------------------


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
            extra = _encode(([_FORMAT] if good_bytes == 0 and pending else []) + pending)
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
    return _encode([_FORMAT, *diff(EMPTY, state)])


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


# -- the fold -----------------------------------------------------------------------

_FORMAT: dict[str, Any] = {"op": "format", "version": FORMAT_VERSION}


def _replay(path: Path, *, hint: str = MORE_NEXT) -> tuple[GraphState, int]:
    """The state `path` replays to, and the bytes its complete lines take; `hint` ends
    the message of a bad line."""
    fold = _Fold()
    apply = fold.apply
    good_bytes, lines, cut = 0, 0, None
    try:
        with open(path, "rb") as f:
            for number, raw in enumerate(f, 1):
                if raw[-1:] != b"\n":
                    cut = number  # always the last line: its newline was never written
                    break
                try:
                    apply(_parse(raw), number)
                except InvalidInput as exc:
                    raise InvalidInput(f"{path}:{number}: {exc}.{hint}") from None
                good_bytes += len(raw)
                lines = number
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot read the graph log ({exc.strerror or exc})."
        ) from None
    return fold.state(lines=lines, cut_line=cut), good_bytes


def _parse(raw: bytes) -> dict[str, Any]:
    try:
        op = json.loads(raw.decode("utf-8"))  # decoded here: json would guess the codec
    except UnicodeDecodeError:
        raise InvalidInput("not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if type(op) is not dict:
        raise InvalidInput('not an operation (a JSON object with "op")')
    return op


class _Fold:
    """The state being replayed. Each operation is checked whole before it changes
    anything, so a bad line leaves the state as the lines before it made it. (Links are
    most of a log: their path is kept short.)"""

    def __init__(self) -> None:
        self.entities: dict[str, EntityRecord] = {}
        self.relations: set[RelationKey] = set()
        self.entity_links: set[EntityLink] = set()
        self.relation_links: set[RelationLink] = set()
        self._ops = {
            "link": self._link,
            "unlink": self._unlink,
            "entity": self._entity,
            "relation": self._relation,
            "remove": self._remove,
            "format": self._format,
        }

    def state(self, *, lines: int, cut_line: int | None) -> GraphState:
        return GraphState(
            dict(self.entities),
            frozenset(self.relations),
            frozenset(self.entity_links),
            frozenset(self.relation_links),
            lines=lines,
            cut_line=cut_line,
        )

    def apply(self, op: dict[str, Any], number: int) -> None:
        kind = op.get("op")
        handler = self._ops.get(kind) if type(kind) is str else None
        if handler is None:
            if type(kind) is not str:
                raise InvalidInput('not an operation (a JSON object with "op")')
            raise InvalidInput(f"unknown operation {kind!r}")
        handler(op, number)

    def _link(self, op: dict[str, Any], number: int) -> None:
        memory, target = _memory(op), self._target(op)
        if isinstance(target, str):
            if target not in self.entities:
                raise InvalidInput(_undefined(target))
            self.entity_links.add((target, memory))
        else:
            if target not in self.relations:
                raise InvalidInput(f"relation {_rel(target)} is linked before it is stated")
            self.relation_links.add((*target, memory))

    def _unlink(self, op: dict[str, Any], number: int) -> None:
        memory, target = _memory(op), self._target(op)
        if isinstance(target, str):
            self.entity_links.discard((target, memory))
        else:
            self.relation_links.discard((*target, memory))

    def _entity(self, op: dict[str, Any], number: int) -> None:
        key, name, type_ = _text(op, "key"), _text(op, "name"), _text(op, "type")
        aliases = op.get("aliases", [])
        if type(aliases) is not list or not all(type(a) is str for a in aliases):
            raise InvalidInput('"aliases" must be a list of names')
        self.entities[key] = EntityRecord(key, name, type_, tuple(aliases))

    def _relation(self, op: dict[str, Any], number: int) -> None:
        rel = (_text(op, "source"), _text(op, "relation"), _text(op, "target"))
        for key in (rel[0], rel[2]):
            if key not in self.entities:
                raise InvalidInput(_undefined(key))
        self.relations.add(rel)

    def _remove(self, op: dict[str, Any], number: int) -> None:
        target = self._target(op)
        if isinstance(target, str):
            self.entities.pop(target, None)
            self.entity_links = {e for e in self.entity_links if e[0] != target}
            gone = {r for r in self.relations if target in (r[0], r[2])}
        else:
            gone = {target}
        self.relations -= gone
        self.relation_links = {r for r in self.relation_links if r[:3] not in gone}

    def _format(self, op: dict[str, Any], number: int) -> None:
        version = op.get("version")
        if number != 1:
            raise InvalidInput('"format" may only be the first line')
        if type(version) is not int or version < 1:
            raise InvalidInput(f"unknown log format {version!r}")
        if version > FORMAT_VERSION:
            raise InvalidInput(
                f"log format {version} was written by a newer memoracle (this one reads "
                f"{FORMAT_VERSION}); upgrade memoracle"
            )

    @staticmethod
    def _target(op: dict[str, Any]) -> str | RelationKey:
        entity, rel = op.get("entity"), op.get("relation")
        if type(entity) is str and entity and rel is None:
            return entity
        if (
            entity is None
            and type(rel) is list
            and len(rel) == 3
            and all(type(x) is str and x for x in rel)
        ):
            return (rel[0], rel[1], rel[2])
        raise InvalidInput(
            f'"{op["op"]}" needs either "entity" (a key) or "relation" ([source, relation, target])'
        )


def _memory(op: dict[str, Any]) -> int:
    memory = op.get("memory")
    if type(memory) is str and memory[:2] == "m_" and memory[2:].isascii():
        digits = memory[2:]
        if digits.isdigit() and digits[0] != "0":
            return int(digits)
    raise InvalidInput(f'"memory" must be a memory id like "m_12" (got {memory!r})')


def _undefined(key: str) -> str:
    return f'entity {key!r} is used before an "entity" line defines it'


def _text(op: dict[str, Any], name: str) -> str:
    value = op.get(name)
    if type(value) is not str or not value:
        raise InvalidInput(f'"{name}" must be a non-empty string (got {value!r})')
    return value


def _rel(rel: RelationKey) -> str:
    return f"{rel[0]} {rel[1]} {rel[2]}"


def _entity_text(e: EntityRecord) -> str:
    return f"{e.name!r} ({e.type}, aliases {list(e.aliases)})"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one, not one a line


def _encode(ops: Sequence[dict[str, Any]]) -> bytes:
    encode = _ENCODER.encode
    return "".join([encode(op) + "\n" for op in ops]).encode("utf-8")


# -- files --------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _locked(home: Path) -> AbstractContextManager[None]:
    """Hold HOME/graph-log.lock, waiting up to `LOCK_WAIT_SECONDS` for another writer
    of the log."""
    path = home / LOCK_NAME
    return os_lock(
        path,
        wait_seconds=LOCK_WAIT_SECONDS,
        busy=(
            f"Another memoracle process has been writing the graph log for "
            f"{LOCK_WAIT_SECONDS:.0f} s ({path}); try again when it is done."
        ),
    )
