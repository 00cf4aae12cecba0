"""Search modes (the Memory Pipeline skill's `--lexical-only` / `--vector-only`): one
kind of list alone, from the engine and from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput

TEXTS = (
    "The launch moved to 2026-08-17.",
    "I enjoy long walks in the forest.",
    "Memory decay halves a score every thirty days.",
)


def _fill(engine: Engine) -> None:
    for text in TEXTS:
        engine.remember(text)


def test_lexical_only_uses_no_vector_and_vector_only_no_word(engine: Engine) -> None:
    _fill(engine)
    lexical = engine.search("2026-08-17", mode="lexical")
    assert lexical.mode == "lexical" and lexical.hits
    assert all(h.scores.vector_rank is None for h in lexical.hits)
    assert "2026-08-17" in lexical.hits[0].text
    vector = engine.search("decay of a memory score", mode="vector")
    assert vector.mode == "vector" and vector.hits
    assert all(h.scores.lexical_rank is None for h in vector.hits)
    assert all(h.scores.vector_rank is not None for h in vector.hits)
    hybrid = engine.search("decay of a memory score")
    assert hybrid.mode == "hybrid"
    assert any(h.scores.lexical_rank and h.scores.vector_rank for h in hybrid.hits)


def test_a_lexical_only_search_finds_nothing_by_meaning(engine: Engine) -> None:
    _fill(engine)
    assert engine.search("zzqx", mode="lexical").hits == ()


def test_vector_only_without_a_model_and_an_unknown_mode_are_refused(
    tmp_path: Path, clock: FixedClock
) -> None:
    settings = load(tmp_path / "h", env={}, overrides={"embedding.provider": "none"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        _fill(engine)
        with pytest.raises(InvalidInput, match="vector-only search needs an embedding model"):
            engine.search("forest", mode="vector")
        assert engine.search("forest", mode="lexical").hits
        with pytest.raises(InvalidInput, match="mode must be one of"):
            engine.search("forest", mode="fuzzy")  # type: ignore[arg-type]


def test_the_cli_flags(tmp_path: Path) -> None:
    home = str(tmp_path / "cli")
    run = CliRunner().invoke
    base = ["--home", home, "--set", "embedding.model=hash"]
    assert run(main, [*base, "init"]).exit_code == 0
    for text in TEXTS:
        assert run(main, [*base, "remember", text]).exit_code == 0
    out = run(main, [*base, "search", "2026-08-17", "--lexical-only", "--json"])
    body = json.loads(out.output)
    assert body["mode"] == "lexical" and body["hits"][0]["scores"]["vector_rank"] is None
    out = run(main, [*base, "search", "forest walks", "--vector-only", "--json"])
    body = json.loads(out.output)
    assert body["mode"] == "vector"
    assert all(h["scores"]["lexical_rank"] is None for h in body["hits"])
    both = run(main, [*base, "search", "forest", "--vector-only", "--lexical-only"])
    assert both.exit_code == 2 and "exclude each other" in both.output
