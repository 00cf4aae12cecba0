"""Capture latency per turn: rules, the learned decision (one USE embedding call per
turn with a statement no rule matched) and the store (targets: p50 ≤ 10 ms, p95 ≤ 25 ms;
without the learned decision p50 ≤ 2 ms, p95 ≤ 5 ms).

Replays every LoCoMo turn (5,882 realistic chat turns) through `Engine.capture`, one
turn per call and per transaction, as an agent host would after each turn. In the same
run, for comparison: capture without the learned decision (`capture.classifier =
false`), the rules alone (no store) and the store alone (episode only, no rules), so the
cost of each part is visible. The embedder is loaded before the timed turns.

    python bench/capture_speed.py [--limit N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _common import locomo_path, summary_ms, write_results

from memoracle import ingest
from memoracle.capture.pipeline import prepare, propose
from memoracle.capture.rules import default_rules
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

START = datetime(2023, 1, 1, tzinfo=UTC)


def load_turns(limit: int | None) -> list[Turn]:
    turns = [
        t
        for t in ingest.read(locomo_path(), "locomo", on_warning=lambda w: None)
        if isinstance(t, Turn)
    ]
    return turns[:limit] if limit else turns


def run_engine(turns: list[Turn], *, rules: bool, learned: bool = True) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        # No languages enabled: the turn is still redacted, checked for noise and stored.
        overrides: dict[str, object] = {} if rules else {"capture.languages": []}
        overrides["capture.classifier"] = learned
        settings = load(Path(tmp), env={}, overrides=overrides)
        clock = FixedClock(turns[0].at or START)
        Engine.init(settings, clock=clock)
        timings = []
        with Engine.open(settings, clock=clock) as engine:
            if engine.classifier is not None:  # load the embedder before timing
                engine.classifier.decide([("warm up", default_rules().get("en"))])
            for turn in turns:
                clock.set(turn.at or START)
                start = time.perf_counter()
                engine.capture([turn])
                timings.append(time.perf_counter() - start)
        return timings


def run_rules(turns: list[Turn]) -> list[float]:
    timings = []
    for turn in turns:
        start = time.perf_counter()
        text = prepare(turn.text).text
        propose(
            text, role=turn.role, speaker=turn.speaker, at=(turn.at or START).replace(tzinfo=UTC)
        )
        timings.append(time.perf_counter() - start)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="only the first N turns")
    args = parser.parse_args()
    turns = load_turns(args.limit)
    run_engine(turns[:200], rules=True)  # warm up imports, regex compilation, page cache
    rows = {
        "capture (rules+learned+store)": summary_ms(run_engine(turns, rules=True)),
        "capture, rules only": summary_ms(run_engine(turns, rules=True, learned=False)),
        "rules only (no store)": summary_ms(run_rules(turns)),
        "store only (no extraction rules)": summary_ms(run_engine(turns, rules=False)),
    }
    print(f"capture latency per turn over {len(turns)} LoCoMo turns")
    print(f"{'variant':<32} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for name, s in rows.items():
        print(
            f"{name:<32} {s['p50_ms']:>8.3f} {s['p95_ms']:>8.3f}"
            f" {s['p99_ms']:>8.3f} {s['mean_ms']:>8.3f}"
        )
    targets = (("capture (rules+learned+store)", 10, 25), ("capture, rules only", 2, 5))
    for name, p50, p95 in targets:
        target = rows[name]
        print(
            f"{name}: target p50 ≤ {p50} ms: {'met' if target['p50_ms'] <= p50 else 'MISSED'};"
            f" p95 ≤ {p95} ms: {'met' if target['p95_ms'] <= p95 else 'MISSED'}"
        )
    print(f"results: {write_results('capture_speed', {'turns': len(turns), 'variants': rows})}")


if __name__ == "__main__":
    main()
