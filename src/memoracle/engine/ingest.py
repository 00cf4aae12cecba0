"""Reading files into the store: turns through the write path in batches, notes from
MEMORY.md and daily notes as stated memories, each run recorded with its counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime, time
from pathlib import Path

from memoracle import ingest as readers
from memoracle.capture.injection import classify
from memoracle.capture.pipeline import prepare
from memoracle.engine import memories, write
from memoracle.engine.scope import fill_scope
from memoracle.engine.state import EngineState
from memoracle.errors import (
    InvalidInput,
    NotFound,
    WriteHeld,
)
from memoracle.ingest.callbacks import OnProgress, OnWarning
from memoracle.text import content_hash
from memoracle.types import (
    ImportedNote,
    IngestReport,
    IngestWarning,
    Scope,
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

    A malformed line is a warning (file:line) and the rest is read. A path that
    cannot be read at all raises, unless other paths were read: then it is a warning
    too, so one bad file in a batch does not stop the others.
    """
    scope = fill_scope(st.settings, scope)
    warnings: list[IngestWarning] = []

    def warn(w: IngestWarning) -> None:
        warnings.append(w)
        if on_warning is not None:
            on_warning(w)

    counts = {"turns": 0, "episodes": 0, "added": 0, "bumped": 0, "noise": 0}
    formats: dict[str, int] = {}
    files = 0
    run = st.start_run("ingest")
    path_list = list(paths)
    try:
        for given in path_list:
            path = Path(given).expanduser().resolve()  # origins name the file absolutely
            try:
                kind = fmt or readers.detect_format(path)
                items = readers.read(path, kind, on_warning=warn, on_progress=on_progress)
                _ingest_items(st, items, scope, counts, warn)
            except (InvalidInput, NotFound) as exc:
                if len(path_list) == 1:
                    raise
                warn(IngestWarning(str(path), str(exc)))
                continue
            files += 1
            formats[kind] = formats.get(kind, 0) + 1
    except BaseException as exc:
        st.finish_run(run, "failed", counts, error=str(exc))
        raise
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
    )


def _ingest_items(
    st: EngineState,
    items: Iterable[Turn | ImportedNote],
    scope: Scope,
    counts: dict[str, int],
    warn: OnWarning,
) -> None:
    batch: list[Turn | ImportedNote] = []

    def flush() -> None:
        with st.store.transaction():
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


def _import_note(st: EngineState, note: ImportedNote, scope: Scope) -> bool | None:
    """Store one imported bullet. True: added; False: an existing memory seen again;
    None: this very line was imported before, and nothing changed."""
    now = st.clock.now()
    text = prepare(note.text).text.strip()
    if not text:
        return None
    existing = st.store.memories.find_duplicate(content_hash(text), None, scope)
    if existing is not None and st.store.memories.has_origin(existing, note.origin):
        return None
    observed = (
        datetime.combine(note.day, time(), tzinfo=st.zone).astimezone(UTC) if note.day else now
    )
    details = {"heading": note.heading} if note.heading else {}
    # Kept as written, even when already past: the nightly archives it as expired.
    expiry = memories.expiry_of(st, now, expires_at=note.until, past_ok=True)
    verdict = classify(text)
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
