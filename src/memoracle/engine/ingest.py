"""Reading files into the store: turns through the write path in batches, notes from
MEMORY.md and daily notes as stated memories, each run recorded with its counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time
from pathlib import Path

from memoracle import ingest as readers
from memoracle.capture.injection.learned import audit
from memoracle.capture.pipeline import prepare
from memoracle.embed import to_blob
from memoracle.embed.memo import Memo
from memoracle.engine import memories, write
from memoracle.engine.scope import fill_scope
from memoracle.engine.state import EngineState
from memoracle.errors import (
    InvalidInput,
    NotFound,
    WriteHeld,
)
from memoracle.ingest.callbacks import OnProgress, OnWarning
from memoracle.ingest.detect import ACCEPTED
from memoracle.ingest.walk import walk_folder
from memoracle.text import content_hash
from memoracle.types import (
    ImportedNote,
    IngestReport,
    IngestWarning,
    Scope,
    SkippedFile,
    Turn,
)

INGEST_BATCH = 200


def ingest(
    st: EngineState,
    paths: Iterable[Path],
    *,
    fmt: str | None = None,
    scope: Scope | None = None,
    on_progress: OnProgress | None = None,
    on_warning: OnWarning | None = None,
) -> IngestReport:
    """Read transcripts, exports and notes; capture every turn, import every note.

    A folder is walked (`ingest.walk`): every file a reader takes is read, in sorted
    order, the others are listed in the report's `skipped_files`. A malformed line is a
    warning (file:line) and the rest is read. A file that cannot be read at all raises,
    unless other files were given or found: then it is a warning too, so one bad file
    does not stop the others; it is refused before anything of it is stored (readers
    check a file before their first turn). `on_progress` sees one count over every
    file: bytes, each file weighted by its size.
    """
    scope = fill_scope(st.settings, scope)
    warnings: list[IngestWarning] = []

    def warn(w: IngestWarning) -> None:
        warnings.append(w)
        if on_warning is not None:
            on_warning(w)

    entries, skipped = _plan(list(paths), fmt, warn)
    bar = _Bar(on_progress, [e.size for e in entries]) if on_progress else None
    counts = {"turns": 0, "episodes": 0, "added": 0, "bumped": 0, "noise": 0}
    formats: dict[str, int] = {}
    files = 0
    run = st.start_run("ingest")
    try:
        for i, entry in enumerate(entries):
            try:
                kind = entry.fmt or readers.detect_format(entry.path)
                progress = bar.file(i) if bar is not None else None
                items = readers.read(entry.path, kind, on_warning=warn, on_progress=progress)
                _ingest_items(st, items, scope, counts, warn)
            except (InvalidInput, NotFound) as exc:
                if entry.alone:
                    raise
                warn(IngestWarning(str(entry.path), str(exc)))
                continue
            except OSError as exc:  # unreadable (permissions), or gone while read
                message = f"'{entry.path}': cannot read it ({exc.strerror or exc})."
                if entry.alone:
                    raise InvalidInput(message) from None
                warn(IngestWarning(str(entry.path), message))
                continue
            files += 1
            formats[kind] = formats.get(kind, 0) + 1
    except BaseException as exc:
        st.finish_run(run, "failed", counts, error=str(exc))
        raise
    if bar is not None:
        bar.finish()
    st.finish_run(run, "ok", counts)
    return IngestReport(
        files=files,
        format_counts=formats,
        turns=counts["turns"],
        episodes_added=counts["episodes"],
        memories_added=counts["added"],
        memories_bumped=counts["bumped"],
        skipped_noise=counts["noise"],
        warnings=tuple(warnings),
        skipped_files=skipped,
    )


@dataclass(frozen=True)
class _Entry:
    """One file to read: its resolved path (origins name the file absolutely), its
    format (None: detect it), its size, and whether it is the only path given (then a
    refusal is the call's error, not a warning)."""

    path: Path
    fmt: str | None
    size: int
    alone: bool = False


def _plan(
    given: list[Path], fmt: str | None, warn: OnWarning
) -> tuple[list[_Entry], tuple[SkippedFile, ...]]:
    """The files to read, in order: each path given, and each folder's files."""
    entries: list[_Entry] = []
    skipped: list[SkippedFile] = []
    for raw in given:
        path = Path(raw).expanduser()
        if not _is_dir(path):
            resolved = path.resolve()
            entries.append(_Entry(resolved, fmt, _size(resolved), alone=len(given) == 1))
            continue
        listing = walk_folder(path, fmt)
        skipped += listing.skipped
        entries += [_Entry(f.path.resolve(), f.fmt, f.size) for f in listing.files]
        if listing.files:
            continue
        what = "files" if not listing.skipped else "file a reader takes"
        message = f"'{path}' holds no {what}; there is nothing to ingest. {ACCEPTED}"
        if len(given) == 1 and not listing.skipped:
            raise InvalidInput(message)
        warn(IngestWarning(str(path), message))
    return entries, tuple(skipped)


def _is_dir(path: Path) -> bool:
    """Whether `path` is a folder; a name the system refuses (too long, say) is not one,
    and reading it as a file says what is wrong."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # missing: its refusal comes when it is read


class _Bar:
    """One progress count over every file. Readers count in their own units (bytes,
    rows for SQLite) from 0 to their own total; each file's share of the bar is its
    size in bytes, so the bar moves on steadily and never starts over."""

    def __init__(self, on_progress: OnProgress, sizes: list[int]) -> None:
        self._on_progress = on_progress
        self._sizes = [max(size, 1) for size in sizes]
        self._starts = [sum(self._sizes[:i]) for i in range(len(self._sizes))]
        self.total = max(sum(self._sizes), 1)

    def file(self, i: int) -> OnProgress:
        start, size = self._starts[i], self._sizes[i]

        def update(done: int, total: int) -> None:
            share = size if total <= 0 else size * min(done, total) // total
            self._on_progress(start + share, self.total)

        return update

    def finish(self) -> None:
        self._on_progress(self.total, self.total)


def _ingest_items(
    st: EngineState,
    items: Iterable[Turn | ImportedNote],
    scope: Scope,
    counts: dict[str, int],
    warn: OnWarning,
) -> None:
    batch: list[Turn | ImportedNote] = []

    def flush() -> None:
        mark = st._store.index.marks()
        with st._store.transaction():
            for item in batch:
                if isinstance(item, ImportedNote):
                    try:
                        imported = _import_note(st, item, scope)
                    except WriteHeld as exc:
                        warn(IngestWarning(item.origin or "?", str(exc)))
                        continue
                    if imported is not None:
                        counts["added" if imported else "bumped"] += 1
                    continue
                counts["turns"] += 1
                result = write.capture_one(st, item, scope, "ingest")
                counts["episodes"] += len(result.episodes)
                counts["added"] += len(result.added)
                counts["bumped"] += len(result.bumped)
                counts["noise"] += sum(s.startswith("noise:") for s in result.skipped)
        batch.clear()
        _keep_vectors(st, (mark[0], mark[1]))

    for item in items:
        if isinstance(item, Turn) and len(item.text) > st.settings.capture.max_turn_chars:
            warn(
                IngestWarning(
                    item.origin or "?",
                    f"turn of {len(item.text):,} characters skipped: over "
                    f"capture.max_turn_chars ({st.settings.capture.max_turn_chars:,})",
                )
            )
            continue
        batch.append(item)
        if len(batch) >= INGEST_BATCH:
            flush()
    if batch:
        flush()


def _keep_vectors(st: EngineState, after: tuple[int, int]) -> int:
    """Store the vectors this process already computed (`Memo.known`: a memory's, for the
    comparison by meaning; a one-sentence turn's, for the learned decision) for the texts
    stored after `after` (memory id, episode id), so that no one embeds them again.
    Returns how many were stored."""
    embedder = st.searcher.embedder
    if not isinstance(embedder, Memo) or st._store.readonly:
        return 0
    model_id, dim = embedder.model_id, embedder.dim
    kept = 0
    while True:
        batch, after = st._store.index.missing_vectors(model_id, after=after, limit=500)
        if not batch:  # a short batch is no end: a text stored twice is listed once
            return kept
        rows = [
            (h, model_id, dim, to_blob(vector))
            for h, text in batch
            if (vector := embedder.known(text)) is not None
        ]
        if rows:
            with st._store.transaction():
                st._store.index.put_vectors(rows, now=st.clock.now())
            kept += len(rows)


def _import_note(st: EngineState, note: ImportedNote, scope: Scope) -> bool | None:
    """Store one imported bullet. True: added; False: an existing memory seen again;
    None: this very line was imported before, and nothing changed."""
    now = st.clock.now()
    text = prepare(note.text).text.strip()
    if not text:
        return None
    existing = st._store.memories.find_duplicate(content_hash(text), None, scope)
    if existing is not None and st._store.memories.has_origin(existing, note.origin):
        return None
    observed = (
        datetime.combine(note.day, time(), tzinfo=st.zone).astimezone(UTC) if note.day else now
    )
    details = {"heading": note.heading} if note.heading else {}
    # Kept as written, even when already past: the nightly archives it as expired.
    expiry = memories.expiry_of(st, now, expires_at=note.until, past_ok=True)
    verdict = audit(text, head=lambda: st.injection_head)
    if verdict.level != "clean":
        held = write.hold(st, 
            text, level=verdict.level, reasons=verdict.reasons, kind=note.kind,
            source="import", observed_at=observed, scope=scope, actor="import", now=now,
            origin=note.origin, expires_at=expiry,
        )  # fmt: skip
        raise WriteHeld(write.held_message(held), held.ref)
    new = write.stated(
        st,
        text,
        kind=note.kind,
        source="import",
        observed_at=observed,
        scope=scope,
        details=details,
    )
    new = replace(new, expires_at=expiry)
    return write.store_memory(st, new, now=now, actor="import", origin=note.origin)[1]
