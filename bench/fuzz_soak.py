"""Soak every door with fuzzed input (the doors of tests/fuzz_doors.py): never a
traceback, nothing stored lost. Prints the inputs tried per door and, for each failure,
the smallest input hypothesis found and a `@reproduce_failure` line to replay it.

    python bench/fuzz_soak.py                 # 10,000 inputs, spread over the doors
    python bench/fuzz_soak.py --count 50000 --door cli --door api

Exit status 1 when any door failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_doors import COUNTS, DOORS, Door, Workspace, counting  # noqa: E402

# Each door's share of the count: the CLI has the most ground to cover.
SHARES = {"cli": 4, "config": 1, "env": 1, "ingest": 2, "mcp": 2, "api": 2}
CHUNK = 500  # inputs per hypothesis run: a failure stops one chunk, not the door


def soak(door: Door, ws: Workspace, count: int, seed: int) -> list[str]:
    """Run `door` on `count` inputs; return the failures, each with its reproducer."""
    failures: list[str] = []
    run = counting(door, ws)
    done = 0
    while done < count:
        size = min(CHUNK, count - done)

        @settings(
            max_examples=size,
            deadline=None,
            database=None,
            print_blob=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(door.inputs)
        def fuzz(value: object) -> None:
            run(value)

        fuzz._hypothesis_internal_use_seed = seed + done  # type: ignore[attr-defined]
        try:
            fuzz()
        except Exception:
            failures.append(traceback.format_exc(limit=-8))
        done += size
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="inputs in all")
    parser.add_argument("--door", action="append", choices=[d.name for d in DOORS])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    doors = [d for d in DOORS if not args.door or d.name in args.door]
    total = sum(SHARES[d.name] for d in doors)
    failed: dict[str, list[str]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memoracle-fuzz-") as root:
        for door in doors:
            ws = Workspace(Path(root) / door.name)
            share = -(-args.count * SHARES[door.name] // total)
            t0 = time.perf_counter()
            failed[door.name] = soak(door, ws, share, args.seed)
            print(
                f"{door.name:<7} {COUNTS[door.name]:>7} inputs  "
                f"{len(failed[door.name])} failure(s)  {time.perf_counter() - t0:6.1f} s",
                flush=True,
            )
    print(f"total   {sum(COUNTS.values()):>7} inputs in {time.perf_counter() - started:.0f} s")
    for name, failures in failed.items():
        for failure in failures:
            print(f"\n--- {name} ---\n{failure}")
    return 1 if any(failed.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
