"""Nightly run time over stores of 100k and 1M memories (targets: nightly over 100k
memories ≤ 30 s, over 1M ≤ 5 min), step by step.

Each store is built through the import door: daily notes of `PER_DAY` bullets a day, in
the shapes of the latency benchmark's turns (preferences, events, tasks, decisions,
guardrails, facts over 400 people, 31 places and 1,170 things), under the headings of
memoracle's own notes, read by `Engine.ingest` one day at a time (kinds from the
headings, exact and near duplicates merged, contradictions settled, the graph read)
until the store holds the asked number of memories, whatever their status. Every text
then gets a random unit vector of the default model's size (`recall_speed.fill_vectors`).

A store larger than `--lived` (50,000 by default) would take hours to live that way:
it is the store lived to `--lived` memories, whose cold tier is then carried back in
time through the export/import door until it holds the asked number
(`cold_history.py` says how, and what that leaves out).

The store is copied, then `nightly` runs on the copy twice: the night after the last
notes, with the weekly quick check made due (the week's worst night); then a day of new
turns (one every 5 minutes) is captured and the next night shows a usual one. With
`--cold` the OS page cache is dropped before each night (Linux, root), as a store left
alone since the evening is at 3 a.m. The configuration is otherwise the default one.

    python bench/nightly_speed.py [--memories 100000,1000000] [--lived 50000] [--keep DIR]
                                  [--cold]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import write_results
from cold_history import extend
from recall_speed import TEMPLATES, fill_vectors, text

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs import nightly
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


def night(home: Path, days: int, night_number: int, *, cold: bool) -> dict[str, Any]:
    """The nightly run `night_number` days after the last day of notes, after capturing
    the turns of the days between (none before the first night). The first night also
    runs the weekly quick check (due every day for it), so the two nights show the
    week's worst and a usual one. With `cold`, the OS page cache is dropped just before
    the run, as a store untouched since the evening would be at 3 a.m."""
    overrides = {"lifecycle.integrity_every_days": 1} if night_number == 1 else {}
    settings = load(home, env={}, overrides=overrides)
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
        if cold:
            drop_os_cache()
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


def drop_os_cache() -> None:
    """Write dirty pages out and drop the OS page cache (Linux, as root)."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as exc:
        raise SystemExit(f"--cold: cannot drop the page cache ({exc}); run as root") from None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", default="100000,1000000")
    parser.add_argument(
        "--lived", type=int, default=50_000, help="larger stores: this one, carried back"
    )
    parser.add_argument("--keep", type=Path, help="build the stores here, or reuse them")
    parser.add_argument("--cold", action="store_true", help="drop the OS cache before a night")
    args = parser.parse_args()
    counts = [int(s) for s in args.memories.split(",")]
    results: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        keep = args.keep or Path(tmp)
        lived = sorted({n if n <= args.lived else args.lived for n in counts})
        missing = [n for n in lived if not (keep / f"memories-{n}" / "bench-days").exists()]
        if missing:
            started = time.perf_counter()
            build(Path(tmp) / "building", missing, keep, random.Random(max(missing)))
            print(f"built {missing} memories in {time.perf_counter() - started:.0f} s")
        built: dict[int, Any] = {n: "lived" for n in lived}
        for count in (n for n in counts if n > args.lived):
            target = keep / f"memories-{count}"
            if not (target / "bench-days").exists():
                source = keep / f"memories-{args.lived}"
                days = int((source / "bench-days").read_text())
                started = time.perf_counter()
                how = extend(source, target, memories=count, days=days)
                how["seconds"] = round(time.perf_counter() - started, 1)
                (target / "bench-built.json").write_text(json.dumps({"lived": args.lived, **how}))
                (target / "bench-days").write_text(f"{days}\n")
                print(f"carried {count:,} back from {args.lived:,} memories in {how['seconds']} s")
            built[count] = json.loads((target / "bench-built.json").read_text())
        for count in counts:
            source = keep / f"memories-{count}"
            days = int((source / "bench-days").read_text())
            home = Path(tmp) / f"night-{count}"
            shutil.copytree(source, home)
            first, second = (night(home, days, n, cold=args.cold) for n in (1, 2))
            results[count] = {"days": days, "built": built[count], "cold": args.cold,
                              "first": first, "second": second}  # fmt: skip
            for name, r in (("night after the notes, quick check", first), ("next night", second)):
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
