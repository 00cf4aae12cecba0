"""Recall and search latency at 10k and 100k memories (SPEC §12: recall p50 ≤ 15 ms,
p95 ≤ 40 ms at 100k; resident memory ≤ 500 MB).

Builds a store of N synthetic memories in realistic shapes (preferences, events, tasks,
facts, guardrails over a vocabulary of people, places and things) through the normal
capture path, gives every text a vector of the default model's size (random unit
vectors: embedding 100k texts with the real model would take most of an hour here and
the search cost does not depend on the values), then times `Engine.search` and
`Engine.recall` for 200 queries — query embedding with the real default model included.
The first query of a process loads the vectors into memory; it is reported apart.

    python bench/recall_speed.py [--sizes 10000,100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from _common import summary_ms, write_results

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.embed import to_blob
from memoracle.engine import Engine
from memoracle.types import Turn

PEOPLE = ["Anna", "Marc", "Lena", "Tomás", "Ines", "Oleg", "Sofia", "Jon", "Maria", "Kenji"]
PLACES = ["Lyon", "Lisbon", "Berlin", "Porto", "Kyoto", "Madrid", "Riga", "Oslo", "Quebec"]
THINGS = [
    "the billing service", "the home server", "Postgres 16", "the garden shed", "the NAS",
    "the hiking trip", "the piano lessons", "the kitchen renovation", "the Caddy proxy",
    "the tax return", "the school play", "the marathon", "the pottery class", "the VPN",
]  # fmt: skip
TEMPLATES = [
    "I prefer {thing} over anything else for now.",
    "My friend {person} moved to {place} last month.",
    "I went to {place} with {person} yesterday to look at {thing}.",
    "I need to finish {thing} by next Friday.",
    "We decided to use {thing} for the project with {person}.",
    "Never change {thing} without asking {person} first.",
    "{person} told me that {thing} in {place} is closed on Mondays.",
    "I just finished {thing} and it took three weeks.",
]
QUESTIONS = [
    "what did {person} say about {thing}?",
    "when did I go to {place}?",
    "what do I prefer for {thing}?",
    "who moved to {place}?",
    "what is due next Friday?",
]


def text(rng: random.Random, templates: list[str]) -> str:
    return (
        rng.choice(templates).format(
            person=rng.choice(PEOPLE), place=rng.choice(PLACES), thing=rng.choice(THINGS)
        )
        + f" (note {rng.randrange(10**6)})"
    )


def build(home: Path, size: int, rng: random.Random) -> Engine:
    settings = load(home, env={})
    start = datetime(2025, 1, 1, tzinfo=UTC)
    clock = FixedClock(start)
    Engine.init(settings, clock=clock)
    engine = Engine.open(settings, clock=clock)
    batch: list[Turn] = []
    for i in range(size):
        at = start + timedelta(minutes=5 * i)
        batch.append(Turn("user", text(rng, TEMPLATES), at, "bench", str(i)))
        if len(batch) == 1000:
            engine.capture(batch)
            batch = []
    if batch:
        engine.capture(batch)
    clock.set(start + timedelta(minutes=5 * size + 60))
    embedder = engine.searcher.embedder
    assert embedder is not None
    vectors = np.random.default_rng(0)
    mark = (0, 0)
    while True:
        missing, mark = engine.store.index.missing_vectors(
            embedder.model_id, after=mark, limit=5000
        )
        if not missing:
            break
        rows = []
        for content_hash, _ in missing:
            v = vectors.standard_normal(embedder.dim).astype(np.float32)
            rows.append(
                (content_hash, embedder.model_id, embedder.dim, to_blob(v / np.linalg.norm(v)))
            )
        with engine.store.transaction():
            engine.store.index.put_vectors(rows, now=clock.now())
    return engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    results = {}
    for size in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(size)
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            engine = build(Path(tmp), size, rng)
            built = time.perf_counter() - started
            questions = [text(rng, QUESTIONS) for _ in range(args.queries)]
            first = time.perf_counter()
            engine.search(questions[0], k=10)
            first_ms = (time.perf_counter() - first) * 1000
            search, recall = [], []
            for q in questions:
                t = time.perf_counter()
                engine.search(q, k=10)
                search.append(time.perf_counter() - t)
                t = time.perf_counter()
                engine.recall(q, budget=2000)
                recall.append(time.perf_counter() - t)
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            memories = engine.stats().memories
            engine.close()
        results[size] = {
            "memories": memories,
            "build_seconds": round(built, 1),
            "first_search_ms": round(first_ms, 1),
            "search": summary_ms(search),
            "recall": summary_ms(recall),
            "peak_rss_mb": round(rss_mb),
        }
        r = results[size]
        print(
            f"{size:>7} turns ({memories} memories): recall p50 {r['recall']['p50_ms']:.1f} ms"
            f" p95 {r['recall']['p95_ms']:.1f} ms; search p50 {r['search']['p50_ms']:.1f} ms"
            f" p95 {r['search']['p95_ms']:.1f} ms; first search {first_ms:.0f} ms;"
            f" peak RSS {rss_mb:.0f} MB; built in {built:.0f} s"
        )
    print("target at 100k: recall p50 ≤ 15 ms, p95 ≤ 40 ms, RSS ≤ 500 MB")
    print(f"results: {write_results('recall_speed', {'sizes': results})}")


if __name__ == "__main__":
    main()
