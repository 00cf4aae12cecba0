"""A fleet of writers on PostgreSQL, SQLite beside it in the same run (issue 32's
targets: capture from 16 clients ≥ 1,000 turns/s aggregate; recall p95 ≤ 60 ms at 1M
memories, query embedding included; 16 writers × 10,000 turns + a nightly + 4 readers
with 0 lost turns, 0 duplicated memories and recall p99 reported).

Three parts, each on a fresh store of each backend:

- capture: `--clients` processes, each its own connection and `Engine`, each capturing
  `--turns` turns (synthetic chat: small talk and statements about people, places and
  things) one turn per call after a warm-up; the aggregate turns/s from the moment all
  are ready to the last one done, and per-call latency. Each client is its own owner
  (agent), or, with `--same-owner`, all are one. On PostgreSQL the clients waiting on a
  write lock are sampled every 100 ms (`pg_locks`).
- recall: stores of `--sizes` memories written in bulk (each memory with its turn, a
  random unit vector per text: search costs the same whatever the values), then
  `Engine.recall` timed for `--queries` questions, query embedding by the default model
  included (the first search apart). SQLite searches its HNSW graph (built by
  `reindex`); PostgreSQL the vector index its engine uses (pgvector's HNSW where the
  engine is wired to it, else the in-process one: the line says which).
- load: `--writers` writers × `--load-turns` turns (two writers per owner, saying the
  same texts: a duplicate would show), `--readers` readers recalling all the while, and
  one nightly run in the middle; then lost turns (turns said minus turns stored),
  duplicated memories (one owner's live memories with the same text and subject) and
  recall p50/p95/p99.

PostgreSQL is a throwaway server (tests/pg/pgharness.py: the pgserver wheel's
PostgreSQL and pgvector, on a free loopback port, removed afterwards) unless `--url`
names one whose user may create databases. Clients and server share this machine's
cores: on a small machine the numbers are the machine's, not the store's.

    python bench/pg_fleet.py [--parts capture,recall,load] [--backends sqlite,postgres]
        [--clients 16] [--turns 100] [--same-owner] [--sizes 10000] [--queries 100]
        [--writers 4] [--load-turns 100] [--readers 4] [--url postgresql://…]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import shlex
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _common import ROOT, summary_ms, write_results
from recall_speed import QUESTIONS, TEMPLATES, fill_vectors, text

from memoracle.config import load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.types import Scope, Turn

SMALL_TALK = [
    "ok thanks", "haha sure", "what do you think?", "sounds good", "hmm, not sure",
    "can you check that again?", "lol", "good morning!", "thanks, that helps", "wait what",
]  # fmt: skip
Target = tuple[str, str]  # (backend, HOME folder for sqlite or URL for postgres)


def say(rng: random.Random) -> str:
    """One chat turn: small talk 6 times in 10, else a statement worth remembering."""
    return rng.choice(SMALL_TALK) if rng.random() < 0.6 else text(rng, TEMPLATES)


def open_engine(target: Target, agent: str, home: Path, **overrides: object) -> Engine:
    """An engine of its own (its own connection) on the store `target`. PostgreSQL
    through `storage.url` where this memoracle has it, else `PgStore` handed to the
    engine directly."""
    backend, where = target
    options = {"workspace.agent": agent, **overrides}
    if backend == "sqlite":
        return Engine.open(load(home, env={}, overrides=options))
    try:
        return Engine.open(load(home, env={}, overrides={**options, "storage.url": where}))
    except InvalidInput:  # no storage.url setting in this memoracle
        pass
    from memoracle.clock import SystemClock
    from memoracle.store.postgres import PgStore

    clock = SystemClock()
    store = PgStore.open(where, now=clock.now())
    return Engine(load(home, env={}, overrides=options), store, clock)  # type: ignore[arg-type]


# -- the stores -------------------------------------------------------------------------


class Server:
    """Where PostgreSQL databases come from: `--url`'s server, or a throwaway one."""

    def __init__(self, url: str | None) -> None:
        self.url, self.harness, self.count = url, None, 0
        if url is None:
            sys.path.insert(0, str(ROOT / "tests" / "pg"))
            import pgharness

            # Room for a bench: more shared buffers and memory to build HNSW indexes.
            pgharness.SETTINGS = (*pgharness.SETTINGS, "shared_buffers=256MB",
                                  "maintenance_work_mem=512MB", "max_connections=100")  # fmt: skip
            self.harness = pgharness.PgServer.start()

    def database(self, part: str) -> str:
        import psycopg

        self.count += 1
        name = f"memoracle_bench_{part}_{self.count}_{int(time.time())}"
        admin = self.url or self.harness.url()  # type: ignore[union-attr]
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return admin.rsplit("/", 1)[0] + "/" + name

    def stop(self) -> None:
        if self.harness is not None:
            self.harness.stop()


