"""Fixtures shared by the ingest tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pi_builders import Session

from memoracle.types import IngestWarning


@pytest.fixture
def session() -> Session:
    return Session()


@pytest.fixture
def warnings() -> list[IngestWarning]:
    return []


@pytest.fixture
def warn(warnings: list[IngestWarning]) -> Callable[[IngestWarning], None]:
    return warnings.append
