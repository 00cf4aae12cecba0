"""Calibrate the per-hit floor (`search.hit_floor`, docs/retrieval.md#the-per-hit-floor)
by k-fold over LoCoMo's conversations, inside one run of the LoCoMo benchmark.

The benchmark runs as `memoracle bench locomo` does (`run_locomo`, the floor at its
configured value, so its figures are the command's). Beside it, for each question's
search, the rule (`relevance.touching`) is asked at every floor of a 0.01 grid about
every hit it is given (before the floor, before the source dedup), and the highest
floor that keeps each of the question's evidence turns is recorded: its *threshold*
(a turn found by a word, the graph or the time the query names is kept at every floor).
Only the candidates the recall block could take count (the best DEPTH by final score).

Folds: the ten conversations in pairs (0-1, 2-3, ...). On each fold's eight training
conversations the floor chosen is the highest of the grid that drops no evidence turn
among any training question's candidates; the held-out pair is then scored at that
floor (evidence turns and questions it would drop). The shipped floor must be at or
under every fold's choice.

    MEMORACLE_LOCOMO=../shared/bench/locomo10.json PYTHONPATH=src \\
        python bench/relevance_floor.py [--conversations 0-9]

Writes bench/results/relevance_floor[-SPEC].json (the thresholds and the benchmark
report) and prints the folds; `--from-json 0-4 5-9` reads saved runs again, merged.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memoracle.engine import Engine
from memoracle.jobs.bench.run import run_locomo
from memoracle.recall import relevance
from memoracle.types import Hit

GRID = [round(i / 100, 2) for i in range(0, 51)]  # floors asked: 0.00 .. 0.50
ALWAYS = 9.0  # kept at every floor (a shared word, the graph, the time named)
DEPTH = 60  # candidates counted per question: as deep as the recall block's search
RESULTS = Path(__file__).parent / "results" / "relevance_floor.json"


class Recorder:
    """Wraps `relevance.touching`: returns what the real rule keeps at the configured
    floor, and learns the threshold of each hit's turns while the benchmark's own
    search runs (`armed`)."""

    def __init__(self) -> None:
        self.rule = relevance.touching
        self.armed: Engine | None = None
        self.turns: dict[str, float] | None = None

    def __call__(self, hits: Sequence[Hit], floor: float, *args: Any) -> list[Hit]:
        if self.armed is not None:
            self.turns = self._thresholds(self.armed, hits, args)
            self.armed = None
        return self.rule(hits, floor, *args)

    def _thresholds(self, engine: Engine, hits: Sequence[Hit], args: Any) -> dict[str, float]:
        best = sorted(hits, key=lambda h: h.scores.final, reverse=True)[:DEPTH]
        keep: dict[tuple[str, int], float] = {}
        for f in GRID:
            for h in self.rule(hits, f, *args):
                keep[(h.source, h.id)] = ALWAYS if f == GRID[-1] else f
        episode_ids = {e for h in best if h.memory is not None for e in h.memory.episode_ids}
        turn_of = {e.id: e.turn_id for e in engine.turns_by_id(sorted(episode_ids))}
        out: dict[str, float] = {}
        for h in best:
            own = keep.get((h.source, h.id), -1.0)
            turns = (
                [h.episode.turn_id] if h.episode is not None else
                [turn_of.get(e) for e in h.memory.episode_ids] if h.memory is not None else []
            )  # fmt: skip
            for turn in filter(None, turns):
                out[turn] = max(own, out.get(turn, -1.0))
        return out


def run(path: Path, conversations: str | None) -> dict[str, Any]:
    """The benchmark, with each question's evidence thresholds learned beside it."""
    recorder = Recorder()
    relevance.touching = recorder  # type: ignore[assignment]
    searched: list[tuple[str, dict[str, float] | None]] = []
    plain = Engine.search

    def search(self: Engine, query: str, **kw: Any) -> Any:
        recorder.armed, recorder.turns = self, None
        try:
            return plain(self, query, **kw)
        finally:
            recorder.armed = None
            searched.append((query, recorder.turns))  # None: the time-window stage

    Engine.search = search  # type: ignore[method-assign]
    report = run_locomo(path, conversations=conversations)
    raw = {
        "searched": searched,
        "report": [
            [r.sample_id, r.index, r.category, r.question, list(r.evidence),
             {str(k): v for k, v in r.memoracle.turns.items()}, r.memoracle.budget]
            for r in report.questions
        ],
        "overall": asdict(report.overall.memoracle),
        "seconds": report.seconds,
    }  # fmt: skip
    out = results_file(conversations)
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(raw), encoding="utf-8")
    return raw


