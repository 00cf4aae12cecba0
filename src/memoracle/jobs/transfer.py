"""Export and import of the whole memory as JSONL (docs/transfer.md): `export` and `import_`.

The file is a header line, then one JSON object per row, typed: episodes, the graph's
entities and relations, memories (each with its provenance, slots and graph links),
the cold tier, the audit log, runs, held writes and, when asked for, vectors. Ids are
kept, so an import into an empty store gives back the same memory: exporting that
store again writes the same lines. docs/transfer.md describes the format.

This module owns the file: its header, reading and writing it a line at a time,
refusing what it cannot take (a newer format or schema, a malformed line, a store that
is not empty), progress. The rows themselves are `store.transfer`'s.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from io import BufferedIOBase, BufferedReader
from pathlib import Path
from typing import Any, Protocol, TypeGuard

from memoracle.capture.redact import redact
from memoracle.clock import Clock, SystemClock
from memoracle.config import installed_version
from memoracle.engine import Engine
from memoracle.errors import EngineError, InvalidInput, NotFound, StoreError
from memoracle.files import write_atomically
from memoracle.ingest.callbacks import OnProgress, Throttle, no_progress
from memoracle.serialize import records
from memoracle.store.protocols import TransferRows
from memoracle.store.transfer import DATA_TABLES, FORMAT, HEADER, SECTIONS, export_header
from memoracle.text import content_hash
from memoracle.types import STATUSES, Scope

SCOPED_HEADER = "memoracle-scoped-export"  # one context's view: to read, not to import
GZIP_MAGIC = b"\x1f\x8b"  # the first bytes of a gzip file
PROGRESS_STEPS = 200  # progress calls per export or import, at most (plus the last)


class HasRows(Protocol):
    """A store opened alone, of either backend: its rows as export records."""

    @property
    def transfer(self) -> TransferRows: ...


@dataclass(frozen=True)
class ExportReport:
    path: Path
    format: int
    schema_version: int
    counts: dict[str, int]  # rows written, by table (nested ones included)
    lines: int  # lines after the header
    vectors: bool  # whether vectors were written
    bytes: int


@dataclass(frozen=True)
class ImportReport:
    path: Path
    format: int
    schema_version: int  # the schema the file was written from
    memoracle_version: str  # the memoracle that wrote it
    exported_at: str
    embedding_model: dict[str, Any]  # the exporting store's configured model: {id, dim}
    counts: dict[str, int]  # rows stored, by table
    lines: int  # lines read after the header
    # Live memories or turns have no vector for the configured model (`memoracle
    # reindex` embeds them); None when imported through a Store (no model configured).
    needs_reindex: bool | None


def export(
    source: Engine | HasRows,
    path: Path | str,
    *,
    vectors: bool = False,
    on_progress: OnProgress | None = None,
    clock: Clock | None = None,
) -> ExportReport:
    """Write the whole memory of `source` to `path` as JSONL, vectors too with
    `vectors`. Read in one snapshot (a capture meanwhile is in or out, never half), a
    page of rows at a time, written to a temp file renamed into place: an existing
    file at `path` is replaced only by a whole export. `on_progress(done, total)`
    counts lines."""
    rows, engine = _unpack(source)
    path = Path(path)
    if path.resolve() in {Path(f"{rows.path}{s}").resolve() for s in ("", "-wal", "-shm")}:
        raise InvalidInput(
            f"{path} is the database itself: an export is a new file. Choose another path,"
            " e.g. memoracle-export.jsonl."
        )
    now = (clock or (engine.clock if engine is not None else SystemClock())).now()
    with rows.snapshot():
        model = _configured_model(engine, rows)
        header = export_header(rows, vectors=vectors, exported_at=now, embedding_model=model)
        counts: dict[str, int] = header["counts"]
        total = sum(counts[s.table] for s in SECTIONS)
        throttle = Throttle(on_progress or no_progress, total, total // PROGRESS_STEPS)

        def lines() -> Iterator[str]:
            yield _line(header)
            done = 0
            for section in SECTIONS:
                if section.type == "vector" and not vectors:
                    continue
                for record in rows.records(section.type):
                    yield _line(record)
                    done += 1
                    throttle(done)

        write_atomically(path, lines())
    throttle.finish()
    return ExportReport(
        path=path,
        format=FORMAT,
        schema_version=rows.schema_version,
        counts=counts,
        lines=total,
        vectors=vectors,
        bytes=path.stat().st_size,
    )


def export_scope(
    engine: Engine,
    path: Path | str,
    scope: Scope,
    *,
    on_progress: OnProgress | None = None,
) -> ExportReport:
    """Write what `scope` may see (docs/scopes.md) to `path` as JSONL: a header, then
    every memory it sees in the main table (any status but archived), each with the
    turns it came from that it sees, then every turn it sees — the shapes of
    docs/json.md. One person's memory, to read or hand over; not a backup (`import_`
    refuses it). Written to a temp file renamed into place."""
    path = Path(path)
    statuses = [s for s in STATUSES if s != "archived"]
    memories = [m for status in statuses for m in engine.all_memories(status, seen_by=scope)]
    memories.sort(key=lambda m: m.id)
    turns = [e for page in engine.turns(scope=scope) for e in page]
    counts = {"memories": len(memories), "episodes": len(turns)}
    header = {
        "type": SCOPED_HEADER,
        "format": FORMAT,
        "memoracle_version": installed_version(),
        "exported_at": engine.clock.now().isoformat(),
        "scope": records.fields(engine.filled(scope)),
        "counts": counts,
    }
    total = len(memories) + len(turns)
    throttle = Throttle(on_progress or no_progress, total, total // PROGRESS_STEPS)

    def lines() -> Iterator[str]:
        yield _line(header)
        for done, m in enumerate(memories, 1):
            yield _line(
                {"type": "memory", **records.memory(m, episodes=engine.episodes_of(m, scope=scope))}
            )
            throttle(done)
        for done, e in enumerate(turns, len(memories) + 1):
            yield _line({"type": "episode", **records.episode(e)})
            throttle(done)

    write_atomically(path, lines())
    throttle.finish()
    return ExportReport(
        path=path,
        format=FORMAT,
        schema_version=engine.schema_version,
        counts=counts,
        lines=total,
        vectors=False,
        bytes=path.stat().st_size,
    )


def import_(
    target: Engine | HasRows,
    path: Path | str,
    *,
    on_progress: OnProgress | None = None,
    redact_text: bool = True,
) -> ImportReport:
    """Load an export into `target`, which must be empty (`memoracle init` on a new
    home), keeping every id. All or nothing: one transaction, checked before it
    commits (row counts against the header, references, both search indexes); any
    problem raises and leaves the store as it was. Free text is redacted as it comes in
    (a file from an older memoracle, or edited by hand, may hold secrets), unless
    `redact_text` is False: `migrate`, whose file was just written from a store's own
    rows, redacted when they were stored, copies them as they are (redacting a stored
    text again may change words that are no secret: a date resolved after redaction).
    Refused with InvalidInput: a file with no header, from a newer format or schema, a
    line that is not JSON or not a row (`file:line` and why), a file that does not add
    up (cut short). NotFound: no such file. `on_progress(done, total)` counts lines."""
    rows, engine = _unpack(target)
    path = Path(path)
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise NotFound(f"No file {path} to import. Write one with: memoracle export PATH") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    with handle, _unzipped(handle) as data:
        lines = _numbered(data, path)
        header = _header(path, lines, rows.schema_version)
        expected: dict[str, int] = header["counts"]
        total = sum(expected.get(s.table, 0) for s in SECTIONS)
        throttle = Throttle(on_progress or no_progress, total, total // PROGRESS_STEPS)
        done = 0
        with rows.transaction():
            filled = {t: n for t, n in rows.counts().items() if n}
            if filled:
                held = ", ".join(f"{t}: {n}" for t, n in filled.items())
                raise InvalidInput(
                    f"{rows.path} is not empty ({held}): an import keeps every id, so it only"
                    " goes into an empty store. Import into a new home: memoracle --home NEW"
                    f" init, then memoracle --home NEW import {path}. Nothing was imported."
                )
            rows.defer_foreign_keys()
            for lineno, text in lines:
                if not text.strip():
                    continue
                _insert(rows, path, lineno, text, redact_text)
                done += 1
                throttle(done)
            problems = rows.problems(expected)
            if problems:
                raise InvalidInput(
                    f"{path}: the file does not add up ({'; '.join(problems[:5])}). Was it"
                    " cut short or edited? Export again with: memoracle export PATH."
                    " Nothing was imported."
                )
    throttle.finish()
    return ImportReport(
        path=path,
        format=header["format"],
        schema_version=header["schema_version"],
        memoracle_version=str(header.get("memoracle_version", "unknown")),
        exported_at=str(header.get("exported_at", "")),
        embedding_model=dict(header.get("embedding_model") or {}),
        counts={t: expected.get(t, 0) for t in DATA_TABLES},
        lines=done,
        needs_reindex=_needs_reindex(engine),
    )


# -- reading ---------------------------------------------------------------------------


def _unzipped(handle: BufferedReader) -> BufferedIOBase:
    """The file's bytes: a gzip file (a PostgreSQL store's backup,
    `memoracle-…Z.pg.jsonl.gz`) unpacked as it is read, any other file as it is."""
    return gzip.GzipFile(fileobj=handle, mode="rb") if handle.peek(2)[:2] == GZIP_MAGIC else handle


def _numbered(handle: BufferedIOBase, path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line: split on \\n only and decoded one at a time,
    so a line that is not UTF-8 is named exactly; a gzip file cut short or damaged is
    named too."""
    for lineno, raw in enumerate(_read_lines(handle, path), start=1):
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{path}:{lineno}: not UTF-8 text (byte {exc.start}). Nothing was imported."
            ) from None
        yield lineno, text


