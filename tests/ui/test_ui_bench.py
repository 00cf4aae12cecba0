"""bench/ui_speed.py still runs (on a small store: the 100k run takes most of an hour)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_page_speed_benchmark_runs(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "MEMORACLE_BENCH_RESULTS": str(tmp_path),
        "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'bench'}",
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ui_speed.py"), "--memories", "300",
         "--requests", "2"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["memories"] == 300 and "target_met" in out and len(out["load_average"]) == 3
    pages = out["pages"]
    assert {"memories", "memory why", "recall", "review", "health", "graph"} <= set(pages)
    assert all(p["n"] == 2 and p["p95_ms"] > 0 for n, p in pages.items() if "on demand" not in n)
    assert (tmp_path / "ui_speed.json").exists()