@contextmanager
def stores(backends: list[str], server: Server | None, part: str) -> Iterator[list[Target]]:
    """A fresh store of each backend: a HOME initialised for SQLite, a new database."""
    with tempfile.TemporaryDirectory(prefix=f"pg-fleet-{part}-") as tmp:
        targets: list[Target] = []
        for backend in backends:
            if backend == "sqlite":
                home = Path(tmp) / "sqlite"
                Engine.init(load(home, env={}))
                targets.append(("sqlite", str(home)))
            else:
                assert server is not None
                targets.append(("postgres", server.database(part)))
        yield targets


def home_of(target: Target, tmp: Path) -> Path:
    """The HOME every client of `target` shares (a server's: its files, not its rows)."""
    if target[0] == "sqlite":
        return Path(target[1])
    home = tmp / "postgres-home"
    if not home.exists():
        try:
            Engine.init(load(home, env={}, overrides={"storage.url": target[1]}))
        except InvalidInput:  # no storage.url setting: the folder is all it needs
            home.mkdir(parents=True)
    return home


# -- capture ----------------------------------------------------------------------------


def _capture_client(
    target: Target, home: Path, n: int, turns: int, agent: str, ready: Any, out: Any
) -> None:
    engine = open_engine(target, agent, home)
    rng = random.Random(n)
    for i in range(10):  # the rules, models and statements loaded before the clock starts
        engine.capture([Turn("user", text(rng, TEMPLATES), None, f"warm-{n}", str(i))])
    ready.wait()
    latencies, failures = [], 0
    for i in range(turns):
        start = time.perf_counter()
        try:
            engine.capture([Turn("user", say(rng), None, f"client-{n}", str(i))])
        except Exception:  # noqa: BLE001 - counted
            failures += 1
        latencies.append(time.perf_counter() - start)
    engine.close()
    out.put((latencies, failures))


