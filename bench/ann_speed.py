"""Exact numpy search vs the HNSW index (faiss, the `ann` extra) at 100k and 1M vectors.

The target at 1M memories is recall p95 ≤ 150 ms end to end, so the vector lookup itself
should take a few ms. This measures the lookup alone, on 512-d unit vectors (the default
model's size) drawn like real embeddings: around 2,000 random topic centres plus noise,
normalised (`--spread 1.0` puts two texts of one topic at cosine ≈ 0.5, two unrelated
ones at ≈ 0); `--data random` draws uniformly on the sphere, the hardest case for a
graph index. Queries are 200 fresh vectors drawn the same way.

For each size: exact search as memoracle does it below `embedding.ann_threshold`
(`matrix @ q`, argpartition, sort; also the ground truth), then HNSW — build time with
2 threads, size in RAM (RSS growth) and on disk (with a label per row), save and load
time — and for each `--ef-search` the query p50/p95 (one thread), recall@k against
exact, and how many of the exact top 10 it found (with a long k, such as hybrid's 200,
the tail sits at noise-level similarity; the head is what counts). Peak RSS is the
process's: 484 MB at 100k; at 1M the matrix is 2 GB and the index another 2.3 GB (it
keeps its own copy of the vectors), so about 5 GB. The build dominates the run time:
~1.5 min at 100k, expect 20-40 min at 1M.

    python bench/ann_speed.py [--sizes 100000,1000000] [--data clustered] [--k 50]
                              [--ef-search 32,64,128,256] [--m 32] [--ef-construction 80]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from _common import summary_ms, write_results

from memoracle.recall.ann import BUILD_THREADS, EF_CONSTRUCTION, EF_SEARCH, HnswIndex, M

Matrix = npt.NDArray[np.float32]
CHUNK = 100_000  # rows drawn at a time, so generation never holds a float64 copy


def draw(
    rng: np.random.Generator, n: int, dim: int, centres: Matrix | None, spread: float
) -> Matrix:
    """n unit vectors: uniform on the sphere, or a random centre plus gaussian noise."""
    out = np.empty((n, dim), np.float32)
    for start in range(0, n, CHUNK):
        part = out[start : start + CHUNK]
        part[:] = rng.standard_normal(part.shape, dtype=np.float32)
        if centres is not None:
            part *= np.float32(spread / np.sqrt(dim))
            part += centres[rng.integers(0, len(centres), len(part))]
        part /= np.linalg.norm(part, axis=1, keepdims=True)
    return out


def exact(matrix: Matrix, query: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """The exact method: all similarities, then the best k, sorted."""
    sims = matrix @ query
    best = np.argpartition(-sims, k - 1)[:k]
    return best[np.argsort(-sims[best])]


def rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(size: int, args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(size)
    centres = None
    if args.data == "clustered":
        centres = draw(rng, args.centres, args.dim, None, 0.0)
    matrix = draw(rng, size, args.dim, centres, args.spread)
    queries = draw(rng, args.queries, args.dim, centres, args.spread)
    k = args.k

    exact(matrix, queries[0], k)  # warm up
    truth, exact_times = [], []
    for q in queries:
        t = time.perf_counter()
        truth.append(exact(matrix, q, k))
        exact_times.append(time.perf_counter() - t)

    before = rss_mb()
    t = time.perf_counter()
    index = HnswIndex.build(
        matrix, m=args.m, ef_construction=args.ef_construction, threads=args.threads
    )
    build_s = time.perf_counter() - t
    index_rss = rss_mb() - before
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.hnsw"
        labels = [f"{i:032x}" for i in range(size)]  # content hashes are 32 hex digits
        t = time.perf_counter()
        index.save(path, labels=labels)
        save_s = time.perf_counter() - t
        disk_mb = path.stat().st_size / 2**20
        del index, labels  # query the loaded copy: that is what a later process would do
        t = time.perf_counter()
        index, _ = HnswIndex.load(path, args.dim)
        load_s = time.perf_counter() - t

    by_ef = {}
    for ef in args.ef_search:
        index.ef_search = ef
        index.search(queries[0], k)
        times, found = [], []
        for q in queries:
            t = time.perf_counter()
            ids, _ = index.search(q, k)
            times.append(time.perf_counter() - t)
            found.append(ids)
        pairs = [(set(f.tolist()), e.tolist()) for f, e in zip(found, truth, strict=True)]
        recall = np.mean([len(f & set(e)) / k for f, e in pairs])
        head = np.mean([len(f & set(e[:10])) / min(10, k) for f, e in pairs])
        by_ef[ef] = {
            "query": summary_ms(times),
            f"recall_at_{k}": round(float(recall), 4),
            "top10_found": round(float(head), 4),
        }
    return {
        "vectors": size,
        "matrix_mb": round(matrix.nbytes / 2**20),
        "exact": summary_ms(exact_times),
        "hnsw": {
            "build_seconds": round(build_s, 1),
            "index_rss_mb": round(index_rss),
            "disk_mb": round(disk_mb),
            "save_seconds": round(save_s, 2),
            "load_seconds": round(load_s, 2),
            "by_ef_search": by_ef,
        },
        "peak_rss_mb": round(peak_rss_mb()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--data", choices=("clustered", "random"), default="clustered")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--centres", type=int, default=2000)
    parser.add_argument("--spread", type=float, default=1.0)
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--ef-search", default=f"32,64,{EF_SEARCH},256")
    parser.add_argument("--m", type=int, default=M)
    parser.add_argument("--ef-construction", type=int, default=EF_CONSTRUCTION)
    parser.add_argument("--threads", type=int, default=BUILD_THREADS)
    args = parser.parse_args()
    args.ef_search = sorted({int(e) for e in args.ef_search.split(",")})

    results = {}
    for size in (int(s) for s in args.sizes.split(",")):
        r = results[size] = run(size, args)
        h = r["hnsw"]
        print(
            f"{size:>8} {args.data} {args.dim}-d vectors (matrix {r['matrix_mb']} MB): exact"
            f" p50 {r['exact']['p50_ms']:.2f} ms p95 {r['exact']['p95_ms']:.2f} ms"
        )
        print(
            f"         HNSW M={args.m} efC={args.ef_construction}: built in"
            f" {h['build_seconds']:.1f} s ({args.threads} threads), +{h['index_rss_mb']} MB RSS,"
            f" {h['disk_mb']} MB on disk, save {h['save_seconds']:.2f} s,"
            f" load {h['load_seconds']:.2f} s; peak RSS {r['peak_rss_mb']} MB"
        )
        print(
            f"         {'ef_search':>9} {'p50 ms':>8} {'p95 ms':>8} {f'recall@{args.k}':>10}"
            f" {'top10 found':>11}"
        )
        for ef, e in h["by_ef_search"].items():
            print(
                f"         {ef:>9} {e['query']['p50_ms']:>8.2f} {e['query']['p95_ms']:>8.2f}"
                f" {e[f'recall_at_{args.k}']:>10.3f} {e['top10_found']:>11.3f}"
            )
    settings = {k: v for k, v in vars(args).items() if k != "sizes"}  # measured with these
    name = "ann_speed" if args.data == "clustered" else f"ann_speed_{args.data}"
    print(f"results: {write_results(name, {'settings': settings, 'sizes': results})}")


if __name__ == "__main__":
    main()
