"""What the fuzzing found (tests/test_fuzz_doors.py, bench/fuzz_soak.py), each kept as a
plain test: the input that gave a traceback now gives memoracle's own error."""

from __future__ import annotations

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.errors import EngineError, InvalidInput


@pytest.mark.parametrize("kind", ["", "Fact", "x"])
def test_remember_with_an_unknown_kind_is_invalid_input(engine: Engine, kind: str) -> None:
    before = engine.stats().memories
    with pytest.raises(InvalidInput, match=f"Unknown kind {kind!r}"):
        engine.remember("I like tea.", kind=kind)
    assert engine.stats().memories == before


def test_remember_with_an_unknown_source_is_invalid_input(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="Unknown source 'nowhere'"):
        engine.remember("I like tea.", source="nowhere")


@pytest.mark.parametrize("ref", ["m_9223372036854775808", 10**21, "9223372036854775808"])
def test_an_id_past_sqlites_largest_is_invalid_input(engine: Engine, ref: str | int) -> None:
    with pytest.raises(InvalidInput, match="Not a m_ id"):
        engine.get(ref)


def test_a_fresh_window_before_year_one_recalls_everything_fresh(
    settings: Settings, clock: FixedClock
) -> None:
    settings = load(
        settings.home,
        env={},
        overrides={"embedding.model": "hash", "recall.fresh_hours": "17753991"},
    )
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.remember("I prefer dark mode.")
        block = engine.recall("dark mode")
    assert any("dark mode" in line.text for line in block.lines if line.slot == "fresh")


@pytest.mark.parametrize("ref", ["h_9223372036854775808", "9223372036854775808"])
def test_a_held_id_past_sqlites_largest_is_invalid_input(engine: Engine, ref: str) -> None:
    for decide in (engine.confirm_held, engine.reject_held):
        with pytest.raises(InvalidInput, match="is not a held write's id"):
            decide(ref)


def test_a_path_name_the_system_refuses_is_a_clear_error(engine: Engine) -> None:
    with pytest.raises(EngineError, match="aaaa"):
        engine.ingest(["a" * 5000])
