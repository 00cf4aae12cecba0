"""The pairs the pair model (`memoracle.lifecycle.pairs`) learns from and is scored on,
and what the rules alone make of the same pairs (`bench/train_pairs.py` uses both).

- Written pairs: `bench/data/pairs/writer-N.jsonl`, by independent writers who saw no
  code (`bench/data/pairs/README.md`), one ``{"id", "lang", "register", "old", "new",
  "label", "why"}`` a line.
- Pairs taken from the dev lifecycle sets (`bench/data/lifecycle-dev*.jsonl`): each
  scenario of two turns is one pair, labelled by its topic and checks (`dev_pairs`).
  Never the blind sets.
"""

from __future__ import annotations

import json
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.lifecycle.pairs import LABELS
from memoracle.types import Scope, Turn

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "bench" / "data" / "pairs"
DEV_SETS = sorted((ROOT / "bench" / "data").glob("lifecycle-dev*.jsonl"))
SAME_TOPICS = {"paraphrase", "duplicate", "repeat"}
SKIP_TOPICS = {"forget", "task", "multi", "crosslang"}  # not one pair of two statements
_START = datetime(2026, 6, 1, 10, tzinfo=UTC)


@dataclass(frozen=True)
class Pair:
    id: str
    source: str  # "writer-1", … or "dev"
    lang: str
    old: str
    new: str
    label: str


def read_pairs(path: Path) -> list[Pair]:
    """The pairs of one writer's file; a bad line is an error naming file and line."""
    found = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            label = str(raw["label"]).strip().lower()
            if label not in LABELS:
                raise ValueError(f"label {label!r} is not one of {', '.join(LABELS)}")
            pair = Pair(
                str(raw["id"]), path.stem, str(raw.get("lang") or "-"),
                str(raw["old"]).strip(), str(raw["new"]).strip(), label,
            )  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{n}: not a pair ({exc})") from exc
        if pair.old and pair.new:
            found.append(pair)
    return found


def writer_pairs() -> dict[str, list[Pair]]:
    """Each writer's pairs, by writer ("writer-1", …)."""
    return {p.stem: read_pairs(p) for p in sorted(PAIRS.glob("writer-*.jsonl"))}


def _folded(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text.casefold())
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def dev_label(scenario: dict[str, Any]) -> str | None:
    """The label of a dev scenario of two statements, from its topic and checks: said
    again (paraphrase, duplicate, repeat topics) is `same`; a task reported done and a
    value replaced (an old phrase no longer active, a new one active) `update`; an old
    phrase no longer active and nothing new `negate`; phrases of both turns active
    `coexist`. None when it does not say."""
    topic = str(scenario.get("topic") or "")
    texts = [str(t["text"]) for t in scenario["turns"] if t.get("text")]
    checks = scenario["checks"]
    active = [_folded(p) for p in checks.get("active") or ()]
    gone = [_folded(p) for p in checks.get("not_active") or ()]
    old, new = (_folded(t) for t in texts)
    if topic in SAME_TOPICS:
        return "same"
    if topic == "completion":
        return "update"
    if topic == "negation":
        return "negate"
    if gone and any(p in old for p in gone):
        return "update" if any(p in new and p not in old for p in active) else "negate"
    if active and any(p in old for p in active) and any(p in new for p in active):
        return "coexist"
    if not gone and active and all(p in new and p not in old for p in active):
        return "update"
    return None


def dev_pairs() -> list[Pair]:
    """The dev lifecycle scenarios of exactly two user statements, as labelled pairs."""
    found = []
    for path in DEV_SETS:
        for line in path.read_text(encoding="utf-8").splitlines():
            scenario = json.loads(line)
            turns = [t for t in scenario["turns"] if t.get("text")]
            if len(turns) != 2 or any(t.get("role", "user") != "user" for t in turns):
                continue
            if scenario.get("topic") in SKIP_TOPICS:
                continue
            label = dev_label(scenario)
            if label is not None:
                found.append(
                    Pair(
                        str(scenario["id"]), "dev", str(scenario["lang"]),
                        str(turns[0]["text"]), str(turns[1]["text"]), label,
                    )
                )  # fmt: skip
    return found


@contextmanager
def rules_engine(*, pair_model: bool = False) -> Iterator[tuple[Engine, FixedClock]]:
    """A fresh temporary store with the default embedder and capture's learned decision
    (as `memoracle bench lifecycle --embedder use --learned`), the pair model as asked."""
    with tempfile.TemporaryDirectory(prefix="memoracle-pairs-") as home:
        overrides = {
            "workspace.timezone": "UTC",
            "capture.classifier": True,
            "embedding.model": "use",
            "lifecycle.pair_model": pair_model,
        }
        settings = load(Path(home), env={}, overrides=overrides)
        clock = FixedClock(_START)
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            yield engine, clock


def rules_say(engine: Engine, clock: FixedClock, pair: Pair) -> str:
    """What the store does with a pair, each in a scope of its own: the old statement
    captured, then the new one a week later. "none": the old one made no memory (there
    is nothing to relate); "change": a memory of the old one was superseded or
    disputed; "same": one was merged into or confirmed; else "coexist"."""
    scope = Scope(user=f"pair-{pair.source}-{pair.id}")
    clock.set(_START)
    engine.capture([Turn("user", pair.old, _START, pair.id, "0")], scope=scope)
    before = {m.id: m for m in engine.list_memories(status=None, limit=100, scope=scope)}
    if not before:
        return "none"
    later = _START + timedelta(days=7)
    clock.set(later)
    result = engine.capture([Turn("user", pair.new, later, pair.id, "1")], scope=scope)
    after = {m.id: m for m in engine.list_memories(status=None, limit=100, scope=scope)}
    if any(after[i].status in ("superseded", "disputed") for i in before):
        return "change"
    bumped = {m.id for m in result.bumped}
    if bumped & set(before) or any(after[i].confidence > m.confidence for i, m in before.items()):
        return "same"
    return "coexist"
