"""One night of the optional model path over a store of `--turns` turns (1,000 by
default), with the model configured as a user configures it (MEMORACLE_LLM_PROVIDER,
_ENDPOINT, _MODEL, … or --set llm.KEY=VALUE; docs/llm.md).

The turns are LoCoMo's (read from ../shared/bench at run time, never copied), in order,
conversation after conversation, each captured as its speaker's turn into a fresh store
(the hash embedder unless --embedder says), spread over the day before the night so that
the extract step reads them. Then `nightly` runs once, every rule step and the model
steps, and this prints: the model step's questions, tokens spent against the night's
budget, what it applied, held and quarantined, what it left queued, its time and the
night's, and whether every change the model applied carries the model id, the prompt
version and sources that exist (from the audit log).

    MEMORACLE_LLM_PROVIDER=openai MEMORACLE_LLM_ENDPOINT=http://127.0.0.1:8080/v1 \\
    MEMORACLE_LLM_MODEL=local python bench/llm_night.py [--turns 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import locomo_path  # noqa: E402

from memoracle.clock import FixedClock  # noqa: E402
from memoracle.config import load  # noqa: E402
from memoracle.engine import Engine  # noqa: E402
from memoracle.jobs import nightly  # noqa: E402
from memoracle.types import Turn  # noqa: E402

NIGHT = datetime(2026, 12, 7, 3, 0, tzinfo=UTC)
DAY = timedelta(hours=20)  # the turns are spread over the 20 hours before the night


def locomo_turns(limit: int) -> list[tuple[str, str, str]]:
    """(session id, speaker, text) of LoCoMo's turns, in order, at most `limit`."""
    found: list[tuple[str, str, str]] = []
    for n, sample in enumerate(json.loads(locomo_path().read_text())):
        talk = sample["conversation"]
        sessions = sorted(
            (k for k in talk if k.startswith("session_") and not k.endswith("date_time")),
            key=lambda k: int(k.split("_")[1]),
        )
        for key in sessions:
            for turn in talk[key]:
                found.append((f"c{n}-{key}", turn["speaker"], turn["text"]))
                if len(found) == limit:
                    return found
    return found


def build(home: Path, turns: list[tuple[str, str, str]], overrides: dict[str, Any]) -> Engine:
    clock = FixedClock(NIGHT - DAY)
    settings = load(home, env=dict(os.environ), overrides=overrides)
    Engine.init(settings, clock=clock)
    engine = Engine.open(settings, clock=clock)
    step = DAY / (len(turns) + 1)
    for n, (session, speaker, text) in enumerate(turns):
        clock.advance(seconds=step.total_seconds())
        engine.capture([Turn("user", text, clock.now(), session, str(n), speaker=speaker)])
    clock.advance(seconds=(NIGHT - clock.now()).total_seconds())
    return engine


def tags_checked(engine: Engine) -> dict[str, int]:
    """The model's applied changes (audit `model-apply`): how many carry a model id, a
    prompt version and cited sources that all exist."""
    applied = [e for e in engine._store.audit.entries() if e.action == "model-apply"]
    good = 0
    for entry in applied:
        tag = entry.detail
        cites = list(tag.get("cites") or [])
        turns = [int(c[2:]) for c in cites if c.startswith("e_")]
        memories = [c for c in cites if c.startswith("m_")]
        exist = len(engine.turns_by_id(turns)) == len(turns) and all(
            engine.stored_memory(int(m[2:])) is not None for m in memories
        )
        good += int(bool(tag.get("model") and tag.get("prompt") and cites and exist))
    return {"applied_changes": len(applied), "tagged_and_cited": good}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    overrides: dict[str, Any] = {"embedding.model": args.embedder}
    overrides.update(dict(item.split("=", 1) for item in args.set))
    turns = locomo_turns(args.turns)
    with tempfile.TemporaryDirectory() as tmp:
        home = args.keep or Path(tmp) / "home"
        started = time.perf_counter()
        engine = build(home, turns, overrides)
        if not engine.settings.llm.provider:
            raise SystemExit("No model is configured: set MEMORACLE_LLM_PROVIDER (docs/llm.md).")
        built = time.perf_counter() - started
        with engine:
            rules = engine.stats().memories
            started = time.perf_counter()
            report = nightly.run_nightly(engine)
            took = time.perf_counter() - started
            model = report.model
            assert model is not None
            out = {
                "turns": len(turns),
                "memories_by_rules": rules,
                "build_s": round(built, 1),
                "night_s": round(took, 1),
                "model_step_s": round(report.steps["model"].get("milliseconds", 0) / 1000, 1),
                "model": model.model_id,
                "asked": model.asked,
                "tokens": model.tokens,
                "budget": model.budget,
                "queued": model.queued,
                "error": model.error,
                **{k: model.counts.get(k, 0) for k in ("applied", "held", "quarantined")},
                "other_counts": {
                    k: v
                    for k, v in model.counts.items()
                    if k not in ("applied", "held", "quarantined")
                },
                **tags_checked(engine),
            }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for key, value in out.items():
            print(f"{key:18} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
