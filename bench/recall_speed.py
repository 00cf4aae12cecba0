"""Recall and search latency at 10k, 100k and 1M turns (targets: recall p50 ≤ 15 ms,
p95 ≤ 40 ms and resident memory ≤ 500 MB at 100k; p95 ≤ 150 ms at 1M with the ANN index).

Builds a store from N synthetic agent turns in realistic shapes (preferences, events,
tasks, decisions, guardrails, facts) over 400 people (a few come up all the time, most
rarely: weight 1/rank), 31 places and 1,170 things, through the normal capture path
(about 0.4 memories a turn: many turns hold none, and people repeat themselves). Every
text gets a vector of the default model's size (random unit vectors: embedding 100k
texts with the real model would take most of an hour here, and exact search costs the
same whatever the values). Then `Engine.search` and `Engine.recall` are timed for 200
questions, query embedding with the real default model included. The first search of
a process loads the vectors into memory; it is reported apart.

Each store is searched in a fresh process per variant, so the peak RSS is the search's:
exact numpy search, and, with the `ann` extra installed, the HNSW graph (built and saved
by a first process, loaded from its file by the measured one).

    python bench/recall_speed.py [--sizes 10000,100000] [--queries 200] [--keep DIR]
                                 [--quick-build]

--quick-build writes the rows straight into the store instead of capturing them (the
capture path runs at ~40 turns/s on a loaded two-core machine: most of an hour for 100k):
every turn an episode, and 4 turns in 10 also a memory of the same text, linked to its
turn, of the kind its template suggests. Search then sees the same number of rows, words
and vectors as from the capture path, but not the same memories: compare numbers only
between stores built the same way (the directory name says which).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from _common import summary_ms, write_results

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.embed import to_blob
from memoracle.engine import Engine
from memoracle.recall.ann import ann_available
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn

FIRST = [
    "Anna", "Marc", "Lena", "Tomás", "Ines", "Oleg", "Sofia", "Jon", "Maria", "Kenji",
    "Élodie", "Pablo", "Nadia", "Igor", "Chloé", "Diego", "Yuki", "Omar", "Greta", "Luca",
    "Aisha", "Björn", "Carmen", "Dmitri", "Eva", "Farid", "Hanna", "Ivan", "Julia", "Karim",
    "Lucía", "Mateo", "Nina", "Oscar", "Paula", "Rafael", "Sven", "Tanya", "Ulla", "Viktor",
]  # fmt: skip
LAST = ["", "", "", " Petrova", " Martin", " García", " Kowalski", " Dubois", " Sato", " Rossi"]
PLACES = [
    "Lyon", "Lisbon", "Berlin", "Porto", "Kyoto", "Madrid", "Riga", "Oslo", "Quebec",
    "Kazan", "Seville", "Bordeaux", "Tallinn", "Gdansk", "Valencia", "Nantes", "Turku",
    "Bilbao", "Ghent", "Utrecht", "Krakow", "Brno", "Graz", "Malmö", "Aarhus", "Cork",
    "the office", "the lake house", "the gym", "the coworking space", "the clinic",
]  # fmt: skip
ADJECTIVES = [
    "new", "old", "shared", "quarterly", "blue", "second", "weekly", "broken", "spare",
    "main", "backup", "team", "family", "garden", "kitchen", "school", "winter", "summer",
    "billing", "staging", "personal", "public", "local", "remote", "small", "big",
]  # fmt: skip
NOUNS = [
    "service", "server", "shed", "NAS", "tax return", "piano lessons", "renovation",
    "proxy", "marathon plan", "pottery class", "VPN", "database", "laptop", "bike",
    "car insurance", "dentist appointment", "passport", "flat", "lease", "budget",
    "newsletter", "invoice", "router", "camera", "printer", "garden beds", "fence",
    "roof", "heating", "playlist", "recipe book", "spreadsheet", "dashboard", "API key",
    "deploy script", "release notes", "birthday party", "wedding", "concert tickets",
    "train tickets", "hotel booking", "climbing shoes", "yoga mat", "guitar", "telescope",
]  # fmt: skip
TEMPLATES = [
    "I prefer {thing} over the alternatives for now.",
    "I really like {thing}, {person} recommended it.",
    "My friend {person} moved to {place} last month.",
    "I went to {place} with {person} on {day} to look at {thing}.",
    "I need to finish {thing} by {day}.",
    "Remind me to call {person} about {thing} on {day}.",
    "We decided to use {thing} for the project with {person}.",
    "We agreed with {person} to move {thing} to {place}.",
    "Never change {thing} without asking {person} first.",
    "{person} told me that {thing} in {place} is closed on {day}s.",
    "I just finished {thing} and it cost {amount} euros.",
    "{person} works at {place} now and handles {thing}.",
    "Since {day}, {thing} costs {amount} euros a month.",
    "{person}'s birthday is on {date}; she wants {thing}.",
    "I met {person} at {place} and we talked about {thing} for an hour.",
    "{person} lent me {thing} until {date}.",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "March", "May", "June", "August", "October", "December"]
QUESTIONS = [
    "what did {person} say about {thing}?",
    "when did I go to {place}?",
    "what do I prefer for {thing}?",
    "who moved to {place}?",
    "what is due on {day}?",
    "how much does {thing} cost?",
    "where does {person} work now?",
]
# A few people come up all the time (a partner, a colleague), most rarely: weight 1/rank.
PEOPLE = [f + last for last in LAST for f in FIRST]
WEIGHTS = [1 / (rank + 1) for rank in range(len(PEOPLE))]


def text(rng: random.Random, templates: list[str]) -> str:
    return rng.choice(templates).format(
        person=rng.choices(PEOPLE, WEIGHTS)[0],
        place=rng.choice(PLACES),
        thing=f"the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}",
        day=rng.choice(DAYS),
        date=f"{rng.choice(MONTHS)} {rng.randint(1, 28)}",
        amount=rng.randint(5, 2000),
    )


def build(home: Path, size: int, rng: random.Random, *, quick: bool = False) -> Engine:
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
            store_rows(engine, batch) if quick else engine.capture(batch)
            batch = []
    if batch:
        store_rows(engine, batch) if quick else engine.capture(batch)
    clock.set(start + timedelta(minutes=5 * size + 60))
    fill_vectors(engine)
    return engine


# No guardrails: recall reads every one of them each turn, and a kind picked at random
# would make thousands (the capture path keeps a few rules).
KINDS = ("preference", "event", "task", "decision", "fact")


def store_rows(engine: Engine, turns: list[Turn]) -> None:
    """`--quick-build`: the turns as episodes, 4 in 10 also as a memory (no rules)."""
    store, now = engine._store, engine.clock.now()
    with store.transaction():
        for n, turn in enumerate(turns):
            episode = store.episodes.insert(turn, at=turn.at, now=now, scope=Scope())
            if episode is None or n % 5 >= 2:
                continue
            kind = KINDS[sum(map(ord, turn.text[:12])) % len(KINDS)]
            new = NewMemory(
                kind, turn.text, "episodic", "capture", turn.at, content_hash(turn.text)
            )
            memory = store.memories.insert(new, now=now)
            store.memories.add_provenance(memory, now=now, episode_id=episode)


def fill_vectors(engine: Engine) -> None:
    """Give every text without a vector a random unit vector of the default model's size
    (the real model would take most of an hour at 100k texts; search costs the same)."""
    embedder = engine.searcher.embedder
    assert embedder is not None
    vectors = np.random.default_rng(0)
    mark = (0, 0)
    while True:
        missing, mark = engine._store.index.missing_vectors(
            embedder.model_id, after=mark, limit=5000
        )
        if not missing:
            break
        rows = []
        for text_hash, _ in missing:
            v = vectors.standard_normal(embedder.dim).astype(np.float32)
            rows.append(
                (text_hash, embedder.model_id, embedder.dim, to_blob(v / np.linalg.norm(v)))
            )
        with engine._store.transaction():
            engine._store.index.put_vectors(rows, now=engine.clock.now())


def measure(home: Path, size: int, variant: str, queries: int) -> dict[str, Any]:
    """Time search and recall in this (fresh) process: its peak RSS is the search's."""
    threshold = "1" if variant == "hnsw" else str(10**12)
    settings = load(home, env={}, overrides={"embedding.ann_threshold": threshold})
    clock = FixedClock(datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=5 * size + 60))
    rng = random.Random(size + 1)
    questions = [text(rng, QUESTIONS) for _ in range(queries)]
    with Engine.open(settings, clock=clock) as engine:
        first = time.perf_counter()
        engine.search(questions[0], k=10)
        first_ms = (time.perf_counter() - first) * 1000
        engine.recall(questions[0], budget=2000)  # loads the tokenizer: not timed
        search, recall = [], []
        for q in questions:
            t = time.perf_counter()
            engine.search(q, k=10)
            search.append(time.perf_counter() - t)
            t = time.perf_counter()
            engine.recall(q, budget=2000)
            recall.append(time.perf_counter() - t)
        stats = engine.stats()
        vectors = engine.index_status().vectors
    return {
        "memories": stats.memories,
        "turns": stats.episodes,
        "vectors": vectors,
        "first_search_ms": round(first_ms, 1),
        "search": summary_ms(search),
        "recall": summary_ms(recall),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _child(*args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    ).stdout
    return dict(json.loads(out.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--keep", type=Path, help="build the stores here and reuse them on the next run"
    )
    parser.add_argument(
        "--quick-build", action="store_true", help="capture without the model (see above)"
    )
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # child processes
    parser.add_argument("--prepare", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--variant", default="exact", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare:
        settings = load(args.prepare, env={}, overrides={"embedding.ann_threshold": "1"})
        started = time.perf_counter()
        with Engine.open(settings) as engine:
            engine.reindex()
            assert engine.index_status().ann == "hnsw"
        print(json.dumps({"graph_build_seconds": round(time.perf_counter() - started, 1)}))
        return
    if args.measure:
        size = int(args.sizes)
        print(json.dumps(measure(args.measure, size, args.variant, args.queries)))
        return
    variants = ["exact", "hnsw"] if ann_available() else ["exact"]
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            name = f"store-{size}" + ("-quick" if args.quick_build else "")
            home = (args.keep or Path(tmp)) / name
            built = None
            if not (home / "memoracle.db").exists():
                started = time.perf_counter()
                build(home, size, random.Random(size), quick=args.quick_build).close()
                built = round(time.perf_counter() - started, 1)
            results[size] = {"build_seconds": built}
            for variant in variants:
                graph = None
                if variant == "hnsw":  # build the graph file (reindex) in a first process
                    graph = _child("--prepare", str(home))["graph_build_seconds"]
                r = _child("--measure", str(home), "--sizes", str(size), "--variant", variant,
                           "--queries", str(args.queries))  # fmt: skip
                r["graph_build_seconds"] = graph
                results[size][variant] = r
                print(
                    f"{size:>7} turns, {r['memories']} memories, {r['vectors']} vectors,"
                    f" {variant}: recall p50 {r['recall']['p50_ms']:.1f} ms"
                    f" p95 {r['recall']['p95_ms']:.1f} ms; search p50"
                    f" {r['search']['p50_ms']:.1f} ms p95 {r['search']['p95_ms']:.1f} ms;"
                    f" first search {r['first_search_ms']:.0f} ms; peak RSS {r['peak_rss_mb']} MB"
                    + (f"; graph built or loaded in {graph:.0f} s" if graph else "")
                )
    print("targets: recall p50 ≤ 15 ms, p95 ≤ 40 ms, RSS ≤ 500 MB at 100k; p95 ≤ 150 ms at 1M")
    print(f"results: {write_results('recall_speed', {'sizes': results})}")


if __name__ == "__main__":
    main()