def _read_lines(handle: BufferedIOBase, path: Path) -> Iterator[bytes]:
    while True:
        try:
            raw = handle.readline()
        except (EOFError, OSError, zlib.error) as exc:
            raise InvalidInput(
                f"{path}: the gzip file is cut short or damaged ({exc}). Nothing was imported."
            ) from None
        if not raw:
            return
        yield raw


def _header(path: Path, lines: Iterator[tuple[int, str]], schema_now: int) -> dict[str, Any]:
    first = next(lines, None)
    try:
        header = json.loads(first[1]) if first is not None else None
    except (ValueError, RecursionError):
        header = None
    if isinstance(header, dict) and header.get("type") == SCOPED_HEADER:
        raise InvalidInput(
            f"{path}:1: a scoped export (what one context sees, written by `memoracle export"
            " --user-id …`) is for reading, not a backup: it leaves out the rest of the store."
            " Import a whole export (memoracle export PATH). Nothing was imported."
        )
    if not isinstance(header, dict) or header.get("type") != HEADER:
        what = "is empty" if first is None else "does not start with an export header"
        raise InvalidInput(
            f"{path}:1: not a memoracle export: the file {what} (a first line"
            ' {"type": "memoracle-export", "format": ...}). Write one with: memoracle export'
            " PATH. Nothing was imported."
        )
    fmt, schema, counts = header.get("format"), header.get("schema_version"), header.get("counts")
    if not _is_int(fmt) or not _is_int(schema) or fmt < 1 or schema < 1:
        raise InvalidInput(
            f"{path}:1: the export header has no valid format and schema_version"
            f" (format {fmt!r}, schema_version {schema!r}). Nothing was imported."
        )
    by = f"memoracle {header.get('memoracle_version') or '(unknown version)'}"
    if fmt > FORMAT:
        raise InvalidInput(
            f"{path} is in export format {fmt}, written by {by}; this memoracle"
            f" ({installed_version()}) reads format {FORMAT} at most. Upgrade memoracle"
            " (pip install -U memoracle) and import again. Nothing was imported."
        )
    if schema > schema_now:
        raise InvalidInput(
            f"{path} was exported from a store at schema version {schema} by {by}; this"
            f" memoracle ({installed_version()}) knows schema version {schema_now} at most. Upgrade"
            " memoracle (pip install -U memoracle) and import again. Nothing was imported."
        )
    if not isinstance(counts, dict) or not all(
        isinstance(t, str) and _is_int(n) and n >= 0 for t, n in counts.items()
    ):
        raise InvalidInput(
            f"{path}:1: the export header's counts are missing or not row counts by"
            " table. Nothing was imported."
        )
    return header


