"""The health check of a workspace: what `health.json` says, and when to worry.

Owns the health checks (docs/lifecycle.md) over one engine — disk use, memory counts against
`lifecycle.max_facts`, the average activation, the daily notes, MEMORY.md's block against its
budget, the vector index, the last nightly run, the store itself and its check (SQLite's quick
check; on PostgreSQL the server's state and memoracle's consistency check) — the warnings they
raise (thresholds from `health.*`; each message names the number, the threshold and the
command that helps), and the files they end in: `health.json`, replaced atomically, and one
line per check appended to `health-history.jsonl` for trend charts.

`check` only reads: nothing is written to the store or the workspace, so it can run at any
time. It never raises on a damaged workspace: a check that fails becomes a warning naming
what failed, and a database that is damaged or cannot be read makes the status "failing";
one that cannot even be opened gets `unopened`'s failing report. When to check (the nightly
run's last step, `memoracle health`) and how to show the result are the caller's.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from memoracle import outbox
from memoracle.config import Settings, installed_version
from memoracle.engine import Engine
from memoracle.errors import EngineError, StoreError, WorkspaceError
from memoracle.files import tree_bytes, write_atomically
from memoracle.jobs import canary, cron, pointers
from memoracle.jobs.thinking.files import health as model_health
from memoracle.lifecycle.scoring import activation
from memoracle.render.memory_md import BlockError, budget_warning, extract_block
from memoracle.types import STATUSES
from memoracle.workspace import MEMORY_FILE, NOTES_DIR

__all__ = ["HEALTH_FILE", "HISTORY_FILE", "HealthReport", "HealthWarning", "check", "exit_code",
           "unopened", "write"]  # fmt: skip

HEALTH_FILE = "health.json"
HISTORY_FILE = "health-history.jsonl"  # under HOME, one report a line
INDEX_DIR = "index"  # HOME/index: the HNSW graph files
NIGHTLY_MAX_AGE = timedelta(hours=48)  # a store with memories wants a nightly run this often
BUDGET_WARN = 0.9  # share of MEMORY.md's block budget from which the block is nearly full
POINTERS_SHOWN = 20  # broken pointers listed in health.json (all are counted)
QUICK_CHECK_ROWS = 5  # problems of SQLite's quick check named in the report, at most
DUPLICATE_SAMPLE = 200  # newest live memories the duplicate rate is measured on

HEALTHY, WARNING, FAILING = "healthy", "warning", "failing"
_EXIT_CODES = {HEALTHY: 0, WARNING: 1, FAILING: 2}
# health.json's measurements, in its order: `check` takes each, `unopened` none but two.
FIELDS = tuple(
    "memoracle_version disk memories average_activation files index index_bytes last_nightly"
    " database pointers canary graph duplicates duplicate_rate drift queue cron model".split()
)

_T = TypeVar("_T")


@dataclass(frozen=True)
class HealthWarning:
    """One thing to look at. `code` is stable, for scripts ("disk_usage_high");
    `message` is for a person. `severity` is "warning", or "failing" when the database
    is damaged or cannot be read."""

    code: str
    message: str
    severity: str = WARNING

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "message": self.message}


@dataclass(frozen=True)
class HealthReport:
    """What `check` found. `status`: "healthy" (no warnings), "warning" or "failing".
    `fields`: the measurements, JSON-ready (memoracle_version, disk, memories,
    average_activation, files, index, index_bytes, last_nightly, database); a
    measurement that could not be taken is None and has its warning."""

    status: str
    checked_at: datetime
    fields: dict[str, object]
    warnings: tuple[HealthWarning, ...]

    def to_json(self) -> dict[str, object]:
        """The body of health.json: status, checked_at, the fields, the warnings."""
        return {
            "status": self.status,
            "checked_at": self.checked_at.isoformat(),
            **self.fields,
            "warnings": [w.to_json() for w in self.warnings],
        }


def check(
    engine: Engine, *, probe: bool = False, integrity_checked: datetime | None = None
) -> HealthReport:
    """Measure the workspace and judge it against `health.*`. Read-only: nothing is written
    to the store or the files — unless `probe`, which also runs the canary queries of
    HOME/canary.json through search (which embeds texts still without a vector). SQLite's
    quick check reads the whole database (half a minute at 4 GB): `integrity_checked`, the
    time of a passed check, skips it and reports that one (the nightly run checks weekly).
    Never raises for a damaged workspace: what could not be measured is a warning, and a
    damaged or unreadable database makes the status "failing"."""
    now = engine.clock.now()
    checks = _Checks()
    database = checks.run(
        "database integrity", lambda: _database(engine, checks, now, integrity_checked)
    )
    memories = checks.run("memory counts", lambda: _memories(engine, checks))
    has_memories = bool(memories and memories["total"])
    fields: dict[str, object] = {
        "memoracle_version": installed_version(),
        "disk": checks.run("disk usage", lambda: _disk(engine, checks)),
        "memories": memories,
        "average_activation": checks.run(
            "average activation", lambda: _average_activation(engine, now, checks)
        ),
        "files": checks.run("workspace files", lambda: _files(engine, checks)),
        "index": checks.run("vector index", lambda: _index(engine, checks)),
        "index_bytes": checks.run(
            "index files", lambda: tree_bytes(engine.settings.home / INDEX_DIR)
        ),
        "last_nightly": checks.run(
            "last nightly run", lambda: _last_nightly(engine, now, has_memories, checks)
        ),
        "database": database,
        "pointers": checks.run("pointers", lambda: _pointers(engine, checks)),
        "canary": checks.run("canary probe", lambda: _canary(engine, checks)) if probe else None,
    }
    fields["graph"] = checks.run("knowledge graph", engine.graph_counts)
    queue = checks.run("write queue", lambda: _queue(engine.settings.home, now, checks))
    duplicates = checks.run("duplicates", lambda: _duplicates(engine, checks))
    fields["duplicates"] = duplicates
    fields["duplicate_rate"] = None if duplicates is None else duplicates["rate"]
    warnings = tuple(checks.warnings)
    fields["drift"] = checks.run("drift", lambda: _drift(engine, fields, warnings))
    fields["queue"] = queue
    fields["cron"] = checks.run("cron health", lambda: cron.check(engine, now, checks.warn))
    fields["model"] = checks.run("model", lambda: model_health(engine.settings.home, checks.warn))
    warnings = tuple(checks.warnings)
    failing = any(w.severity == FAILING for w in warnings)
    status = FAILING if failing else WARNING if warnings else HEALTHY
    return HealthReport(status, now, fields, warnings)


def unopened(settings: Settings, now: datetime, error: EngineError) -> HealthReport:
    """The report on a store that cannot be opened at all (overwritten, unreadable): failing,
    the reason naming the file, nothing else measured. Written as any report is, so
    health.json never goes on showing the last healthy check."""
    path = settings.db_path
    why = (
        f"{error} The store could not be opened, so nothing else was checked. Stop the "
        f"agents that write to it, then run: memoracle --home {settings.home} doctor --fix"
        " (--dry-run first shows what it would restore)."
    )
    size = path.stat().st_size if path.is_file() else None
    database = {"path": str(path), "bytes": size, "integrity": str(error)}
    database["integrity_checked_at"] = now.isoformat()
    fields = {**dict.fromkeys(FIELDS), "memoracle_version": installed_version()}
    fields["database"] = database
    checks = _Checks()  # what waits to be stored meanwhile (docs/outage.md)
    fields["queue"] = checks.run("write queue", lambda: _queue(settings.home, now, checks))
    failing = HealthWarning("database_unreadable", why, FAILING)
    return HealthReport(FAILING, now, fields, (failing, *checks.warnings))


def write(where: Engine | Path, report: HealthReport, *, output_dir: Path | None = None) -> Path:
    """Write `report` as health.json in `output_dir` (default: HOME, the engine's or the
    path given), atomically (a temp file in the same folder, then a rename: a reader never
    sees half a file), and append it as one line to HOME/health-history.jsonl. Returns
    health.json's path; a file that cannot be written is a WorkspaceError naming it."""
    home = where if isinstance(where, Path) else where.settings.home
    body = report.to_json()
    path = (output_dir or home) / HEALTH_FILE
    write_atomically(path, json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    cron.write(home, report.fields.get("cron"), report.checked_at)  # CRON-HEALTH.md
    history = home / HISTORY_FILE
    try:
        with open(history, "a", encoding="utf-8") as f:
            f.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")
    except OSError as exc:
        raise WorkspaceError(
            f"{history}: cannot append to it ({exc.strerror or exc}); "
            "check the folder's permissions."
        ) from None
    return path


def exit_code(report: HealthReport) -> int:
    """The process exit code for `report`: 0 healthy, 1 warning, 2 failing."""
    return _EXIT_CODES[report.status]


# -- the checks ------------------------------------------------------------------------


class _Checks:
    """The warnings found so far, and the guard that turns a failed check into one."""

    def __init__(self) -> None:
        self.warnings: list[HealthWarning] = []

    def warn(self, code: str, message: str, severity: str = WARNING) -> None:
        self.warnings.append(HealthWarning(code, message, severity))

    def run(self, what: str, measure: Callable[[], _T]) -> _T | None:
        """`measure()`, or None when it raised, with the failure noted as a warning."""
        try:
            return measure()
        except StoreError as exc:
            self.warn(
                "database_unreadable",
                f"The {what} check could not read the database: {exc}",
                FAILING,
            )
        except Exception as exc:
            # Whatever goes wrong in one check (a file vanishing, a bug), the report
            # still comes out, with the other checks and this failure in it.
            self.warn(
                "check_failed",
                f"The {what} check failed ({type(exc).__name__}: {exc}); "
                "the other checks ran. Run `memoracle health` again to see if it persists.",
            )
        return None


def _database(
    engine: Engine, checks: _Checks, now: datetime, passed: datetime | None
) -> dict[str, object]:
    """The store itself (`Engine.store_state`: an SQLite file's path and size; a
    server's URL, versions, indexes, size and dead rows, each problem a warning) and its
    check (SQLite's quick check; on a server, memoracle's consistency check): run now,
    unless `passed` says when one passed (then not read again)."""
    state = engine.store_state()
    checked_at = passed or now
    if passed is not None:
        integrity = "ok"
    else:
        try:
            problems = engine.check_store(QUICK_CHECK_ROWS)
            integrity = "ok" if problems == ["ok"] else "; ".join(problems)
        except StoreError as exc:  # a check that cannot finish is a failed check
            integrity = str(exc)
    if integrity != "ok" and state.backend != "sqlite":
        checks.warn(
            "server_check_failed",
            f"{state.where}: {state.check_name} failed ({integrity}). `memoracle doctor`"
            " says what each problem means and how to mend it.",
            FAILING,
        )
    elif integrity != "ok":
        checks.warn(
            "database_damaged",
            f"{state.where}: {state.check_name} failed ({integrity}). Stop the agents that "
            f"write to it, then run: memoracle --home {engine.settings.home} doctor --fix"
            " (--dry-run first shows what it would restore).",
            FAILING,
        )
    for problem in state.problems:
        checks.warn(problem.code, problem.detail)
    return {**state.fields, "integrity": integrity, "integrity_checked_at": checked_at.isoformat()}


def _queue(home: Path, now: datetime, checks: _Checks) -> dict[str, object]:
    """The write queue (docs/outage.md): what waits, and a warning while anything does."""
    state = outbox.status(home)
    for code, message in state.warnings(now):
        checks.warn(code, message)
    return state.to_json(now)


def _memories(engine: Engine, checks: _Checks) -> dict[str, int | float | None]:
    by_status = dict.fromkeys(STATUSES, 0)
    for (status, _kind), n in engine.memory_counts().items():
        by_status[status] = by_status.get(status, 0) + n
    # Guardrails and pinned memories are never archived to hold the cap: not counted.
    capped = engine.capped_count()
    max_facts = engine.settings.lifecycle.max_facts
    ratio = engine.settings.health.facts_warn_ratio
    if capped > ratio * max_facts:
        checks.warn(
            "facts_near_limit",
            f"{capped:,} active memories (guardrails and pinned ones aside), over "
            f"{ratio:.0%} of lifecycle.max_facts ({max_facts:,}). Run `memoracle archive "
            "--apply` to move the faded and surplus ones to the cold tier, or raise "
            "lifecycle.max_facts.",
        )
    return {
        "total": sum(by_status.values()),
        **by_status,
        "capped": capped,
        "max_facts": max_facts,
        "percent_of_max": round(100 * capped / max_facts, 1) if max_facts > 0 else None,
    }


def _disk(engine: Engine, checks: _Checks) -> dict[str, int | float]:
    home = engine.settings.home
    usage = shutil.disk_usage(home)
    percent = round(100 * usage.used / usage.total, 1) if usage.total else 0.0
    ours = tree_bytes(home)
    limit = engine.settings.health.disk_warn_percent
    if percent > limit:
        checks.warn(
            "disk_usage_high",
            f"The disk holding {home} is {percent}% full, over health.disk_warn_percent "
            f"({limit:g}%); memoracle uses {ours:,} bytes of it. Free space on that disk; "
            "`memoracle stats` shows the database's size.",
        )
    return {
        "bytes_used_by_memoracle": ours,
        "disk_total_bytes": usage.total,
        "disk_used_percent": percent,
    }


def _average_activation(engine: Engine, now: datetime, checks: _Checks) -> float | None:
    active = engine.all_memories("active")
    if not active:
        return None
    decay, health = engine.settings.decay, engine.settings.health
    mean = round(sum(activation(m, now, decay) for m in active) / len(active), 4)
    if mean < health.activation_low:
        checks.warn(
            "activation_low",
            f"Average activation {mean:.2f} is below health.activation_low "
            f"({health.activation_low:g}): most memories are fading. Run `memoracle archive "
            f"--apply` to retire the faded ones, or raise decay.half_life_days "
            f"({decay.half_life_days:g}).",
        )
    elif mean > health.activation_high and min(m.observed_at for m in active) < now - timedelta(
        days=decay.half_life_days
    ):  # not in a store younger than a half-life: everything in it is fresh by right
        checks.warn(
            "activation_high",
            f"Average activation {mean:.2f} is above health.activation_high "
            f"({health.activation_high:g}): memories barely fade. Lower "
            f"decay.half_life_days ({decay.half_life_days:g}); `memoracle score` shows "
            "what would be kept.",
        )
    return mean


def _files(engine: Engine, checks: _Checks) -> dict[str, int | None]:
    notes = engine.settings.files_dir / NOTES_DIR
    return {
        "daily_notes": sum(1 for p in notes.glob("*.md") if _is_daily_note(p)),
        "archived_notes": sum(1 for p in (notes / "archive").rglob("*.md") if p.is_file()),
        **_memory_md(engine, checks),
    }


def _is_daily_note(path: Path) -> bool:
    try:
        day = date.fromisoformat(path.stem)
    except ValueError:
        return False  # a topic file
    return path.name == f"{day:%Y-%m-%d}.md" and path.is_file()


def _memory_md(engine: Engine, checks: _Checks) -> dict[str, int | None]:
    """Lines and characters of MEMORY.md and of memoracle's block in it (None: no file,
    or no block). The block is measured as `render` budgets it: LF line ends, markers
    and a final newline included."""
    path = engine.settings.files_dir / MEMORY_FILE
    sizes: dict[str, int | None] = dict.fromkeys(
        ("memory_md_lines", "memory_md_chars", "memory_md_block_lines", "memory_md_block_chars")
    )
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return sizes
    except (UnicodeDecodeError, OSError) as exc:
        why = (
            f"not UTF-8 text (byte {exc.start + 1}); memoracle cannot update its block. Save"
            " the file as UTF-8"
            if isinstance(exc, UnicodeDecodeError)
            else f"cannot read it ({exc.strerror or exc}); check its permissions"
        )
        checks.warn("memory_md_unreadable", f"{path}: {why}, then run `memoracle nightly`.")
        return sizes
    sizes["memory_md_lines"] = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    sizes["memory_md_chars"] = len(text)
    try:
        block = extract_block(text)
    except BlockError as exc:
        checks.warn(
            "memory_md_markers",
            f"{path}: {exc} memoracle leaves the file alone until then; afterwards run "
            "`memoracle nightly`.",
        )
        return sizes
    if block is None:
        return sizes
    measured = block.replace("\r\n", "\n") + "\n"
    lines, chars = measured.count("\n"), len(measured)
    sizes["memory_md_block_lines"], sizes["memory_md_block_chars"] = lines, chars
    render = engine.settings.render
    max_lines, max_chars = render.memory_md_max_lines, render.memory_md_max_chars
    prune = engine.settings.health.memory_md_prune_ratio
    found = budget_warning(lines, chars, max_lines, max_chars, full=BUDGET_WARN, prune=prune)
    if found is not None:
        checks.warn(found[0], f"memoracle's block in {path} has {found[1]}")
    return sizes


def _index(engine: Engine, checks: _Checks) -> dict[str, object]:
    status = engine.index_status()
    threshold = engine.settings.embedding.ann_threshold
    if status.stale:
        checks.warn(
            "index_stale",
            f"The store's vectors are for {', '.join(sorted(status.models))}, not the "
            f"configured model {status.model}: search uses words only. "
            "Run `memoracle reindex`.",
        )
    elif status.missing > 0:
        checks.warn(
            "vectors_missing",
            f"{status.missing:,} live texts have no vector for {status.model} (expected 0): "
            "search finds them by their words only. Run `memoracle reindex`.",
        )
    if status.ann == "missing":
        checks.warn(
            "ann_missing",
            f"{status.vectors:,} vectors reach embedding.ann_threshold ({threshold:,}) but "
            "the HNSW graph is not built, so search is exact and slow. "
            "Run `memoracle reindex`.",
        )
    elif status.ann == "unavailable":
        checks.warn(
            "ann_unavailable",
            f"{status.vectors:,} vectors reach embedding.ann_threshold ({threshold:,}) but "
            "the ann extra is not installed, so search is exact and slow. Run "
            "`pip install 'memoracle[ann]'`, then `memoracle reindex`.",
        )
    return {k: getattr(status, k) for k in ("model", "dim", "vectors", "missing", "stale", "ann")}


def _last_nightly(
    engine: Engine, now: datetime, has_memories: bool, checks: _Checks
) -> dict[str, object] | None:
    run = engine.last_run("nightly")
    wanted = NIGHTLY_MAX_AGE / timedelta(hours=1)
    schedule = engine.settings.schedule.nightly
    if run is None:
        if has_memories:
            checks.warn(
                "nightly_missing",
                f"No nightly run yet (wanted at least every {wanted:g} hours). Run "
                f"`memoracle nightly`, and schedule it (schedule.nightly: {schedule}).",
            )
        return None
    at = run.finished_at or run.started_at
    millis = run.counts.get("milliseconds")
    seconds = None if millis is None else millis / 1000
    limit = engine.settings.health.nightly_warn_seconds
    if seconds is not None and seconds > limit:
        checks.warn(
            "nightly_slow",
            f"The last nightly run took {seconds:,.0f} s, over health.nightly_warn_seconds "
            f"({limit:,.0f} s). Run `memoracle nightly --json` to see each step's time; "
            "`memoracle archive --apply` shrinks the store.",
        )
    age = now - at
    if has_memories and age > NIGHTLY_MAX_AGE:
        checks.warn(
            "nightly_missing",
            f"The last nightly run was {age / timedelta(hours=1):,.0f} hours ago "
            f"({at.isoformat()}), over {wanted:g}. Run `memoracle nightly`, and check its "
            f"schedule (schedule.nightly: {schedule}).",
        )
    return {"at": at.isoformat(), "seconds": seconds, "status": run.status}


def _pointers(engine: Engine, checks: _Checks) -> dict[str, object]:
    report = pointers.check(engine.settings.files_dir)
    if report.broken:
        first = report.broken[0]
        checks.warn(
            "pointers_broken",
            f"{len(report.broken)} path(s) cited in the memory files lead nowhere (first: "
            f"{first.file}:{first.line} → {first.pointer}). Run `memoracle pointers` to list "
            f"them; fix each path or end its line with <!-- {pointers.IGNORE_MARK} -->.",
        )
    memory_md = str(engine.settings.files_dir / MEMORY_FILE)
    for problem in report.problems:
        if not problem.startswith(memory_md):  # MEMORY.md's own check says it already
            checks.warn("pointer_file_unreadable", problem)
    return {
        **report.to_json(),
        "broken": [b.to_json() for b in report.broken[:POINTERS_SHOWN]],
        "broken_count": len(report.broken),
    }


def _canary(engine: Engine, checks: _Checks) -> dict[str, object]:
    path = engine.settings.home / canary.CANARY_FILE
    report = canary.probe(engine, canary.load(path))
    if report.warn:
        failed = [r.query for r in report.results if not r.passed]
        checks.warn(
            "canary_low",
            f"{report.passed} of {report.total} canary queries found their text "
            f"({report.ratio:.0%}), under health.canary_warn_ratio "
            f"({engine.settings.health.canary_warn_ratio:.0%}); failed: "
            f"{'; '.join(failed[:5])}. `memoracle search QUERY` shows what each finds.",
        )
    return report.to_json()


def _duplicates(engine: Engine, checks: _Checks) -> dict[str, float | int]:
    """The share of the `DUPLICATE_SAMPLE` newest live memories that repeat another live
    one, by the dedup score (what the nightly dedup would merge)."""
    live = ("active", "disputed")
    after = engine.id_before_newest(DUPLICATE_SAMPLE, live)
    sampled = engine.count_after(after, live)
    repeating: set[int] = set()
    for group in engine.duplicates(after=after):
        ids = {group.keep.id, *(m.id for m, _ in group.merge)}
        repeating.update(i for i in ids if i > after)
    rate = len(repeating) / sampled if sampled else 0.0
    limit = engine.settings.health.duplicate_warn_ratio
    if rate > limit:
        checks.warn(
            "duplicates_high",
            f"{len(repeating)} of the {sampled} newest live memories repeat another "
            f"({rate:.0%}, over health.duplicate_warn_ratio {limit:.0%}). Run "
            "`memoracle dedup --check` to see them and `memoracle dedup --fix` to merge "
            "them (the nightly run does it each night).",
        )
    return {"sampled": sampled, "repeating": len(repeating), "rate": round(rate, 4)}


def _drift(
    engine: Engine, fields: dict[str, object], warnings: tuple[HealthWarning, ...]
) -> dict[str, object] | None:
    """What changed since the previous check in the history: memory counts, average
    activation, duplicate rate, database size, and which warnings came or went. None
    for a first check (or a history with no readable line)."""
    before = last_report(engine.settings.home / HISTORY_FILE)
    if before is None:
        return None

    def change(now: object, then: object) -> float | None:
        if isinstance(now, int | float) and isinstance(then, int | float):
            return round(now - then, 4)
        return None

    def section(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        now, then = fields.get(name), before.get(name)
        return now if isinstance(now, dict) else {}, then if isinstance(then, dict) else {}

    memories_now, memories_then = section("memories")
    database_now, database_then = section("database")
    codes_now = {w.code for w in warnings}
    codes_then = {str(w.get("code")) for w in before.get("warnings") or [] if isinstance(w, dict)}
    return {
        "since": before.get("checked_at"),
        "memories": {
            key: change(memories_now.get(key), memories_then.get(key))
            for key in ("total", "active", "disputed", "superseded", "archived")
        },
        "average_activation": change(
            fields.get("average_activation"), before.get("average_activation")
        ),
        "duplicate_rate": change(fields.get("duplicate_rate"), before.get("duplicate_rate")),
        "database_bytes": change(database_now.get("bytes"), database_then.get("bytes")),
        "warnings_new": sorted(codes_now - codes_then),
        "warnings_cleared": sorted(codes_then - codes_now),
    }


def last_report(history: Path, tail: int = 1 << 18) -> dict[str, Any] | None:
    """The newest readable report in a health history file (read from its end), or
    None when there is none; a damaged line is passed over."""
    try:
        with open(history, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - tail))
            lines = f.read().splitlines()
    except FileNotFoundError:
        return None
    for line in reversed(lines):
        try:
            body = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(body, dict) and "checked_at" in body:
            return body
    return None
