"""memoracle against its peers on LoCoMo, in one run, on the same turns with the same scoring.

    python bench/peers.py                                  # all ten conversations
    python bench/peers.py --conversations 5-9              # the held-out half (tuned on 0-4)
    python bench/peers.py --peers bm25s,mem0,basic-memory  # the default: every peer

Every system gets each conversation's turns and is asked each question of categories
1-4; a question scores the fraction of its evidence turns (LoCoMo's ids, repaired as
`memoracle bench locomo` repairs them) among the system's top k, averaged over the
questions with evidence (R@5/10/20/50). Also per system: package versions, ingest
turns/s (everything until the first question can be asked) and search latency p50/p95.

The peers get one text per turn, "Speaker 7 May 2023 what was said" (speaker, the
session's date in words, the turn), and must return turn ids:
- `bm25s`: BM25 (bm25s, Lucene scoring) with English stop words and the English Snowball
  stemmer (bench/peer_bm25s.py).
- `mem0`: Mem0 OSS, `Memory.add(turn, infer=False)` per turn (no LLM), its own search,
  Qdrant local mode; vectors from memoracle's embedder through a loopback
  OpenAI-compatible endpoint (bench/embed_server.py), so both use the same embedder.
  Runs bench/peer_mem0.py in its own venv.
- `basic-memory`: one note per turn in a basic-memory project, its own search (see
  bench/peer_basic_memory.py for which mode). Runs in its own venv (Python >= 3.12).

Each peer runs its script in its own venv (a subprocess fed a JSON job on stdin, which
answers with the turn ids it found; scoring happens here), so the peers' dependencies
never meet memoracle's. A peer's venv is `<--venvs>/<peer>` (default
/tmp/memoracle-peers), made from the pinned list in bench/peers-requirements/<peer>.txt;
how is in docs/benchmarks-peers.md. A peer whose venv is missing or that fails is
reported with its error and the run goes on.
memoracle runs as `memoracle bench locomo` runs it (a fresh store per conversation, each
session captured at its time, `reindex`, then the questions). LoCoMo is read from
MEMORACLE_LOCOMO (see bench/_common.py) at run time and never copied here. Results land
in bench/results/peers.json.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import locomo_path, summary_ms, write_results  # noqa: E402
from embed_server import serve_in_background  # noqa: E402

from memoracle.embed import DEFAULT_EMBEDDER, make_embedder  # noqa: E402
from memoracle.jobs.bench import repair_evidence, run_locomo  # noqa: E402
from memoracle.jobs.bench.results import OVERALL_CATEGORIES  # noqa: E402
from memoracle.jobs.bench.run import Sample, parse_positions, read_samples  # noqa: E402
from memoracle.text import date_words  # noqa: E402
from memoracle.types import Turn  # noqa: E402

KS = (5, 10, 20, 50)
BENCH = Path(__file__).resolve().parent
PEERS = ("bm25s", "mem0", "basic-memory")
# peer -> (script run in the peer's venv, how its row is named)
SUBPROCESS_PEERS = {
    "bm25s": ("peer_bm25s.py", "bm25s"),
    "mem0": ("peer_mem0.py", "Mem0 OSS"),
    "basic-memory": ("peer_basic_memory.py", "basic-memory"),
}

Scored = list[tuple[tuple[str, ...], list[str]]]  # per question: evidence ids, ids found


def score(per_question: Scored) -> dict[str, float]:
    """Mean fraction of evidence ids in the top k, over questions with evidence."""
    scored = [(set(ev), found) for ev, found in per_question if ev]
    if not scored:
        return {f"R@{k}": 0.0 for k in KS}
    return {
        f"R@{k}": round(
            statistics.fmean(len(ev & set(found[:k])) / len(ev) for ev, found in scored), 4
        )
        for k in KS
    }


def questions(sample: Sample) -> list[tuple[str, tuple[str, ...]]]:
    """The questions of categories 1-4, each with its repaired evidence ids."""
    known = {t.turn_id for t in sample.turns if t.turn_id}
    out = []
    for qa in sample.qa:
        raw = qa.get("evidence")
        ids, _, _ = repair_evidence(raw if isinstance(raw, list) else [raw], known)
        if int(qa.get("category", 0) or 0) in OVERALL_CATEGORIES and str(qa.get("question", "")):
            out.append((str(qa["question"]).strip(), ids))
    return out


def turn_text(turn: Turn) -> str:
    """What every peer indexes for a turn: speaker, the session's date in words, text."""
    parts = (turn.speaker, date_words(turn.at) if turn.at else "", turn.text)
    return " ".join(part for part in parts if part)


def build_job(samples: Sequence[Sample], k: int, **extra: Any) -> dict[str, Any]:
    """The JSON a peer script reads on stdin: turns {id, text} and questions per sample."""
    return {
        "k": k,
        **extra,
        "conversations": [
            {
                "sample_id": sample.sample_id,
                "turns": [
                    {"id": t.turn_id or f"row{i}", "text": turn_text(t)}
                    for i, t in enumerate(sample.turns)
                ],
                "questions": [q for q, _ in questions(sample)],
            }
            for sample in samples
        ],
    }


