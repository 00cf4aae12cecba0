"""How fast each page of `memoracle ui` answers over a big store (target: every page
p95 ≤ 150 ms at 100k memories).

The store: `--memories` memories (default 100,000), each said in its own turn (one every
5 minutes, the latency benchmark's sentences: preferences, events, tasks, decisions and
facts over 400 people, `recall_speed.text`), written straight to the store as
`recall_speed.py --quick-build` does, a subject on one in three; every text then gets a
random unit vector of the default model's size (`recall_speed.fill_vectors`); then, as
the first nightly run would, the HNSW graph is built (`reindex`, with the `ann` extra:
the store is past `embedding.ann_threshold`) and the knowledge graph read from every
memory (`read_graph_backlog`); one health check is recorded so the health page has a
report and charts to draw.

Each page is asked `--requests` times (default 40) through the app in this process
(Starlette's test client, one event loop for all requests as a server keeps one: the
guard, the engine call and the template, not the network), with varied words, filters,
pages and memories, after one warm-up request each; p50, p95 and p99 per page are
printed as JSON and written to bench/results/, with the load average and each page's
CPU time (p50, p95: this process's, all its threads), which a machine shared with other
work inflates far less than the time on the clock.
The review page's duplicates, computed only when its link asks (the dedup score over
the newest 200 memories takes seconds), are timed apart (`--duplicates` times, default
1), outside the target. A store built with `--keep DIR` is reused by the next run with the same DIR.

    python bench/ui_speed.py [--memories 100000] [--requests 40] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import machine, summary_ms, write_results
from recall_speed import KINDS, PEOPLE, QUESTIONS, TEMPLATES, fill_vectors, text
from starlette.testclient import TestClient

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs import health
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope, Turn
from memoracle.ui import Access, build_app
from memoracle.ui.guard import COOKIE

START = datetime(2025, 1, 1, tzinfo=UTC)
ON_DEMAND = "review duplicates (on demand, not in the target)"
WORDS = ["marathon", "router", "Lisbon", "invoice", "guitar", "dentist", "lease", "Anna"]


def build(home: Path, size: int, rng: random.Random) -> FixedClock:
    settings = load(home, env={})
    clock = FixedClock(START)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        store = engine._store
        for first in range(0, size, 2000):
            with store.transaction():
                for i in range(first, min(size, first + 2000)):
                    at = START + timedelta(minutes=5 * i)
                    said = text(rng, TEMPLATES)
                    turn = Turn("user", said, at, "bench", str(i))
                    episode = store.episodes.insert(turn, at=at, now=at, scope=Scope())
                    kind = KINDS[i % len(KINDS)]
                    subject = rng.choice(PEOPLE[:40]) if i % 3 == 0 else None
                    new = NewMemory(
                        kind, said, "episodic", "capture", at, content_hash(said), subject=subject
                    )
                    memory = store.memories.insert(new, now=at)
                    store.memories.add_provenance(memory, now=at, episode_id=episode)
        clock.set(START + timedelta(minutes=5 * size + 60))
        fill_vectors(engine)
        engine.reindex()  # the HNSW graph, as the nightly run builds it past ann_threshold
        engine.read_graph_backlog()  # the knowledge graph, as the nightly run reads it
        health.write(engine, health.check(engine))
    return clock


def pages(rng: random.Random, size: int) -> dict[str, Callable[[], str]]:
    def ref() -> str:
        return f"m_{rng.randint(1, size)}"

    return {
        "memories": lambda: "/memories",
        "memories kind": lambda: f"/memories?kind={rng.choice(KINDS)}",
        "memories text": lambda: f"/memories?q={rng.choice(WORDS)}",
        "memories subject": lambda: f"/memories?subject={rng.choice(PEOPLE[:40])}",
        "memories dates": lambda: "/memories?status=&since=2025-03-01&until=2025-03-31",
        "memories page 40": lambda: "/memories?page=40",
        "memory": lambda: f"/memories/{ref()}",
        "memory why": lambda: f"/memories/{ref()}?q={text(rng, QUESTIONS)}",
        "recall": lambda: f"/recall?q={text(rng, QUESTIONS)}",
        "review": lambda: "/review",
        "review describe": lambda: f"/review?describe={rng.choice(WORDS)}",
        "health": lambda: "/health",
        "health chart": lambda: "/health/charts/memories.svg",
        "graph": lambda: "/graph",
    }


def measure(
    home: Path, clock: FixedClock, size: int, requests: int, duplicates: int
) -> dict[str, Any]:
    settings = load(home, env={})
    access = Access.for_address("bench", "127.0.0.1", 8766)
    app = build_app(settings, access=access, clock=clock)
    # One event loop for every request, as a server keeps one: without `with`, the test
    # client starts a thread and an event loop per request (5 ms, 70 ms at p95 on a
    # loaded machine, for a page that returns one word), which no server does.
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        client.cookies.set(COOKIE, "bench")
        return _pages(client, size, requests, duplicates)


def _pages(client: TestClient, size: int, requests: int, duplicates: int) -> dict[str, Any]:
    rng = random.Random(7)
    results: dict[str, Any] = {}
    for name, path in pages(rng, size).items():
        assert client.get(path()).status_code == 200, name  # warm-up: caches, the model
        times, cpu = [], []
        for _ in range(requests):
            url = path()
            started, used = time.perf_counter(), time.process_time()
            answer = client.get(url)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
            assert answer.status_code == 200, (url, answer.status_code)
        spent = summary_ms(cpu)
        results[name] = {
            **summary_ms(times),
            "cpu_p50_ms": spent["p50_ms"],
            "cpu_p95_ms": spent["p95_ms"],
        }
    times = []
    for _ in range(duplicates):  # asked for by a link, said to take seconds: not a page view
        started = time.perf_counter()
        assert client.get("/review?duplicates=1").status_code == 200
        times.append(time.perf_counter() - started)
    if times:  # --duplicates 0: not asked for
        results[ON_DEMAND] = summary_ms(times)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--duplicates", type=int, default=1, help="times to ask for them")
    parser.add_argument("--keep", type=Path, help="build the store here and reuse it next time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = (args.keep or Path(tmp)) / f"ui-{args.memories}"
        started = time.perf_counter()
        if (home / "memoracle.db").exists():
            clock = FixedClock(START + timedelta(minutes=5 * args.memories + 60))
        else:
            clock = build(home, args.memories, random.Random(args.memories))
        built = time.perf_counter() - started
        found = measure(home, clock, args.memories, args.requests, args.duplicates)
    worst = max(r["p95_ms"] for name, r in found.items() if name != ON_DEMAND)
    out = {
        "memories": args.memories,
        "requests_per_page": args.requests,
        "build_seconds": round(built, 1),
        "pages": found,
        "worst_p95_ms": worst,
        "target_met": worst <= 150,
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "machine": machine(),
    }
    print(json.dumps(out, indent=2))
    write_results("ui_speed", out)


if __name__ == "__main__":
    main()
