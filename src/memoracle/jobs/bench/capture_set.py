"""The capture benchmark on a labelled set: does capture keep what a person would want
remembered, and nothing else? (`memoracle bench capture PATH`, docs/capture.md.)

A set is JSONL, one turn a line: ``{"id", "lang", "role", "said_at", "speaker"?,
"text", "category"?, "expected": [{"kind", "subject", "relation"?, "value",
"date"?}]}``; `expected` empty means nothing is worth keeping. Each turn is captured
alone, in a scope of its own, with the clock at `said_at`. An expected memory is
*found* when a memory made from the turn contains its `value` (case, accents and
spacing aside), *typed* when that memory's kind is the expected kind too, and *dated*
when an expected `date` is the memory's resolved date. A memory is *right* when it
finds an expected one of its turn. Reported per language, per category and overall:
recall (found ÷ expected), typed recall, precision (right ÷ memories made), the noise
rate (turns expecting nothing that still made a memory), and two strict figures:

- *strict* recall: an expected memory found by a memory of the expected kind whose date
  is the expected one too, compared at the expected date's granularity ("2027" a year,
  "2027-01" a month, "2027-01-05" a day); an expected memory without a date needs only
  the kind;
- *noise* share: memories made that match nothing expected (1 − precision), so small
  talk and hypotheticals that made a memory count here as what they are, extra memories.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, TypeVar

from memoracle.clock import FixedClock, parse_instant
from memoracle.config import LlmSettings, load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.jobs.thinking.files import Work
from memoracle.jobs.thinking.night import ThinkReport
from memoracle.jobs.thinking.night import ask as ask_model
from memoracle.language.words import fold
from memoracle.llm import Model
from memoracle.types import Memory, Scope, Turn

__all__ = [
    "CaptureCase",
    "CaptureSetReport",
    "ModelUse",
    "Tally",
    "folded",
    "read_cases",
    "read_jsonl",
    "run_capture_set",
    "scratch_engine",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Expected:
    kind: str
    value: str
    date: str | None = None


@dataclass(frozen=True)
class CaptureCase:
    id: str
    lang: str
    role: str
    said_at: datetime
    text: str
    expected: tuple[Expected, ...]
    speaker: str | None = None
    category: str = ""


@dataclass
class Tally:
    """Counts of one group of cases (a language, a category, or all)."""

    cases: int = 0
    expected: int = 0
    found: int = 0
    typed: int = 0
    dated: int = 0
    with_date: int = 0
    strict: int = 0  # found with the expected kind and, when one is expected, date
    memories: int = 0
    right: int = 0
    quiet_cases: int = 0  # cases expecting nothing
    noisy: int = 0  # of those, the ones that still made a memory

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in self.__dataclass_fields__},
            "recall": _ratio(self.found, self.expected),
            "typed_recall": _ratio(self.typed, self.expected),
            "dated": _ratio(self.dated, self.with_date),
            "strict_recall": _ratio(self.strict, self.expected),
            "precision": _ratio(self.right, self.memories),
            "noise_rate": _ratio(self.noisy, self.quiet_cases),
            "noise_share": _ratio(self.memories - self.right, self.memories),
        }


@dataclass
class ModelUse:
    """What the model path did in a benchmark run (`--llm`): its model, the questions
    asked, tokens spent, and its proposals applied, held under the gate, quarantined."""

    model_id: str
    asked: int = 0
    tokens: int = 0
    applied: int = 0
    held: int = 0
    quarantined: int = 0
    unavailable: int = 0  # questions the model did not answer (ModelUnavailable)

    def add(self, report: ThinkReport) -> None:
        self.asked += report.asked
        self.tokens += report.tokens
        for name in ("applied", "held", "quarantined"):
            setattr(self, name, getattr(self, name) + report.counts.get(name, 0))
        self.unavailable += report.queued

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def format(self) -> str:
        return (
            f"model {self.model_id}: {self.asked} asked, {self.tokens} tokens; {self.applied}"
            f" applied, {self.held} held under the gate, {self.quarantined} quarantined,"
            f" {self.unavailable} unanswered"
        )


@dataclass(frozen=True)
class Miss:
    """A case capture got wrong: what was expected and what it made."""

    id: str
    text: str
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    wrong: tuple[str, ...] = ()  # found, but of another kind or date


@dataclass
class CaptureSetReport:
    path: str
    embedder: str
    overall: Tally = field(default_factory=Tally)
    by_language: dict[str, Tally] = field(default_factory=dict)
    by_category: dict[str, Tally] = field(default_factory=dict)
    misses: list[Miss] = field(default_factory=list)
    seconds: float = 0.0
    model: ModelUse | None = None  # with --llm: the model's extract after the rules

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "embedder": self.embedder,
            "model": None if self.model is None else self.model.to_json(),
            "overall": self.overall.to_json(),
            "by_language": {k: v.to_json() for k, v in sorted(self.by_language.items())},
            "by_category": {k: v.to_json() for k, v in sorted(self.by_category.items())},
            "misses": [m.__dict__ for m in self.misses],
            "seconds": self.seconds,
        }

    def format(self) -> str:
        rows = [
            "capture on a labelled set: " + self.path,
            f"{'':<16} {'cases':>5} {'recall':>7} {'typed':>6} {'dated':>6} {'strict':>6}"
            f" {'prec.':>6} {'noise':>6} {'extra':>6}",
        ]
        groups = [("all", self.overall), *sorted(self.by_language.items())]
        groups += [(f"  {k}", v) for k, v in sorted(self.by_category.items())]
        for name, t in groups:
            j = t.to_json()
            rows.append(
                f"{name:<16} {t.cases:>5} {_pct(j['recall']):>7} {_pct(j['typed_recall']):>6}"
                f" {_pct(j['dated']):>6} {_pct(j['strict_recall']):>6} {_pct(j['precision']):>6}"
                f" {_pct(j['noise_rate']):>6} {_pct(j['noise_share']):>6}"
            )
        rows.append(
            f"{len(self.misses)} case(s) with a miss, an extra memory or a wrong kind or date;"
            f" {self.seconds}s"
        )
        if self.model is not None:
            rows.append(self.model.format())
        return "\n".join(rows)


def read_cases(path: Path) -> list[CaptureCase]:
    """The cases of a labelled set; `InvalidInput` naming file and line for a bad one."""
    return read_jsonl(path, _case, "a capture case")


def read_jsonl(path: Path, parse: Callable[[Any], T], what: str) -> list[T]:
    """Each non-empty line of the JSONL file at `path`, parsed by `parse`; a file that
    cannot be read, a bad line (`InvalidInput` naming file, line and `what` it is not)
    or no line at all is `InvalidInput`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read it ({exc}).") from None
    found: list[T] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            found.append(parse(json.loads(line)))
        except (ValueError, RecursionError, KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"{path}:{number}: not {what} ({exc}).") from None
    if not found:
        raise InvalidInput(f"{path}: no {what.split(' ', 1)[1]}s.")
    return found


