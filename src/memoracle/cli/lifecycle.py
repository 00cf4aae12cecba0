"""The lifecycle by hand: `dedup`, `archive`, `restore`, `pending`, `resolve`, `check`,
`score`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memoracle.cli.context import (
    batch_lines,
    current,
    echo_json,
    engine_errors,
    fail,
    home_option,
    memory_line,
    scope_options,
)
from memoracle.cli.main import main
from memoracle.engine import arbitrate
from memoracle.jobs import (
    nightly,
)
from memoracle.serialize import records
from memoracle.types import Scope


@main.command(name="dedup")
@home_option
@click.option("--check", "mode", flag_value="check", help="List near-duplicate groups.")
@click.option("--fix", "mode", flag_value="fix", help="Back up, then merge each group.")
@click.option("--query", "query_text", metavar="TEXT", help="Is TEXT already stored?")
@click.option(
    "--query-batch",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="One text per line: is each already stored?",
)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def dedup_command(
    mode: str | None, query_text: str | None, query_batch: Path | None, as_json: bool
) -> None:
    """Find and merge memories that say the same thing (word overlap, containment,
    dates/versions/amounts/phones/ids that must agree, sentence segments, and vectors).
    --fix keeps the fullest text with every provenance and marks the others superseded
    by it; nothing is deleted. --query and --query-batch exit 0 when every text is
    already stored, 1 when one is new, 2 on an error: a text is stored when capturing
    it now would merge each of its claims into a memory (the same comparison capture
    makes), or, for a text capture keeps nothing of, by the dedup score alone.

    \b
    Example:
      memoracle dedup --check
      memoracle dedup --query "Anna lives in Lyon since 2021"
    """
    chosen = [m for m in (mode, query_text, query_batch) if m is not None]
    if len(chosen) != 1:
        fail("Say one of --check, --fix, --query TEXT or --query-batch FILE.", 2)
    if query_text is not None or query_batch is not None:
        texts = [query_text] if query_text is not None else batch_lines(query_batch)
        with engine_errors(2), current().engine() as engine:
            threshold = engine.settings.lifecycle.dedup_threshold
            answers = [(t, engine.repeat_of(t), engine.dedup_query(t, limit=1)) for t in texts]
        verdicts = []
        for text, repeat, found in answers:
            best = found[0] if found else None
            if repeat is None:  # capture keeps no memory of it: the dedup score says
                duplicate = best is not None and best[1].score >= threshold
            else:  # capture's own comparison: a duplicate when it would merge every claim
                duplicate, best = bool(repeat), repeat[0] if repeat else best
            verdicts.append(duplicate)
            if as_json:
                click.echo(
                    json.dumps(
                        {
                            "text": text,
                            "duplicate": duplicate,
                            "match": best[0].ref if best else None,
                            "score": round(best[1].score, 4) if best else None,
                            "reason": best[1].reason if best else None,
                        },
                        ensure_ascii=False,
                    )
                )
            elif best is not None:
                verdict = "duplicate of" if duplicate else "new; closest"
                click.echo(f"{verdict} {best[0].ref} ({best[1].score:.2f}): {best[0].text}")
                for memory, score in (repeat or [])[1:]:  # the text's other claims
                    click.echo(f"  and {memory.ref} ({score.score:.2f}): {memory.text}")
            else:
                click.echo("new; nothing close")
        sys.exit(0 if all(verdicts) else 1)
    with engine_errors(), current().engine() as engine:
        groups = engine.duplicates()
        backup = None
        if mode == "fix" and groups:
            backup = engine.backup().path
            engine.merge_duplicates(groups)
        zone = engine.settings.zone
    if as_json:
        echo_json(
            records.envelope(
                fixed=mode == "fix",
                backup=str(backup) if backup else None,
                groups=[
                    {
                        "keep": g.keep.ref,
                        "merge": [
                            {"id": m.ref, "score": round(sc.score, 4), "reason": sc.reason}
                            for m, sc in g.merge
                        ],
                    }
                    for g in groups
                ],
            )
        )
        return
    count = sum(len(g.merge) for g in groups)
    verb = "merged" if mode == "fix" else "would merge"
    click.echo(f"{len(groups)} group(s); {verb} {count} memor{'y' if count == 1 else 'ies'}")
    for g in groups:
        click.echo(f"keep  {memory_line(g.keep, zone)}")
        for m, sc in g.merge:
            click.echo(f"  {sc.score:.2f} {memory_line(m, zone)}")
    if backup:
        click.echo(f"backup: {backup}")


@main.command(name="archive")
@home_option
@click.option("--dry-run", "mode", flag_value="dry-run", help="List what would be archived.")
@click.option("--apply", "mode", flag_value="apply", help="Back up, then archive.")
@click.option(
    "--min-age-days",
    type=click.IntRange(0),
    default=7,
    show_default=True,
    help="Faded memories said more recently than this stay.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the candidates as JSON.")
def archive_command(mode: str | None, min_age_days: int, as_json: bool) -> None:
    """Move faded, surplus, long-superseded and expired memories to the cold tier
    (never deleted: memoracle restore ID brings one back).

    \b
    Example:
      memoracle archive --dry-run
      memoracle archive --apply --min-age-days 30
    """
    if mode is None:
        fail("Say --dry-run (to see what would move) or --apply.")
    with engine_errors(), current().engine() as engine:
        found = nightly.plan_archive(engine, min_age_days=min_age_days)
        backup = None
        if mode == "apply" and found:
            backup = engine.backup().path
            nightly.archive(engine, found, actor="cli")
        zone = engine.settings.zone
    if as_json:
        echo_json(
            records.envelope(
                dry_run=mode == "dry-run",
                backup=str(backup) if backup else None,
                archived=[
                    {"id": c.memory.ref, "reason": c.reason, "score": c.score} for c in found
                ],
            )
        )
        return
    verb = "would archive" if mode == "dry-run" else "archived"
    click.echo(f"{verb} {len(found)} memor{'y' if len(found) == 1 else 'ies'}")
    for c in found:
        click.echo(f"  {c.reason:<21} {memory_line(c.memory, zone)}")
    if backup:
        click.echo(f"backup: {backup}")


@main.command()
@home_option
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the memory as JSON.")
def restore(ref: str, as_json: bool) -> None:
    """Bring an archived memory back from the cold tier, as it was; or a forgotten one
    back to the status it had, with the turns it took out of search and recall.

    \b
    Example:
      memoracle restore m_12
    """
    with engine_errors(), current().engine() as engine:
        memory = engine.restore(ref)
        zone = engine.settings.zone
    if as_json:
        echo_json(records.envelope(memory=records.memory(memory)))
        return
    click.echo(memory_line(memory, zone))


@main.command()
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print the disputes as JSON.")
def pending(as_json: bool) -> None:
    """List disputed memories: a hedged statement ("I might move to Lyon") put them in
    doubt; and memories a "forget …" said in conversation fitted along with others,
    none forgotten yet. Settle each with memoracle resolve (for a forget: --reject
    forgets it, --confirm keeps it).

    \b
    Example:
      memoracle pending
    """
    with engine_errors(), current().engine() as engine:
        disputes = engine.pending()
        zone = engine.settings.zone
    if as_json:
        echo_json(records.envelope(pending=[records.dispute(d) for d in disputes]))
        return
    if not disputes:
        click.echo("nothing pending")
    for d in disputes:
        click.echo(memory_line(d.memory, zone))
        if d.memory.status == "active":  # a forget waiting for a person, not a dispute
            click.echo(f"        {d.reason}")
            click.echo(
                f"        memoracle resolve {d.memory.ref} --reject (forget) | --confirm (keep)"
            )
            continue
        if d.by is not None:
            click.echo(f"        disputed by {d.by.ref}: {d.by.text}")
        click.echo(
            f"        memoracle resolve {d.memory.ref} --confirm | --reject [--replacement TEXT]"
        )


@main.command()
@home_option
@click.argument("ref", required=False)
@click.option("--confirm", "decision", flag_value="confirm", help="It still holds: keep it.")
@click.option("--reject", "decision", flag_value="reject", help="It no longer holds.")
@click.option(
    "--replacement",
    metavar="TEXT",
    help="With --reject: what holds instead (it keeps the kind and slot of the memory "
    "it replaces).",
)
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="Arbitrate every pending item: confirm those what was said since settles; "
    "leave the rest for a person.",
)
@click.option("--dry-run", is_flag=True, help="With --all: say each ruling; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the memory (or rulings) as JSON.")
def resolve(
    ref: str | None,
    decision: str | None,
    replacement: str | None,
    every: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Settle a disputed memory: --confirm keeps it; --reject supersedes it by the
    memory that disputed it, or by --replacement TEXT. For a memory a "forget …" left
    waiting (memoracle pending): --reject forgets it, --confirm keeps it.

    With --all (batch arbitration), every pending item gets a ruling: a disputed memory
    said again without a hedge since the dispute, or whose disputing memory no longer
    stands, is confirmed (after a verified backup); everything else is left for a
    person. --dry-run shows the rulings and changes nothing.

    \b
    Example:
      memoracle resolve m_12 --reject --replacement "Anna lives in Lyon now"
      memoracle resolve --all --dry-run
    """
    if every:
        if ref is not None or decision is not None or replacement is not None:
            fail("--all rules on every pending item by itself: give no ID, --confirm or --reject.")
        _arbitrate(dry_run, as_json)
        return
    if ref is None:
        fail("Say which memory (an ID from memoracle pending), or --all.")
    if dry_run:
        fail("--dry-run goes with --all; resolve ID changes one memory, as asked.")
    if decision is None:
        fail("Say --confirm (it still holds) or --reject (it no longer does).")
    with engine_errors(), current().engine() as engine:
        memory = engine.resolve(ref, confirm=decision == "confirm", replacement=replacement)
        zone = engine.settings.zone
    if as_json:
        echo_json(records.envelope(memory=records.memory(memory)))
        return
    click.echo(memory_line(memory, zone))


