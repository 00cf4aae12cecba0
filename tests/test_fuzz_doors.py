"""Fuzz every door (tests/fuzz_doors.py says what and how): never a traceback, nothing
stored lost. A bounded count here (`FUZZ_EXAMPLES` per door, over 1,000 in all, well
under a minute); bench/fuzz_soak.py runs the same doors 10,000 times and more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from fuzz_doors import COUNTS, DOORS, Door, Workspace, counting

# Inputs per door in CI; their sum is what BENCHMARKS.md records.
FUZZ_EXAMPLES = {"cli": 400, "config": 80, "env": 80, "ingest": 150, "mcp": 250, "api": 250}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    yield Workspace(tmp_path_factory.mktemp("fuzz"))


@pytest.mark.parametrize("door", DOORS, ids=lambda d: d.name)
def test_no_door_gives_a_traceback_or_loses_a_memory(door: Door, workspace: Workspace) -> None:
    before = COUNTS[door.name]
    run = counting(door, workspace)

    @settings(
        max_examples=FUZZ_EXAMPLES[door.name],
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(door.inputs)
    def fuzz(value: object) -> None:
        run(value)

    fuzz()
    assert COUNTS[door.name] - before >= FUZZ_EXAMPLES[door.name]


def test_the_ci_count_is_over_a_thousand() -> None:
    assert sum(FUZZ_EXAMPLES.values()) >= 1000


def test_the_workspace_check_sees_a_lost_memory(tmp_path: Path) -> None:
    """The loss check is real: a memory gone from the store fails it."""
    ws = Workspace(tmp_path)
    ws.kept.append(10**9)
    with pytest.raises(AssertionError, match="lost"):
        ws.intact()
