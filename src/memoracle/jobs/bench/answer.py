"""`memoracle bench locomo PATH --answer`: each LoCoMo question answered by the model
from memoracle's recall block alone, scored by token F1 against the gold answer per
category, as the LoCoMo paper scores it:

- both texts normalised: lower-cased, commas, punctuation and the words a, an, the, and
  removed, spaces collapsed; each token stemmed (Snowball English, Porter's successor:
  the paper uses Porter's; a few words stem differently);
- F1 of the two bags of tokens (0 when they share none);
- multi-hop (category 1): the answer and the prediction split on commas, each gold part
  scored against its best predicted part, averaged; open-domain (3): the gold answer's
  part before a ';'; adversarial (5), which has no gold answer: 1 when the prediction
  says "no information available" or "not mentioned", else 0.

Each conversation is captured in a fresh temporary store, as `bench locomo` captures it;
the model sees the question and the recall block, nothing else. Tokens spent are the
provider's counts. A question the model could not answer (unavailable, invalid output)
scores 0 and is counted.
"""

from __future__ import annotations

import re
import string
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from itertools import groupby
from pathlib import Path
from typing import Any

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs.bench.results import CATEGORY_NAMES
from memoracle.jobs.bench.run import Sample, parse_positions, read_samples
from memoracle.llm import Ask, Model, ModelOutputInvalid, ModelUnavailable
from memoracle.text import stem
from memoracle.types import IngestWarning

PROMPT_VERSION = "locomo-answer/1"
SYSTEM = (
    "You answer a question about past conversations using only the memories given. "
    "Answer in as few words as possible (a name, a date, a short phrase). If the "
    "memories do not say, answer exactly: No information available. Answer with one JSON "
    'object: {"answer": "..."}.'
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["answer"],
    "properties": {"answer": {"type": "string", "maxLength": 200}},
}
MAX_TOKENS = 60
NO_ANSWER = ("no information available", "not mentioned")


@dataclass
class CategoryScore:
    questions: int = 0
    f1_sum: float = 0.0
    failed: int = 0  # no usable answer

    def to_json(self) -> dict[str, Any]:
        f1 = round(self.f1_sum / self.questions, 3) if self.questions else None
        return {"questions": self.questions, "f1": f1, "failed": self.failed}


@dataclass
class AnswerReport:
    path: str
    model_id: str
    budget: int
    embedder: str
    categories: dict[int, CategoryScore] = field(default_factory=dict)
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0

    def overall(self, categories: tuple[int, ...] = (1, 2, 3, 4)) -> CategoryScore:
        total = CategoryScore()
        for c in categories:
            s = self.categories.get(c, CategoryScore())
            total.questions += s.questions
            total.f1_sum += s.f1_sum
            total.failed += s.failed
        return total

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "model": self.model_id,
            "prompt_version": PROMPT_VERSION,
            "budget": self.budget,
            "embedder": self.embedder,
            "categories": {
                CATEGORY_NAMES.get(c, f"category {c}"): s.to_json()
                for c, s in sorted(self.categories.items())
            },
            "overall": self.overall().to_json(),
            "all": self.overall(tuple(sorted(self.categories))).to_json(),
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "seconds": self.seconds,
        }

    def format(self) -> str:
        rows = [
            f"LoCoMo answers from the recall block ({self.budget} tokens): {self.path}",
            f"model {self.model_id} ({PROMPT_VERSION}), embedder {self.embedder}",
            f"{'category':<14} {'questions':>9} {'F1':>6} {'failed':>7}",
        ]
        named = [(CATEGORY_NAMES.get(c, str(c)), s) for c, s in sorted(self.categories.items())]
        named += [("overall 1-4", self.overall())]
        for name, s in named:
            j = s.to_json()
            f1 = "—" if j["f1"] is None else f"{j['f1']:.3f}"
            rows.append(f"{name:<14} {s.questions:>9} {f1:>6} {s.failed:>7}")
        rows.append(f"tokens: {self.tokens_in:,} in, {self.tokens_out:,} out; {self.seconds} s")
        return "\n".join(rows)


