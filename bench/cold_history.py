"""A store of a million memories, in minutes: a lived store's cold tier carried back in
time, through the export/import door.

Living a store through the import door costs about 10 ms a memory (each is checked
against what is stored, settled, read for the graph), so a million memories would take
hours. But once a store has lived past the archive horizon (superseded memories are
archived after 90 days, and the active set is held at `max_facts`), what more years
add is more of the same: archived memories, with their provenance, slots, graph links,
archive records and audit entries. So the lived store is exported, and its archived
memories are written again, shifted back by the lived span once per copy (the oldest
copy the furthest back), with their rows and references renumbered, until the file
holds the asked number; the file is imported into a new store (`memoracle import`:
every reference and row count checked before it commits).

Each copy's text is its original's with the copy's number appended ("… [3]"), so every
copy is a text of its own, with its own vector (a random unit vector, as the lived
store's texts have), as years of distinct memories would be. What is not copied: live
memories, runs, held writes; the `archive/*.jsonl` files of the lived home are not
written for the copies.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from memoracle.config import load
from memoracle.embed import to_blob
from memoracle.engine import Engine
from memoracle.jobs import transfer
from memoracle.store.memories import search_text
from memoracle.text import content_hash

TYPE = re.compile(r'^\{"type": "(\w+)"')  # how the export starts each line
TIMES = {"valid_from", "valid_to"}  # time fields not named *_at
Cold = dict[str, list[dict[str, Any]]]  # the cold tier's records, by line type
NESTED = {  # a memory line's nested rows, by the export's count names
    "provenance": "provenance",
    "slots": "slots",
    "entities": "entity_memories",
    "relations": "relation_memories",
}


def extend(source: Path, target: Path, *, memories: int, days: int) -> dict[str, Any]:
    """Make `target` a copy of the home `source` (which lived `days` days) whose store
    holds `memories` memories: its own, then copies of its cold tier further back."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(
        source, target, ignore=shutil.ignore_patterns("memoracle.db*", "backups", "bench-*")
    )
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        lived = Path(tmp) / "lived.jsonl"
        extended = Path(tmp) / "extended.jsonl"
        with Engine.open(load(source, env={})) as engine:
            transfer.export(engine, lived, vectors=True)
        copies = write_extended(lived, extended, memories=memories, span=timedelta(days=days))
        settings = load(target, env={})
        Engine.init(settings, force=True)  # the copied home has files but no store yet
        with Engine.open(settings) as engine:
            report = transfer.import_(engine, extended)
    return {"copies": copies, "span_days": days, "counts": report.counts}


