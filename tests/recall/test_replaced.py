"""A turn that only states a value since replaced ("I live in Paris", after "I live in
Lyon now") never outranks what is true now, and says it is earlier (docs/retrieval.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoracle.engine import Engine
from memoracle.recall.replaced import settle_replaced
from memoracle.types import Hit, Scope, Scores, Turn

JAN = datetime(2025, 1, 5, 10, tzinfo=UTC)
MAR = datetime(2025, 3, 5, 10, tzinfo=UTC)

CHANGES = [
    ("en", "I live in Paris with my partner.", "I live in Lyon now.", "where do I live?"),
    ("en", "I work at Globex.", "I left Globex, now I work at Initech.", "where do I work?"),
    (
        "en",
        "I love green tea in the morning.",
        "I don't like green tea anymore, I prefer coffee now.",
        "what do I drink in the morning?",
    ),
    ("ru", "Я живу в Москве.", "Теперь я живу в Казани.", "где я живу?"),
    (
        "fr",
        "Je travaille chez Renault.",
        "Maintenant je travaille chez Airbus.",
        "où je travaille ?",
    ),
    ("fr", "J'adore le thé vert.", "Je n'aime plus le thé vert, je préfère le café.", "le thé ?"),
]


@pytest.mark.parametrize(("lang", "before", "after", "question"), CHANGES)
def test_the_current_memory_leads_and_the_old_turn_is_labelled(
    engine: Engine, lang: str, before: str, after: str, question: str
) -> None:
    me = Scope(user=f"someone-{lang}")
    engine.capture([Turn("user", before, JAN, "s", "1")], scope=me)
    engine.capture([Turn("user", after, MAR, "s", "2")], scope=me)
    hits = engine.search(question, scope=me).hits
    current = next(i for i, h in enumerate(hits) if h.memory and h.memory.text == after)
    old = [i for i, h in enumerate(hits) if h.source == "episode" and h.text == before]
    assert all(i > current for i in old)
    assert all(hits[i].replaced_at == MAR for i in old)
    block = engine.recall(question, scope=me)
    first = block.text.splitlines()[0]
    assert after in first
    for line in block.text.splitlines():
        if before in line:
            assert line.endswith("(earlier, until 2025-03)"), line


def test_asked_about_the_past_the_old_turn_is_not_marked(engine: Engine) -> None:
    engine.capture([Turn("user", "I live in Paris with my partner.", JAN, "s", "1")])
    engine.capture([Turn("user", "I live in Lyon now.", MAR, "s", "2")])
    then = engine.search("where do I live?", as_of=datetime(2025, 2, 1, tzinfo=UTC)).hits
    assert all(h.replaced_at is None for h in then)
    assert any("Paris" in h.text for h in then)


def test_a_turn_that_still_gives_a_live_memory_is_not_replaced(engine: Engine) -> None:
    engine.capture([Turn("user", "I live in Paris and I have a cat named Biscuit.", JAN, "s", "1")])
    hits = engine.search("Paris", k=5).hits
    assert all(h.replaced_at is None for h in hits)


def _hit(source: str, id_: int) -> Hit:
    scores = Scores(None, None, None, 0.0, 1.0, 1.0, 0.0)
    return Hit(source, id_, f"{source} {id_}", JAN, scores)  # type: ignore[arg-type]


def test_replaced_turns_move_below_every_other_hit_keeping_their_order() -> None:
    hits = [_hit("episode", 1), _hit("memory", 1), _hit("episode", 2), _hit("episode", 3)]
    settled = settle_replaced(hits, {1: MAR, 3: JAN})
    assert [h.ref for h in settled] == ["m_1", "e_2", "e_1", "e_3"]
    assert [h.replaced_at for h in settled] == [None, None, MAR, JAN]
    assert settle_replaced(hits, {}) == hits