def results_file(conversations: str | None) -> Path:
    """bench/results/relevance_floor[-SPEC].json: one file per set of conversations."""
    return RESULTS.with_stem(f"{RESULTS.stem}-{conversations}" if conversations else RESULTS.stem)


def questions_of(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """Each asked question with its evidence turns' thresholds (searches in order)."""
    queue = list(raw["searched"])
    out: list[dict[str, Any]] = []
    for sample, index, category, question, evidence, found, block in raw["report"]:
        if not question:
            continue
        asked, turns = queue.pop(0)
        assert asked == question, (asked, question)
        thresholds = {t: (ALWAYS if turns is None else turns.get(t)) for t in evidence}
        out.append(
            {
                "sample": sample,
                "index": index,
                "category": category,
                "evidence": {t: v for t, v in thresholds.items() if v is not None},
                "found": found,
                "block": block,
            }
        )
    return out


def _dropped(questions: list[dict[str, Any]], floor: float) -> tuple[int, int]:
    """Evidence turns among the candidates the floor would drop, and their questions."""
    turns = [sum(v < floor for v in q["evidence"].values()) for q in questions]
    return sum(turns), sum(1 for n in turns if n)


def folds(data: dict[str, Any]) -> None:
    questions = questions_of(data)
    samples = list(dict.fromkeys(q["sample"] for q in questions))
    chosen: list[float] = []
    for held in (samples[i : i + 2] for i in range(0, len(samples), 2)):
        train = [q for q in questions if q["sample"] not in held]
        test = [q for q in questions if q["sample"] in held]
        floor = max(f for f in GRID if _dropped(train, f)[0] == 0)
        chosen.append(floor)
        turns, lost = _dropped(test, floor)
        print(
            f"held out {','.join(held)}: floor {floor:.2f} on the training folds; held out: "
            f"{turns} evidence turns of {lost} of {len(test)} questions dropped"
        )
    print(f"chosen per fold: {chosen}; every fold allows up to {min(chosen):.2f}")
    values = sorted(v for q in questions for v in q["evidence"].values() if v < ALWAYS)
    print(
        f"evidence turns among the candidates: {sum(len(q['evidence']) for q in questions)}, "
        f"found by meaning alone (a threshold under {ALWAYS:g}): {len(values)}; "
        f"their lowest thresholds: {values[:8]}"
    )
    for f in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35):
        turns, lost = _dropped(questions, f)
        print(f"all at {f:.2f}: {turns} evidence turns of {lost} questions dropped")
    print("benchmark at the configured floor:", json.dumps(data["overall"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--conversations", default=None)
    parser.add_argument(
        "--from-json",
        nargs="*",
        metavar="SPEC",
        help="read the saved runs of these --conversations (none: of all ten) and merge",
    )
    args = parser.parse_args()
    if args.from_json is not None:
        runs = [
            json.loads(results_file(spec or None).read_text(encoding="utf-8"))
            for spec in args.from_json or [""]
        ]
        data = {
            "searched": [s for r in runs for s in r["searched"]],
            "report": [q for r in runs for q in r["report"]],
            "overall": [r["overall"] for r in runs],
            "seconds": sum(r["seconds"] for r in runs),
        }
    else:
        path = Path(os.environ.get("MEMORACLE_LOCOMO", "../shared/bench/locomo10.json"))
        data = run(path, args.conversations)
    folds(data)


if __name__ == "__main__":
    main()
