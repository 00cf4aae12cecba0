"""The jobs: `nightly`, `redact`, `health`, `doctor`, `audit`, `pointers`, `canary`."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import click

from memoracle import reports
from memoracle.cli.context import (
    clip,
    current,
    echo_json,
    engine_errors,
    fail,
    home_option,
    memory_line,
    parse_time,
)
from memoracle.cli.main import main
from memoracle.cli.thinking import echo_model
from memoracle.engine import Engine
from memoracle.errors import StoreError
from memoracle.jobs import (
    canary,
    charts,
    doctor,
    health,
    nightly,
    pointers,
    scrub,
)
from memoracle.serialize import records


@main.command(name="nightly")
@home_option
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@click.option("--only", type=click.Choice(nightly.STEPS), help="Run this step alone.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def nightly_command(dry_run: bool, only: str | None, as_json: bool) -> None:
    """The nightly run: redact (when the redaction's rules changed since it last ran:
    memoracle redact), summarize (daily notes), archive, reindex, resolve
    (contradictions), dedup, graph (entities and relations), render (topic
    files; MEMORY.md's block, where lines you added become memories and lines you
    deleted are forgotten; the session-start snapshot; JSONL exports), clean (daily
    notes past 14 days to memory/archive/; session logs past 30 days and notes past a
    year packed into HOME/archive/cleaned/), vacuum (VACUUM once
    lifecycle.vacuum_free_share of the store's pages are free; the bytes given back are
    reported) and health (health.json). With --dry-run, it runs every step on a scratch
    copy of the store and writes nothing: it lists every change the run would make (the
    backup, archives, embeddings, settled memories, merges, graph reads, each file with
    its lines added and removed and the diff of the Markdown ones, exports, notes moved,
    files cleaned, the vacuum) with the run's own counts. A verified backup comes
    before the first step that changes lifecycle.backup_min_changes memories, or any
    once the newest backup is a week old.
    Exit 1 when a step could not read or write a file (named; the other steps still ran).

    \b
    Example:
      memoracle nightly --dry-run
      memoracle nightly --only render
    """

    def progress(step: str, counts: dict[str, int], seconds: float) -> None:
        if not as_json:
            shown = ", ".join(f"{k} {v}" for k, v in counts.items() if k != "milliseconds")
            click.echo(f"{step:<10} {shown or '-'} ({seconds:.2f} s)", err=True)

    ctx = current()
    settings = ctx.settings()
    with (
        engine_errors(),
        Engine.open(settings, clock=ctx.clock(settings), replay=not dry_run) as engine,
    ):
        report = nightly.run_nightly(engine, dry_run=dry_run, only=only, on_step=progress)
    md = report.memory_md
    if as_json:
        echo_json(reports.nightly_report(report))
        if report.problems:
            raise SystemExit(1)
        return
    if dry_run:
        _echo_nightly_plan(report)
    if report.model is not None:
        echo_model(report.model)
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    if report.backup:
        click.echo(f"backup: {report.backup}")
    if report.vacuum is not None:
        click.echo(_vacuum_line(report.vacuum, dry_run))
    if md is not None and md.problem:
        click.echo(f"warning: MEMORY.md: {md.problem}", err=True)
    elif md is not None:
        click.echo(
            f"MEMORY.md: {md.path} ({md.memories} memories, {md.lines} lines, {md.chars} chars"
            + (", unchanged)" if not md.changed else ")")
        )
    verb = "would take" if dry_run else "took"
    click.echo(f"nightly {verb} {report.seconds:.2f} s" + (" (dry run)" if dry_run else ""))
    if report.problems:
        raise SystemExit(1)


def _vacuum_line(v: nightly.Vacuum, dry_run: bool) -> str:
    share = f"{v.free_pages:,} of {v.pages:,} pages free ({v.free_pages / max(v.pages, 1):.0%})"
    if not v.vacuumed:
        return f"vacuum: {share}, under lifecycle.vacuum_free_share ({v.threshold:.0%}): not run"
    verb = "would give back" if dry_run else "gave back"
    return f"vacuum: {share}; VACUUM {verb} {v.reclaimed_bytes:,} bytes"


def _echo_nightly_plan(report: nightly.NightlyReport) -> None:
    """What a dry run would do, step by step: the backup, each archive, the embeddings,
    settling, each merge, the graph, each file with its size of change, the exports,
    each move and clean, then the diff of each Markdown file."""
    if report.backup_before is not None:
        click.echo(f"backup  the store, before the {report.backup_before} step")
    for c in report.archived:
        click.echo(f"archive {c.memory.ref} ({c.reason}): {c.memory.text}")
    steps = report.steps
    if embedded := steps.get("reindex", {}).get("embedded"):
        click.echo(f"embed   {embedded} text(s) without a vector")
    if report.settled:
        click.echo(f"settle  {report.settled} memory(ies); {report.superseded} supersede(s)")
    for group in report.duplicates:
        for other, score in group.merge:
            click.echo(
                f"merge   {other.ref} into {group.keep.ref} ({score.score:.2f}): {other.text}"
            )
    graph = steps.get("graph", {})
    if graph.get("read") or graph.get("logged"):
        click.echo(f"graph   read {graph.get('read', 0)} memory(ies); log {graph.get('logged', 0)}")
    for change in report.changes:
        added, removed = change.size()
        click.echo(f"write   {change.path} (+{added} -{removed} lines)")
    for path, lines in report.appended.items():
        if lines:
            click.echo(f"append  {path} (+{lines} lines)")
    for path in report.notes_archived:
        click.echo(f"move    {path.name} to {path.parent}")
    for path in report.cleaned:
        click.echo(f"clean   {path}")
    for change in report.changes:
        if change.path.suffix != ".jsonl":
            click.echo(change.diff(), nl=False)


@main.command(name="redact")
@home_option
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def redact_command(dry_run: bool, as_json: bool) -> None:
    """Apply today's redaction to everything stored before it: every memory and turn,
    their search text and both full-text indexes, the graph's names, the audit log's,
    the cold tier's and held writes' texts, vectors of changed texts (embedded again),
    MEMORY.md, SESSION-START.md, daily notes, topic files, reference/, the
    knowledge-graph JSONL and graph log, packed old notes, and every backup (each
    rewritten on a copy, verified, then renamed over the old one). A secret found in
    one place is looked for as a copy everywhere else.

    A verified backup of the store is taken first, into a private temporary folder,
    and deleted once the redacted store has passed its check; VACUUM then gives back
    the pages that held the old text. Every change is in the audit log (action redact),
    never the secret. The nightly run does this itself when the redaction's rules
    change. With --dry-run: the count of rows per place, the first refs, the files and
    backups, and the kinds found; nothing is written. Exit 1 when a file or backup could
    not be rewritten (named; the rest was).

    \b
    Example:
      memoracle redact --dry-run
      memoracle redact
    """
    ctx = current()
    with engine_errors(), ctx.engine() as engine:
        with nullcontext() if dry_run else scrub.locked(engine.settings.home):
            report = scrub.redact_store(engine, dry_run=dry_run)
    if as_json:
        echo_json(reports.redact_report(report))
    else:
        _echo_redact(report)
    if report.problems:
        raise SystemExit(1)


def _echo_redact(report: scrub.RedactReport) -> None:
    verb = "would change" if report.dry_run else "changed"
    for p in report.places:
        refs = f" ({', '.join(p.refs)}{', …' if p.rows > len(p.refs) else ''})" if p.refs else ""
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(p.kinds.items()))
        click.echo(f"{p.place:<22} {p.rows} row(s){refs}: {kinds}")
    for f in report.files:
        unit = "row(s)" if f.what == "backup" else "line(s)"
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(f.kinds.items()))
        click.echo(f"{f.what:<8} {f.path}: {f.changed} {unit}: {kinds}")
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    counts = report.counts()
    click.echo(
        f"redact {verb} {counts['rows']} stored value(s), {counts['files']} file(s) and "
        f"{counts['backups']} backup(s)"
        + (
            f"; {report.vectors_dropped} vector(s) dropped, {report.embedded} embedded again"
            if not report.dry_run
            else ""
        )
        + (f"; VACUUM gave back {report.reclaimed_bytes:,} bytes" if report.reclaimed_bytes else "")
        + f" ({report.seconds:.2f} s)"
    )


@main.command(name="health")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print health.json's body.")
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write health.json here instead of HOME, with trend charts of the history (SVG).",
)
@click.option("--probe", is_flag=True, help="Also run the canary queries (canary.json).")
@click.option(
    "--fix",
    "fix",
    is_flag=True,
    help="Run the safe fixes for what it finds (reindex, nightly, dedup, archive), then"
    " check again.",
)
def health_command(as_json: bool, output_dir: Path | None, probe: bool, fix: bool) -> None:
    """Check the store and write health.json: disk, memory counts against max_facts,
    average activation, MEMORY.md against its budget, the vector index, the last
    nightly run, the database's integrity, paths cited in the memory files that lead
    nowhere, the share of new memories that repeat old ones, and what changed since
    the last check; with --probe, the canary queries' pass ratio. Each warning says
    what to run (`memoracle doctor` explains them). It changes nothing in the store
    unless --fix, which runs the fixes that are safe unattended (after a verified
    backup when they change memories). With --output-dir, also draws the health
    history as SVG charts (activation, memory counts, disputed and duplicate rates,
    nightly duration). Exit status 0 healthy, 1 warning, 2 failing (a damaged or
    unreadable database; one that cannot be opened at all is written to health.json as
    failing, with the reason).

    \b
    Example:
      memoracle health
      memoracle health --fix
      memoracle health --probe --json --output-dir /var/lib/memoracle
    """
    ctx = current()
    with engine_errors(code=2):
        settings = ctx.settings()
        clock = ctx.clock(settings)
        readonly = False
        try:
            engine = Engine.open(settings, clock=clock, replay=fix)  # the queue: with --fix
        except StoreError as exc:  # not even openable: health.json must say so
            report = health.unopened(settings, clock.now(), exc)
        else:
            with engine:
                readonly = engine.readonly
                report = health.check(engine, probe=probe)
                if fix:
                    for done in doctor.fix(engine, report):
                        click.echo(f"fixed: {done}", err=True)
                    report = health.check(engine, probe=probe)
        path: Path | str = "health.json not written (read-only workspace)"
        if not readonly or output_dir is not None:
            path = health.write(settings.home, report, output_dir=output_dir)
        drawn: list[Path] = []
        if output_dir is not None:
            history = charts.read_history(settings.home / health.HISTORY_FILE)
            for problem in history.problems:
                click.echo(f"warning: {problem}", err=True)
            drawn = charts.write_charts(history, output_dir, health=settings.health)
    if as_json:
        echo_json(report.to_json())
    else:
        click.echo(f"{report.status} ({len(report.warnings)} warning(s)); {path}")
        if (server := doctor.describe(report.fields.get("database"))) is not None:
            click.echo(server)
        for warning in report.warnings:
            click.echo(f"- [{warning.code}] {warning.message}")
        if drawn:
            click.echo(f"trend charts: {', '.join(str(p) for p in drawn)}")
    raise SystemExit(health.exit_code(report))


@main.command(name="audit")
@home_option
@click.option("--since", help="Only what happened at or after this time (ISO date or time).")
@click.option("--held", "only_held", is_flag=True, help="Only the held writes.")
@click.option("--confirm", "confirm", metavar="h_N", help="Store this held write after all.")
@click.option("--reject", "reject", metavar="h_N", help="Turn this held write down for good.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def audit_command(
    since: str | None,
    only_held: bool,
    confirm: str | None,
    reject: str | None,
    as_json: bool,
) -> None:
    """The write audit: every write through every door (capture, remember, import,
    MEMORY.md edits, the nightly run…) with who made it, and the writes held back
    because they look like prompt injection ("ignore previous instructions", hidden
    instructions, attempts to change AGENTS.md, SOUL.md or the agent's rules) in
    English, Russian, French or Spanish. A held write is not memory, and a held turn
    is left out of search, until a person confirms it (--confirm h_N); --reject keeps
    it out for good.

    \b
    Example:
      memoracle audit --held
      memoracle audit --since 2026-12-01 --json
      memoracle audit --confirm h_3
    """
    if confirm and reject:
        fail("Give --confirm or --reject, not both.", 2)
    start = parse_time(since, "--since")
    with engine_errors(), current().engine() as engine:
        zone = engine.zone
        if confirm:
            stored = engine.confirm_held(confirm)
            if as_json:
                echo_json(
                    records.envelope(
                        confirmed=confirm, memories=[records.memory(m) for m in stored]
                    )
                )
            else:
                click.echo(f"confirmed {confirm}: {len(stored)} memory(ies) stored")
                for memory in stored:
                    click.echo(memory_line(memory, zone))
            return
        if reject:
            engine.reject_held(reject)
            if as_json:
                echo_json(records.envelope(rejected=reject))
            else:
                click.echo(f"rejected {reject}: it stays out of memory")
            return
        held = engine.held_writes(since=start)
        entries = [] if only_held else engine.audit_entries(since=start)
    if as_json:
        echo_json(
            records.envelope(
                held=[records.held(h) for h in held],
                entries=[records.audit_entry(e) for e in entries],
            )
        )
        return
    waiting = [h for h in held if h.decision is None]
    click.echo(f"{len(waiting)} held write(s) waiting, {len(held)} held in all")
    for h in held:
        state = h.decision or "waiting"
        click.echo(
            f"  {h.ref}  {h.held_at.astimezone(zone):%Y-%m-%d %H:%M}  {h.level:<10} {state:<8}"
            f" via {h.actor}: {clip(h.text)}  [{', '.join(h.reasons)}]"
        )
    if not only_held:
        click.echo(f"{len(entries)} audit entr(ies), newest first")
        for e in entries:
            target = f"m_{e.memory_id} " if e.memory_id is not None else ""
            click.echo(
                f"  {e.at.astimezone(zone):%Y-%m-%d %H:%M}  {e.action:<12} {target}by {e.actor}"
            )


@main.command(name="doctor")
@home_option
@click.option(
    "--deep",
    is_flag=True,
    help="Run SQLite's full integrity_check (every index against its table), not the quick check.",
)
@click.option(
    "--fix",
    "fixing",
    is_flag=True,
    help="Recover a damaged store (from the newest good backup, or rebuilt from the last"
    " export and MEMORY.md); on a sound one, run the fixes `health --fix` runs.",
)
@click.option("--dry-run", is_flag=True, help="With --fix: say what it would do, change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def doctor_command(deep: bool, fixing: bool, dry_run: bool, as_json: bool) -> None:
    """Check the store and explain what is wrong: the database file (missing, empty,
    cut short, overwritten, a folder, unreadable), its schema (a dropped table) and
    SQLite's quick check (--deep: the full integrity check), the newest backup (opened,
    checked in full, counted), then every health check. For each finding, what it
    means, why it matters and the command that fixes it. A damaged store is marked
    (HOME/store-damaged.txt) and writing commands refuse until `doctor --fix` recovers
    it: the damaged file is moved into HOME/damaged/ (kept) and the newest good backup
    takes its place, or, with none, a store rebuilt from the last export and MEMORY.md.
    Exit status as health's: 0 healthy, 1 warning, 2 failing. On a PostgreSQL store it
    also prints the server in one line (URL with the password masked, versions,
    indexes, dead rows; docs/fleet.md).

    \b
    Example:
      memoracle doctor --deep
      memoracle doctor --fix --dry-run
      memoracle doctor --fix
    """
    if dry_run and not fixing:
        fail("--dry-run goes with --fix: memoracle doctor --fix --dry-run", 2)
    ctx = current()
    with engine_errors(code=2):
        settings = ctx.settings()
        result = doctor.run(settings, ctx.clock(settings), deep=deep, fix=fixing, dry_run=dry_run)
    report, findings = result.report, result.findings
    if as_json:
        body = reports.doctor_report(report.status, findings, report.fields.get("database"))
        recovery = {"dry_run": result.dry_run, "plan": result.plan, "done": result.done}
        echo_json({**body, "fix": recovery} if fixing else body)
        raise SystemExit(health.exit_code(report))
    for line in result.done:
        click.echo(f"fixed: {line}")
    for line in result.plan if result.dry_run else ():
        click.echo(f"would: {line}")
    click.echo(f"{report.status}: {len(findings)} finding(s) for {settings.home}")
    if (server := doctor.describe(report.fields.get("database"))) is not None:
        click.echo(server)
    if not findings:
        click.echo("Every check passed; nothing to fix.")
    for f in findings:
        click.echo(f"\n[{f.warning.code}] {f.warning.message}")
        click.echo(f"  why: {f.advice.why}")
        auto = " (`memoracle health --fix` runs it)" if f.advice.automatic else ""
        click.echo(f"  fix: {f.advice.fix}{auto}")
    raise SystemExit(health.exit_code(report))


@main.command(name="pointers")
@home_option
@click.option("--quiet", is_flag=True, help="Print only the broken pointers, one a line.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def pointers_command(quiet: bool, as_json: bool) -> None:
    """Check that every workspace path cited in the live memory files (MEMORY.md,
    memory/*.md, reference/*.md; not archives) exists. Lines holding
    pointer-check:ignore are skipped, and so are URLs and placeholders. Exit 1 when a
    pointer is broken or a file cannot be read.

    \b
    Example:
      memoracle pointers --quiet
    """
    report = pointers.check(current().settings().files_dir)
    if as_json:
        echo_json(report.to_json())
    else:
        for b in report.broken:
            click.echo(f"{b.file}:{b.line} -> {b.pointer}")
        for problem in report.problems:
            click.echo(f"warning: {problem}", err=True)
        if not quiet:
            click.echo(
                f"checked {report.checked} pointer(s) in {report.files} file(s); "
                f"{len(report.broken)} broken"
                + (
                    f"; fix each path, or end its line with <!-- {pointers.IGNORE_MARK} -->"
                    if report.broken
                    else ""
                )
            )
    raise SystemExit(0 if report.ok else 1)


@main.group(name="canary")
def canary_group() -> None:
    """Canary queries: questions with the text their answer must contain, run by
    `memoracle health --probe` to tell whether memory still finds what it should."""


@canary_group.command(name="add")
@home_option
@click.argument("query")
@click.option("--expect", required=True, help="Text a hit must contain for the query to pass.")
def canary_add(query: str, expect: str) -> None:
    """Add a canary query to HOME/canary.json.

    \b
    Example:
      memoracle canary add "where is the staging database?" --expect db2
    """
    with engine_errors(), current().engine() as engine:
        path = engine.settings.home / canary.CANARY_FILE
        added = canary.add(path, query, expect, now=engine.clock.now())
    click.echo(f"added to {path}: {added.query!r} expects {added.expect!r}")


@canary_group.command(name="list")
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the canaries as JSON.")
def canary_list(as_json: bool) -> None:
    """List the canary queries in HOME/canary.json, numbered from 1 (the number
    `canary remove` takes).

    \b
    Example:
      memoracle canary list
    """
    path = current().settings().home / canary.CANARY_FILE
    with engine_errors():
        canaries = canary.load(path)
    if as_json:
        echo_json(records.envelope(path=str(path), canaries=[c.to_json() for c in canaries]))
        return
    for number, c in enumerate(canaries, 1):
        click.echo(f"{number}. {c.query!r} expects {c.expect!r} (added {c.added_at:%Y-%m-%d})")
    if not canaries:
        click.echo(f"no canary in {path}; add one with: memoracle canary add QUERY --expect TEXT")


@canary_group.command(name="remove")
@home_option
@click.argument("which")
@click.option("--dry-run", is_flag=True, help="Say which canary would go; change nothing.")
def canary_remove(which: str, dry_run: bool) -> None:
    """Remove one canary query, by its number in `canary list` or by its query. The
    file as it was is kept in HOME/canary.json.bak.

    \b
    Example:
      memoracle canary remove 2 --dry-run
      memoracle canary remove "where is the staging database?"
    """
    path = current().settings().home / canary.CANARY_FILE
    with engine_errors():
        number, removed = canary.remove(path, which, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    click.echo(f"{verb} canary {number}: {removed.query!r} expects {removed.expect!r}")
    if not dry_run:
        click.echo(f"the file as it was: {path.with_name(canary.BACKUP_FILE)}")
