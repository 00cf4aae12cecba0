"""`memoracle redact`: today's redaction applied to everything stored before it.

A store written by an older memoracle keeps what its redaction let through. `redact`
runs `capture.redact.redact` again over every stored memory and turn and every copy of
their text — search text, both FTS indexes, the graph's names, the audit log's and the
cold tier's stored texts, held writes, vectors of changed texts (dropped, embedded
again) — then the files (MEMORY.md, memoracle's record of its block, SESSION-START.md,
daily notes, topic files, reference/, the knowledge-graph JSONL and graph log, packed
old notes) and the backups. Order of a real run (docs/lifecycle.md#redact):

1. the store's primary texts are read, and what the redaction removes learned
   (`clean.Cleaner`);
2. each database backup is rewritten through the same redaction on a copy, verified
   and renamed over the old one (`files.clean_backup`);
3. a verified backup of the store is taken into a private temporary folder of HOME;
   every changed value is written in one transaction, each row audited (action
   `redact`, never the text); freed pages are zeroed and VACUUM gives them back, the
   WAL truncated; the store is checked (quick check, row counts as before) and only
   then is the temporary backup deleted — it held the old text. A run that fails
   after its commit keeps it and names it;
4. the files are rewritten; the graph log is brought in step with the store;
5. the changed texts are embedded again (`reindex`), and the run recorded with the
   rules' fingerprint (`rules_fingerprint`), which `nightly` compares to run this
   again when the rules change (`due`).

`dry_run` reads everything and writes nothing: the report says what would change.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections import Counter
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from memoracle.engine import Engine
from memoracle.errors import EngineError, StoreError, WorkspaceError
from memoracle.files import pid_lock
from memoracle.jobs import graph_log
from memoracle.jobs.scrub import database, files
from memoracle.jobs.scrub.clean import Cleaner
from memoracle.jobs.scrub.database import PlaceChange
from memoracle.jobs.scrub.files import FileChange
from memoracle.workspace import NIGHTLY_LOCK, note_lock

__all__ = ["RedactReport", "due", "locked", "redact_store", "rules_fingerprint"]

RUN_KIND = "redact"  # the runs table's record of each real run, with the rules' fingerprint


@dataclass
class RedactReport:
    dry_run: bool
    rules: str  # sha256 of the redaction's source and rule files
    places: list[PlaceChange] = field(default_factory=list)  # the store's columns
    files: list[FileChange] = field(default_factory=list)  # files and backups
    vectors_dropped: int = 0
    embedded: int = 0
    reclaimed_bytes: int = 0
    guard_backup: Path | None = None  # kept only when a run failed after its commit
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.places)

    @property
    def kinds(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for place in self.places:
            total.update(place.kinds)
        for file in self.files:
            total.update(file.kinds)
        return total

    def counts(self) -> dict[str, int]:
        """The run's counts, as the runs table and nightly's report keep them."""
        return {
            "rows": self.rows,
            "files": sum(f.what != files.BACKUP for f in self.files),
            "backups": sum(f.what == files.BACKUP for f in self.files),
            "vectors_dropped": self.vectors_dropped,
            "embedded": self.embedded,
            "problems": len(self.problems),
        }


def rules_fingerprint() -> str:
    """sha256 over the source of `memoracle.capture.redact` (a module or a package)
    and the files of `language/rules/secrets/` when there is such a folder, read
    through importlib.resources: it changes exactly when the redaction's rules do."""
    digest = hashlib.sha256()
    capture = resources.files("memoracle.capture")
    for item in (capture / "redact.py", capture / "redact"):
        _feed(digest, item, "capture")
    _feed(digest, resources.files("memoracle.language") / "rules" / "secrets", "rules")
    return digest.hexdigest()


def _feed(digest: hashlib._Hash, item: Traversable, prefix: str) -> None:
    name = f"{prefix}/{item.name}"
    if item.is_file():
        if not item.name.endswith((".pyc", ".pyo")):
            digest.update(name.encode() + b"\0" + item.read_bytes() + b"\0")
    elif item.is_dir() and item.name != "__pycache__":
        for child in sorted(item.iterdir(), key=lambda c: c.name):
            _feed(digest, child, name)


def fingerprint_number(rules: str) -> int:
    """The fingerprint as the runs table keeps it: its first 52 bits (a JSON number any
    reader holds exactly); enough to tell one set of rules from the next."""
    return int(rules[:13], 16)


def due(engine: Engine) -> bool:
    """Whether the redaction's rules changed since the last real run (or it never ran)."""
    last = engine.last_run(RUN_KIND, status="ok")
    return last is None or last.counts.get("rules") != fingerprint_number(rules_fingerprint())


def locked(home: Path) -> AbstractContextManager[None]:
    """HOME/nightly.lock for a `memoracle redact` of its own: it and a nightly run
    rewrite the same files and backups, so one waits for the other (the nightly's
    redact step runs under the nightly's own hold of it)."""
    path = home / NIGHTLY_LOCK
    return pid_lock(
        path,
        busy=lambda pid: (
            f"A nightly run or another redaction (pid {pid}) is working on {home}; "
            f"wait for it, or remove {path} if that process is gone."
        ),
    )


