"""Calibrate the per-hit floor (`search.hit_floor`, docs/retrieval.md#the-per-hit-floor)
by k-fold over LoCoMo's conversations.

Each conversation goes into a fresh store, captured session by session as
`memoracle bench locomo` does; every question is searched once with the floor off (60
deep), and for each hit the highest floor that would still keep it is recorded (the
rule itself, `relevance.touching`, asked at every floor of a 0.01 grid). A floor only
removes hits and never reorders the rest, so the top k at any floor is read off that
one ranking. A question *loses its evidence* at a floor when fewer of its evidence turns
are in its top 5, 10 or 20 than with the floor off.

Folds: the ten conversations in pairs (0-1, 2-3, ...). On each fold's eight training
conversations the floor chosen is the highest at which no training question loses
evidence; the held-out pair is then scored at that floor. The recall block is not
simulated here: `memoracle bench locomo` measures it at the floor chosen.

    MEMORACLE_LOCOMO=../shared/bench/locomo10.json PYTHONPATH=src \\
        python bench/relevance_floor.py [--conversations 0-9]

Writes bench/results/relevance_floor.json (the rankings and thresholds) and prints the
folds. `--from-json` re-reads a saved run instead of searching again.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs.bench.results import repair_evidence
from memoracle.jobs.bench.run import Sample, _by_session, parse_positions, read_samples
from memoracle.recall import relevance
from memoracle.types import Hit

GRID = [round(i / 100, 2) for i in range(0, 51)]  # floors tried: 0.00 .. 0.50
NEVER = 9.0  # a hit kept at every floor (it shares a word, or the graph or time)
KS = (5, 10, 20)
DEPTH = 60
RESULTS = Path(__file__).parent / "results" / "relevance_floor.json"


class Recorder:
    """Stands in for `relevance.touching` with the floor off, learning for each hit the
    highest floor of GRID at which the real rule keeps it."""

    def __init__(self) -> None:
        self.rule = relevance.touching
        self.last: dict[tuple[str, int], float] | None = None

    def __call__(self, hits: Sequence[Hit], floor: float, *args: Any) -> list[Hit]:
        keep: dict[tuple[str, int], float] = {}
        for f in GRID:
            for h in self.rule(hits, f, *args):
                keep[(h.source, h.id)] = f
        top = GRID[-1]
        self.last = {k: NEVER if v == top else v for k, v in keep.items()}
        return list(hits)  # the floor off: every hit, in its order


def key(hit: Hit) -> tuple[str, int]:
    return (hit.source, hit.id)


def _sample(sample: Sample, recorder: Recorder) -> list[dict[str, Any]]:
    known = {t.turn_id for t in sample.turns if t.turn_id}
    sessions = _by_session(sample.turns)
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memoracle-floor-") as home:
        overrides = {"workspace.timezone": "UTC", "search.hit_floor": -1}
        settings = load(Path(home), env={}, overrides=overrides)
        clock = FixedClock(sessions[0][0])
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            for at, turns in sessions:
                clock.set(at)
                engine.capture(turns)
            engine.reindex()
            clock.set(sessions[-1][0])
            for index, qa in enumerate(sample.qa):
                ids, _, _ = repair_evidence(list(qa.get("evidence") or []), known)
                question = str(qa.get("question", "")).strip()
                if not question or not ids:
                    continue
                recorder.last = None
                outcome = engine.search(question, k=DEPTH)
                learned = recorder.last  # None: the time-window stage, every hit in the time
                hits = [
                    [list(h.turn_ids), NEVER if learned is None else learned.get(key(h), -1.0)]
                    for h in outcome.hits
                ]
                out.append(
                    {
                        "sample": sample.sample_id,
                        "index": index,
                        "category": int(qa.get("category", 0)),
                        "evidence": list(ids),
                        "hits": hits,
                    }
                )
    return out


def found(question: dict[str, Any], floor: float, k: int) -> int:
    kept = [turns for turns, thr in question["hits"] if thr >= floor][:k]
    return len(set(question["evidence"]) & {t for turns in kept for t in turns})


def losers(questions: list[dict[str, Any]], floor: float) -> list[dict[str, Any]]:
    return [q for q in questions if any(found(q, floor, k) < found(q, -1.0, k) for k in KS)]


def recall_at(questions: list[dict[str, Any]], floor: float, k: int) -> float:
    scored = [q for q in questions if 1 <= q["category"] <= 4]
    return sum(found(q, floor, k) / len(q["evidence"]) for q in scored) / max(1, len(scored))


def dropped_share(questions: list[dict[str, Any]], floor: float) -> float:
    """Of the top 20 with the floor off, the share of hits the floor drops."""
    top = [thr for q in questions for _, thr in q["hits"][:20]]
    return sum(thr < floor for thr in top) / max(1, len(top))


def folds(questions: list[dict[str, Any]], samples: list[str]) -> None:
    pairs = [samples[i : i + 2] for i in range(0, len(samples), 2)]
    chosen: list[float] = []
    for held in pairs:
        train = [q for q in questions if q["sample"] not in held]
        test = [q for q in questions if q["sample"] in held]
        floor = max((f for f in GRID if not losers(train, f)), default=0.0)
        chosen.append(floor)
        lost = losers(test, floor)
        print(
            f"held out {','.join(held)}: floor {floor:.2f} (training: 0 lose evidence); "
            f"held out: {len(lost)} of {len(test)} lose evidence; "
            + " ".join(
                f"R@{k} {recall_at(test, -1, k):.3f}->{recall_at(test, floor, k):.3f}" for k in KS
            )
            + f"; top-20 hits dropped {dropped_share(test, floor):.1%}"
        )
    ship = min(chosen)
    print(f"floors chosen per fold: {chosen}; the most careful: {ship:.2f}")
    for f in sorted({ship, 0.1, 0.15, 0.2, 0.25, 0.3}):
        lost = losers(questions, f)
        print(
            f"all ten at {f:.2f}: {len(lost)} lose evidence "
            f"({', '.join(q['sample'] + '#' + str(q['index']) for q in lost[:6])}); "
            + " ".join(f"R@{k} {recall_at(questions, f, k):.3f}" for k in KS)
            + f"; top-20 hits dropped {dropped_share(questions, f):.1%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", default=None)
    parser.add_argument("--from-json", action="store_true")
    args = parser.parse_args()
    if args.from_json:
        questions = json.loads(RESULTS.read_text(encoding="utf-8"))
    else:
        path = Path(os.environ.get("MEMORACLE_LOCOMO", "../shared/bench/locomo10.json"))
        samples = read_samples(path, lambda _: None)
        if args.conversations:
            samples = [samples[i] for i in parse_positions(args.conversations, len(samples))]
        recorder = Recorder()
        relevance.touching = recorder  # type: ignore[assignment]
        questions = []
        for sample in samples:
            questions += _sample(sample, recorder)
            print(f"{sample.sample_id}: {len(questions)} questions so far", flush=True)
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(questions), encoding="utf-8")
    folds(questions, list(dict.fromkeys(q["sample"] for q in questions)))


if __name__ == "__main__":
    main()