def write_extended(lived: Path, out: Path, *, memories: int, span: timedelta) -> int:
    """Write `lived`'s lines to `out` followed, in each section, by copies of its
    archived memories, each copy `span` further back; returns the number of copies."""
    header, cold, totals = _read_cold(lived)
    archived = {r["id"] for r in cold["memory"]}
    if not archived:
        raise SystemExit(f"{lived}: no archived memory to carry back; live the store longer")
    copies = max(0, -(-(memories - totals["memories"]) // len(archived)))
    header["counts"] = _counts(header["counts"], cold, copies)
    model = header["embedding_model"]
    # A vector for each copy's text, when the export has vectors: {hash: created_at}.
    texts = (
        [_texts(cold["memory"], k, span) for k in range(1, copies + 1)] if header["vectors"] else []
    )
    added = sum(map(len, texts))
    if added:
        header["counts"]["vectors"] += added
        models = header["vector_models"]
        models.setdefault(model["id"], {"dim": model["dim"], "count": 0})["count"] += added
    ids = _Renumber(totals["max_memory"], totals["max_audit"], archived)
    with out.open("w", encoding="utf-8") as file:
        file.write(json.dumps(header) + "\n")
        section = None
        lines = _lines(lived)
        next(lines)  # the old header
        for line in lines:
            match = TYPE.match(line)
            if match is None:
                raise SystemExit(f"{lived}: a line that is not an export row: {line[:80]}")
            kind = match[1]
            if kind != section:
                _write_copies(file, cold.get(section or "", []), section, copies, ids, span)
                section = kind
            file.write(line)
        _write_copies(file, cold.get(section or "", []), section, copies, ids, span)
        _write_vectors(file, texts, model["id"], model["dim"])  # an export's last section
    return copies


class _Renumber:
    """Ids for copy `k` (1, 2, …): a memory's id moves up by `k` times the largest, so
    copies never meet; an audit entry takes the next free id."""

    def __init__(self, max_memory: int, max_audit: int, archived: set[int]) -> None:
        self.step, self.audit, self.archived = max_memory, max_audit, archived

    def memory(self, memory_id: int | None, k: int) -> int | None:
        if memory_id is None or memory_id not in self.archived:
            return memory_id  # a live memory is not copied: the copy points at it
        return memory_id + k * self.step

    def next_audit(self) -> int:
        self.audit += 1
        return self.audit


def _read_cold(path: Path) -> tuple[dict[str, Any], Cold, dict[str, int]]:
    """The header, the cold tier's lines by type (archived memories, their archive rows
    and audit entries), and the store's memory count and largest ids."""
    lines = _lines(path)
    header = json.loads(next(lines))
    records = [json.loads(line) for line in lines if not line.startswith('{"type": "vector"')]
    archived = {r["id"] for r in records if r["type"] == "memory" and r["status"] == "archived"}
    cold: Cold = {"memory": [], "archive": [], "audit": []}
    for record in records:
        key = "id" if record["type"] == "memory" else "memory_id"
        if record["type"] in cold and record.get(key) in archived:
            cold[record["type"]].append(record)
    totals = {
        "memories": sum(r["type"] == "memory" for r in records),
        "max_memory": max(r["id"] for r in records if r["type"] == "memory"),
        "max_audit": max((r["id"] for r in records if r["type"] == "audit"), default=0),
    }
    return header, cold, totals


def _counts(counts: dict[str, int], cold: Cold, copies: int) -> dict[str, int]:
    added = {"memories": len(cold["memory"]), "archive": len(cold["archive"])}
    added["audit"] = len(cold["audit"])
    added["graph_read"] = sum(bool(r.get("graph_read")) for r in cold["memory"])
    for field, table in NESTED.items():
        added[table] = sum(len(r.get(field) or []) for r in cold["memory"])
    return {table: n + copies * added.get(table, 0) for table, n in counts.items()}


def _write_copies(
    file: TextIO,
    records: list[dict[str, Any]],
    kind: str | None,
    copies: int,
    ids: _Renumber,
    span: timedelta,
) -> None:
    for k in range(1, copies + 1):
        for record in records:
            copy = _shifted(record, span * k)
            if kind == "memory":
                copy["id"] = ids.memory(copy["id"], k)
                copy["superseded_by"] = ids.memory(copy["superseded_by"], k)
                copy.update(_text(copy["text"], k))
            elif kind == "archive":
                copy["memory_id"] = ids.memory(copy["memory_id"], k)
                row = copy["record"]
                row["id"] = copy["memory_id"]
                row["superseded_by"] = ids.memory(row.get("superseded_by"), k)
                row.update(_text(row["text"], k))
                row["search_text"] = search_text(row["text"], row["subject"], row["object"])
            else:
                copy["id"] = ids.next_audit()
                copy["memory_id"] = ids.memory(copy["memory_id"], k)
            file.write(json.dumps(copy) + "\n")


def _text(text: str, k: int) -> dict[str, str]:
    """Copy `k`'s text of `text`, and its hash."""
    return {"text": f"{text} [{k}]", "content_hash": content_hash(f"{text} [{k}]")}


def _texts(memories: list[dict[str, Any]], k: int, span: timedelta) -> dict[str, str]:
    """Copy `k`'s texts: {content hash: when the first memory saying it was made}."""
    found: dict[str, str] = {}
    for memory in memories:
        found.setdefault(_text(memory["text"], k)["content_hash"], memory["created_at"])
    return {h: _shifted(at, span * k, "created_at") for h, at in found.items()}


def _write_vectors(file: TextIO, texts: list[dict[str, str]], model: str, dim: int) -> None:
    """A random unit vector for each copy's text (the lived store's texts have random
    ones too: `recall_speed.fill_vectors`)."""
    rng = np.random.default_rng(0)
    for copy in texts:
        vectors = rng.standard_normal((len(copy), dim))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for (content, created_at), vector in zip(copy.items(), vectors, strict=True):
            line = {"type": "vector", "content_hash": content, "model_id": model, "dim": dim,
                    "created_at": created_at,
                    "vector": base64.b64encode(to_blob(vector)).decode("ascii")}  # fmt: skip
            file.write(json.dumps(line) + "\n")


def _shifted(value: Any, back: timedelta, key: str = "") -> Any:
    """`value` with every time in it (fields named *_at, valid_from, valid_to) moved
    `back`; nested objects and lists too."""
    if isinstance(value, dict):
        return {k: _shifted(v, back, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shifted(v, back, key) for v in value]
    if isinstance(value, str) and (key.endswith("_at") or key in TIMES):
        return (datetime.fromisoformat(value) - back).isoformat(timespec="microseconds")
    return value


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as file:
        yield from file