def redact_store(engine: Engine, *, dry_run: bool = False, embed: bool = True) -> RedactReport:
    """Apply today's redaction to everything stored (see the module's docstring for the
    order). `embed`: embed the changed texts again now (the nightly leaves it to its
    reindex step). A file or backup that cannot be rewritten is named in `problems` and
    the rest goes on; a store that fails its check after the commit raises StoreError
    naming the backup taken before."""
    if engine.readonly and not dry_run:
        raise StoreError(
            f"{engine.store_location}: the workspace is read-only, so nothing can be redacted"
            " here; run memoracle redact where it is writable (--dry-run works here)."
        )
    started = time.perf_counter()
    report = RedactReport(dry_run=dry_run, rules=rules_fingerprint())
    cleaner = Cleaner()
    now = engine.clock.now()
    database.learn(engine, cleaner)
    # The store's plan first: the texts it finds clean are not redacted again in each
    # backup, which holds most of them too.
    found = database.plan(engine, cleaner)
    report.places = found.changes
    for path, what in files.targets(engine.settings):
        if what != files.BACKUP:
            continue
        try:
            change = files.clean_backup(engine, path, cleaner, now=now, dry_run=dry_run)
        except (StoreError, WorkspaceError) as exc:
            report.problems.append(str(exc))
            continue
        if change is not None:
            report.files.append(change)
    if found.rows and not dry_run:
        _rewrite_store(engine, found, report)
    if any(p.place in ("memories.text", "episodes.text") for p in found.changes):
        _drop_ann_graphs(engine, report, dry_run)
    with nullcontext() if dry_run else note_lock(engine.settings.home):
        _rewrite_files(engine, cleaner, report, dry_run)
    if not dry_run:
        if embed and report.vectors_dropped and engine.searcher.embedder is not None:
            report.embedded = engine.reindex()
        # A run with problems is recorded as failed: the next nightly tries it again.
        run = engine.start_run(RUN_KIND)
        status = "failed" if report.problems else "ok"
        counts = {**report.counts(), "rules": fingerprint_number(report.rules)}
        engine.finish_run(run, status, counts, error="; ".join(report.problems) or None)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _rewrite_store(engine: Engine, found: database.Plan, report: RedactReport) -> None:
    """Step 3: guarded by a verified backup in a private temporary folder, deleted once
    the rewritten store has passed its check."""
    home = engine.settings.home
    guard = Path(tempfile.mkdtemp(prefix=".redact-", dir=home))
    try:
        before = engine.backup_to(guard)
        report.vectors_dropped = database.apply(
            engine, found, now=engine.clock.now(), actor="redact", audit=True
        )
    except BaseException:
        shutil.rmtree(guard, ignore_errors=True)  # nothing was committed
        raise
    try:
        report.reclaimed_bytes = engine.compact_store()
        problems = engine.check_store()
        counts = _counts(engine)
        kept = {k: v for k, v in before.counts.items() if k != "audit"}
        if problems != ["ok"] or counts != kept:
            raise StoreError(
                f"{engine.store_location}: after the redaction the store fails its check"
                f" ({'; '.join(problems[:3]) if problems != ['ok'] else counts}). The backup"
                f" taken before it is {before.path}; restore it with: memoracle doctor"
            )
    except BaseException:
        report.guard_backup = before.path
        raise
    shutil.rmtree(guard, ignore_errors=True)


def _drop_ann_graphs(engine: Engine, report: RedactReport, dry_run: bool) -> None:
    """The HNSW graphs (HOME/index/*.hnsw) label their rows with the content hashes of
    the texts they hold, a hash of the old text among them: removed, as derived data
    (`reindex` builds a graph again when the store is big enough for one)."""
    for path in sorted((engine.settings.home / "index").glob("*.hnsw")):
        if not dry_run:
            try:
                path.unlink()
            except OSError as exc:
                report.problems.append(f"{path}: cannot remove it ({exc.strerror or exc}).")
                continue
        report.files.append(FileChange(path, files.REMOVED, 1))


def _counts(engine: Engine) -> dict[str, int]:
    stats = engine.text_counts()
    return {k: v for k, v in stats.items() if k != "audit"}


def _rewrite_files(engine: Engine, cleaner: Cleaner, report: RedactReport, dry_run: bool) -> None:
    """Step 4: every file but the backups; then the graph log is appended with what
    the store's graph now says and the log does not (a renamed entity, say)."""
    for path, what in files.targets(engine.settings):
        try:
            if what == files.BACKUP:
                continue
            if what == files.PACKED:
                change = files.clean_packed(path, cleaner, dry_run=dry_run)
            else:
                change = files.clean_file(path, what, cleaner, dry_run=dry_run)
        except WorkspaceError as exc:
            report.problems.append(str(exc))
            continue
        if change is not None:
            report.files.append(change)
    log = graph_log.log_path(engine.settings)
    if not dry_run and log.is_file() and any(f.path == log for f in report.files):
        try:
            graph_log.append(engine)
        except EngineError as exc:
            report.problems.append(f"{log}: {exc}")
