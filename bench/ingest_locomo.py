"""Ingest of LoCoMo-10 (5,882 turns) into a fresh store, no embeddings (target ≤ 10 s).

Runs the whole `memoracle ingest` path (read, rules, store) three times, each into a new
store, and reports the median; in the same run, reading alone, for comparison.

    python bench/ingest_locomo.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _common import locomo_path, write_results

from memoracle import ingest
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine


def ingest_once(path: Path) -> tuple[float, dict[str, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load(Path(tmp), env={})
        clock = FixedClock(datetime(2024, 1, 31, tzinfo=UTC))
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            start = time.perf_counter()
            report = engine.ingest([path])
            elapsed = time.perf_counter() - start
            s = engine.stats()
        return elapsed, {
            "turns": report.turns,
            "episodes": report.episodes_added,
            "memories": report.memories_added,
            "bumped": report.memories_bumped,
            "warnings": len(report.warnings),
            "db_bytes": s.database_bytes,
        }


def read_once(path: Path) -> float:
    start = time.perf_counter()
    for _ in ingest.read(path, "locomo", on_warning=lambda w: None):
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = locomo_path()
    runs = [ingest_once(path) for _ in range(args.runs)]
    reads = [read_once(path) for _ in range(args.runs)]
    total = statistics.median(r[0] for r in runs)
    counts = runs[0][1]
    reading = statistics.median(reads)
    print(f"ingest {path.name}: median of {args.runs} runs")
    print(
        f"  whole ingest (read + rules + store): {total:.2f} s,"
        f" {counts['turns'] / total:,.0f} turns/s"
    )
    print(
        f"  reading alone:                       {reading:.2f} s"
        f" ({reading / total:.0%} of the total)"
    )
    print(
        f"  {counts['turns']} turns → {counts['episodes']} episodes, {counts['memories']} memories "
        f"({counts['bumped']} seen again), {counts['db_bytes'] / 1e6:.1f} MB database"
    )
    print(f"target ≤ 10 s: {'met' if total <= 10 else 'MISSED'}")
    data = {"median_seconds": round(total, 3), "read_seconds": round(reading, 3), "counts": counts}
    print(f"results: {write_results('ingest_locomo', data)}")


if __name__ == "__main__":
    main()
