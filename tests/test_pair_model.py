"""The pair model at capture (`engine/relate.py`): where the slot and meaning rules left a
new statement, the learned decision over (an older memory, the new statement)
supersedes, disputes or confirms, audited with the model and its probability; never
across owners; off with `lifecycle.pair_model = false`. The real multilingual model
(the pair model is trained for it; the hash embedder has none). Pairs written here, in
no data set."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.lifecycle.pairs import read_model
from memoracle.types import Memory, Scope, Turn

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _engine(home: Path, clock: FixedClock, *, on: bool) -> Iterator[Engine]:
    overrides = {"embedding.model": "use", "lifecycle.pair_model": on}
    settings = load(home, env={}, overrides=overrides)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        yield engine


@pytest.fixture
def paired(tmp_path: Path, clock: FixedClock) -> Iterator[Engine]:
    yield from _engine(tmp_path / "on", clock, on=True)


@pytest.fixture
def unpaired(tmp_path: Path, clock: FixedClock) -> Iterator[Engine]:
    yield from _engine(tmp_path / "off", clock, on=False)


def _say(engine: Engine, clock: FixedClock, text: str, n: int, scope: Scope | None = None) -> None:
    at = AT + timedelta(days=n)
    clock.set(at)
    engine.capture([Turn("user", text, at, "s", str(n))], scope=scope)


def _by_text(engine: Engine, scope: Scope | None = None) -> dict[str, Memory]:
    return {m.text: m for m in engine.list_memories(status=None, limit=100, scope=scope)}


def test_a_change_the_rules_leave_is_superseded_and_audited(
    paired: Engine, clock: FixedClock
) -> None:
    _say(paired, clock, "I have a landline at home.", 0)
    _say(paired, clock, "We cancelled the landline, mobiles only now.", 3)
    memories = _by_text(paired)
    old = memories["I have a landline at home."]
    new = memories["We cancelled the landline, mobiles only now."]
    assert old.status == "superseded" and new.status == "active"
    assert f"m_{old.id}" in new.details["supersedes"]
    (entry,) = [e for e in paired.history(old.id) if e.action == "supersede"]
    assert entry.detail["by"] == f"m_{new.id}"
    assert entry.detail["model"] == "pair-model-1"
    assert entry.detail["reason"].startswith("pair model pair-model-1: update (p=")
    assert entry.detail["probability"] >= read_model().meta["bands"]["supersede"]


def test_the_same_claim_in_other_words_is_confirmed(paired: Engine, clock: FixedClock) -> None:
    _say(paired, clock, "I'm learning the piano.", 0)
    before = _by_text(paired)["I'm learning the piano."].confidence
    _say(paired, clock, "I've been taking piano lessons.", 3)
    old = _by_text(paired)["I'm learning the piano."]
    assert old.status == "active" and old.confidence > before
    (entry,) = [e for e in paired.history(old.id) if e.action == "confirm"]
    assert entry.detail["label"] == "same" and "pair model" in entry.detail["reason"]


def test_two_things_that_both_hold_are_left(paired: Engine, clock: FixedClock) -> None:
    _say(paired, clock, "My sister lives in Oslo.", 0)
    _say(paired, clock, "I live in Bergen.", 3)
    assert {m.status for m in _by_text(paired).values()} == {"active"}


def test_what_happened_stays_true(paired: Engine, clock: FixedClock) -> None:
    # A past event is no claim a later statement replaces: only a plan can change.
    _say(paired, clock, "I went to the climbing gym on Elm Street last weekend.", 0)
    _say(paired, clock, "Cancelled my climbing gym membership.", 3)
    assert {m.status for m in _by_text(paired).values()} == {"active"}
    assert not [e for e in paired.audit_entries() if "pair model" in str(e.detail)]


def test_off_leaves_what_the_rules_leave(unpaired: Engine, clock: FixedClock) -> None:
    _say(unpaired, clock, "I have a landline at home.", 0)
    _say(unpaired, clock, "We cancelled the landline, mobiles only now.", 3)
    assert {m.status for m in _by_text(unpaired).values()} == {"active"}
    assert not [e for e in unpaired.audit_entries() if "pair model" in str(e.detail)]


def test_a_pair_never_crosses_owners(paired: Engine, clock: FixedClock) -> None:
    # In one group chat each sees the others' shared memories, but a statement of Bob's
    # says nothing about Alice's life; the same two statements of one person do.
    alice, bob, carol = (
        Scope(user=name, chat="team", visibility="shared") for name in ("alice", "bob", "carol")
    )
    _say(paired, clock, "I'm a member of the climbing gym on Elm Street.", 0, alice)
    _say(paired, clock, "Cancelled my climbing gym membership.", 3, bob)
    assert _own(paired, alice)["I'm a member of the climbing gym on Elm Street."] == "active"
    assert not [e for e in paired.audit_entries() if e.action in ("supersede", "dispute")]
    _say(paired, clock, "I'm a member of the climbing gym on Elm Street.", 4, carol)
    _say(paired, clock, "Cancelled my climbing gym membership.", 5, carol)
    assert _own(paired, carol)["I'm a member of the climbing gym on Elm Street."] == "superseded"
    assert _own(paired, alice)["I'm a member of the climbing gym on Elm Street."] == "active"


def _own(engine: Engine, scope: Scope) -> dict[str, str]:
    """The statuses of `scope`'s user's own memories, by text."""
    seen = engine.list_memories(status=None, limit=100, scope=scope)
    return {m.text: m.status for m in seen if m.scope.user == scope.user}
