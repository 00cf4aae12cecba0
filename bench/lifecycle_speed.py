"""What comparing by meaning adds to a capture (target: p50 ≤ 5 ms at 100k memories).

A store of `--memories` memories is built straight through the store (the texts of the
latency benchmark, `recall_speed.text`: 30 % about the user, the rest about 400 people,
in five kinds), every text with a random unit vector of the default model's size
(`recall_speed.fill_vectors`). Then, for `--captures` new memories about the user, the
comparison by meaning alone (`engine.near.same_meaning`: the newest live memories of
the subject and kind, the new text embedded by the real default model and the
candidates' vectors read, the closest scored) is timed, each in its own transaction, as
the write path runs it, and beside it the model embedding the same text alone. A
capture that yields no memory does not compare.

    python bench/lifecycle_speed.py [--memories 100000] [--captures 300] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _common import summary_ms, write_results
from recall_speed import TEMPLATES, fill_vectors, text

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.engine.near import same_meaning
from memoracle.engine.settle import by_attribute
from memoracle.lifecycle.slots import slots_of
from memoracle.text import content_hash
from memoracle.types import NewMemory, Scope

START = datetime(2025, 1, 1, tzinfo=UTC)
KINDS = ["fact", "preference", "event", "decision", "task"]
PEOPLE = [f"person{i}" for i in range(400)]


def new_memory(body: str, subject: str, kind: str, at: datetime) -> NewMemory:
    return NewMemory(
        kind=kind,
        text=body,
        layer="semantic",
        source="capture",
        observed_at=at,
        content_hash=content_hash(body),
        scope=Scope(),
        subject=subject,
        lang="en",
    )


def build(home: Path, size: int, rng: random.Random) -> Engine:
    settings = load(home, env={})
    clock = FixedClock(START)
    Engine.init(settings, clock=clock)
    engine = Engine.open(settings, clock=clock)
    step = 5000
    for first in range(0, size, step):
        with engine._store.transaction():
            for i in range(first, min(size, first + step)):
                at = START + timedelta(minutes=5 * i)
                subject = "user" if rng.random() < 0.3 else rng.choice(PEOPLE)
                new = new_memory(f"{text(rng, TEMPLATES)} ({i})", subject, rng.choice(KINDS), at)
                engine._store.memories.insert(new, now=at)
    clock.set(START + timedelta(minutes=5 * size + 60))
    fill_vectors(engine)
    return engine


def measure(
    engine: Engine, captures: int, rng: random.Random
) -> tuple[list[float], list[float], list[float]]:
    """The comparison's time per new memory, the attribute reading's after it, and the
    model's alone on the same text (what the machine's load makes of the embedding, the
    larger part)."""
    embedder = engine.searcher.embedder
    assert embedder is not None
    embedder.embed_documents(["warm the model up"])
    with engine._store.transaction():  # the prototypes, embedded once per process
        probe = new_memory("I live in Lyon.", "user", "fact", engine.clock.now())
        by_attribute(engine, engine._store.memories.insert(probe, now=engine.clock.now()),
                     probe, now=engine.clock.now(), actor="bench")  # fmt: skip
    times: list[float] = []
    reading: list[float] = []
    model: list[float] = []
    for i in range(captures):
        body = text(rng, TEMPLATES)
        new = new_memory(body, "user", "fact", engine.clock.now())
        slots = slots_of(body, lang="en")
        started = time.perf_counter()
        with engine._store.transaction():
            same_meaning(engine, new, slots)
            times.append(time.perf_counter() - started)
            memory_id = engine._store.memories.insert(new, now=engine.clock.now())
            started = time.perf_counter()
            if not slots:
                by_attribute(engine, memory_id, new, now=engine.clock.now(), actor="bench")
            reading.append(time.perf_counter() - started)
        started = time.perf_counter()
        embedder.embed_documents([body + " "])
        model.append(time.perf_counter() - started)
        engine.clock.set(engine.clock.now() + timedelta(seconds=i))
    return times, reading, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--captures", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it.")
    args = parser.parse_args()
    rng = random.Random(7)
    home = args.keep or Path(tempfile.mkdtemp(prefix="memoracle-lifecycle-speed-"))
    try:
        started = time.perf_counter()
        engine = build(home, args.memories, rng)
        built = time.perf_counter() - started
        with engine:
            times, reading, model = measure(engine, args.captures, rng)
        result: dict[str, Any] = {
            "memories": args.memories,
            "build_s": round(built, 1),
            "same_meaning": summary_ms(times),
            "attribute_reading": summary_ms(reading),
            "both": summary_ms([a + b for a, b in zip(times, reading, strict=True)]),
            "embedding_alone": summary_ms(model),
        }
        print(result)
        print("written:", write_results("lifecycle_speed", result))
    finally:
        if args.keep is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