def _case(raw: Mapping[str, Any]) -> CaptureCase:
    expected = tuple(
        Expected(str(e["kind"]), str(e["value"]), str(e["date"]) if e.get("date") else None)
        for e in raw["expected"]
    )
    return CaptureCase(
        id=str(raw["id"]),
        lang=str(raw["lang"]),
        role=str(raw["role"]),
        said_at=parse_instant(str(raw["said_at"])),
        text=str(raw["text"]),
        expected=expected,
        speaker=str(raw["speaker"]) if raw.get("speaker") else None,
        category=str(raw.get("category") or ""),
    )


def run_capture_set(
    path: Path,
    *,
    embedder: str | None = "hash",
    learned: bool = False,
    model: Model | None = None,
    llm: LlmSettings | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> CaptureSetReport:
    """Capture every case of the set at `path` in a fresh temporary store and score it
    (the module docstring says how). `learned` turns capture's learned decision on
    (`capture.classifier`), which needs the embedder it was trained for (`use`). With
    `model`, the model path: after the rules, a turn they made no memory from is asked
    of the model as the nightly extract step asks it (gated by `llm`'s min_confidence),
    and the memories it applied count as made."""
    started = time.perf_counter()
    cases = read_cases(Path(path))
    report = CaptureSetReport(str(path), embedder or "default")
    if model is not None:
        report.model = ModelUse(model.model_id)
    with scratch_engine("capture-set", embedder, cases[0].said_at, learned=learned) as (
        engine,
        clock,
    ):
        if llm is not None:
            engine.settings = replace(engine.settings, llm=llm)
        for done, case in enumerate(cases, 1):
            clock.set(case.said_at)
            scope = Scope(user=f"case-{case.id}")
            turn = Turn(case.role, case.text, case.said_at, case.id, "1", case.speaker)
            result = engine.capture([turn], scope=scope)
            made = list(result.added)
            if model is not None and report.model is not None and not made:
                made += _extracted(engine, model, result.episodes, report.model, scope)
            tally, miss = score_case(case, made)
            report.overall.add(tally)
            report.by_language.setdefault(case.lang, Tally()).add(tally)
            report.by_category.setdefault(case.category or "-", Tally()).add(tally)
            if miss is not None:
                report.misses.append(miss)
            if on_progress is not None:
                on_progress(done, len(cases))
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _extracted(
    engine: Engine, model: Model, episodes: Sequence[int], use: ModelUse, scope: Scope
) -> list[Memory]:
    """The nightly extract step on these turns: the memories it applied (active)."""
    if not episodes:
        return []
    work = Work("extract", f"extract:{episodes[0]}", {"episodes": list(episodes)})
    use.add(ask_model(engine, model, [work]))
    found = engine.list_memories(status="active", limit=1000, scope=scope)
    return [m for m in found if m.source == "llm"]


@contextmanager
def scratch_engine(
    name: str,
    embedder: str | None,
    at: datetime,
    *,
    learned: bool = False,
    pair_model: bool = False,
) -> Iterator[tuple[Engine, FixedClock]]:
    """An engine over a fresh temporary store (UTC, `embedder` as `embedding.model` when
    given, `learned` as `capture.classifier`, `pair_model` as `lifecycle.pair_model`) and
    its clock, set at `at`; the store is gone when the block ends."""
    with tempfile.TemporaryDirectory(prefix=f"memoracle-{name}-") as home:
        overrides: dict[str, Any] = {
            "workspace.timezone": "UTC",
            "capture.classifier": learned,
            "lifecycle.pair_model": pair_model,
        }
        if embedder:
            overrides["embedding.model"] = embedder
        settings = load(Path(home), env={}, overrides=overrides)
        clock = FixedClock(at)
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            yield engine, clock


def score_case(case: CaptureCase, made: Sequence[Memory]) -> tuple[Tally, Miss | None]:
    """One case's counts, and what it missed or made in excess (None when right)."""
    t = Tally(cases=1, expected=len(case.expected), memories=len(made))
    texts = [(m, folded(m.text)) for m in made]
    right: set[int] = set()
    missing: list[str] = []
    wrong: list[str] = []
    for e in case.expected:
        holders = [m for m, text in texts if folded(e.value) in text]
        right.update(m.id for m in holders)
        t.found += bool(holders)
        t.typed += any(m.kind == e.kind for m in holders)
        zone = case.said_at.tzinfo
        strict = any(m.kind == e.kind and _dated(e.date, m, zone) for m in holders)
        t.strict += strict
        if e.date:
            t.with_date += 1
            t.dated += any(_dated(e.date, m, zone) for m in holders)
        if not holders:
            missing.append(f"{e.kind}: {e.value}")
        elif not strict:
            made_as = "; ".join(f"{m.kind} {sorted(_dates(m, zone)) or 'undated'}" for m in holders)
            wrong.append(f"{e.kind} {e.date or 'undated'}: {e.value} (made {made_as})")
    t.right = len(right)
    if not case.expected:
        t.quiet_cases = 1
        t.noisy = int(bool(made))
    extra = tuple(f"{m.kind}: {m.text}" for m in made if m.id not in right)
    if missing or extra or wrong:
        return t, Miss(case.id, case.text, tuple(missing), extra, tuple(wrong))
    return t, None


def _dated(expected: str | None, memory: Memory, zone: tzinfo | None) -> bool:
    """Whether `memory` carries the `expected` date at its granularity ("2027", "2027-01",
    "2027-01-05": the year, the month, the day); no date expected is always right."""
    return expected is None or any(d.startswith(expected) for d in _dates(memory, zone))


def _dates(memory: Memory, zone: tzinfo | None) -> set[str]:
    """The days a memory's dates begin on, in the zone the turn was said in (a stored
    date is UTC: 00:00 at +01:00 is the day before at 23:00)."""
    said = memory.details.get("dates") or []
    found = {str(d.get("start", ""))[:10] for d in said if isinstance(d, Mapping)}
    for at in (memory.valid_from, memory.due_at):
        if at is not None:
            found.add(at.astimezone(zone).date().isoformat())
    return found


def folded(text: str) -> str:
    """`text` as phrases are compared: each word case-folded, accents dropped."""
    return " ".join(fold(word) for word in text.split())


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _pct(value: object) -> str:
    return "—" if value is None else f"{float(value):.2f}"  # type: ignore[arg-type]
