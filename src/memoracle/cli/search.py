"""Retrieval: `search`, `recall`, `explain`, `reindex`."""

from __future__ import annotations

import click

from memoracle.cli.context import (
    current,
    echo_json,
    engine_errors,
    home_option,
    parse_time,
    progress,
    scope_options,
    subject_prefix,
)
from memoracle.cli.main import main
from memoracle.engine import recall_anyway
from memoracle.recall.ann import INSTALL_HINT
from memoracle.recall.lists import Mode
from memoracle.serialize import records
from memoracle.types import KINDS, Scope


@main.command()
@home_option
@click.argument("query")
@click.option("--k", type=click.IntRange(1, 1000), help="Number of hits (default: search.k).")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(KINDS),
    help="Only memories of these kinds (no raw turns).",
)
@click.option("--as-of", metavar="DATE", help="What was active then (ISO date or time).")
@click.option("--lexical-only", is_flag=True, help="Words only (FTS5 BM25), no vectors.")
@click.option("--vector-only", is_flag=True, help="Meaning only (embeddings), no BM25.")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print hits with their scores as JSON.")
def search(
    query: str,
    k: int | None,
    kinds: tuple[str, ...],
    as_of: str | None,
    lexical_only: bool,
    vector_only: bool,
    scope: Scope,
    as_json: bool,
) -> None:
    """Hybrid search (BM25 + vectors, fused, recency-weighted) over memories and turns;
    --lexical-only or --vector-only searches with one of the two alone.

    A query that shares no word with anything stored, and is not close in meaning to
    anything (search.similarity_floor), gets no hits and says so; of the others, each
    hit touches the query: a shared word, or a meaning above search.hit_floor.

    \b
    Example:
      memoracle search "when did Caroline go to the support group" --k 5
      memoracle search "where do I live" --as-of 2023-06-01 --json
      memoracle search "2026-08-17" --lexical-only
      memoracle search "memory decay scoring" --vector-only
    """
    when = parse_time(as_of, "--as-of")
    if lexical_only and vector_only:
        raise click.UsageError("--lexical-only and --vector-only exclude each other.")
    mode: Mode = "lexical" if lexical_only else "vector" if vector_only else "hybrid"
    with engine_errors(), current().engine() as engine:
        outcome = engine.search(query, k=k, scope=scope, kinds=kinds, as_of=when, mode=mode)
    if as_json:
        echo_json(
            records.envelope(
                mode=outcome.mode,
                note=outcome.note,
                no_match=outcome.no_match,
                hits=[records.hit(h) for h in outcome.hits],
            )
        )
        return
    if outcome.note:
        click.echo(f"note: {outcome.note}", err=True)
    for h in outcome.hits:
        who = subject_prefix(h.memory) if h.memory else ""
        if h.episode is not None and h.episode.speaker:
            who = f"{h.episode.speaker}: "
        text = " ".join(h.text.split())
        click.echo(f"{h.ref:>8}  {h.scores.final:.4f}  {h.at.date().isoformat()}  {who}{text}")
    if not outcome.hits:
        click.echo(outcome.no_match or "no match")


@main.command()
@home_option
@click.argument("message")
@click.option(
    "--budget", type=int, help="Token budget of the block (default: recall.budget_tokens)."
)
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print the block and its lines as JSON.")
def recall(
    message: str,
    budget: int | None,
    scope: Scope,
    as_json: bool,
) -> None:
    """Print the context block to inject before a turn: the answer to a question about
    one of the person's attributes ("where do I live?"), guardrails, the fresh items
    MESSAGE touches, and what matters for MESSAGE, within a hard token budget. With a
    missing or corrupt database it searches MEMORY.md and the daily notes instead and
    says so on stderr.

    \b
    Example:
      memoracle recall "Can I run the database migration today?" --budget 500
      memoracle recall "hi all" --visibility shared --chat tg:family
    """
    ctx = current()
    with engine_errors():
        settings = ctx.settings()
        block = recall_anyway(
            settings, message, budget=budget, scope=scope, clock=ctx.clock(settings)
        )
    if as_json:
        echo_json(records.recall_block(block))
        return
    if block.degraded:
        click.echo(f"note: {block.degraded}", err=True)
    if block.note:
        click.echo(f"note: {block.note}", err=True)
    if block.text:
        click.echo(block.text)
    click.echo(f"({block.tokens}/{block.budget} tokens, {block.tokenizer})", err=True)


@main.command()
@home_option
@click.argument("ref")
@click.option("--query", "-q", required=True, help="The query to explain the rank for.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="As search --kind.")
@scope_options
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def explain(
    ref: str,
    query: str,
    kinds: tuple[str, ...],
    scope: Scope,
    as_json: bool,
) -> None:
    """Say why a memory (m_…) or turn (e_…) ranks where it does for a query, or what
    kept it out: its status, scope or kind, a held turn, or the stage of the search it
    fell out at (no lexical match, no vector yet, faded, ...).

    \b
    Example:
      memoracle explain m_12 --query "where does Caroline live"
      memoracle explain m_12 --query "deploys" --kind guardrail --user alice
    """
    with engine_errors(), current().engine() as engine:
        found = engine.explain(ref, query=query, scope=scope, kinds=kinds)
    if as_json:
        echo_json(records.explanation(found))
        return
    click.echo(f"{found.ref} for {found.query!r}:")
    for reason in found.reasons:
        click.echo(f"  {reason}")


@main.command()
@home_option
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def reindex(as_json: bool) -> None:
    """Embed every memory and turn that has no vector for the configured model.

    Run it after changing embedding.model; until then search is lexical-only. With
    the ann extra and embedding.ann_threshold searchable vectors or more, it also
    builds the HNSW graph, and rebuilds it once a quarter of its rows were archived.

    \b
    Example:
      memoracle reindex
    """
    with engine_errors(), current().engine() as engine, progress("embedding") as on_progress:
        done = engine.reindex(on_progress=on_progress)
        status = engine.index_status()
    if as_json:
        echo_json(records.envelope(embedded=done, **records.fields(status)))
        return
    searched = {
        "hnsw": "searched by the HNSW graph",
        "missing": "the HNSW graph could not be built",
        "unavailable": f"searched exactly (install the ann extra: {INSTALL_HINT})",
    }.get(status.ann, "searched exactly")
    click.echo(
        f"embedded {done} text(s) with {status.model}; {status.vectors} vectors in all, {searched}"
    )