def _insert(rows: TransferRows, path: Path, lineno: int, text: str, redact_text: bool) -> None:
    try:
        record = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{path}:{lineno}: not JSON ({exc}). Nothing was imported.") from None
    except RecursionError:
        raise InvalidInput(
            f"{path}:{lineno}: not JSON (nested too deeply). Nothing was imported."
        ) from None
    if not isinstance(record, dict):
        raise InvalidInput(
            f"{path}:{lineno}: a line is a JSON object with a type, not"
            f" {type(record).__name__}. Nothing was imported."
        )
    try:
        rows.insert(_redacted_record(record) if redact_text else record)
    except StoreError as exc:  # what SQLite refused: a duplicate id, a CHECK
        raise InvalidInput(
            f"{path}:{lineno}: {record.get('type')} {_id(record)} was refused by the store"
            f" ({_reason(exc)}). Nothing was imported."
        ) from None
    except InvalidInput as exc:
        raise InvalidInput(f"{path}:{lineno}: {exc}. Nothing was imported.") from None


# The fields of a record that hold words someone said or wrote (and, inside them, every
# string): an export from an older memoracle, or one edited by hand, may hold secrets
# there. Ids, times, hashes and vectors are left alone (and not paid for).
_FREE_TEXT = frozenset(
    "text subject predicate object speaker name alias aliases record detail details"
    " reasons reason note message error errors source".split()
)


