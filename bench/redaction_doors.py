"""The doors half of bench/redaction_set.py: every case pushed through each write door of
a fresh store, a backup, the nightly run and an export, then every file and output
scanned for the needles (its docstring says how)."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sqlite3
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from redaction_set import Case, leaked, table

MARK = "[REDACTED:"
NOW = "2026-05-14T18:30:00+00:00"
ENV = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": NOW}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"


def _session(case: Case) -> str:
    return f"case-{case.id}"


def _at(i: int) -> datetime:
    return datetime(2026, 5, 14, 9, tzinfo=UTC) + timedelta(minutes=i)


@dataclass
class Door:
    """One door's fresh store and what it gave back, per case."""

    name: str
    home: Path
    outputs: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


def _open(home: Path) -> tuple[Any, Any, Any]:
    from memoracle.clock import FixedClock
    from memoracle.config import load
    from memoracle.engine import Engine

    settings = load(home, env=ENV)
    clock = FixedClock(datetime.fromisoformat(NOW))
    if not (home / "memoracle.db").exists():
        Engine.init(settings, clock=clock)
    return settings, clock, Engine


def _capture(door: Door, cases: Sequence[Case]) -> None:
    from memoracle.types import Turn

    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        for case in cases:
            for i, (role, text) in enumerate(case.turns):
                turn = Turn(role=role, text=text, session_id=_session(case), turn_id=f"t{i}",
                            at=_at(i))  # fmt: skip
                engine.capture([turn])


def _remember(door: Door, cases: Sequence[Case]) -> None:
    from memoracle.errors import WriteHeld

    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        for case in cases:
            for text in case.texts:
                try:
                    memory, _ = engine.remember(text)
                except WriteHeld as held:  # held by the write audit: its text is in the
                    door.outputs[case.id].append(str(held))  # store's held writes, scanned
                    continue
                door.outputs[case.id].append(memory.text)


def _checkpoint_text(case: Case) -> str:
    """The turns as an agent writes a checkpoint: one line each, the assistant's marked."""
    return "\n".join(text if role == "user" else f"assistant: {text}" for role, text in case.turns)


def _checkpoint(door: Door, cases: Sequence[Case]) -> None:
    from memoracle.jobs import checkpoint

    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        for case in cases:
            report = checkpoint.save(settings, _checkpoint_text(case), engine=lambda: engine,
                                     clock=clock, session=_session(case))  # fmt: skip
            door.outputs[case.id] += [m.text for m in report.added]


def _openclaw_file(folder: Path, case: Case) -> Path:
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": _session(case), "timestamp": NOW}
    ]
    parent = None
    for i, (role, text) in enumerate(case.turns):
        entry = f"m{i:04d}"
        lines.append(
            {
                "type": "message",
                "id": entry,
                "parentId": parent,
                "timestamp": _at(i).isoformat().replace("+00:00", "Z"),
                "message": {"role": role, "content": [{"type": "text", "text": text}]},
            }
        )
        parent = entry
    path = folder / f"{_session(case)}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def _ingest_openclaw(door: Door, cases: Sequence[Case]) -> None:
    folder = door.home.parent / "transcripts"
    folder.mkdir()
    paths = [_openclaw_file(folder, case) for case in cases]
    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        engine.ingest(paths, on_warning=lambda w: None)


