"""`run_night`: the model steps of one night, in order (`STEPS`, those `llm.steps`
names), after the work the last night queued. Each question is costed before it is
sent (prompt tokens plus its reply cap) against `llm.night_tokens`; what does not fit,
and everything once the model is unavailable (`ModelUnavailable`: after the provider's
bounded retries), waits in HOME/llm/pending.jsonl for the next night. An answer that
is not usable (`ModelOutputInvalid`) or an item that fails `vet` is quarantined. A
dry run builds every question and sends none: the prompts and their estimated tokens.
With no model configured it does nothing and imports no model client."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from types import ModuleType
from typing import Any

from memoracle.engine import Engine
from memoracle.engine.thinking import ACTOR
from memoracle.errors import EngineError
from memoracle.jobs.thinking import arbitrate, consolidate, extract, files, reflect
from memoracle.jobs.thinking.files import Work
from memoracle.jobs.thinking.work import Night, Question
from memoracle.llm import Ask, Model, ModelOutputInvalid, ModelUnavailable, RequestRecord
from memoracle.llm.outbound import outbound
from memoracle.llm.reply import schema_problem
from memoracle.recall.budget import default_counter

STEPS: tuple[str, ...] = ("extract", "arbitrate", "consolidate", "reflect")
_MODULES: dict[str, ModuleType] = {
    "extract": extract,
    "arbitrate": arbitrate,
    "consolidate": consolidate,
    "reflect": reflect,
}
OFF = "no model configured (llm.provider is empty)"


@dataclass(frozen=True)
class Preview:
    """A question a dry run would send: its step, prompt version, messages and cost."""

    step: str
    key: str
    prompt_version: str
    system: str
    user: str
    tokens: int  # estimated: the prompt's tokens plus the reply's cap


@dataclass
class ThinkReport:
    """What the model steps did (or, dry, would do)."""

    dry_run: bool
    skipped: str = ""  # why nothing was asked (no model, the model could not be opened)
    model_id: str = ""
    budget: int = 0
    tokens: int = 0  # spent (a dry run: estimated)
    asked: int = 0
    from_queue: int = 0  # questions the last night had queued, asked first
    queued: int = 0  # left waiting for the next night
    error: str = ""  # the model's error that stopped this night's asking
    counts: dict[str, int] = field(default_factory=dict)  # applied, held, quarantined, …
    previews: list[Preview] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def step_counts(self) -> dict[str, int]:
        """The nightly step's counts (the runs table and `--json`)."""
        return {
            "skipped": int(bool(self.skipped)),
            "asked": self.asked,
            "tokens": self.tokens,
            "from_queue": self.from_queue,
            "queued": self.queued,
            **{k: self.counts.get(k, 0) for k in ("applied", "held", "quarantined")},
        }


def run_night(engine: Engine, *, dry_run: bool = False, model: Model | None = None) -> ThinkReport:
    """The model steps over `engine` (see the module docstring). `model` replaces the
    configured one (tests, `bench … --llm`). Never raises for the model's failures."""
    settings = engine.settings.llm
    report = ThinkReport(dry_run=dry_run, budget=settings.night_tokens)
    if model is None and not settings.provider:
        report.skipped = OFF
        return report
    home = engine.settings.home
    state = files.read_state(home)
    if model is None and not dry_run:
        try:
            model = _open(engine)
        except EngineError as exc:  # a setting it refuses (local_only, a missing key)
            report.skipped = report.error = f"the model could not be opened: {exc}"
            _failed(home, state, report.error, engine, dry_run)
            return report
        try:  # the model opened here is closed here (its HTTP connections)
            return _think(engine, report, model, state)
        finally:
            if model is not None:
                model.close()
    return _think(engine, report, model, state)


