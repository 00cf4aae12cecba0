"""The nightly benchmark's big store: a lived store's cold tier carried back in time
(bench/cold_history.py) imports whole, and the copies are what they say they are."""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from pathlib import Path

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs import nightly, transfer
from memoracle.text import content_hash

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import cold_history  # noqa: E402


def test_carried_back_store_imports_with_every_reference_kept(
    engine: Engine, clock: FixedClock, tmp_path: Path
) -> None:
    engine.remember("I live in Paris.")
    engine.remember("Never deploy on Fridays.", kind="guardrail")
    clock.advance(days=1)
    engine.remember("I live in Rome.")  # supersedes Paris
    clock.advance(days=1)
    engine.remember("I live in Lyon.")  # supersedes Rome
    engine.remember("I went to the pottery fair.", kind="event")
    clock.advance(days=200)
    every = {m.text: m for m in engine.list_memories(status=None, limit=10)}
    paris, rome, lyon = (every[f"I live in {c}."] for c in ("Paris", "Rome", "Lyon"))
    cold = {paris.id, rome.id, every["I went to the pottery fair."].id}
    plan = [c for c in nightly.plan_archive(engine) if c.memory.id in cold]
    archived = nightly.archive(engine, plan, actor="nightly")
    assert archived == 3 and lyon.status == "active"
    assert (paris.superseded_by, rome.superseded_by) == (rome.id, lyon.id)
    engine.reindex()
    assert engine.searcher.embedder is not None
    model = engine.searcher.embedder.model_id
    lived = tmp_path / "lived.jsonl"
    transfer.export(engine, lived, vectors=True)
    total = len(engine.list_memories(status=None, limit=100))

    out = tmp_path / "extended.jsonl"
    span = timedelta(days=30)
    copies = cold_history.write_extended(lived, out, memories=total + 2 * archived, span=span)

    assert copies == 2
    settings = load(tmp_path / "big", env={}, overrides={"embedding.model": "hash"})
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as big:
        report = transfer.import_(big, out)  # every count and reference checked
        assert report.counts["memories"] == total + 2 * archived
        every = big.list_memories(status=None, limit=100)
        for k in (1, 2):
            copies = {m.text: m for m in every if m.id > total * k and m.id <= total * (k + 1)}
            assert len(copies) == archived
            paris_k, rome_k = copies[f"I live in Paris. [{k}]"], copies[f"I live in Rome. [{k}]"]
            assert {m.status for m in copies.values()} == {"archived"}
            assert paris_k.content_hash == content_hash(paris_k.text)
            assert list(big._store.index.vectors_for(model, [paris_k.content_hash]))
            assert paris_k.observed_at == paris.observed_at - span * k
            assert paris_k.superseded_by == rome_k.id  # within the copy
            assert rome_k.superseded_by == lyon.id  # a live memory is not copied
            assert big.archived(paris_k.id).record["superseded_by"] == rome_k.id
        header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
        assert header["counts"]["archive"] == 3 * archived
