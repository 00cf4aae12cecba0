"""`run_locomo`: each conversation in a fresh temporary workspace, its turns captured
session by session at each session's time, then every question asked at the end; which
evidence turns memoracle's hits (and the baseline's) came from.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memoracle import ingest
from memoracle.clock import FixedClock
from memoracle.config import EmbeddingSettings, Settings, load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.jobs.bench.baseline import TurnBaseline, within_budget
from memoracle.jobs.bench.results import (
    BASELINE,
    CATEGORY_NAMES,
    OVERALL_CATEGORIES,
    ConversationResult,
    EvidenceRepair,
    Found,
    GroupResult,
    Latency,
    LocomoReport,
    QuestionResult,
    SystemScores,
    repair_evidence,
    session_of,
)
from memoracle.recall.budget import TokenCounter, default_counter
from memoracle.types import Hit, IngestWarning, Turn


@dataclass
class Sample:
    """One LoCoMo conversation: its questions and its turns (also read by bench/peers.py,
    so every system there is scored on the same turns and evidence)."""

    sample_id: str
    qa: list[Mapping[str, Any]]
    turns: list[Turn] = field(default_factory=list)


@dataclass
class _Tally:
    """What the run accumulates across conversations."""

    questions: list[QuestionResult] = field(default_factory=list)
    conversations: list[ConversationResult] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    recall_ms: list[float] = field(default_factory=list)
    modes: dict[str, int] = field(default_factory=dict)
    degraded: int = 0
    repaired: int = 0
    dropped: list[str] = field(default_factory=list)


def run_locomo(
    path: Path,
    *,
    ks: Sequence[int] = (5, 10, 20),
    budget: int = 2000,
    embedder: str | None = None,
    limit: int | None = None,
    conversations: str | None = None,
    settings: Mapping[str, Any] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> LocomoReport:
    """Run the benchmark on a LoCoMo JSON file (a list of samples, or one sample).

    `ks` are the cut-offs of recall@k (one search at the largest k; the top k are its
    first k hits); `budget` is the recall block's token budget; `embedder` sets
    `embedding.model` ("hash" is fast and model-free; None keeps the default model);
    `limit` takes the first N conversations; `conversations` picks them by position
    ("0-4", "5-9", "0,3,7-9"), so one set can be tuned on and another reported;
    `settings` are overrides of the stores' settings (the CLI's `--set`, e.g.
    `search.mmr_lambda`), so one switch can be measured without editing the defaults.
    `on_progress(done, total)` counts questions.
    """
    ks = tuple(sorted(set(ks)))
    if not ks or ks[0] < 1:
        raise InvalidInput(f"k values must be positive integers, not {list(ks)}.")
    if budget < 1:
        raise InvalidInput(f"The recall budget must be a positive number of tokens, not {budget}.")
    if limit is not None and limit < 1:
        raise InvalidInput(f"limit must be at least 1, not {limit}.")
    started = time.perf_counter()
    warnings: list[IngestWarning] = []
    samples = read_samples(Path(path), warnings.append)
    if conversations is not None:
        chosen = parse_positions(conversations, len(samples))
        samples = [samples[i] for i in chosen]
    samples = samples[:limit]
    total = sum(len(s.qa) for s in samples)
    overrides: dict[str, Any] = {"workspace.timezone": "UTC", **(settings or {})}
    if embedder is not None:
        overrides["embedding.model"] = embedder
    counter = default_counter()
    tally = _Tally()

    def progress() -> None:
        if on_progress is not None:
            on_progress(len(tally.questions), total)

    for sample in samples:
        with tempfile.TemporaryDirectory(prefix="memoracle-locomo-") as home:
            store_settings = load(Path(home), env={}, overrides=overrides)
            _run_sample(sample, store_settings, ks, budget, counter, tally, progress)
    results = tally.questions
    return LocomoReport(
        path=str(path),
        ks=ks,
        budget=budget,
        embedder=str(overrides.get("embedding.model", EmbeddingSettings().model)),
        tokenizer=counter.name,
        conversations=tuple(tally.conversations),
        categories=tuple(
            _group(str(c), CATEGORY_NAMES.get(c, f"category {c}"), results, {c}, ks)
            for c in sorted({r.category for r in results})
        ),
        overall=_group("1-4", "overall", results, set(OVERALL_CATEGORIES), ks),
        everything=_group("1-5", "all", results, set(CATEGORY_NAMES), ks),
        evidence=EvidenceRepair(
            repaired=tally.repaired,
            dropped=tuple(tally.dropped),
            unscored_questions=sum(1 for r in results if not r.evidence),
        ),
        search_latency=_latency(tally.search_ms),
        recall_latency=_latency(tally.recall_ms),
        search_modes=tally.modes,
        degraded_recalls=tally.degraded,
        ingest_warnings=len(warnings),
        seconds=round(time.perf_counter() - started, 3),
        questions=tuple(results),
    )


def _run_sample(
    sample: Sample,
    settings: Settings,
    ks: tuple[int, ...],
    budget: int,
    counter: TokenCounter,
    tally: _Tally,
    progress: Callable[[], None],
) -> None:
    """One conversation in its own workspace: replay its sessions, then ask its questions
    at the time of the last session."""
    known = {t.turn_id for t in sample.turns if t.turn_id}
    sessions = _by_session(sample.turns)
    clock = FixedClock(sessions[0][0] if sessions else datetime(2000, 1, 1))
    Engine.init(settings, clock=clock)
    baseline = TurnBaseline(sample.turns)
    with Engine.open(settings, clock=clock) as engine, contextlib.closing(baseline):
        t0 = time.perf_counter()
        episodes = memories = 0
        for at, turns in sessions:
            clock.set(at)  # each session is captured "then", so memories age as in life
            captured = engine.capture(turns)
            episodes += len(captured.episodes)
            memories += len(captured.added)
        t1 = time.perf_counter()
        if engine.searcher.embedder is not None:
            engine.reindex()  # embed now, so the first question does not pay for it
        t2 = time.perf_counter()
        if sessions:
            clock.set(sessions[-1][0])
        for index, qa in enumerate(sample.qa):
            ids, fixed, lost = repair_evidence(_as_list(qa.get("evidence")), known)
            tally.repaired += fixed
            tally.dropped += [f"{sample.sample_id}:{t}" for t in lost]
            question = str(qa.get("question", "")).strip()
            sessions_wanted = tuple(
                dict.fromkeys(s for s in (session_of(sample.sample_id, i) for i in ids) if s)
            )
            hits: Sequence[Hit] = ()
            in_block: list[Hit] = []
            block_tokens = 0
            ranked: list[tuple[str, str, str]] = []
            if question:
                s0 = time.perf_counter()
                outcome = engine.search(question, k=ks[-1])
                s1 = time.perf_counter()
                block = engine.recall(question, budget=budget)
                s2 = time.perf_counter()
                tally.search_ms.append((s1 - s0) * 1000)
                tally.recall_ms.append((s2 - s1) * 1000)
                tally.modes[outcome.mode] = tally.modes.get(outcome.mode, 0) + 1
                tally.degraded += block.degraded is not None
                hits = outcome.hits
                in_block = [line.hit for line in block.lines if line.hit is not None]
                block_tokens = block.tokens
                ranked = baseline.search(question)
            tally.questions.append(
                QuestionResult(
                    sample_id=sample.sample_id,
                    index=index,
                    category=_category(qa),
                    question=question,
                    evidence=ids,
                    evidence_sessions=sessions_wanted,
                    memoracle=_found_by_memoracle(
                        hits, in_block, block_tokens, ids, sessions_wanted, ks
                    ),
                    baseline=_found_by_baseline(ranked, ids, sessions_wanted, ks, budget, counter),
                )
            )
            progress()
        t3 = time.perf_counter()
    tally.conversations.append(
        ConversationResult(
            sample_id=sample.sample_id,
            sessions=len(sessions),
            turns=len(sample.turns),
            episodes=episodes,
            memories=memories,
            questions=len(sample.qa),
            capture_seconds=round(t1 - t0, 3),
            index_seconds=round(t2 - t1, 3),
            query_seconds=round(t3 - t2, 3),
        )
    )


def read_samples(path: Path, on_warning: Callable[[IngestWarning], None]) -> list[Sample]:
    """The qa of each sample (read here: the ingest reader never reads it) and its turns
    (read by the reader, exactly as `memoracle ingest` would store them)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"Cannot read LoCoMo file '{path}': {exc}") from None
    raw = [document] if isinstance(document, Mapping) else document
    if not isinstance(raw, list):
        raise InvalidInput(f"'{path}' is not LoCoMo: expected a list of samples.")
    samples: dict[str, Sample] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("conversation"), Mapping):
            continue
        sample_id = str(item["sample_id"]) if item.get("sample_id") else f"sample-{i}"
        qa = item.get("qa")
        samples[sample_id] = Sample(
            sample_id, [q for q in qa if isinstance(q, Mapping)] if isinstance(qa, list) else []
        )
    del document, raw
    for turn in ingest.read(path, "locomo", on_warning=on_warning):
        if isinstance(turn, Turn) and turn.session_id:
            sample_id = turn.session_id.rsplit(":session_", 1)[0]
            if sample_id in samples:
                samples[sample_id].turns.append(turn)
    return list(samples.values())