def peer_row(system: str, samples: Sequence[Sample], answer: dict[str, Any]) -> dict[str, Any]:
    """Score what a peer script printed against the samples its job was built from."""
    convs = answer["conversations"]
    if len(convs) != len(samples):
        raise ValueError(f"{system}: {len(convs)} conversations answered, {len(samples)} asked")
    results: Scored = []
    search_s: list[float] = []
    turns = 0
    ingest_s = 0.0
    for sample, conv in zip(samples, convs, strict=True):
        asked = questions(sample)
        if len(conv["found"]) != len(asked):
            raise ValueError(
                f"{system}: sample {sample.sample_id}: {len(conv['found'])} answers"
                f" for {len(asked)} questions"
            )
        results += [(ev, list(found)) for (_, ev), found in zip(asked, conv["found"], strict=True)]
        search_s += [float(s) for s in conv["search_s"]]
        turns += len(sample.turns)
        ingest_s += float(conv["ingest_s"])
    mode = answer.get("mode")
    return {
        "system": f"{system} ({mode})" if mode else system,
        "versions": answer.get("versions", {}),
        **score(results),
        "questions": sum(1 for evidence, _ in results if evidence),
        "ingest_turns_per_s": round(turns / ingest_s, 1) if ingest_s else None,
        "search": summary_ms(search_s),
    }


def _memoracle(path: Path, conversations: str, embedder: str | None) -> dict[str, Any]:
    report = run_locomo(path, ks=KS, embedder=embedder, conversations=conversations)
    turns = sum(c.turns for c in report.conversations)
    ingest = sum(c.capture_seconds + c.index_seconds for c in report.conversations)
    recall = report.overall.memoracle.turn_recall
    return {
        "system": f"memoracle ({report.embedder})",
        "versions": {"memoracle": importlib.metadata.version("memoracle")},
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


def _subprocess_peer(
    peer: str, samples: Sequence[Sample], venvs: Path, job_extra: dict[str, Any]
) -> dict[str, Any]:
    script, name = SUBPROCESS_PEERS[peer]
    python = venvs / peer / "bin" / "python"
    if not python.exists():
        raise RuntimeError(
            f"no venv at {venvs / peer}: python3 -m venv {venvs / peer} &&"
            f" {python.parent / 'pip'} install -r bench/peers-requirements/{peer}.txt"
        )
    job = build_job(samples, max(KS), **job_extra)
    env = {**os.environ, "PYTHONPATH": "", "HF_HUB_OFFLINE": "1", "MEM0_TELEMETRY": "False"}
    done = subprocess.run(
        [str(python), str(BENCH / script)],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise RuntimeError(f"{script} exited {done.returncode}: {tail}")
    return peer_row(name, samples, json.loads(done.stdout))


def _print(rows: list[dict[str, Any]], conversations: str) -> None:
    print(f"LoCoMo conversations {conversations}, categories 1-4, turn-level recall")
    print(
        f"{'system':<58} {'R@5':>6} {'R@10':>6} {'R@20':>6} {'R@50':>6} {'turns/s':>9}"
        f" {'p50 ms':>7} {'p95 ms':>7}"
    )
    for row in rows:
        if "error" in row:
            print(f"{row['system']:<58} not run: {row['error']}")
            continue
        print(
            f"{row['system']:<58} {row['R@5']:>6.3f} {row['R@10']:>6.3f} {row['R@20']:>6.3f}"
            f" {row['R@50']:>6.3f} {row['ingest_turns_per_s'] or 0:>9.1f}"
            f" {row['search']['p50_ms']:>7.2f} {row['search']['p95_ms']:>7.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", default="0-9", help="by position: 0-4, 5-9, 0-9")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated: {PEERS}")
    parser.add_argument("--embedder", help="memoracle's embedding.model (default: its default)")
    parser.add_argument(
        "--venvs",
        type=Path,
        default=Path(os.environ.get("MEMORACLE_PEERS_VENVS", "/tmp/memoracle-peers")),
        help="folder of the peers' venvs, one per peer (MEMORACLE_PEERS_VENVS)",
    )
    args = parser.parse_args()
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for peer in peers:
        if peer not in PEERS:
            raise SystemExit(f"unknown peer {peer!r}: choose from {', '.join(PEERS)}")
    path = locomo_path()
    samples = read_samples(path, lambda _: None)
    samples = [samples[i] for i in parse_positions(args.conversations, len(samples))]
    rows = [_memoracle(path, args.conversations, args.embedder)]
    embedder = make_embedder(args.embedder or DEFAULT_EMBEDDER)
    server, base_url = serve_in_background(embedder)
    job_extra = {
        "embedding_base_url": base_url,
        "embedding_model": embedder.model_id,
        "embedding_dims": embedder.dim,
    }
    for peer in peers:
        try:
            rows.append(_subprocess_peer(peer, samples, args.venvs, job_extra))
        except (RuntimeError, ValueError, KeyError, json.JSONDecodeError) as exc:
            print(f"{peer}: {exc}", file=sys.stderr)
            rows.append({"system": peer, "error": str(exc)})
    server.shutdown()
    _print(rows, args.conversations)
    out = write_results(
        "peers",
        {
            "conversations": args.conversations,
            "embedder": embedder.model_id,
            "systems": rows,
        },
    )
    print(f"written: {out}")


if __name__ == "__main__":
    main()
