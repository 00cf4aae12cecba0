"""What the fuzzing found (tests/test_fuzz_doors.py, bench/fuzz_soak.py), each kept as a
plain test: the input that gave a traceback now gives memoracle's own error."""

from __future__ import annotations

import pytest

from memoracle.engine import Engine
from memoracle.errors import InvalidInput


@pytest.mark.parametrize("kind", ["", "Fact", "x"])
def test_remember_with_an_unknown_kind_is_invalid_input(engine: Engine, kind: str) -> None:
    before = engine.stats().memories
    with pytest.raises(InvalidInput, match=f"Unknown kind {kind!r}"):
        engine.remember("I like tea.", kind=kind)
    assert engine.stats().memories == before


def test_remember_with_an_unknown_source_is_invalid_input(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="Unknown source 'nowhere'"):
        engine.remember("I like tea.", source="nowhere")
