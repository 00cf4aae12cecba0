"""Activation decay and the promotion/archival score: pure in time."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoracle.config import DecaySettings
from memoracle.lifecycle.scoring import (
    DONE_PENALTY,
    activation,
    done_tasks,
    entity_count,
    rank,
    score,
)
from memoracle.text import content_hash
from memoracle.types import Memory

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DECAY = DecaySettings()


def mem(id: int, text: str, kind: str = "fact", **changes: object) -> Memory:
    memory = Memory(
        id=id,
        kind=kind,
        text=text,
        layer="semantic",
        status="active",
        created_at=T0,
        observed_at=T0,
        last_accessed_at=T0,
        activation=1.0,
        importance=0.5,
        access_count=0,
        confidence=0.8,
        pinned=False,
        source="capture",
        content_hash=content_hash(text),
    )
    return replace(memory, **changes)  # type: ignore[arg-type]


def test_activation_halves_per_half_life_by_kind() -> None:
    fact, decision, guardrail = mem(1, "a"), mem(2, "b", "decision"), mem(3, "c", "guardrail")
    assert activation(fact, T0 + timedelta(days=30), DECAY) == pytest.approx(0.5)
    assert activation(fact, T0 + timedelta(days=60), DECAY) == pytest.approx(0.25)
    assert activation(decision, T0 + timedelta(days=90), DECAY) == pytest.approx(0.5)
    assert activation(guardrail, T0 + timedelta(days=3650), DECAY) == 1.0
    assert activation(replace(fact, pinned=True), T0 + timedelta(days=300), DECAY) == 1.0
    assert activation(fact, T0 - timedelta(days=5), DECAY) == 1.0  # clock moved back


@given(st.floats(0, 400), st.floats(0, 400))
def test_a_missed_night_changes_nothing(first: float, second: float) -> None:
    # Decay is computed from the last access, never stored step by step: evaluating at
    # any intermediate time first has no effect on the value later.
    memory = mem(1, "Anna lives in Lyon", access_count=3)
    later = T0 + timedelta(days=first + second)
    score(memory, T0 + timedelta(days=first), DECAY)
    assert score(memory, later, DECAY) == score(memory, later, DECAY)
    expected = math.pow(0.5, (first + second) / 30)
    assert activation(memory, later, DECAY) == pytest.approx(expected)


def test_score_is_the_product_of_its_factors() -> None:
    decision = mem(1, "We chose Postgres 16 for Billing", "decision", access_count=3)
    s = score(decision, T0, DECAY)
    assert s.kind_weight == 3.0 and s.recency == 1.0
    assert s.frequency == pytest.approx(1.5)  # 1 + log2(4) / 4
    assert s.entity == pytest.approx(1.3)  # "Postgres", "16", "Billing"
    assert s.total == pytest.approx(3.0 * 1.5 * 1.3) and s.promote


def test_done_tasks_fade_and_rank_orders_best_first() -> None:
    open_task = mem(1, "Renew the certificate", "task")
    done_task = mem(2, "Renew the passport", "task", details={"done": True})
    event = mem(3, "went to the market", "event", activation=0.2)
    ranked = rank([event, done_task, open_task], T0, DECAY)
    assert [s.memory_id for s in ranked] == [1, 2, 3]
    assert ranked[1].completion == 0.3 and ranked[1].total == pytest.approx(0.36)
    assert not ranked[2].promote


def test_entity_count_sees_names_and_numbers_in_four_languages() -> None:
    assert entity_count("my wife Anna moved to Lyon in 2021") == 3
    assert entity_count("Мы с Олегом переехали в Казань") == 2
    # The first word is capitalised anyway: not taken for a name.
    assert entity_count("Élodie déménage à Paris le 3 mai") == 2
    assert entity_count("nothing here at all") == 0


def test_a_later_event_reports_a_task_done() -> None:
    later = {"observed_at": T0 + timedelta(days=2)}
    task = mem(1, "I need to renew my passport before June.", "task")
    other = mem(2, "I need to call the dentist.", "task")
    renewed = mem(3, "I renewed my passport yesterday.", "event", **later)
    ranked = {s.memory_id: s for s in rank([task, other, renewed], T0, DECAY)}
    assert done_tasks([task, other, renewed]) == {1}
    assert ranked[1].completion == DONE_PENALTY and ranked[2].completion == 1.0
    # Russian: stems, not words, meet ("продлить" / "продлил").
    ru_task = mem(4, "Мне нужно продлить паспорт до июня.", "task")
    ru_done = mem(5, "Я продлил паспорт вчера.", "event", **later)
    assert done_tasks([ru_task, ru_done]) == {4}


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (mem(3, "I renewed my passport yesterday.", "event"), "said at the same time"),
        (
            mem(3, "I renewed my passport.", "event", observed_at=T0 - timedelta(days=1)),
            "said before the task",
        ),
        (
            mem(
                3, "I renewed my passport.", "event", observed_at=T0 + timedelta(1), subject="Anna"
            ),
            "someone else",
        ),
        (
            mem(3, "I renewed my passport.", "fact", observed_at=T0 + timedelta(days=1)),
            "not an event",
        ),
        (
            mem(3, "I lost my passport.", "event", observed_at=T0 + timedelta(days=1)),
            "one stem shared",
        ),
    ],
)
def test_what_does_not_report_a_task_done(event: Memory, why: str) -> None:
    task = mem(1, "I need to renew my passport before June.", "task")
    assert done_tasks([task, event]) == set(), why
