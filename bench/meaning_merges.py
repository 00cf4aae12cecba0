"""Merges by meaning on LoCoMo (all ten conversations): how many, and a sample to read.

LoCoMo (CC BY-NC) is read at run time from ../shared/bench and ingested into a fresh
store with the default configuration (the multilingual model), as `bench/ingest_locomo.py`
does; the capture-time merges are then read from the audit log (`merge`, `by` = "words"
or "meaning", `engine/near.py`). A seeded random sample of the merges (all of them when
fewer) is written, each pair in full, to `--sample` — a file OUTSIDE the repository (LoCoMo's text
never enters it) — for a person to read and judge; only counts are printed.

    python bench/meaning_merges.py --sample /tmp/meaning-merges.txt [--size 50] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from _common import ROOT, locomo_path, write_results

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=Path, required=True, help="Outside the repository.")
    parser.add_argument("--size", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.sample.resolve().is_relative_to(ROOT):
        raise SystemExit(f"{args.sample}: the sample holds LoCoMo's text; write it outside {ROOT}.")
    with tempfile.TemporaryDirectory(prefix="memoracle-merges-") as home:
        settings = load(Path(home), env={})
        clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            started = time.perf_counter()
            engine.ingest([locomo_path()])
            seconds = time.perf_counter() - started
            merges = [e for e in engine._store.audit.entries(limit=10**7) if e.action == "merge"]
            by = Counter(str(e.detail.get("by", "words")) for e in merges)
            sample = random.Random(args.seed).sample(merges, min(args.size, len(merges)))
            lines: list[str] = []
            for n, entry in enumerate(sample, 1):
                assert entry.memory_id is not None
                kept = engine.stored_memory(entry.memory_id)
                lines += [
                    f"#{n} m_{entry.memory_id} by {entry.detail.get('by')}"
                    f" score {entry.detail.get('score')} cosine {entry.detail.get('cosine')}",
                    f"  kept: {kept.text if kept else '?'}",
                    f"  new:  {entry.detail['text']}",
                    "",
                ]
            memories = len(engine.list_memories(status=None, limit=10**7))
    args.sample.write_text("\n".join(lines), encoding="utf-8")
    result = {
        "ingest_s": round(seconds, 1),
        "memories": memories,
        "merges": dict(by),
        "sampled": len(sample),
        "seed": args.seed,
    }
    print(result)
    print("sample:", args.sample, "| results:", write_results("meaning_merges", result))


if __name__ == "__main__":
    main()
