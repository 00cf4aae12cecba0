"""The lifecycle benchmark: after a conversation that changes things, is the memory's
current truth right? (`memoracle bench lifecycle PATH`, docs/lifecycle.md.)

A set is JSONL, one scenario a line: ``{"id", "lang", "topic"?, "turns": [{"at",
"text", "role"?} | {"nightly": true}], "checks": {"active"?, "not_active"?, "done"?,
"forgotten"?, "ask"?: {"question", "answer"}}}``. Each scenario runs in a scope of its
own in one temporary store, turn by turn with the clock at each turn's time; a
``{"nightly": true}`` item runs the nightly job there. Then, with the clock at the last
turn, its checks (phrases compared with case, accents and spacing aside):

- `active`: some active memory contains the phrase;
- `not_active`: no active memory contains it (replaced, negated, forgotten or done);
- `done`: some memory contains it and none that is active is an open task;
- `forgotten`: some memory containing it was forgotten, and no active one contains it;
- `ask`: the first line of the recall block for `question` contains `answer`.

A scenario ends in the right state when every one of its checks holds. Reported per
language and per topic, with each failed check named, and the scenarios that end with a
*silent conflict*: two active memories (neither disputed) giving different values to one
attribute that holds one value (`lifecycle.conflicts.single_valued`), as the slot rules
read their texts. There should be none: such a pair is superseded or disputed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memoracle.clock import FixedClock, parse_instant
from memoracle.config import LlmSettings
from memoracle.engine import Engine
from memoracle.jobs.bench.capture_set import ModelUse, folded, read_jsonl, scratch_engine
from memoracle.jobs.nightly import run_nightly
from memoracle.jobs.thinking.night import run_night
from memoracle.lifecycle.conflicts import same_value, single_valued
from memoracle.lifecycle.slots import slots_of
from memoracle.llm import Model
from memoracle.types import Memory, Scope, Turn

__all__ = ["LifecycleReport", "Scenario", "read_scenarios", "run_lifecycle_set"]

CHECKS = ("active", "not_active", "done", "forgotten")


@dataclass(frozen=True)
class Step:
    at: datetime | None  # None: the nightly job runs here
    text: str = ""
    role: str = "user"


@dataclass(frozen=True)
class Scenario:
    id: str
    lang: str
    topic: str
    steps: tuple[Step, ...]
    checks: Mapping[str, tuple[str, ...]]
    ask: tuple[str, str] | None = None


@dataclass
class Outcome:
    id: str
    lang: str
    topic: str
    checks: int
    failed: list[str]
    silent: list[str] = field(default_factory=list)  # "attribute: value / value"


@dataclass
class LifecycleReport:
    path: str
    embedder: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    model: ModelUse | None = None  # with --llm: the model steps after each night

    def groups(self, key: Callable[[Outcome], str]) -> dict[str, tuple[int, int]]:
        """(right, scenarios) by `key`."""
        found: dict[str, tuple[int, int]] = {}
        for o in self.outcomes:
            right, total = found.get(key(o), (0, 0))
            found[key(o)] = (right + (not o.failed), total + 1)
        return dict(sorted(found.items()))

    def to_json(self) -> dict[str, Any]:
        right = sum(not o.failed for o in self.outcomes)
        return {
            "path": self.path,
            "embedder": self.embedder,
            "scenarios": len(self.outcomes),
            "right": right,
            "share_right": round(right / len(self.outcomes), 3) if self.outcomes else None,
            "checks": sum(o.checks for o in self.outcomes),
            "checks_failed": sum(len(o.failed) for o in self.outcomes),
            "by_language": {
                k: {"right": r, "scenarios": n} for k, (r, n) in self.groups(_lang).items()
            },
            "by_topic": {
                k: {"right": r, "scenarios": n} for k, (r, n) in self.groups(_topic).items()
            },
            "failed": [{"id": o.id, "checks": o.failed} for o in self.outcomes if o.failed],
            "silent_conflicts": sum(bool(o.silent) for o in self.outcomes),
            "silent": [{"id": o.id, "slots": o.silent} for o in self.outcomes if o.silent],
            "seconds": self.seconds,
            "model": None if self.model is None else self.model.to_json(),
        }

    def format(self) -> str:
        data = self.to_json()
        rows = [
            f"lifecycle scenarios: {self.path}",
            f"right state: {data['right']} of {data['scenarios']} ({data['share_right']});"
            f" checks failed: {data['checks_failed']} of {data['checks']};"
            f" silent conflicts: {data['silent_conflicts']}",
        ]
        for title, groups in (("language", self.groups(_lang)), ("topic", self.groups(_topic))):
            rows.append(f"by {title}: " + ", ".join(f"{k} {r}/{n}" for k, (r, n) in groups.items()))
        rows += [f"  {o.id}: {'; '.join(o.failed)}" for o in self.outcomes if o.failed]
        rows += [f"  {o.id} silent: {'; '.join(o.silent)}" for o in self.outcomes if o.silent]
        rows.append(f"{self.seconds}s")
        if self.model is not None:
            rows.append(self.model.format())
        return "\n".join(rows)


def _shaped(groups: Mapping[str, tuple[int, int]]) -> dict[str, dict[str, int]]:
    return {k: {"right": r, "scenarios": n} for k, (r, n) in groups.items()}


def _lang(o: Outcome) -> str:
    return o.lang


def _topic(o: Outcome) -> str:
    return o.topic


def read_scenarios(path: Path) -> list[Scenario]:
    """The scenarios of a set; `InvalidInput` naming file and line for a bad one."""
    return read_jsonl(path, _scenario, "a lifecycle scenario")


def _scenario(raw: Mapping[str, Any]) -> Scenario:
    steps = tuple(
        Step(None)
        if item.get("nightly")
        else Step(parse_instant(str(item["at"])), str(item["text"]), str(item.get("role", "user")))
        for item in raw["turns"]
    )
    if not any(s.at for s in steps):
        raise ValueError("no turns")
    given = raw["checks"]
    checks = {name: tuple(str(p) for p in given.get(name) or ()) for name in CHECKS}
    ask = given.get("ask")
    return Scenario(
        id=str(raw["id"]),
        lang=str(raw["lang"]),
        topic=str(raw.get("topic") or "-"),
        steps=steps,
        checks=checks,
        ask=(str(ask["question"]), str(ask["answer"])) if ask else None,
    )


def run_lifecycle_set(
    path: Path,
    *,
    embedder: str | None = "hash",
    learned: bool = False,
    pair_model: bool = False,
    model: Model | None = None,
    llm: LlmSettings | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> LifecycleReport:
    """Play every scenario of the set at `path` in a fresh temporary store and check its
    end state (the module docstring says how); `learned` turns capture's learned decision
    on, as `capture.classifier` does in a workspace, and `pair_model` the learned pair
    decision, as `lifecycle.pair_model` does (both need the use model).

    With `model`, the model path: each scenario in a store of its own, as the workspace
    owner's (the model steps read the whole store; reflect and consolidate what the
    owner sees), the model steps (`llm`'s, without a token budget) run after
    each of its nightly items and once more after its last turn, before the checks."""
    started = time.perf_counter()
    scenarios = read_scenarios(Path(path))
    report = LifecycleReport(str(path), embedder or "default")
    first = next(s.at for s in scenarios[0].steps if s.at is not None)
    if model is not None:
        report.model = ModelUse(model.model_id)
        for done, scenario in enumerate(scenarios, 1):
            at = next(s.at for s in scenario.steps if s.at is not None)
            with scratch_engine(
                "lifecycle-set", embedder, at, learned=learned, pair_model=pair_model
            ) as (engine, clock):
                if llm is not None:
                    engine.settings = replace(engine.settings, llm=llm)
                report.outcomes.append(_play(engine, clock, scenario, model, report.model))
            if on_progress is not None:
                on_progress(done, len(scenarios))
        report.seconds = round(time.perf_counter() - started, 2)
        return report
    with scratch_engine(
        "lifecycle-set", embedder, first, learned=learned, pair_model=pair_model
    ) as (
        engine,
        clock,
    ):
        for done, scenario in enumerate(scenarios, 1):
            report.outcomes.append(_play(engine, clock, scenario))
            if on_progress is not None:
                on_progress(done, len(scenarios))
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _play(
    engine: Engine,
    clock: FixedClock,
    scenario: Scenario,
    model: Model | None = None,
    use: ModelUse | None = None,
) -> Outcome:
    # In a store of its own (the model path), the scenario is the owner's: what the
    # owner's views (reflect, consolidate) read.
    scope = Scope() if model is not None else Scope(user=f"scenario-{scenario.id}")
    for n, step in enumerate(scenario.steps):
        if step.at is None:
            run_nightly(engine)
            _model_night(engine, clock, model, use)
            continue
        clock.set(step.at)
        turn = Turn(step.role, step.text, step.at, scenario.id, str(n))
        engine.capture([turn], scope=scope)
    _model_night(engine, clock, model, use)
    memories = engine.list_memories(status=None, limit=100_000, scope=scope)
    failed = [
        f"{name} {phrase!r}"
        for name, phrases in scenario.checks.items()
        for phrase in phrases
        if not _holds(name, folded(phrase), memories)
    ]
    if scenario.ask is not None:
        question, answer = scenario.ask
        lines = engine.recall(question, scope=scope).text.splitlines()
        if not lines or folded(answer) not in folded(lines[0]):
            failed.append(f"ask {question!r}: first line {lines[0] if lines else '(none)'!r}")
    total = sum(len(p) for p in scenario.checks.values()) + (scenario.ask is not None)
    return Outcome(
        scenario.id, scenario.lang, scenario.topic, total, failed, silent_conflicts(memories)
    )


def _model_night(
    engine: Engine, clock: FixedClock, model: Model | None, use: ModelUse | None
) -> None:
    """The model steps a minute after the last turn (a night reads what came before
    it), the clock put back after."""
    if model is None or use is None:
        return
    at = clock.now()
    clock.set(at + timedelta(minutes=1))
    unlimited = replace(engine.settings.llm, night_tokens=1 << 40)
    engine.settings = replace(engine.settings, llm=unlimited)
    use.add(run_night(engine, model=model))
    clock.set(at)


def silent_conflicts(memories: list[Memory]) -> list[str]:
    """The single-valued slots two active memories fill with different values, both
    affirmed (see the module docstring), as "attribute: value / value"."""
    seen: dict[tuple[str, str], list[str]] = {}
    found: list[str] = []
    for m in memories:
        if m.status != "active":
            continue
        for slot in slots_of(m.text, lang=m.lang):
            if slot.negated or not single_valued(slot.attribute):
                continue
            values = seen.setdefault((slot.subject, slot.attribute), [])
            found += [
                f"{slot.attribute}: {v} / {slot.value}"
                for v in values
                if not same_value(slot.attribute, v, slot.value)
            ]
            values.append(slot.value)
    return found


def _holds(check: str, phrase: str, memories: list[Memory]) -> bool:
    having = [m for m in memories if phrase in folded(m.text)]
    active = [m for m in having if m.status == "active"]
    if check == "active":
        return bool(active)
    if check == "not_active":
        return not active
    if check == "done":
        open_tasks = [m for m in active if m.kind == "task" and not m.details.get("done")]
        return bool(having) and not open_tasks
    return any(m.status == "forgotten" for m in having) and not active  # forgotten