def _think(
    engine: Engine, report: ThinkReport, model: Model | None, state: files.State
) -> ThinkReport:
    """The night's questions planned, asked (`model`; None: previewed) and settled."""
    settings, home, dry_run = engine.settings.llm, engine.settings.home, report.dry_run
    report.model_id = model.model_id if model is not None else settings.model
    queued = files.read_pending(home)
    now = engine.clock.now()
    enabled = [s for s in STEPS if s in settings.steps]
    fresh = [w for step in enabled for w in _MODULES[step].plan(engine, state, now)]
    known = {w.key for w in queued}
    works = [w for w in queued if w.step in enabled] + [w for w in fresh if w.key not in known]
    waiting = [w for w in queued if w.step not in enabled]  # kept for when it is on again
    night = Night(engine, settings.min_confidence, dry_run=dry_run)
    left = _ask_all(
        night,
        report,
        works,
        model,
        from_queue=len(works) - len(fresh) + len([w for w in fresh if w.key in known]),
    )
    report.counts, report.refused = dict(night.counts), night.refused
    report.queued = len(left) + len(waiting)
    if not dry_run:
        files.write_pending(home, waiting + left)
        if report.error:
            state.last_error, state.last_error_at = report.error, now.isoformat()
        elif report.asked:  # the model answered: health stops warning
            state.last_error = None
        files.write_state(home, state)
    return report


def ask(engine: Engine, model: Model, works: list[Work]) -> ThinkReport:
    """`works` asked of `model` now, in order, vetted, gated and applied as a night
    would, outside any night: no queue, no state, no budget (`bench … --llm`)."""
    report = ThinkReport(dry_run=False, model_id=model.model_id, budget=1 << 62)
    night = Night(engine, engine.settings.llm.min_confidence)
    left = _ask_all(night, report, works, model, from_queue=0)
    report.counts, report.refused, report.queued = dict(night.counts), night.refused, len(left)
    return report


def _ask_all(
    night: Night, report: ThinkReport, works: list[Work], model: Model | None, *, from_queue: int
) -> list[Work]:
    """Ask each work's question in order; returns the work left for the next night."""
    counter = default_counter()
    at = night.engine.clock.now().isoformat()
    for n, work in enumerate(works):
        q = _MODULES[work.step].question(night.engine, work)
        if q is None:
            continue
        cost = _estimate(counter, q.ask)
        if report.tokens + cost > report.budget:
            why = f"the night's token budget ({report.budget}) was spent"
            return [_waiting(w, at, why) for w in works[n:]]
        if night.dry_run or model is None:
            system, user = (
                outbound(t, night.engine.settings.llm.scrub) for t in (q.ask.system, q.ask.user)
            )
            report.previews.append(  # as it would leave: PII scrubbed, secrets redacted
                Preview(work.step, work.key, q.ask.prompt_version, system, user, cost)
            )
            report.tokens += cost
            continue
        try:
            answer = model.ask(q.ask)
        except ModelUnavailable as exc:
            report.error = f"{type(exc).__name__}: {exc}"
            return [_waiting(w, at, report.error) for w in works[n:]]
        except ModelOutputInvalid as exc:
            report.asked += 1
            report.tokens += cost
            night.refuse(q, f"invalid output: {exc.reason}", model_id=model.model_id, said=exc.raw)
            continue
        report.asked += 1
        report.from_queue += int(n < from_queue)
        report.tokens += answer.tokens_in + answer.tokens_out
        _settle(night, q, answer, model.model_id)
    return []


def _settle(night: Night, q: Question, answer: Any, model_id: str) -> None:
    """The answer's items vetted and applied; an answer of the wrong shape (the schema
    should have refused it) is quarantined whole."""
    problem = schema_problem(answer.data, q.ask.schema)
    if problem:  # the provider checks it too: a second look costs nothing
        night.refuse(q, f"invalid output: schema: {problem}", model_id=model_id, said=answer.data)
        return
    try:
        _MODULES[q.work.step].settle(night, q, answer)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        night.refuse(
            q, f"invalid output: {type(exc).__name__}: {exc}", model_id=model_id, said=answer.data
        )


def _estimate(counter: Any, ask: Ask) -> int:
    prompt = ask.system + "\n" + ask.user + "\n" + json.dumps(ask.schema)
    return int(counter.count(prompt)) + ask.max_tokens


def _waiting(work: Work, at: str, reason: str) -> Work:
    return replace(work, queued_at=work.queued_at or at, reason=reason)


def _open(engine: Engine) -> Model | None:
    """The configured model, each request it sends recorded in the audit log."""
    from memoracle.llm import open_model  # the provider layer loads only when a model is set

    def record(request: RequestRecord) -> None:
        engine.note("model-request", actor=ACTOR, at=engine.clock.now(), detail=asdict(request))

    return open_model(engine.settings, on_request=record)


def _failed(home: Any, state: files.State, error: str, engine: Engine, dry_run: bool) -> None:
    if not dry_run:
        state.last_error, state.last_error_at = error, engine.clock.now().isoformat()
        files.write_state(home, state)
