"""The model path's doors: `undo-model` (a model's changes reversed from the audit log),
and how `nightly` prints its model steps. docs/llm.md."""

from __future__ import annotations

import click

from memoracle.cli.context import current, echo_json, engine_errors, fail, home_option, parse_time
from memoracle.cli.main import main
from memoracle.config import LlmSettings
from memoracle.engine import thinking
from memoracle.jobs.thinking.night import ThinkReport
from memoracle.llm import Model
from memoracle.serialize import records


@main.command(name="undo-model")
@click.argument("ref", required=False)
@home_option
@click.option("--since", metavar="ISO", help="Every model change made at or after this time.")
@click.option("--dry-run", is_flag=True, help="List what would be undone; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what was undone as JSON.")
def undo_model(ref: str | None, since: str | None, dry_run: bool, as_json: bool) -> None:
    """Reverse what the nightly model steps changed, from the audit log: of one memory
    (m_12), or every change since a time (a night's: --since 2026-12-07T03:00).

    A memory the model added is rejected (superseded, as resolve --reject leaves it;
    the turns it cites stay searchable), one it
    superseded or merged gets its status back, one it kept is disputed again, one it
    promoted is unpinned. Each reversal is audited (model-undo); a change is undone once.

    \b
    Example:
      memoracle undo-model m_12
      memoracle undo-model --since 2026-12-07T03:00 --dry-run
    """
    if (ref is None) == (since is None):
        fail("Say what to undo: a memory (m_12) or --since ISO.")
    at = parse_time(since, "--since")
    with engine_errors(), current().engine() as engine:
        done = thinking.undo(engine, ref=ref, since=at, dry_run=dry_run)
    if as_json:
        echo_json(records.envelope(dry_run=dry_run, undone=[records.fields(u) for u in done]))
        return
    verb = "would undo" if dry_run else "undid"
    for u in done:
        click.echo(f"{verb} {u.change} of {u.memory} ({u.step}, {u.model_id}): now {u.to}")
    if not done:
        click.echo("nothing to undo")


def bench_model() -> tuple[Model, LlmSettings]:
    """The configured model for `bench … --llm` / `--answer` (the home's [llm] settings,
    --set and MEMORACLE_LLM_* apply), or a usage error when none is set."""
    from memoracle.llm import open_model  # the provider layer: only when asked for

    settings = current().settings(missing_ok=True)  # a bench needs no workspace
    model = open_model(settings)
    if model is None:
        fail(
            "No model is configured: set llm.provider and llm.model (docs/llm.md), e.g. "
            "--set llm.provider=openai --set llm.endpoint=http://127.0.0.1:8080/v1 "
            "--set llm.model=NAME."
        )
    return model, settings.llm


def echo_model(report: ThinkReport) -> None:
    """The nightly model step in a few lines; a dry run's prompts in full."""
    if report.skipped:
        click.echo(f"model: skipped: {report.skipped}")
        return
    for p in report.previews:
        click.echo(f"prompt  {p.step} ({p.prompt_version}, ~{p.tokens} tokens) {p.key}")
        click.echo(f"  system: {p.system}")
        for line in p.user.splitlines():
            click.echo(f"  | {line}")
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()))
    verb = "would spend" if report.dry_run else "spent"
    click.echo(
        f"model: {report.model_id or '-'}: {report.asked} asked ({report.from_queue} queued "
        f"before), {verb} ~{report.tokens} of {report.budget} tokens; {counts or 'nothing applied'}"
        f"; {report.queued} waiting for the next night"
    )
    if report.error:
        click.echo(f"warning: model: {report.error}; its work waits in HOME/llm/pending.jsonl",
                   err=True)  # fmt: skip
