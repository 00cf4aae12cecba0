"""Ingest scaling: an agent log of N short, similar turns that each state a memory,
ingested in one `memoracle ingest` call; the total time and the turns-per-second curve
per 1,000 turns (targets: 20,000 turns ≤ 30 s, 100,000 turns ≤ 150 s).

The log is generated here (seeded), as generic JSONL: "I prefer TOOL for TASK." / "We
decided to use TOOL for TASK." and a few more shapes, over words made up from syllables
so that nearly every turn is new (a memory, not a bump) while sharing its common words
("I", "prefer", "for", "use") with thousands of others: the case where a per-turn lookup
that grows with the store shows up. The curve is read back from the store: each episode
keeps the time it was stored.

    python bench/ingest_scaling.py [--turns 20000 100000] [--profile FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import random
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _common import write_results

from memoracle.config import load
from memoracle.engine import Engine

STEP = 1000
TARGETS = {20_000: 30.0, 100_000: 150.0}
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
SYLLABLES = "ka lo mi ren tu sha vex dor pli nam qua bri zel to fen gur hal".split()
TOOLS = "postgres redis kafka nginx docker vim emacs pytest ruff black mypy".split()
TASKS = "deploys backups logging tracing billing search reports alerts builds".split()
SHAPES = (
    "I prefer {a} for {b}.",
    "We decided to use {a} for {b}.",
    "I always use {a} when working on {b}.",
    "We agreed to switch to {a} for the {b} pipeline.",
    "I like {a} better than {c} for {b}.",
)


def word(rng: random.Random) -> str:
    """A made-up word of 2-3 syllables (4,913 + 289 possible)."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def name(rng: random.Random, pool: list[str]) -> str:
    """A tool or task: a known word, or a made-up one with a number or a second word."""
    roll = rng.random()
    if roll < 0.3:
        return f"{rng.choice(pool)}-{word(rng)}"
    if roll < 0.6:
        return f"{word(rng)} {rng.randint(2, 99)}"
    return f"{word(rng)} {word(rng)}"


def generate(path: Path, turns: int, seed: int = 7) -> None:
    """`turns` lines of generic JSONL, one user turn each, a minute apart."""
    rng = random.Random(seed)
    with path.open("w") as f:
        for i in range(turns):
            text = rng.choice(SHAPES).format(
                a=name(rng, TOOLS), b=name(rng, TASKS), c=name(rng, TOOLS)
            )
            at = START + timedelta(minutes=i)
            line = {"role": "user", "content": text, "timestamp": at.isoformat(), "id": str(i)}
            f.write(json.dumps(line) + "\n")


def curve(db_path: Path, wall_start: datetime) -> list[dict[str, float]]:
    """Per 1,000 turns: when its last episode was stored, and that block's turns/s."""
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        stamps = [
            datetime.fromisoformat(row[0])
            for row in db.execute("SELECT created_at FROM episodes ORDER BY id")
        ]
    points: list[dict[str, float]] = []
    last = 0.0
    for end in range(STEP, len(stamps) + 1, STEP):
        at = (stamps[end - 1] - wall_start).total_seconds()
        points.append({"turns": end, "seconds": round(at, 2), "rate": round(STEP / (at - last))})
        last = at
    return points


def run(turns: int, profile: Path | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "agent.jsonl"
        generate(log, turns)
        settings = load(Path(tmp) / "home", env={}, overrides={"embedding.model": "hash"})
        Engine.init(settings)
        with Engine.open(settings) as engine:
            wall_start = datetime.now(UTC)
            started = time.perf_counter()
            cpu = time.process_time()
            if profile is not None:
                profiler = cProfile.Profile()
                report = profiler.runcall(engine.ingest, [log], fmt="jsonl")
                profiler.dump_stats(profile)
            else:
                report = engine.ingest([log], fmt="jsonl")
            seconds = time.perf_counter() - started
            cpu = time.process_time() - cpu
        points = curve(settings.db_path, wall_start)
    return {
        "turns": turns,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "turns_per_s": round(turns / seconds),
        "memories_added": report.memories_added,
        "memories_bumped": report.memories_bumped,
        "curve": points,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 4000, 20_000, 100_000])
    parser.add_argument("--profile", type=Path, help="write cProfile stats of the last size")
    args = parser.parse_args()
    results = []
    for i, turns in enumerate(args.turns):
        last = i == len(args.turns) - 1
        row = run(turns, args.profile if last else None)
        results.append(row)
        target = TARGETS.get(turns)
        verdict = "" if target is None else f" (target ≤ {target:.0f} s: "
        verdict += "" if target is None else ("met)" if row["seconds"] <= target else "MISSED)")  # type: ignore[operator]
        print(
            f"{turns:>7,} turns: {row['seconds']:>7} s (CPU {row['cpu_seconds']} s),"
            f" {row['turns_per_s']:>6} turns/s,"
            f" {row['memories_added']:,} added, {row['memories_bumped']:,} bumped{verdict}"
        )
        rates = [p["rate"] for p in row["curve"]]  # type: ignore[attr-defined]
        print("  turns/s per 1,000:", " ".join(f"{r:.0f}" for r in rates))
    print(f"results: {write_results('ingest_scaling', {'runs': results})}")


if __name__ == "__main__":
    main()