def normalise(text: str) -> str:
    """LoCoMo's normalisation: lower case, no commas or punctuation, no articles."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the|and)\b", " ", text)
    return " ".join(text.split())


def token_f1(prediction: str, gold: str) -> float:
    """F1 of the stemmed, normalised token bags."""
    predicted = [stem(w) for w in normalise(prediction).split()]
    wanted = [stem(w) for w in normalise(gold).split()]
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def score(category: int, prediction: str, gold: str) -> float:
    """One question's score, by its category (the module docstring says how)."""
    if category == 5:
        return float(any(p in prediction.lower() for p in NO_ANSWER))
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        predicted = [p.strip() for p in prediction.split(",")]
        parts = [g.strip() for g in gold.split(",")]
        return sum(max(token_f1(p, g) for p in predicted) for g in parts) / len(parts)
    return token_f1(prediction, gold)


def run_locomo_answer(
    path: Path,
    model: Model,
    *,
    budget: int = 2000,
    embedder: str | None = None,
    limit: int | None = None,
    conversations: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> AnswerReport:
    """Answer every question of the LoCoMo file at `path` with `model` from the recall
    block (`budget` tokens) and score it (the module docstring says how)."""
    started = time.perf_counter()
    warnings: list[IngestWarning] = []
    samples = read_samples(Path(path), warnings.append)
    if conversations is not None:
        samples = [samples[i] for i in parse_positions(conversations, len(samples))]
    samples = samples[:limit]
    overrides: dict[str, Any] = {"workspace.timezone": "UTC"}
    if embedder is not None:
        overrides["embedding.model"] = embedder
    report = AnswerReport(str(path), model.model_id, budget, embedder or "default")
    total = sum(len(s.qa) for s in samples)
    done = 0
    for sample in samples:
        with tempfile.TemporaryDirectory(prefix="memoracle-locomo-answer-") as home:
            settings = load(Path(home), env={}, overrides=overrides)
            for _ in _answer_sample(sample, settings, model, budget, report):
                done += 1
                if on_progress is not None:
                    on_progress(done, total)
    report.seconds = round(time.perf_counter() - started, 2)
    return report


def _answer_sample(
    sample: Sample, settings: Any, model: Model, budget: int, report: AnswerReport
) -> Any:
    first = next((t.at for t in sample.turns if t.at), datetime(2000, 1, 1))
    clock = FixedClock(first)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        last = first
        for _session, turns in groupby(sample.turns, key=lambda t: t.session_id):
            said = list(turns)  # a session at once, at its time, as `bench locomo` does
            last = said[0].at or last
            clock.set(last)
            engine.capture(said)
        for qa in sample.qa:
            category = _category(qa)
            gold = str(qa.get("answer", qa.get("adversarial_answer", "")))
            question = str(qa.get("question", "")).strip()
            block = engine.recall(question, budget=budget).text if question else ""
            predicted = _ask(model, question, block, report)
            s = report.categories.setdefault(category, CategoryScore())
            s.questions += 1
            s.failed += predicted is None
            s.f1_sum += 0.0 if predicted is None else score(category, predicted, gold)
            yield


def _ask(model: Model, question: str, block: str, report: AnswerReport) -> str | None:
    user = f"Memories:\n{block or '(none)'}\n\nQuestion: {question}"
    ask = Ask("locomo-answer", PROMPT_VERSION, SYSTEM, user, SCHEMA, MAX_TOKENS)
    try:
        answer = model.ask(ask)
    except (ModelUnavailable, ModelOutputInvalid):
        return None
    report.tokens_in += answer.tokens_in
    report.tokens_out += answer.tokens_out
    data = answer.data
    return str(data.get("answer", "")) if isinstance(data, Mapping) else None


def _category(qa: Mapping[str, Any]) -> int:
    try:
        return int(qa.get("category", 0))
    except (TypeError, ValueError):
        return 0