def _ingest_jsonl(door: Door, cases: Sequence[Case]) -> None:
    path = door.home.parent / "turns.jsonl"
    lines = [
        {"role": role, "content": text, "session": _session(case), "id": f"t{i}",
         "timestamp": _at(i).isoformat()}
        for case in cases
        for i, (role, text) in enumerate(case.turns)
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", "utf-8")
    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        engine.ingest([path], fmt="jsonl", on_warning=lambda w: None)


def _mcp(door: Door, cases: Sequence[Case]) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from memoracle.mcp_server.tools import MemoryTools

    settings, clock, _ = _open(door.home)
    tools = MemoryTools(settings, clock=clock)
    try:
        for case in cases:
            for text in case.texts:
                try:
                    door.outputs[case.id].append(str(tools.memory_remember(text=text)))
                except ToolError as refused:  # held by the write audit (scanned as held)
                    door.outputs[case.id].append(str(refused))
            result = tools.memory_checkpoint(text=_checkpoint_text(case), session=_session(case))
            door.outputs[case.id].append(str(result))
    finally:
        tools.close()


DOORS: dict[str, Callable[[Door, Sequence[Case]], None]] = {
    "capture": _capture,
    "remember": _remember,
    "checkpoint": _checkpoint,
    "ingest-openclaw": _ingest_openclaw,
    "ingest-jsonl": _ingest_jsonl,
    "mcp": _mcp,
}


QUERIED = "capture"  # the door whose store is searched and recalled for every case


def _afterwards(door: Door, cases: Sequence[Case], *, queries: bool) -> None:
    """A backup, the nightly run, an export; the episodes of each case's session as
    stored, and with `queries` a search and a recall for each case, into the door's
    outputs."""
    from memoracle.jobs import transfer
    from memoracle.jobs.nightly import run_nightly
    from memoracle.serialize import records

    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        engine.backup()
        run_nightly(engine)
        transfer.export(engine, door.home / "exports-by-bench.jsonl")
        by_session = {_session(c): c.id for c in cases}
        for episodes in engine.turns():
            for episode in episodes:
                case_id = by_session.get(episode.session_id or "")
                if case_id is not None:
                    door.outputs[case_id].append(episode.text)
        for case in cases if queries else ():
            query = case.texts[0][:300]
            hits = engine.search(query).hits
            door.outputs[f"search:{case.id}"].append(
                json.dumps([records.hit(h) for h in hits], ensure_ascii=False, default=str)
            )
            block = engine.recall(query)
            door.outputs[f"recall:{case.id}"].append(block.text)


def _sqlite_text(path: Path) -> str:
    """Every value of every table of the SQLite file at `path` (a copy is opened), and
    the terms of its FTS5 tables, as one text."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        shutil.copyfile(path, copy)
        wal = Path(str(path) + "-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(str(copy) + "-wal"))
        conn = sqlite3.connect(copy)
        try:
            return _dump(conn)
        finally:
            conn.close()


def _dump(conn: sqlite3.Connection) -> str:
    parts: list[str] = []
    tables = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    for name, sql in tables:
        try:
            rows = conn.execute(f'SELECT * FROM "{name}"').fetchall()
        except sqlite3.Error:
            continue
        for row in rows:
            for value in row:
                if isinstance(value, bytes):
                    parts.append(value.decode("utf-8", errors="replace"))
                elif value is not None:
                    parts.append(str(value))
        if sql and "USING fts5" in sql.replace("using", "USING"):
            try:
                conn.execute(
                    f'CREATE VIRTUAL TABLE temp."v_{name}" USING fts5vocab(main, "{name}", row)'
                )
                terms = conn.execute(f'SELECT term FROM temp."v_{name}"').fetchall()
                parts.append(" ".join(t for (t,) in terms))
            except sqlite3.Error:
                pass
    return "\n".join(parts)


def _decoded(data: bytes) -> bytes:
    if data.startswith(ZSTD_MAGIC):
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    if data.startswith(GZIP_MAGIC):
        return gzip.decompress(data)
    return data


def place_of(relative: Path) -> str:
    """The kind of file a leak was found in."""
    name = relative.name
    parts = relative.parts
    if "backups" in parts or re.match(r"memoracle-\d{8}T", name):
        return "backup"
    if name.startswith("memoracle.db"):
        return "database-wal" if name.endswith("-wal") else "database"
    if name in ("MEMORY.md", "SESSION-START.md"):
        return name
    if "export" in name or "exports" in parts:
        return "export"
    if "memory" in parts and name.endswith(".md"):
        return "daily-note"
    return re.sub(r"\d+", "N", str(relative))  # e.g. render/MEMORY.block.md


def scan_files(root: Path) -> dict[str, str]:
    """The text of every file under `root`, by relative path; SQLite files also as SQL."""
    texts: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        raw = path.read_bytes()
        data = _decoded(raw)
        relative = str(path.relative_to(root))
        texts[relative] = data.decode("utf-8", errors="replace")
        if not data.startswith(SQLITE_MAGIC):
            continue
        if data is raw:
            texts[relative + " (sql)"] = _sqlite_text(path)
            continue
        with tempfile.TemporaryDirectory() as tmp:  # a compressed database: unpacked first
            unpacked = Path(tmp) / "unpacked.db"
            unpacked.write_bytes(data)
            texts[relative + " (sql)"] = _sqlite_text(unpacked)
    return texts


@dataclass
class DoorScore:
    # (door, place, case id) for each leak; (door, case id) for each benign alteration
    leaks: set[tuple[str, str, str]] = field(default_factory=set)
    altered: set[tuple[str, str]] = field(default_factory=set)
    examples: list[str] = field(default_factory=list)


def _scan_door(
    door: Door, cases: Sequence[Case], score: DoorScore, snapshot: dict[str, str]
) -> None:
    secrets = [c for c in cases if not c.benign]
    texts = dict(snapshot)
    texts.update(scan_files(door.home))
    for relative, text in texts.items():
        place = place_of(Path(relative.removesuffix(" (sql)")))
        if relative.endswith(" (sql)"):
            place += " (sql)"
        for case in secrets:
            if found := leaked(text, case.needles):
                score.leaks.add((door.name, place, case.id))
                score.examples.append(f"{door.name} {place} {relative}: {case.id} {found}")
    for key, outs in door.outputs.items():
        where, _, case_id = key.rpartition(":")
        case = next((c for c in cases if c.id == case_id), None)
        if case is None:
            continue
        joined = "\n".join(outs)
        if case.benign:
            if not where and MARK in joined and MARK not in "\n".join(case.texts):
                score.altered.add((door.name, case.id))
        elif found := leaked(joined, case.needles):
            place = where or "output"
            score.leaks.add((door.name, place, case.id))
            score.examples.append(f"{door.name} {place}: {case.id} {found}")


def run_doors(cases: Sequence[Case], workdir: Path) -> DoorScore:
    score = DoorScore()
    for name, put in DOORS.items():
        door = Door(name, workdir / name / "home")
        door.home.mkdir(parents=True)
        put(door, cases)
        snapshot = {  # before the nightly run checkpoints the WAL into the database
            rel: text for rel, text in scan_files(door.home).items()
        }
        _afterwards(door, cases, queries=name == QUERIED)
        _scan_door(door, cases, score, snapshot)
    return score


def doors_report(cases: Sequence[Case], score: DoorScore, show: int) -> list[str]:
    by_id = {c.id: c for c in cases}
    secrets = [c for c in cases if not c.benign]
    benign = [c for c in cases if c.benign]
    leaked_ids = {case_id for _, _, case_id in score.leaks}
    lines = [
        f"doors: secrets leaked somewhere {len(leaked_ids)} of {len(secrets)}; "
        f"benign altered somewhere {len({i for _, i in score.altered})} of {len(benign)}"
    ]
    by_door: dict[str, set[str]] = defaultdict(set)
    by_place: dict[str, set[str]] = defaultdict(set)
    for door, place, case_id in score.leaks:
        by_door[door].add(case_id)
        by_place[place].add(case_id)
    lines.append("  leaks by door:")
    lines += [f"    {d}: {len(ids)}" for d, ids in sorted(by_door.items())] or ["    none"]
    lines.append("  leaks by place:")
    lines += [f"    {p}: {len(ids)}" for p, ids in sorted(by_place.items())] or ["    none"]
    lines += table(
        "leaks by shape",
        Counter(by_id[i].shape for i in leaked_ids),
        Counter(c.shape for c in secrets),
    )
    altered_by_door = Counter(door for door, _ in score.altered)
    lines.append("  benign altered by door:")
    lines += [f"    {d}: {n}" for d, n in sorted(altered_by_door.items())] or ["    none"]
    for example in sorted(set(score.examples))[:show]:
        lines.append(f"  LEAK {example}")
    for door, case_id in sorted(score.altered)[:show]:
        lines.append(f"  ALTERED {door}: {case_id} {by_id[case_id].texts!r}")
    return lines
