"""The report as text (`format_report`) and JSON (`report_json`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from memoracle.jobs.bench.results import BASELINE, Found, GroupResult, LocomoReport, SystemScores


def format_report(report: LocomoReport) -> str:
    """The report as plain-text tables (what `memoracle bench locomo` prints)."""
    n_questions = sum(c.questions for c in report.conversations)
    ev = report.evidence
    lines = [
        f"LoCoMo evidence recall: {report.path}",
        f"{len(report.conversations)} conversations, "
        f"{sum(c.turns for c in report.conversations)} turns, {n_questions} questions; "
        f"embedder {report.embedder or 'none'}; recall budget {report.budget} tokens "
        f"({report.tokenizer}); baseline: BM25 over raw turns, question words OR-ed",
        f"evidence ids: {ev.repaired} repaired, {len(ev.dropped)} dropped"
        + (f" ({', '.join(ev.dropped)})" if ev.dropped else "")
        + f"; questions left without evidence (not scored): {ev.unscored_questions}",
        "",
    ]
    rows = [*(g for g in report.categories if g.label != "5"), report.overall]
    tail = [*(g for g in report.categories if g.label == "5"), report.everything]

    def table(
        title: str,
        cells: Callable[[SystemScores], list[float]],
        heads: list[str],
        formats: Sequence[str] = (),
    ) -> None:
        def row(g: GroupResult) -> list[str]:
            values = [*cells(g.memoracle), *cells(g.baseline)]
            specs = [*formats, *formats] if formats else [".3f"] * len(values)
            return [f"{g.label} {g.name}", str(g.scored)] + [
                format(v, spec) if g.scored else "-" for v, spec in zip(values, specs, strict=True)
            ]

        header = ["category", "n"] + [f"mem {h}" for h in heads] + [f"bm25 {h}" for h in heads]
        body, extra = [row(g) for g in rows], [row(g) for g in tail]
        widths = [max(len(r[i]) for r in [header, *body, *extra]) for i in range(len(header))]

        def render(cells: list[str]) -> str:
            padded = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
            return "  ".join([cells[0].ljust(widths[0]), *padded])

        rule = "-" * len(render(header))
        lines.extend([title, render(header), rule, *map(render, body), rule])
        lines.extend([*map(render, extra), ""])

    at_k = [f"@{k}" for k in report.ks]
    table("turn-level evidence recall@k", lambda s: [s.turn_recall[k] for k in report.ks], at_k)
    table("all evidence found @k", lambda s: [s.all_found[k] for k in report.ks], at_k)
    table("any evidence found @k", lambda s: [s.any_found[k] for k in report.ks], at_k)
    table(
        "session-level evidence recall@k", lambda s: [s.session_recall[k] for k in report.ks], at_k
    )
    table(
        f"evidence recall inside {report.budget} tokens (and mean tokens used)",
        lambda s: [s.budget_recall, s.budget_tokens],
        ["recall", "tokens"],
        [".3f", ".0f"],
    )
    modes = ", ".join(f"{m} {n}" for m, n in sorted(report.search_modes.items()))
    lines += [
        f"latency: search median {report.search_latency.median_ms:.1f} ms "
        f"(p95 {report.search_latency.p95_ms:.1f}), recall median "
        f"{report.recall_latency.median_ms:.1f} ms (p95 {report.recall_latency.p95_ms:.1f}) "
        f"over {report.search_latency.n} questions; search modes: {modes or 'none'}"
        + (f"; degraded recalls: {report.degraded_recalls}" if report.degraded_recalls else ""),
        f"run time {report.seconds:.1f} s (capture "
        f"{sum(c.capture_seconds for c in report.conversations):.1f} s, embedding "
        f"{sum(c.index_seconds for c in report.conversations):.1f} s, questions "
        f"{sum(c.query_seconds for c in report.conversations):.1f} s)",
    ]
    return "\n".join(lines)


def report_json(report: LocomoReport, *, questions: bool = False) -> dict[str, Any]:
    """The report as JSON-ready data (`--json`); per-question results only if asked."""

    def scores(s: SystemScores) -> dict[str, Any]:
        return {
            "turn_recall": {str(k): v for k, v in s.turn_recall.items()},
            "all_found": {str(k): v for k, v in s.all_found.items()},
            "any_found": {str(k): v for k, v in s.any_found.items()},
            "session_recall": {str(k): v for k, v in s.session_recall.items()},
            "budget_recall": s.budget_recall,
            "budget_tokens": s.budget_tokens,
        }

    def group(g: GroupResult) -> dict[str, Any]:
        return {
            "category": g.label,
            "name": g.name,
            "questions": g.questions,
            "scored": g.scored,
            "memoracle": scores(g.memoracle),
            BASELINE: scores(g.baseline),
        }

    def found(f: Found) -> dict[str, Any]:
        return {
            "turns": {str(k): v for k, v in f.turns.items()},
            "sessions": {str(k): v for k, v in f.sessions.items()},
            "budget": f.budget,
            "budget_tokens": f.budget_tokens,
        }

    data: dict[str, Any] = {
        "benchmark": "locomo",
        "path": report.path,
        "ks": list(report.ks),
        "budget": report.budget,
        "embedder": report.embedder,
        "tokenizer": report.tokenizer,
        "categories": [group(g) for g in report.categories],
        "overall": group(report.overall),
        "all": group(report.everything),
        "evidence": {
            "repaired": report.evidence.repaired,
            "dropped": list(report.evidence.dropped),
            "unscored_questions": report.evidence.unscored_questions,
        },
        "latency_ms": {
            "search": asdict(report.search_latency),
            "recall": asdict(report.recall_latency),
        },
        "search_modes": dict(report.search_modes),
        "degraded_recalls": report.degraded_recalls,
        "ingest_warnings": report.ingest_warnings,
        "conversations": [asdict(c) for c in report.conversations],
        "seconds": report.seconds,
    }
    if questions:
        data["questions"] = [
            {
                "sample_id": q.sample_id,
                "index": q.index,
                "category": q.category,
                "question": q.question,
                "evidence": list(q.evidence),
                "evidence_sessions": list(q.evidence_sessions),
                "memoracle": found(q.memoracle),
                BASELINE: found(q.baseline),
            }
            for q in report.questions
        ]
    return data
