"""The benchmark scripts still run (on a slice of LoCoMo, when it is beside the repo)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "bench" / "locomo10.json"


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo is not beside the repository")
@pytest.mark.parametrize(
    "args", [["capture_speed.py", "--limit", "300"], ["ingest_locomo.py", "--runs", "1"]]
)
@pytest.mark.slow
def test_benchmark_script_runs(args: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "MEMORACLE_BENCH_RESULTS": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "target" in done.stdout
    assert list(tmp_path.glob("*.json"))


@pytest.mark.slow
def test_ingest_scaling_script_prints_its_curve(tmp_path: Path) -> None:
    env = {**os.environ, "MEMORACLE_BENCH_RESULTS": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ingest_scaling.py"), "--turns", "2000"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "2,000 added" in done.stdout  # every generated turn states something new
    rates = done.stdout.split("turns/s per 1,000:")[1].splitlines()[0].split()
    assert len(rates) == 2 and all(float(r) > 0 for r in rates)
    assert (tmp_path / "ingest_scaling.json").exists()