def parse_positions(spec: str, count: int) -> list[int]:
    """Positions named by `spec` ("0-4", "5-9", "0,3,7-9"), in order, without repeats;
    each must be below `count` (the file's number of conversations)."""
    chosen: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        first, dash, last = part.partition("-")
        try:
            low = int(first)
            high = int(last) if dash else low
        except ValueError:
            raise InvalidInput(
                f"conversations: expected positions like 0-4 or 0,3,7-9, got {spec!r}."
            ) from None
        if low < 0 or high < low or high >= count:
            raise InvalidInput(
                f"conversations: {part!r} is outside 0-{count - 1} (the file has {count})."
            )
        chosen += [i for i in range(low, high + 1) if i not in chosen]
    return chosen


def _by_session(turns: Sequence[Turn]) -> list[tuple[datetime, list[Turn]]]:
    """Turns grouped by session, in order, each group with the time to capture it at
    (the session's time; a session without one keeps the time before it)."""
    groups: list[tuple[datetime, list[Turn]]] = []
    last: str | None = None
    previous = datetime(2000, 1, 1)
    for turn in turns:
        if not groups or turn.session_id != last:
            previous = turn.at or previous
            groups.append((previous, []))
            last = turn.session_id
        groups[-1][1].append(turn)
    return groups


