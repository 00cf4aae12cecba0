"""memoracle against its peers on LoCoMo, on the same turns with the same scoring.

    python bench/peers.py                          # all ten conversations
    python bench/peers.py --conversations 5-9      # the held-out half (tuned on 0-4)
    python bench/peers.py --peers bm25s --embedder hash

Every system gets each conversation's turns and is asked each question of categories
1-4; a question scores the fraction of its evidence turns (LoCoMo's ids, repaired as
`memoracle bench locomo` repairs them) among the system's top k, averaged over the
questions with evidence. Printed per system: turn-level R@5/10/20, ingest turns/s
(everything until the first question can be asked: capture and embedding for
memoracle, tokenising and indexing for bm25s) and search latency p50/p95.

Peers:
- `bm25s`: BM25 (bm25s, Lucene scoring, k1 1.5, b 0.75) over "Speaker: text" with the
  session's date in words, English stop words and the English Snowball stemmer — the
  strongest plain lexical baseline we found. Needs `pip install bm25s` (the stemmer,
  `snowballstemmer`, is a memoracle dependency already); skipped with a note if missing.

memoracle runs as `memoracle bench locomo` runs it (a fresh store per conversation, each
session captured at its time, `reindex`, then the questions). LoCoMo is read from
MEMORACLE_LOCOMO (see bench/_common.py) at run time and never copied here. Results land
in bench/results/peers.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import locomo_path, summary_ms, write_results  # noqa: E402

from memoracle.jobs.bench import repair_evidence, run_locomo  # noqa: E402
from memoracle.jobs.bench.results import OVERALL_CATEGORIES  # noqa: E402
from memoracle.jobs.bench.run import Sample, parse_positions, read_samples  # noqa: E402
from memoracle.text import date_words  # noqa: E402

KS = (5, 10, 20)

Search = Callable[[str, int], list[str]]  # question, k -> turn ids, best first


def _score(per_question: list[tuple[tuple[str, ...], list[str]]]) -> dict[str, float]:
    """Mean fraction of evidence ids in the top k, over questions with evidence."""
    scored = [(set(ev), found) for ev, found in per_question if ev]
    return {
        f"R@{k}": round(
            statistics.fmean(len(ev & set(found[:k])) / len(ev) for ev, found in scored), 4
        )
        for k in KS
    }


def _questions(sample: Sample) -> list[tuple[str, tuple[str, ...]]]:
    known = {t.turn_id for t in sample.turns if t.turn_id}
    out = []
    for qa in sample.qa:
        raw = qa.get("evidence")
        ids, _, _ = repair_evidence(raw if isinstance(raw, list) else [raw], known)
        if int(qa.get("category", 0) or 0) in OVERALL_CATEGORIES and str(qa.get("question", "")):
            out.append((str(qa["question"]).strip(), ids))
    return out


def _bm25s(samples: Sequence[Sample]) -> dict[str, Any]:
    import bm25s
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    results: list[tuple[tuple[str, ...], list[str]]] = []
    turns = 0
    index_s = 0.0
    search_s: list[float] = []
    for sample in samples:
        t0 = time.perf_counter()
        ids = [t.turn_id or "" for t in sample.turns]
        corpus = [
            " ".join(part for part in (t.speaker, date_words(t.at) if t.at else "", t.text) if part)
            for t in sample.turns
        ]
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer.stemWords, show_progress=False),
            show_progress=False,
        )
        index_s += time.perf_counter() - t0
        turns += len(corpus)
        for question, evidence in _questions(sample):
            s0 = time.perf_counter()
            tokens = bm25s.tokenize(
                [question], stopwords="en", stemmer=stemmer.stemWords, show_progress=False
            )
            found: list[str] = []
            if tokens.vocab:
                k = min(max(KS), len(corpus))
                docs, _ = retriever.retrieve(tokens, k=k, show_progress=False)
                found = [ids[int(i)] for i in docs[0]]
            search_s.append(time.perf_counter() - s0)
            results.append((evidence, found))
    return {
        "system": "bm25s + Snowball, speaker and date",
        **_score(results),
        "questions": sum(1 for evidence, _ in results if evidence),
        "ingest_turns_per_s": round(turns / index_s, 1),
        "search": summary_ms(search_s),
    }


def _memoracle(path: Path, conversations: str, embedder: str | None) -> dict[str, Any]:
    report = run_locomo(path, ks=KS, embedder=embedder, conversations=conversations)
    turns = sum(c.turns for c in report.conversations)
    ingest = sum(c.capture_seconds + c.index_seconds for c in report.conversations)
    recall = report.overall.memoracle.turn_recall
    return {
        "system": f"memoracle ({report.embedder})",
        **{f"R@{k}": recall[k] for k in KS},
        "questions": report.overall.scored,
        "ingest_turns_per_s": round(turns / ingest, 1),
        "search": {
            "n": report.search_latency.n,
            "p50_ms": report.search_latency.median_ms,
            "p95_ms": report.search_latency.p95_ms,
        },
        "recall_in_2000_tokens": report.overall.memoracle.budget_recall,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", default="0-9", help="by position: 0-4, 5-9, 0-9")
    parser.add_argument("--peers", default="bm25s", help="comma-separated: bm25s")
    parser.add_argument("--embedder", help="memoracle's embedding.model (default: its default)")
    args = parser.parse_args()
    path = locomo_path()
    samples = read_samples(path, lambda _: None)
    samples = [samples[i] for i in parse_positions(args.conversations, len(samples))]
    rows = [_memoracle(path, args.conversations, args.embedder)]
    for peer in (p.strip() for p in args.peers.split(",") if p.strip()):
        if peer != "bm25s":
            raise SystemExit(f"unknown peer {peer!r}: bm25s is the one this script runs")
        if importlib.util.find_spec("bm25s") is None:
            print("bm25s is not installed (pip install bm25s): skipped", file=sys.stderr)
            continue
        rows.append(_bm25s(samples))
    print(f"LoCoMo conversations {args.conversations}, categories 1-4, turn-level recall")
    print(
        f"{'system':<44} {'R@5':>6} {'R@10':>6} {'R@20':>6} {'turns/s':>9}"
        f" {'p50 ms':>7} {'p95 ms':>7}"
    )
    for row in rows:
        print(
            f"{row['system']:<44} {row['R@5']:>6.3f} {row['R@10']:>6.3f} {row['R@20']:>6.3f}"
            f" {row['ingest_turns_per_s']:>9.1f} {row['search']['p50_ms']:>7.2f}"
            f" {row['search']['p95_ms']:>7.2f}"
        )
    out = write_results("peers", {"conversations": args.conversations, "systems": rows})
    print(f"written: {out}")


if __name__ == "__main__":
    main()