def _redacted_record(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with the secrets of its free text redacted, as capture redacts a turn; a
    memory's or episode's content hash follows its new text."""
    out = {k: _redacted(v) if k in _FREE_TEXT else v for k, v in record.items()}
    text = out.get("text")
    if text != record.get("text") and isinstance(text, str) and "content_hash" in out:
        out["content_hash"] = content_hash(text)
    return out


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value).text
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    return value


def _id(record: dict[str, Any]) -> str:
    for key in ("id", "memory_id", "content_hash"):
        if key in record:
            return f"{key} {record[key]!r}"
    return ""


def _reason(exc: StoreError) -> str:
    """SQLite's words, without the database path StoreError starts with."""
    text = str(exc)
    return text.split(": ", 1)[1].rstrip(".") if ": " in text else text


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


# -- writing ---------------------------------------------------------------------------


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False) + "\n"


def _unpack(source: Engine | HasRows) -> tuple[TransferRows, Engine | None]:
    """The store's rows as records: through the engine, or of a store opened alone."""
    if isinstance(source, Engine):
        return source.transfer_rows(), source
    return source.transfer, None


def _configured_model(engine: Engine | None, rows: TransferRows) -> dict[str, Any]:
    """The embedding model the engine is configured with: its id and dimension (from
    the stored vectors, else from the model when that costs no request)."""
    none: dict[str, Any] = {"id": None, "dim": None}
    if engine is None:
        return none
    try:
        embedder = engine.searcher.embedder
    except EngineError:  # a model whose package is missing: the export goes on without
        return none
    if embedder is None:
        return none
    model_id = embedder.model_id
    stored = rows.vector_models()
    if model_id in stored:
        dim: int | None = stored[model_id][0]
    elif engine.settings.embedding.provider == "local":
        dim = embedder.dim
    else:
        dim = None  # an HTTP model tells its dimension only when asked over the network
    return {"id": model_id, "dim": dim}


def _needs_reindex(engine: Engine | None) -> bool | None:
    if engine is None:
        return None
    try:
        embedder = engine.searcher.embedder
    except EngineError:
        return None
    if embedder is None:
        return False
    return engine.vectors_missing(embedder.model_id) > 0


__all__ = ["FORMAT", "ExportReport", "HasRows", "ImportReport", "export", "import_"]
