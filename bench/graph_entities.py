"""The knowledge graph LoCoMo's conversations make: entities by type, relations, and a
random sample to check by hand (is each a real entity of the right type?).

Captures every LoCoMo turn (all ten conversations, or those of `--conversations`) into
one fresh store, as `capture_speed.py` does, with the hash embedder (the graph does not
use vectors), then reads the graph. LoCoMo is read at run time only (CC BY-NC).

    python bench/graph_entities.py [--sample 30] [--seed 7] [--conversations 0-9]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from _common import locomo_path, write_results

from memoracle import ingest
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.types import Turn

START = datetime(2023, 1, 1, tzinfo=UTC)


def _conversations(spec: str) -> set[int]:
    first, _, last = spec.partition("-")
    return set(range(int(first), int(last or first) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=30, help="entities to list for a hand check")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--conversations", default="0-9", help="e.g. 0-4, 5-9 or 3")
    args = parser.parse_args()
    wanted = _conversations(args.conversations)
    every = [
        t
        for t in ingest.read(locomo_path(), "locomo", on_warning=lambda w: None)
        if isinstance(t, Turn)
    ]
    # Conversations are numbered 0-9 in file order ("conv-26" is 0).
    order = list(dict.fromkeys(_conversation(t) for t in every))
    turns = [t for t in every if order.index(_conversation(t)) in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        settings = load(Path(tmp), env={}, overrides={"embedding.model": "hash"})
        clock = FixedClock(turns[0].at or START)
        Engine.init(settings, clock=clock)
        with Engine.open(settings, clock=clock) as engine:
            for turn in turns:
                clock.set(turn.at or START)
                engine.capture([turn])
            entities = engine.graph_entities()
            relations = engine.graph_relations()
            memories = engine.stats().memories
    types = Counter(e.type for e in entities)
    kinds = Counter(r.relation for r in relations)
    print(f"LoCoMo conversations {args.conversations}: {len(turns)} turns, {memories} memories")
    print(f"entities {len(entities)}: " + ", ".join(f"{t} {n}" for t, n in types.most_common()))
    print(f"relations {len(relations)}: " + ", ".join(f"{r} {n}" for r, n in kinds.most_common()))
    sample = random.Random(args.seed).sample(entities, min(args.sample, len(entities)))
    print(f"sample of {len(sample)} (seed {args.seed}) to check by hand:")
    for e in sorted(sample, key=lambda e: (e.type, e.key)):
        print(f"  {e.type:<13} {e.name:<28} memories {e.memories}")
    write_results(
        "graph_entities",
        {
            "conversations": args.conversations,
            "turns": len(turns),
            "entities": len(entities),
            "by_type": dict(types),
            "relations": dict(kinds),
            "sample": [[e.type, e.name] for e in sample],
        },
    )


def _conversation(turn: Turn) -> str:
    """The LoCoMo conversation a turn is from: its session id's "conv-26" part."""
    return (turn.session_id or "").split(":")[0]


if __name__ == "__main__":
    main()
