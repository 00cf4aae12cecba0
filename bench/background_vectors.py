"""Ingest with vectors landing in the background (issue 19: ≥ 300 turns/s to lexically
searchable, vectors reported apart).

Ingests LoCoMo-10 (5,882 turns) into a fresh store whose engine lands vectors in the
background (`Engine.land_vectors_in_background`, as `memoracle serve` does), with the
default embedding model, and reports: the ingest's own time (every turn searchable by
its words when it returns) and turns/s, then how long the worker took to land every
vector after that and its throughput, and a search run while it was still busy (its
note says vectors are still landing). Then the same ingest without the worker, and the
first search after it (which embeds up to 2,000 missing texts before answering).
The file is read at run time only.

    python bench/background_vectors.py [PATH]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _common import locomo_path, write_results

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine

QUERY = "When did Caroline go to the LGBTQ support group?"


def run(path: Path, background: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load(Path(tmp), env={})
        clock = FixedClock(datetime(2024, 1, 31, tzinfo=UTC))
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            if background:
                assert engine.land_vectors_in_background()
            start = time.perf_counter()
            report = engine.ingest([path])
            ingested = time.perf_counter() - start
            left = engine.index_status().missing if background else 0
            t = time.perf_counter()
            outcome = engine.search(QUERY, k=10)
            first_search = time.perf_counter() - t
            out: dict[str, Any] = {
                "turns": report.turns,
                "ingest_seconds": round(ingested, 2),
                "turns_per_second": round(report.turns / ingested),
                "first_search_ms": round(first_search * 1000, 1),
                "first_search_note": outcome.note,
            }
            lander = engine.searcher.lander
            if lander is not None:
                lander.wait_idle()
                landed = time.perf_counter() - start
                out["vectors_landed"] = lander.landed
                out["vectors_done_seconds_after_start"] = round(landed, 2)
                # The worker shares two cores with the ingest: its rate alone is the
                # rate after the ingest returned, over what was left then.
                out["vectors_left_at_ingest_end"] = left
                out["vectors_per_second_after_ingest"] = round(left / max(landed - ingested, 1e-9))
            out["missing_after"] = engine.index_status().missing
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path)
    args = parser.parse_args()
    path = args.path or locomo_path()
    results = {"background": run(path, True), "at_search": run(path, False)}
    for name, r in results.items():
        print(name, r)
    print(f"results: {write_results('background_vectors', results)}")


if __name__ == "__main__":
    main()