def _as_list(value: object) -> list[object]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _category(qa: Mapping[str, Any]) -> int:
    try:
        return int(qa.get("category", 0))
    except (TypeError, ValueError):
        return 0


def _found_by_memoracle(
    hits: Sequence[Hit],
    in_block: Sequence[Hit],
    block_tokens: int,
    evidence: tuple[str, ...],
    sessions: tuple[str, ...],
    ks: Sequence[int],
) -> Found:
    wanted, wanted_sessions = set(evidence), set(sessions)
    turns: dict[int, int] = {}
    found_sessions: dict[int, int] = {}
    for k in ks:
        top = hits[:k]
        turns[k] = len(wanted & {t for h in top for t in h.turn_ids})
        found_sessions[k] = len(wanted_sessions & {s for h in top for s in h.session_ids})
    covered = {t for h in in_block for t in h.turn_ids}
    return Found(turns, found_sessions, len(wanted & covered), block_tokens)


def _found_by_baseline(
    ranked: Sequence[tuple[str, str, str]],
    evidence: tuple[str, ...],
    sessions: tuple[str, ...],
    ks: Sequence[int],
    budget: int,
    counter: TokenCounter,
) -> Found:
    wanted, wanted_sessions = set(evidence), set(sessions)
    turns = {k: len(wanted & {t for t, _, _ in ranked[:k]}) for k in ks}
    found_sessions = {k: len(wanted_sessions & {s for _, s, _ in ranked[:k]}) for k in ks}
    # each line after the first also pays its newline, as in the recall block
    costs = [counter.count(line) + (i > 0) for i, (_, _, line) in enumerate(ranked)]
    n = within_budget(costs, budget)
    covered = {t for t, _, _ in ranked[:n]}
    return Found(turns, found_sessions, len(wanted & covered), sum(costs[:n]))


def _scores(results: Sequence[QuestionResult], system: str, ks: Sequence[int]) -> SystemScores:
    found = [(r, r.memoracle if system == "memoracle" else r.baseline) for r in results]

    def mean(values: Iterable[float]) -> float:
        listed = list(values)
        return round(statistics.fmean(listed), 4) if listed else 0.0

    return SystemScores(
        turn_recall={k: mean(f.turns[k] / len(r.evidence) for r, f in found) for k in ks},
        all_found={k: mean(f.turns[k] == len(r.evidence) for r, f in found) for k in ks},
        any_found={k: mean(f.turns[k] > 0 for r, f in found) for k in ks},
        session_recall={
            k: mean(f.sessions[k] / len(r.evidence_sessions) for r, f in found) for k in ks
        },
        budget_recall=mean(f.budget / len(r.evidence) for r, f in found),
        budget_tokens=round(mean(f.budget_tokens for _, f in found), 1),
    )


def _group(
    label: str,
    name: str,
    results: Sequence[QuestionResult],
    categories: set[int],
    ks: Sequence[int],
) -> GroupResult:
    members = [r for r in results if r.category in categories]
    scored = [r for r in members if r.evidence]
    return GroupResult(
        label=label,
        name=name,
        questions=len(members),
        scored=len(scored),
        memoracle=_scores(scored, "memoracle", ks),
        baseline=_scores(scored, BASELINE, ks),
    )


def _latency(ms: Sequence[float]) -> Latency:
    if not ms:
        return Latency(0, 0.0, 0.0)
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Latency(len(ms), round(statistics.median(ordered), 2), round(p95, 2))
