"""`dedup --query` makes capture's comparison (`engine.repeats`): a text is "already
stored" exactly when capturing it would merge it into a memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli.main import main
from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.types import Turn

SAID = ["I live in Paris.", "I'm Alex, I work as an SRE at Datadog and I live in Berlin."]


@pytest.mark.parametrize(
    "text",
    [
        "I live in Paris",
        "I'm living in Paris.",  # other words: capture merges it
        "I live in Paris now.",  # saying more is news: capture stores it
        "My home is in Paris.",
        "I live in Berlin.",  # one claim of a turn of two
        "I work as an SRE at Datadog and I live in Berlin.",
        "I work as an SRE at Google and I live in Berlin.",  # one claim new
    ],
)
def test_a_text_is_stored_when_capture_would_merge_it(
    engine: Engine, clock: FixedClock, text: str
) -> None:
    for i, said in enumerate(SAID):
        engine.capture([Turn("user", said, clock.now(), "s", str(i))])
    repeat = engine.repeat_of(text)
    before = len(engine.list_memories(status=None))
    clock.advance(days=1)
    result = engine.capture([Turn("user", text, clock.now(), "s", "later")])
    merged = not result.added and len(engine.list_memories(status=None)) == before
    assert bool(repeat) == merged, (repeat, result)
    if repeat:
        assert {m.id for m, _ in repeat} == {m.id for m in result.bumped}


def test_dedup_query_answers_as_capture_does(tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    run = CliRunner().invoke
    assert run(main, ["--home", home, "init"]).exit_code == 0
    run(main, ["--home", home, "capture", "--user", "I live in Paris."])
    other_words = run(main, ["--home", home, "dedup", "--query", "I'm living in Paris."])
    assert (other_words.exit_code, other_words.output.split()[:3]) == (
        0,
        ["duplicate", "of", "m_1"],
    )
    more = run(main, ["--home", home, "dedup", "--query", "I live in Paris now."])
    assert more.exit_code == 1 and more.output.startswith("new; closest m_1")
    said = run(main, ["--home", home, "capture", "--user", "I'm living in Paris."])
    assert said.output.startswith("seen")
