"""Nightly run time over stores of 100k and 1M memories (SPEC §12: nightly over 100k
memories ≤ 30 s, over 1M ≤ 5 min), step by step.

Each store is built through the import door: daily notes of `PER_DAY` bullets a day, in
the shapes of the latency benchmark's turns (preferences, events, tasks, decisions,
guardrails, facts over 400 people, 31 places and 1,170 things), under the headings of
memoracle's own notes, read by `Engine.ingest` one day at a time (kinds from the
headings, exact and near duplicates merged, contradictions settled, the graph read)
until the store holds the asked number of memories, whatever their status. Every text
then gets a random unit vector of the default model's size (`recall_speed.fill_vectors`).

The store is copied, then `nightly` runs on the copy twice: the first night is the
catching up of a store that never had one (a whole history of faded memories archived,
the store compared for near-duplicates, notes and MEMORY.md written); then a day of new
turns (one every 5 minutes) is captured and the next night shows the steady state, a
night after a night. The configuration is the default one.

    python bench/nightly_speed.py [--memories 100000,1000000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import write_results
from recall_speed import TEMPLATES, fill_vectors, text

from memoracle import nightly
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

START = date(2020, 1, 1)
PER_DAY = 500  # bullets in a day's note
NIGHT_EVERY = 10  # days of notes between two nightly runs while a store is built
HEADINGS = ["Facts Learned", "Decisions Made", "Preferences Noted", "Action Items"]
DAY_TURNS = 288  # a day of turns, one every 5 minutes


def build(home: Path, counts: list[int], keep: Path, rng: random.Random) -> None:
    """Live a store through days of imported notes, with a nightly run every
    `NIGHT_EVERY` days (as a store that has been in use for years), and copy it to
    `keep`/memories-N as it passes each of `counts` memories (with the number of days
    it took in `bench-days`)."""
    settings = load(home, env={})
    clock = FixedClock(datetime.combine(START, datetime.min.time(), tzinfo=UTC))
    Engine.init(settings, clock=clock)
    notes = home.parent / f"{home.name}-notes"
    notes.mkdir(exist_ok=True)
    started = time.perf_counter()
    pending = sorted(counts)
    day = 0
    while pending:
        with Engine.open(settings, clock=clock) as engine:
            for _ in range(NIGHT_EVERY):
                today = START + timedelta(days=day)
                clock.set(datetime.combine(today, datetime.max.time(), tzinfo=UTC))
                engine.ingest([write_note(notes / f"{today}.md", today, rng)])
                day += 1
            fill_vectors(engine)
            clock.set(datetime.combine(START + timedelta(days=day), datetime.min.time(),
                                       tzinfo=UTC) + timedelta(hours=3))  # fmt: skip
            nightly.run_nightly(engine)
            memories = engine.stats().memories
        rate = memories / (time.perf_counter() - started)
        print(f"  day {day}: {memories:,} memories ({rate:,.0f}/s)", file=sys.stderr)
        while pending and memories >= pending[0]:
            target = keep / f"memories-{pending.pop(0)}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(home, target)
            (target / "bench-days").write_text(f"{day}\n")
    shutil.rmtree(notes)


def write_note(path: Path, day: date, rng: random.Random) -> Path:
    """A day's note of `PER_DAY` bullets under memoracle's note headings."""
    parts = [f"# {day}"]
    for n in range(0, PER_DAY, 25):
        parts.append(f"\n## {HEADINGS[n // 25 % len(HEADINGS)]}\n")
        parts += [f"- {text(rng, TEMPLATES)}" for _ in range(25)]
    path.write_text("\n".join(parts) + "\n")
    return path


def night(home: Path, days: int, night_number: int) -> dict[str, Any]:
    """The nightly run `night_number` days after the last day of notes, after capturing
    the turns of the days between (none before the first night)."""
    settings = load(home, env={})
    end = datetime.combine(START + timedelta(days=days), datetime.min.time(), tzinfo=UTC)
    clock = FixedClock(end + timedelta(days=night_number, hours=3))
    steps: dict[str, float] = {}
    rng = random.Random(days + night_number)
    with Engine.open(settings, clock=clock) as engine:
        new = [
            Turn("user", text(rng, TEMPLATES), end + timedelta(days=1, minutes=5 * n), "bench",
                 f"{night_number}-{n}")
            for n in range((night_number - 1) * DAY_TURNS)
        ]  # fmt: skip
        engine.capture(new)
        stats = engine.stats()
        started = time.perf_counter()
        report = nightly.run_nightly(
            engine, on_step=lambda step, counts, seconds: steps.update({step: seconds})
        )
        total = time.perf_counter() - started
    return {
        "memories": stats.memories,
        "by_status": stats.by_status,
        "database_bytes": stats.database_bytes,
        "new_turns": len(new),
        "seconds": round(total, 2),
        "backup_seconds": None if report.backup is None else report.backup_seconds,
        "steps": {k: round(v, 2) for k, v in steps.items()},
        "counts": report.steps,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", default="100000,1000000")
    parser.add_argument("--keep", type=Path, help="build the stores here, or reuse them")
    args = parser.parse_args()
    counts = [int(s) for s in args.memories.split(",")]
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        keep = args.keep or Path(tmp)
        missing = [n for n in counts if not (keep / f"memories-{n}" / "bench-days").exists()]
        if missing:
            started = time.perf_counter()
            build(Path(tmp) / "building", missing, keep, random.Random(max(missing)))
            print(f"built {missing} memories in {time.perf_counter() - started:.0f} s")
        for count in counts:
            source = keep / f"memories-{count}"
            days = int((source / "bench-days").read_text())
            home = Path(tmp) / f"night-{count}"
            shutil.copytree(source, home)
            first, second = night(home, days, 1), night(home, days, 2)
            results[count] = {"days": days, "first": first, "second": second}
            for name, r in (("night after the notes", first), ("next night", second)):
                steps = ", ".join(f"{k} {v:.1f}" for k, v in r["steps"].items())
                print(
                    f"{r['memories']:>9,} memories, {name}: {r['seconds']:.1f} s"
                    f" (backup {r['backup_seconds'] or 0:.1f}, {steps})"
                )
            shutil.rmtree(home)
    print("target: ≤ 30 s over 100k memories, ≤ 5 min over 1M")
    print(f"results: {write_results('nightly_speed', {'stores': results})}")


if __name__ == "__main__":
    main()
