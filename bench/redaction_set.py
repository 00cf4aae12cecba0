"""Redaction scored on a labelled JSONL corpus of secrets and benign look-alikes.

Each line of the corpus is one case:

    {"id": "s-017", "lang": "fr", "shape": "prose-wifi", "kind": "password",
     "turns": ["le mdp du wifi c'est Tournesol-88"], "needles": ["Tournesol-88"]}
    {"id": "b-004", "lang": "en", "shape": "code-getpass", "kind": "benign",
     "turns": ["password = getpass.getpass()"], "needles": []}

`turns` are the consecutive user turns of one conversation (a turn is a string, or an
object with "text" and an optional "role"); `needles` the strings that must not survive
anywhere (a secret case has at least one; a benign case none, and none of its turns may
be altered).

Per text (always): the case's turns go through `redact_turns` (each turn redacted, the
previous turn's open secret context carried to the next, as capture does); a secret
case leaks when one of its needles is left in the output; a benign case is altered
when one of its turns comes out changed. Counts by shape and by kind, per language,
and the time per text.

With --doors, every case goes in through each door of a fresh store of its own:
capture (`Engine.capture`, one turn a call, the case's turns in order in one session),
remember (each turn), checkpoint (the turns as one checkpoint text, as the CLI and MCP
write it), ingest of an OpenClaw session JSONL (one file per case) and of a generic
JSONL, MCP remember and checkpoint (`memoracle.mcp_server.tools`); then a backup, the
nightly run and an export. Every file under the home and the workspace is scanned for
the needles — as bytes, the SQLite files (the database, its WAL, the backups) also
through SQL (every table, the FTS tables' content and their terms), zstd or gzip files
decompressed — and so are the doors' own outputs and, in the capture door's store, a
search and a recall for each case (the stores hold the same texts; one is searched to
keep the run short). Leaks are counted by door, by place and by shape; a benign case is altered at a
door when what the door stored or returned for it holds a "[REDACTED:" marker.

    python bench/redaction_set.py PATH [--doors] [--show N] [--limit N]

Only aggregate counts are printed unless --show N asks for N examples of each failure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memoracle.capture.redact import redact

MARK = "[REDACTED:"
NOW = "2026-05-14T18:30:00+00:00"
ENV = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": NOW}
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    shape: str
    kind: str
    turns: tuple[tuple[str, str], ...]  # (role, text)
    needles: tuple[str, ...]

    @property
    def benign(self) -> bool:
        return self.kind == "benign"

    @property
    def texts(self) -> list[str]:
        return [text for _, text in self.turns]


class CorpusError(ValueError):
    """A corpus line that is not a case; the message names the file, line and field."""


def _field(where: str, record: dict[str, Any], name: str) -> Any:
    if name not in record:
        raise CorpusError(f"{where}: missing field {name!r}")
    return record[name]


def _turn(where: str, i: int, value: Any) -> tuple[str, str]:
    if isinstance(value, str):
        return ("user", value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        role = value.get("role", "user")
        if role not in ("user", "assistant"):
            raise CorpusError(f"{where}: turns[{i}].role must be 'user' or 'assistant'")
        return (role, value["text"])
    raise CorpusError(f"{where}: turns[{i}] must be a string or an object with 'text'")


def parse_case(where: str, line: str) -> Case:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(record, dict):
        raise CorpusError(f"{where}: a case is a JSON object")
    strings = {}
    for name in ("id", "lang", "shape", "kind"):
        value = _field(where, record, name)
        if not isinstance(value, str) or not value:
            raise CorpusError(f"{where}: field {name!r} must be a non-empty string")
        strings[name] = value
    turns = _field(where, record, "turns")
    if not isinstance(turns, list) or not turns:
        raise CorpusError(f"{where}: field 'turns' must be a non-empty list")
    needles = _field(where, record, "needles")
    if not isinstance(needles, list) or not all(isinstance(n, str) and n for n in needles):
        raise CorpusError(f"{where}: field 'needles' must be a list of non-empty strings")
    if strings["kind"] == "benign" and needles:
        raise CorpusError(f"{where}: a benign case has no needles")
    if strings["kind"] != "benign" and not needles:
        raise CorpusError(f"{where}: a secret case needs at least one needle")
    return Case(
        id=strings["id"],
        lang=strings["lang"],
        shape=strings["shape"],
        kind=strings["kind"],
        turns=tuple(_turn(where, i, t) for i, t in enumerate(turns)),
        needles=tuple(needles),
    )


def load_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            case = parse_case(f"{path}:{number}", line)
            if case.id in seen:
                raise CorpusError(f"{path}:{number}: field 'id': {case.id!r} is used twice")
            seen.add(case.id)
            cases.append(case)
    return cases


def redact_turns(texts: Sequence[str]) -> list[str]:
    """The turns of one conversation redacted as capture redacts them, in order: each
    with the one before it as stored (redacted), for a secret it left open."""
    out: list[str] = []
    for text in texts:
        out.append(redact(text, previous=out[-1] if out else None).text)
    return out


def leaked(text: str, needles: Iterable[str]) -> list[str]:
    """The needles found in `text` (case-insensitive: an index folds case)."""
    low = text.casefold()
    return [n for n in needles if n.casefold() in low]


# ---------------------------------------------------------------- per text


@dataclass
class TextScore:
    secrets: int = 0
    benign: int = 0
    texts: int = 0
    seconds: float = 0.0
    leaks: list[tuple[Case, list[str]]] = field(default_factory=list)
    altered: list[tuple[Case, list[str]]] = field(default_factory=list)


def score_texts(cases: Sequence[Case]) -> TextScore:
    score = TextScore()
    for case in cases:
        started = time.perf_counter()
        out = redact_turns(case.texts)
        score.seconds += time.perf_counter() - started
        score.texts += len(out)
        if case.benign:
            score.benign += 1
            if out != case.texts:
                score.altered.append((case, out))
        else:
            score.secrets += 1
            if leaked("\n".join(out), case.needles):
                score.leaks.append((case, out))
    return score


def _table(title: str, failed: Counter[str], total: Counter[str]) -> list[str]:
    lines = [f"  {title}:"]
    for key in sorted(total):
        if failed[key]:
            lines.append(f"    {key}: {failed[key]} of {total[key]}")
    if len(lines) == 1:
        lines.append("    none")
    return lines


def text_report(cases: Sequence[Case], score: TextScore, show: int) -> list[str]:
    secrets = [c for c in cases if not c.benign]
    benign = [c for c in cases if c.benign]
    lines = [
        f"cases: {len(cases)} ({len(secrets)} secret, {len(benign)} benign), turns: {score.texts}",
        f"per text: secrets leaked {len(score.leaks)} of {score.secrets}; "
        f"benign altered {len(score.altered)} of {score.benign}; "
        f"{score.seconds / max(score.texts, 1) * 1e6:.1f} µs a text",
    ]
    leaks = [c for c, _ in score.leaks]
    for title, key in (("by shape", "shape"), ("by kind", "kind")):
        lines += _table(
            f"leaks {title}",
            Counter(getattr(c, key) for c in leaks),
            Counter(getattr(c, key) for c in secrets),
        )
    lines += _table(
        "leaks by language", Counter(c.lang for c in leaks), Counter(c.lang for c in secrets)
    )
    lines += _table(
        "benign altered by shape",
        Counter(c.shape for c, _ in score.altered),
        Counter(c.shape for c in benign),
    )
    for case, out in score.leaks[:show]:
        lines.append(f"  LEAK {case.id} {case.lang} {case.shape}/{case.kind}: {out!r}")
    for case, out in score.altered[:show]:
        lines.append(f"  ALTERED {case.id} {case.lang} {case.shape}: {out!r}")
    return lines


# ---------------------------------------------------------------- through the doors


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
    settings, clock, engine_type = _open(door.home)
    with engine_type.open(settings, clock=clock) as engine:
        for case in cases:
            for text in case.texts:
                memory, _ = engine.remember(text)
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
    from memoracle.mcp_server.tools import MemoryTools

    settings, clock, _ = _open(door.home)
    tools = MemoryTools(settings, clock=clock)
    try:
        for case in cases:
            for text in case.texts:
                door.outputs[case.id].append(str(tools.memory_remember(text=text)))
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
    lines += _table(
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="the JSONL corpus")
    parser.add_argument(
        "--doors", action="store_true", help="also push every case through the doors"
    )
    parser.add_argument("--show", type=int, default=0, help="examples of each failure to print")
    parser.add_argument("--limit", type=int, default=None, help="only the first N cases")
    args = parser.parse_args(argv)
    try:
        cases = load_cases(args.path)
    except (CorpusError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cases = cases[: args.limit] if args.limit else cases
    print("\n".join(text_report(cases, score_texts(cases), args.show)))
    if args.doors:
        with tempfile.TemporaryDirectory(prefix="redaction-set-") as tmp:
            score = run_doors(cases, Path(tmp))
        print("\n".join(doors_report(cases, score, args.show)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
