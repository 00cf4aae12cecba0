"""Shared bits of the benchmark scripts: where LoCoMo lives, percentiles, results files.

LoCoMo is CC BY-NC: it is read from ../shared/bench at run time and never copied here.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(os.environ.get("MEMORACLE_BENCH_RESULTS", ROOT / "bench" / "results"))


def locomo_path() -> Path:
    path = Path(
        os.environ.get("MEMORACLE_LOCOMO", ROOT.parent / "shared" / "bench" / "locomo10.json")
    )
    if not path.exists():
        raise SystemExit(
            f"LoCoMo not found at {path}. Set MEMORACLE_LOCOMO to the path of locomo10.json."
        )
    return path


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "p99_ms": round(percentile(ms, 99), 3),
        "mean_ms": round(statistics.fmean(ms), 3),
    }


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "sqlite": __import__("sqlite3").sqlite_version,
    }


def write_results(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n")
    return path
