"""Nightly run time over 10k, 100k and 1M turns (SPEC §12: nightly over 100k memories
≤ 30 s, over 1M ≤ 5 min), step by step.

The stores are the latency benchmark's (`recall_speed.build`: synthetic agent turns
through the capture path, five minutes apart, random vectors of the default model's
size). Each store is copied, then `memoracle nightly` runs on the copy twice: the first
night does the catching up of a store that never had one (the whole store compared for
near-duplicates, a year of faded memories archived, notes and MEMORY.md written); then a
day of new turns (one every 5 minutes) is captured and the second night shows the
steady state, a night after a night. The clock is the end of the turns plus a day.

    python bench/nightly_speed.py [--sizes 10000,100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import write_results
from recall_speed import TEMPLATES, build, text

from memoracle import nightly
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

DAY_TURNS = 288  # a day of turns, one every 5 minutes


def night(home: Path, size: int, day: int) -> dict[str, Any]:
    """The nightly run `day` days after the store's last turn, after capturing the
    turns of the days between (none on day 1)."""
    settings = load(home, env={})
    end = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=5 * size)
    clock = FixedClock(end + timedelta(days=day))
    steps: dict[str, float] = {}
    rng = random.Random(size + day)
    with Engine.open(settings, clock=clock) as engine:
        new = [
            Turn("user", text(rng, TEMPLATES), end + timedelta(days=1, minutes=5 * n), "bench",
                 f"{day}-{n}")
            for n in range((day - 1) * DAY_TURNS)
        ]  # fmt: skip
        engine.capture(new)
        memories = engine.stats().memories
        started = time.perf_counter()
        report = nightly.run_nightly(
            engine, on_step=lambda step, counts, seconds: steps.update({step: seconds})
        )
        total = time.perf_counter() - started
    return {
        "memories": memories,
        "new_turns": len(new),
        "seconds": round(total, 2),
        "steps": {k: round(v, 2) for k, v in steps.items()},
        "counts": report.steps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--keep", type=Path, help="reuse the latency benchmark's stores here")
    args = parser.parse_args()
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            source = (args.keep or Path(tmp)) / f"store-{size}"
            if not (source / "memoracle.db").exists():
                build(source, size, random.Random(size)).close()
            home = Path(tmp) / f"night-{size}"
            shutil.copytree(source, home)
            first, second = night(home, size, 1), night(home, size, 2)
            results[size] = {"first": first, "second": second}
            for name, r in (("first night", first), ("next night", second)):
                steps = ", ".join(f"{k} {v:.1f}" for k, v in r["steps"].items())
                print(
                    f"{size:>7} turns, {r['memories']} memories, {name}: {r['seconds']:.1f} s"
                    f" ({steps})"
                )
            shutil.rmtree(home)
    print("target: ≤ 30 s over 100k memories, ≤ 5 min over 1M")
    print(f"results: {write_results('nightly_speed', {'sizes': results})}")


if __name__ == "__main__":
    main()