def lock_waiters(url: str, stop: threading.Event, samples: list[int]) -> None:
    """Sample how many sessions wait on an advisory lock (the writers' locks)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.wait(0.1):
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            ).fetchone()
            samples.append(int(row[0]) if row else 0)


def capture_part(target: Target, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    ready, out = mp.Barrier(args.clients + 1), mp.Queue()
    procs = [
        mp.Process(
            target=_capture_client,
            args=(
                target,
                home_of(target, tmp),
                n,
                args.turns,
                "fleet" if args.same_owner else f"agent-{n}",
                ready,
                out,
            ),
        )  # fmt: skip
        for n in range(args.clients)
    ]
    for proc in procs:
        proc.start()
    ready.wait()
    started, stop, samples = time.perf_counter(), threading.Event(), []
    sampler = None
    if target[0] == "postgres":
        sampler = threading.Thread(target=lock_waiters, args=(target[1], stop, samples))
        sampler.start()
    results = [out.get() for _ in procs]
    wall = time.perf_counter() - started
    stop.set()
    for proc in procs:
        proc.join()
    if sampler is not None:
        sampler.join()
    latencies = [s for lat, _ in results for s in lat]
    return {
        "clients": args.clients,
        "turns_per_client": args.turns,
        "turns_per_s": round(len(latencies) / wall, 1),
        "failures": sum(f for _, f in results),
        "latency": summary_ms(latencies),
        "lock_waiters_mean": round(sum(samples) / len(samples), 2) if samples else None,
        "lock_waiters_max": max(samples) if samples else None,
    }


# -- recall -----------------------------------------------------------------------------


def _bulk(engine: Engine, size: int) -> float:
    """`size` memories, each with its turn, and a vector per text, in bulk."""
    rng, started = random.Random(size), time.perf_counter()
    batch: list[Turn] = []
    made = 0
    while made < size:
        batch = [
            Turn("user", text(rng, TEMPLATES), None, "bulk", f"{made}-{i}") for i in range(1000)
        ]
        store_rows_all(engine, batch)
        made += len(batch)
    fill_vectors(engine)
    return time.perf_counter() - started


def store_rows_all(engine: Engine, turns: list[Turn]) -> None:
    """Every turn an episode and a memory (recall_speed's quick build keeps 4 in 10)."""
    from memoracle.text import content_hash
    from memoracle.types import NewMemory

    store, now = engine._store, engine.clock.now()
    with store.transaction():
        for turn in turns:
            at = turn.at or now
            episode = store.episodes.insert(turn, at=at, now=now, scope=Scope())
            new = NewMemory("fact", turn.text, "semantic", "capture", at, content_hash(turn.text))
            memory = store.memories.insert(new, now=now)
            store.memories.add_provenance(memory, now=now, episode_id=episode)


def recall_part(target: Target, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    engine = open_engine(target, "", home_of(target, tmp), **{"embedding.ann_threshold": "1"})
    built = 0
    try:
        for size in args.sizes:
            took = _bulk(engine, size - built)
            built = size
            if target[0] == "sqlite":
                engine.reindex()  # the HNSW graph, as `memoracle reindex` builds it
            results[str(size)] = measure_recall(engine, args.queries, size)
            results[str(size)]["build_seconds"] = round(took, 1)
            r = results[str(size)]
            print(f"  {target[0]:<8} {size:>8,} memories ({r['index']}): recall p50"
                  f" {r['recall']['p50_ms']:.1f} p95 {r['recall']['p95_ms']:.1f} p99"
                  f" {r['recall']['p99_ms']:.1f} ms; first {r['first_ms']:.0f} ms;"
                  f" built in {took:.0f} s", flush=True)  # fmt: skip
    finally:
        engine.close()
    return results


def measure_recall(engine: Engine, queries: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed + 1)
    questions = [text(rng, QUESTIONS) for _ in range(queries)]
    start = time.perf_counter()
    engine.recall(questions[0], budget=2000)
    first = (time.perf_counter() - start) * 1000
    timings = []
    for q in questions:
        start = time.perf_counter()
        engine.recall(q, budget=2000)
        timings.append(time.perf_counter() - start)
    searcher = engine.searcher
    index = searcher._set  # the vector index its searches used
    kind = type(index).__name__ if index is not None else "none"
    ann = getattr(index, "ann", None)
    return {
        "recall": summary_ms(timings),
        "first_ms": round(first, 1),
        "index": kind + (" HNSW" if ann is not None or kind.startswith("Pg") else " exact"),
    }


# -- load -------------------------------------------------------------------------------


def _writer(target: Target, home: Path, n: int, turns: int, out: Any) -> None:
    engine = open_engine(target, f"owner-{n // 2}", home)
    rng, failures = random.Random(n // 2), 0  # the two writers of an owner say the same
    for i in range(turns):
        try:
            engine.capture([Turn("user", say(rng), None, f"writer-{n}", str(i))])
        except Exception as exc:  # noqa: BLE001 - counted, the first one shown
            failures += 1
            if failures == 1:
                print(f"  writer {n}: {exc}", flush=True)
    engine.close()
    out.put(("writer", n, failures))


def _reader(target: Target, home: Path, n: int, done: Any, out: Any) -> None:
    engine = open_engine(target, f"owner-{n}", home)
    rng, timings, failures = random.Random(100 + n), [], 0
    while not done.is_set():
        start = time.perf_counter()
        try:
            engine.recall(text(rng, QUESTIONS), budget=2000)
            timings.append(time.perf_counter() - start)
        except Exception:  # noqa: BLE001 - counted
            failures += 1
    engine.close()
    out.put(("reader", timings, failures))


def _nightly(target: Target, home: Path, wait: float, out: Any) -> None:
    time.sleep(wait)
    engine = open_engine(target, "owner-0", home)
    start = time.perf_counter()
    try:
        from memoracle.jobs.nightly.runner import run_nightly

        report = run_nightly(engine)
        outcome = f"ok in {time.perf_counter() - start:.1f} s" + (
            f", failed steps: {report.failed}" if getattr(report, "failed", None) else ""
        )
    except Exception as exc:  # noqa: BLE001 - reported
        outcome = f"failed: {type(exc).__name__}: {str(exc)[:300]}"
    engine.close()
    out.put(("nightly", outcome))


def load_part(target: Target, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    home, out, done = home_of(target, tmp), mp.Queue(), mp.Event()
    writers = [
        mp.Process(target=_writer, args=(target, home, n, args.load_turns, out))
        for n in range(args.writers)
    ]
    readers = [
        mp.Process(target=_reader, args=(target, home, n, done, out)) for n in range(args.readers)
    ]
    nightly = mp.Process(target=_nightly, args=(target, home, 5.0, out))
    started = time.perf_counter()
    for proc in (*writers, *readers, nightly):
        proc.start()
    got: list[tuple[Any, ...]] = []
    while sum(1 for g in got if g[0] == "writer") < len(writers):
        got.append(out.get())
    wall = time.perf_counter() - started
    while not any(g[0] == "nightly" for g in got):
        got.append(out.get())
    done.set()
    while sum(1 for g in got if g[0] == "reader") < len(readers):
        got.append(out.get())
    for proc in (*writers, *readers, nightly):
        proc.join()
    engine = open_engine(target, "owner-0", home)
    try:
        stored = engine._store.episodes.count()
        live = [
            m
            for status in ("active", "disputed")
            for m in engine._store.memories.select(status=status, limit=10**8)
        ]
    finally:
        engine.close()
    same = Counter((m.scope.agent, m.scope.user, m.scope.chat, m.subject, m.text) for m in live)
    timings = [t for g in got if g[0] == "reader" for t in g[1]]
    return {
        "writers": args.writers,
        "turns_per_writer": args.load_turns,
        "readers": args.readers,
        "wall_seconds": round(wall, 1),
        "turns_per_s": round(args.writers * args.load_turns / wall, 1),
        "failed_captures": sum(g[2] for g in got if g[0] == "writer"),
        "lost_turns": args.writers * args.load_turns - stored,
        "memories": len(live),
        "duplicated_memories": sum(n - 1 for n in same.values() if n > 1),
        "recalls": len(timings),
        "failed_recalls": sum(g[2] for g in got if g[0] == "reader"),
        "recall": summary_ms(timings) if timings else None,
        "nightly": next(g[1] for g in got if g[0] == "nightly"),
    }


# -- the run ----------------------------------------------------------------------------


def report_capture(name: str, r: dict[str, Any]) -> None:
    lat = r["latency"]
    waiting = (
        f"; writers waiting on a lock: mean {r['lock_waiters_mean']}, max {r['lock_waiters_max']}"
        if r["lock_waiters_mean"] is not None
        else ""
    )
    print(f"  {name:<8} {r['turns_per_s']:>7.1f} turns/s from {r['clients']} clients"
          f" ({r['failures']} failed); per call p50 {lat['p50_ms']:.1f} p95"
          f" {lat['p95_ms']:.1f} p99 {lat['p99_ms']:.1f} ms{waiting}", flush=True)  # fmt: skip


def report_load(name: str, r: dict[str, Any]) -> None:
    rec = r["recall"] or {"p50_ms": 0, "p95_ms": 0, "p99_ms": 0}
    print(f"  {name:<8} {r['writers']} writers x {r['turns_per_writer']} turns in"
          f" {r['wall_seconds']} s ({r['turns_per_s']} turns/s), {r['readers']} readers:"
          f" lost {r['lost_turns']}, duplicated {r['duplicated_memories']} of"
          f" {r['memories']} memories, failed captures {r['failed_captures']}; {r['recalls']}"
          f" recalls ({r['failed_recalls']} failed) p50 {rec['p50_ms']:.1f} p95"
          f" {rec['p95_ms']:.1f} p99 {rec['p99_ms']:.1f} ms; nightly {r['nightly']}",
          flush=True)  # fmt: skip


PARTS: dict[str, tuple[Callable[..., dict[str, Any]], Callable[[str, dict[str, Any]], None]]] = {
    "capture": (capture_part, report_capture),
    "recall": (recall_part, lambda name, r: None),
    "load": (load_part, report_load),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="capture,recall,load")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--url", help="a PostgreSQL server whose user may create databases")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--turns", type=int, default=100, help="turns per capture client")
    parser.add_argument("--same-owner", action="store_true", help="every client one owner")
    parser.add_argument("--sizes", default="10000", help="recall: memories, growing")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--load-turns", type=int, default=100)
    parser.add_argument("--readers", type=int, default=4)
    args = parser.parse_args()
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    backends = args.backends.split(",")
    print("command: python " + " ".join(shlex.quote(a) for a in sys.argv), flush=True)
    server = Server(args.url) if "postgres" in backends else None
    results: dict[str, Any] = {}
    try:
        for part in args.parts.split(","):
            run, show = PARTS[part]
            print(f"{part}:", flush=True)
            with stores(backends, server, part) as targets, tempfile.TemporaryDirectory() as tmp:
                for target in targets:
                    results.setdefault(part, {})[target[0]] = r = run(target, args, Path(tmp))
                    show(target[0], r)
    finally:
        if server is not None:
            server.stop()
    print("targets: capture ≥ 1,000 turns/s from 16 clients; recall p95 ≤ 60 ms at 1M;"
          " load 0 lost, 0 duplicated")  # fmt: skip
    print(f"results: {write_results('pg_fleet', {'args': vars(args), 'parts': results})}")


if __name__ == "__main__":
    main()
