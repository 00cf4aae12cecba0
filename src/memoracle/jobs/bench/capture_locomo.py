"""The capture benchmark on LoCoMo-shaped conversations: are the turns capture keeps the
ones an annotator found worth an observation? (`memoracle bench capture FILE.json`.)

LoCoMo gives, per session and speaker, ``observation`` sentences, each with the
``dia_id`` of the turn that states it. Those turns are the *observation turns*. Every
conversation is captured turn by turn, in order, in a fresh temporary store, with the
clock at each session's time; a turn is *memory-bearing* when its capture added or
bumped a memory. Reported per conversation and overall:

- coverage: observation turns that are memory-bearing ÷ observation turns;
- share: memory-bearing turns that are observation turns ÷ memory-bearing turns;
- base rate: observation turns ÷ all turns (the share a random choice would get);
- the same coverage and share for a plain baseline that keeps every turn with a
  first-person word or a form implying one (`meaning.about_speaker`).

The observations are read here, at run time, and used for nothing but this count.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memoracle.capture.lang import detect_language
from memoracle.capture.meaning import about_speaker
from memoracle.capture.rules import default_rules
from memoracle.errors import InvalidInput
from memoracle.jobs.bench.capture_set import scratch_engine
from memoracle.jobs.bench.run import read_samples
from memoracle.types import Scope

__all__ = ["Split", "LocomoCaptureReport", "is_locomo", "run_locomo_capture"]

_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass
class Split:
    """Turn counts of one conversation (or a sum of them), for the system and the
    baseline."""

    turns: int = 0
    observed: int = 0  # observation turns
    kept: int = 0  # memory-bearing turns
    covered: int = 0  # observation turns that are memory-bearing
    base_kept: int = 0
    base_covered: int = 0

    def add(self, other: Split) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_json(self) -> dict[str, Any]:
        return {
            **{name: getattr(self, name) for name in self.__dataclass_fields__},
            "coverage": _ratio(self.covered, self.observed),
            "share": _ratio(self.covered, self.kept),
            "base_rate": _ratio(self.observed, self.turns),
            "baseline_coverage": _ratio(self.base_covered, self.observed),
            "baseline_share": _ratio(self.base_covered, self.base_kept),
        }


@dataclass
class LocomoCaptureReport:
    path: str
    embedder: str
    conversations: dict[str, Split] = field(default_factory=dict)
    seconds: float = 0.0

    def groups(self) -> list[tuple[str, Split]]:
        """Each conversation, then conversations 0-4, 5-9 (when there are ten) and all."""
        rows = list(self.conversations.items())
        out: list[tuple[str, Split]] = list(rows)
        if len(rows) == 10:
            out += [("0-4", _sum(s for _, s in rows[:5])), ("5-9", _sum(s for _, s in rows[5:]))]
        out.append(("all", _sum(s for _, s in rows)))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "embedder": self.embedder,
            "groups": {name: split.to_json() for name, split in self.groups()},
            "seconds": self.seconds,
        }

    def format(self) -> str:
        rows = [
            "capture on LoCoMo observations: " + self.path,
            f"{'':<12} {'turns':>6} {'base':>5} {'cover':>6} {'share':>6}"
            f" {'b.cover':>8} {'b.share':>8}",
        ]
        for name, split in self.groups():
            j = split.to_json()
            rows.append(
                f"{name:<12} {split.turns:>6} {_pct(j['base_rate']):>5} {_pct(j['coverage']):>6}"
                f" {_pct(j['share']):>6} {_pct(j['baseline_coverage']):>8}"
                f" {_pct(j['baseline_share']):>8}"
            )
        rows.append(
            f"base = observation turns ÷ turns; b. = the first-person baseline; {self.seconds}s"
        )
        return "\n".join(rows)


def is_locomo(path: Path) -> bool:
    """True when the file at `path` is one JSON document of LoCoMo samples (a capture
    set is JSONL: several documents, or one without ``conversation``)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    samples = document if isinstance(document, list) else [document]
    return bool(samples) and all(
        isinstance(s, Mapping) and isinstance(s.get("conversation"), Mapping) for s in samples
    )


def run_locomo_capture(
    path: Path,
    *,
    embedder: str | None = "hash",
    learned: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> LocomoCaptureReport:
    """Capture every conversation of the LoCoMo file at `path` and count (module doc)."""
    started = time.perf_counter()
    observed = _observation_turns(path)
    samples = read_samples(path, on_warning=lambda _w: None)
    report = LocomoCaptureReport(str(path), embedder or "default")
    total = sum(len(s.turns) for s in samples)
    done = 0
    rules = default_rules()
    for sample in samples:
        if not sample.turns:
            continue
        wanted = observed.get(sample.sample_id, set())
        split = Split()
        first = sample.turns[0].at
        assert first is not None  # the reader gives every turn its session's time
        with scratch_engine("capture-locomo", embedder, first, learned=learned) as (
            engine,
            clock,
        ):
            for turn in sample.turns:
                if turn.at is not None:
                    clock.set(turn.at)
                result = engine.capture([turn], scope=Scope(user=sample.sample_id))
                kept = bool(result.added or result.bumped)
                said = rules.get(detect_language(turn.text))
                base = about_speaker(turn.text, said)
                hit = turn.turn_id in wanted
                split.turns += 1
                split.observed += hit
                split.kept += kept
                split.covered += kept and hit
                split.base_kept += base
                split.base_covered += base and hit
                done += 1
                if on_progress is not None:
                    on_progress(done, total)
        report.conversations[sample.sample_id] = split
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _observation_turns(path: Path) -> dict[str, set[str]]:
    """Per sample id, the dia_ids its observations cite."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"Cannot read LoCoMo file '{path}': {exc}") from None
    samples = document if isinstance(document, list) else [document]
    found: dict[str, set[str]] = {}
    for i, sample in enumerate(samples):
        if not isinstance(sample, Mapping):
            continue
        sample_id = str(sample["sample_id"]) if sample.get("sample_id") else f"sample-{i}"
        ids = found.setdefault(sample_id, set())
        sessions = sample.get("observation")
        for said in sessions.values() if isinstance(sessions, Mapping) else ():
            for items in said.values() if isinstance(said, Mapping) else ():
                for item in items if isinstance(items, list) else ():
                    if isinstance(item, list) and len(item) > 1:
                        ids.update(_DIA_ID.findall(json.dumps(item[1:])))
    return found


def _sum(splits: Iterable[Split]) -> Split:
    total = Split()
    for split in splits:
        total.add(split)
    return total


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def _pct(value: object) -> str:
    return "—" if value is None else f"{float(value):.2f}"  # type: ignore[arg-type]
