"""What the model steps share: a `Question` (the ask and the ids it showed the model),
the `Night` it is asked in (the gate, the counts, the quarantine) and `vet`, the checks
every item of an answer passes before it may change anything: it cites something, only
ids it was shown that exist, and holds no instruction aimed at the agent (the write
audit's judgement, as for a fetched tool text). Texts are redacted as capture redacts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memoracle.capture.injection.learned import audit
from memoracle.capture.pipeline import prepare
from memoracle.engine import Engine
from memoracle.engine.thinking import ACTOR, Tag
from memoracle.jobs.thinking import files
from memoracle.jobs.thinking.files import Work
from memoracle.llm import Answer, Ask


@dataclass(frozen=True)
class Question:
    """One ask built from one piece of work, with the refs it showed the model."""

    work: Work
    ask: Ask
    shown: frozenset[str]  # e_… and m_… refs in the prompt: all an item may cite


@dataclass
class Night:
    """One run of the model steps: its gate and counts, and where refusals go."""

    engine: Engine
    gate: float
    dry_run: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def tag(self, q: Question, answer: Answer, item: dict[str, Any], cites: Iterable[str]) -> Tag:
        return Tag(
            model_id=answer.model_id,
            prompt_version=answer.prompt_version or q.ask.prompt_version,
            step=q.work.step,
            confidence=float(item.get("confidence", 0.0)),
            reason=str(item.get("reason", ""))[:300],
            cites=tuple(cites),
        )

    def applies(self, item: dict[str, Any]) -> bool:
        """At or above the confidence gate: applied; below: waits for a person."""
        return float(item.get("confidence", 0.0)) >= self.gate

    def refuse(
        self, q: Question, reason: str, *, model_id: str, said: object, prompt: str = ""
    ) -> None:
        """Quarantine one output (the whole answer or one item): HOME/llm/quarantine.jsonl
        and a `model-quarantine` audit entry; nothing of it reaches the store."""
        engine = self.engine
        now = engine.clock.now()
        record = {
            "at": now.isoformat(),
            "step": q.work.step,
            "key": q.work.key,
            "reason": reason,
            "model": model_id,
            "prompt": prompt or q.ask.prompt_version,
            "output": said,
        }
        self.refused.append(record)
        self.counts["quarantined"] += 1
        files.quarantine(engine.settings.home, record)
        detail = {k: v for k, v in record.items() if k not in ("output", "at")}
        engine.note("model-quarantine", actor=ACTOR, at=now, detail=detail)


def vet(
    engine: Engine, q: Question, cites: list[str], texts: Iterable[str], *, need_cite: bool = True
) -> str | None:
    """Why an item may not be used, or None: no citation, a citation of an id it was not
    shown or that does not exist, or a text the write audit judges an instruction."""
    if need_cite and not cites:
        return "cites no episode or memory"
    for ref in cites:
        if ref not in q.shown or not _exists(engine, ref):
            return f"unknown id {ref} (not one it was shown)"
    for text in texts:
        verdict = audit(text, role="tool", head=lambda: engine.injection_head)
        if verdict.level != "clean":
            return f"instruction aimed at the agent ({verdict.level}: {', '.join(verdict.reasons)})"
    return None


def clean(text: str) -> str:
    """The text as capture would store it: repaired, secrets redacted."""
    return prepare(text).text.strip()


def _exists(engine: Engine, ref: str) -> bool:
    number = int(ref[2:])
    if ref.startswith("e_"):
        return engine.stored_turn(number) is not None
    return engine.stored_memory(number) is not None


def refs(value: object) -> list[str]:
    return [str(r) for r in value] if isinstance(value, list) else []