def _arbitrate(dry_run: bool, as_json: bool) -> None:
    with engine_errors(), current().engine() as engine:
        report = arbitrate.arbitrate(engine, dry_run=dry_run)
        zone = engine.settings.zone
    if as_json:
        rulings = [
            {"decision": r.decision, "reason": r.reason, **records.dispute(r.dispute)}
            for r in report.rulings
        ]
        backup = str(report.backup.path) if report.backup else None
        echo_json(records.envelope(dry_run=dry_run, settled=report.settled, backup=backup,
                                   rulings=rulings))  # fmt: skip
        return
    verb = "would confirm" if dry_run else "confirmed"
    for r in report.rulings:
        click.echo(memory_line(r.dispute.memory, zone))
        click.echo(
            f"        {verb if r.decision == 'confirm' else 'left for a person'}: {r.reason}"
        )
    left = len(report.rulings) - report.settled
    click.echo(f"{report.settled} {verb}, {left} left (memoracle resolve ID --confirm | --reject)")
    if report.backup:
        click.echo(f"backup: {report.backup.path}")


@main.command()
@home_option
@click.argument("claim")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the verdict and citations as JSON.")
def check(claim: str, scope: Scope, as_json: bool) -> None:
    """Does memory support, contradict or not know CLAIM? Read-only: the claim is judged
    against the memories the scope may see, by the rules capture uses (the same slot with
    the same value supports; another value of a one-value slot, or a denial,
    contradicts; the same thing in other words supports), and each memory taking a
    stance is cited, newest first; the newest one's stance is the verdict. Exit 0 with
    an answer, whichever it is.

    \b
    Example:
      memoracle check "Anna lives in Lyon"
      memoracle check "the staging database is on db2" --json
    """
    with engine_errors(), current().engine() as engine:
        found = arbitrate.check(engine, claim, scope=scope)
        zone = engine.settings.zone
    if as_json:
        echo_json(
            records.envelope(
                claim=found.claim,
                verdict=found.verdict,
                cited=[
                    {"stance": c.stance, "reason": c.reason, "memory": records.memory(c.memory)}
                    for c in found.cited
                ],
                related=[records.memory(m) for m in found.related],
                note=found.note,
            )
        )
        return
    words = {"supports": "supported", "contradicts": "contradicted", "unknown": "unknown"}
    click.echo(f"{words[found.verdict]}: {found.claim}")
    for c in found.cited:
        click.echo(f"  {c.stance}: {memory_line(c.memory, zone)}")
        click.echo(f"        {c.reason}")
    if found.related:
        click.echo("  nothing stored takes a stance; nearest:")
        for m in found.related:
            click.echo(f"    {memory_line(m, zone)}")
    if found.note:
        click.echo(f"note: {found.note}", err=True)


@main.command()
@home_option
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print every score and factor as JSON.")
def score(limit: int, as_json: bool) -> None:
    """Rank active memories by kind weight x recency x frequency x entity boost x
    completion; those scoring 1 or more are candidates for MEMORY.md.

    \b
    Example:
      memoracle score --limit 10
    """
    with engine_errors(), current().engine() as engine:
        ranked = engine.score()
        zone = engine.settings.zone
    if as_json:
        echo_json(
            records.envelope(
                memories=len(ranked),
                promote=sum(s.promote for _, s in ranked),
                ranking=[records.memory_score(m, s) for m, s in ranked[:limit]],
            )
        )
        return
    click.echo(f"{len(ranked)} active memories; {sum(s.promote for _, s in ranked)} to promote")
    for n, (memory, s) in enumerate(ranked[:limit], 1):
        mark = "*" if s.promote else " "
        click.echo(f"{n:>3} {mark} {s.total:6.3f} {memory_line(memory, zone)}")
    click.echo("(* = promotion candidate; factors with --json)")
