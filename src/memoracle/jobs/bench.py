"""The LoCoMo retrieval benchmark: does search (and the recall block) find the evidence?

Owns `run_locomo`: for each conversation of a LoCoMo file, a fresh temporary workspace,
the conversation's turns captured session by session with the clock at each session's
time, then every question asked with the clock at the end of the conversation. For each
question it records which evidence turns (`dia_id`s) memoracle's hits came from, at turn
and session level and inside the recall budget, next to a plain BM25 baseline over the
raw turns computed in the same run (stdlib sqlite FTS5, in memory, not memoracle's store
or ranking). Also owns repairing LoCoMo's malformed evidence ids, and rendering the
report as text (`format_report`) and JSON (`report_json`).

Leaves to others: reading turns (`ingest`, which never reads `qa`), capture, search
and recall (`engine`), argument parsing and printing (`cli`). Nothing here prints.

Category numbers follow the official LoCoMo code: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial. "Overall" is over 1-4; adversarial
questions (unanswerable, the evidence is the turn the trap refers to) get their own line.
Questions left without evidence after repair are counted but not scored. Questions are
asked in file order against one store per conversation, so the recall boost of the
memories one question returns carries over to the next, as it would in use.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memoracle import ingest
from memoracle.clock import FixedClock
from memoracle.config import EmbeddingSettings, Settings, load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput
from memoracle.recall.budget import TokenCounter, default_counter, format_line
from memoracle.types import Hit, IngestWarning, Turn

CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
OVERALL_CATEGORIES = (1, 2, 3, 4)
BASELINE = "bm25-turns"
# Malformed ids seen in LoCoMo-10: "D:11:26", "D30:05" (and lists in one string).
_LOOSE_ID = re.compile(r"^D:?(\d+):(\d+)$")
_SESSION_OF = re.compile(r"^D(\d+):\d+$")
_WORD = re.compile(r"\w+")


# -- report values ------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemScores:
    """One system's means over the scored questions of a group (0.0 when there are none).

    `turn_recall[k]`: mean fraction of a question's evidence ids among the turn ids of
    the top-k hits; `all_found[k]` / `any_found[k]`: share of questions with every / at
    least one evidence id there; `session_recall[k]`: the same fraction for the evidence's
    sessions; `budget_recall`: fraction of evidence ids covered inside the recall budget,
    and `budget_tokens` the mean tokens that used.
    """

    turn_recall: Mapping[int, float]
    all_found: Mapping[int, float]
    any_found: Mapping[int, float]
    session_recall: Mapping[int, float]
    budget_recall: float
    budget_tokens: float


@dataclass(frozen=True)
class GroupResult:
    """A category (1-5) or an aggregate ("overall" = 1-4, "all" = 1-5)."""

    label: str
    name: str
    questions: int
    scored: int
    memoracle: SystemScores
    baseline: SystemScores


@dataclass(frozen=True)
class Found:
    """What one system found for one question: counts of evidence ids (and of evidence
    sessions) present in its top k, and inside the budget."""

    turns: Mapping[int, int]
    sessions: Mapping[int, int]
    budget: int
    budget_tokens: int


@dataclass(frozen=True)
class QuestionResult:
    sample_id: str
    index: int
    category: int
    question: str
    evidence: tuple[str, ...]
    evidence_sessions: tuple[str, ...]
    memoracle: Found
    baseline: Found


@dataclass(frozen=True)
class ConversationResult:
    sample_id: str
    sessions: int
    turns: int
    episodes: int
    memories: int
    questions: int
    capture_seconds: float
    index_seconds: float
    query_seconds: float


@dataclass(frozen=True)
class EvidenceRepair:
    """How the gold evidence was cleaned: entries that were not a turn id as given but
    yielded one after repair, and tokens still unresolved and dropped (as
    ``sample_id:token``)."""

    repaired: int
    dropped: tuple[str, ...]
    unscored_questions: int


@dataclass(frozen=True)
class Latency:
    n: int
    median_ms: float
    p95_ms: float


@dataclass(frozen=True)
class LocomoReport:
    path: str
    ks: tuple[int, ...]
    budget: int
    embedder: str | None
    tokenizer: str
    conversations: tuple[ConversationResult, ...]
    categories: tuple[GroupResult, ...]
    overall: GroupResult
    everything: GroupResult
    evidence: EvidenceRepair
    search_latency: Latency
    recall_latency: Latency
    search_modes: Mapping[str, int]
    degraded_recalls: int
    ingest_warnings: int
    seconds: float
    questions: tuple[QuestionResult, ...] = field(repr=False)


# -- evidence ids ---------------------------------------------------------------------------


def repair_evidence(
    raw: Iterable[object], known: Collection[str]
) -> tuple[tuple[str, ...], int, tuple[str, ...]]:
    """Clean one question's evidence list against the conversation's turn ids.

    Each entry is split on ';' and whitespace; a token that is not a known id is
    repaired ("D:11:26" -> "D11:26", "D30:05" -> "D30:5") and dropped if still unknown.
    Returns (ids in order without repeats, entries repaired, tokens dropped).
    """
    ids: list[str] = []
    repaired = 0
    dropped: list[str] = []
    for entry in raw:
        text = str(entry).strip()
        if text in known:
            if text not in ids:
                ids.append(text)
            continue
        resolved = False
        for token in (t for t in re.split(r"[;\s]+", text) if t):
            m = _LOOSE_ID.match(token)
            fixed = f"D{int(m.group(1))}:{int(m.group(2))}" if m else token
            if fixed in known:
                resolved = True
                if fixed not in ids:
                    ids.append(fixed)
            else:
                dropped.append(token)
        if resolved:
            repaired += 1
        elif not text:
            dropped.append(text)
    return tuple(ids), repaired, tuple(dropped)


def session_of(sample_id: str, turn_id: str) -> str | None:
    """The reader's session id of a LoCoMo turn id: ("conv-26", "D3:5") -> "conv-26:session_3"."""
    m = _SESSION_OF.match(turn_id)
    return f"{sample_id}:session_{int(m.group(1))}" if m else None


# -- the BM25 baseline ----------------------------------------------------------------------


class TurnBaseline:
    """Plain BM25 over one conversation's raw turns ("Speaker: text"), in memory.

    The question's words are OR-ed (each quoted, so no word is read as FTS syntax) and
    ranked by FTS5's bm25(); no stop words, no stemming, no dates: the floor memoracle's
    ranking has to beat. Each turn comes back as the line a recall block would show
    (`format_line`: id, day, text), so both systems pay the same per line for the budget.
    """

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE turns USING fts5("
            "body, turn_id UNINDEXED, session_id UNINDEXED, line UNINDEXED, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        self._db.executemany(
            "INSERT INTO turns (body, turn_id, session_id, line) VALUES (?, ?, ?, ?)",
            [
                (
                    speaker_text(t),
                    t.turn_id or "",
                    t.session_id or "",
                    format_line(t.turn_id or "?", speaker_text(t), t.at),
                )
                for t in turns
            ],
        )

    def search(self, question: str) -> list[tuple[str, str, str]]:
        """Every matching turn, best first: (turn id, session id, line)."""
        words = dict.fromkeys(w.lower() for w in _WORD.findall(question))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self._db.execute(
            "SELECT turn_id, session_id, line FROM turns WHERE turns MATCH ? "
            "ORDER BY bm25(turns), rowid",
            (match,),
        ).fetchall()
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def close(self) -> None:
        self._db.close()


def speaker_text(turn: Turn) -> str:
    return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text


def within_budget(costs: Iterable[int], budget: int) -> int:
    """How many items, taken in order, fit while their summed cost stays ≤ budget."""
    total = 0
    n = 0
    for cost in costs:
        if total + cost > budget:
            break
        total += cost
        n += 1
    return n


# -- the run ----------------------------------------------------------------------------------


@dataclass
class _Sample:
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
    on_progress: Callable[[int, int], None] | None = None,
) -> LocomoReport:
    """Run the benchmark on a LoCoMo JSON file (a list of samples, or one sample).

    `ks` are the cut-offs of recall@k (one search at the largest k; the top k are its
    first k hits); `budget` is the recall block's token budget; `embedder` sets
    `embedding.model` ("hash" is fast and model-free; None keeps the default model);
    `limit` takes the first N conversations. `on_progress(done, total)` counts questions.
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
    samples = _read_samples(Path(path), warnings.append)[:limit]
    total = sum(len(s.qa) for s in samples)
    overrides: dict[str, Any] = {"workspace.timezone": "UTC"}
    if embedder is not None:
        overrides["embedding.model"] = embedder
    counter = default_counter()
    tally = _Tally()

    def progress() -> None:
        if on_progress is not None:
            on_progress(len(tally.questions), total)

    for sample in samples:
        with tempfile.TemporaryDirectory(prefix="memoracle-locomo-") as home:
            settings = load(Path(home), env={}, overrides=overrides)
            _run_sample(sample, settings, ks, budget, counter, tally, progress)
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
    sample: _Sample,
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


def _read_samples(path: Path, on_warning: Callable[[IngestWarning], None]) -> list[_Sample]:
    """The qa of each sample (read here: the ingest reader never reads it) and its turns
    (read by the reader, exactly as `memoracle ingest` would store them)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"Cannot read LoCoMo file '{path}': {exc}") from None
    raw = [document] if isinstance(document, Mapping) else document
    if not isinstance(raw, list):
        raise InvalidInput(f"'{path}' is not LoCoMo: expected a list of samples.")
    samples: dict[str, _Sample] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("conversation"), Mapping):
            continue
        sample_id = str(item["sample_id"]) if item.get("sample_id") else f"sample-{i}"
        qa = item.get("qa")
        samples[sample_id] = _Sample(
            sample_id, [q for q in qa if isinstance(q, Mapping)] if isinstance(qa, list) else []
        )
    del document, raw
    for turn in ingest.read(path, "locomo", on_warning=on_warning):
        if isinstance(turn, Turn) and turn.session_id:
            sample_id = turn.session_id.rsplit(":session_", 1)[0]
            if sample_id in samples:
                samples[sample_id].turns.append(turn)
    return list(samples.values())


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


# -- rendering ------------------------------------------------------------------------------


def format_report(report: LocomoReport) -> str:
    """The report as plain-text tables (what `memoracle bench locomo` prints)."""
    n_questions = sum(c.questions for c in report.conversations)
    ev = report.evidence
    lines = [
        f"LoCoMo evidence recall: {report.path}",
        f"{len(report.conversations)} conversations, "
        f"{sum(c.turns for c in report.conversations)} turns, {n_questions} questions; "
        f"embedder {report.embedder or 'none'}; recall budget {report.budget} tokens "
        f"({report.tokenizer}); baseline: BM25 over raw turns, question words OR-ed",
        f"evidence ids: {ev.repaired} repaired, {len(ev.dropped)} dropped"
        + (f" ({', '.join(ev.dropped)})" if ev.dropped else "")
        + f"; questions left without evidence (not scored): {ev.unscored_questions}",
        "",
    ]
    rows = [*(g for g in report.categories if g.label != "5"), report.overall]
    tail = [*(g for g in report.categories if g.label == "5"), report.everything]

    def table(
        title: str,
        cells: Callable[[SystemScores], list[float]],
        heads: list[str],
        formats: Sequence[str] = (),
    ) -> None:
        def row(g: GroupResult) -> list[str]:
            values = [*cells(g.memoracle), *cells(g.baseline)]
            specs = [*formats, *formats] if formats else [".3f"] * len(values)
            return [f"{g.label} {g.name}", str(g.scored)] + [
                format(v, spec) if g.scored else "-" for v, spec in zip(values, specs, strict=True)
            ]

        header = ["category", "n"] + [f"mem {h}" for h in heads] + [f"bm25 {h}" for h in heads]
        body, extra = [row(g) for g in rows], [row(g) for g in tail]
        widths = [max(len(r[i]) for r in [header, *body, *extra]) for i in range(len(header))]

        def render(cells: list[str]) -> str:
            padded = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
            return "  ".join([cells[0].ljust(widths[0]), *padded])

        rule = "-" * len(render(header))
        lines.extend([title, render(header), rule, *map(render, body), rule])
        lines.extend([*map(render, extra), ""])

    at_k = [f"@{k}" for k in report.ks]
    table("turn-level evidence recall@k", lambda s: [s.turn_recall[k] for k in report.ks], at_k)
    table("all evidence found @k", lambda s: [s.all_found[k] for k in report.ks], at_k)
    table("any evidence found @k", lambda s: [s.any_found[k] for k in report.ks], at_k)
    table(
        "session-level evidence recall@k", lambda s: [s.session_recall[k] for k in report.ks], at_k
    )
    table(
        f"evidence recall inside {report.budget} tokens (and mean tokens used)",
        lambda s: [s.budget_recall, s.budget_tokens],
        ["recall", "tokens"],
        [".3f", ".0f"],
    )
    modes = ", ".join(f"{m} {n}" for m, n in sorted(report.search_modes.items()))
    lines += [
        f"latency: search median {report.search_latency.median_ms:.1f} ms "
        f"(p95 {report.search_latency.p95_ms:.1f}), recall median "
        f"{report.recall_latency.median_ms:.1f} ms (p95 {report.recall_latency.p95_ms:.1f}) "
        f"over {report.search_latency.n} questions; search modes: {modes or 'none'}"
        + (f"; degraded recalls: {report.degraded_recalls}" if report.degraded_recalls else ""),
        f"run time {report.seconds:.1f} s (capture "
        f"{sum(c.capture_seconds for c in report.conversations):.1f} s, embedding "
        f"{sum(c.index_seconds for c in report.conversations):.1f} s, questions "
        f"{sum(c.query_seconds for c in report.conversations):.1f} s)",
    ]
    return "\n".join(lines)


def report_json(report: LocomoReport, *, questions: bool = False) -> dict[str, Any]:
    """The report as JSON-ready data (`--json`); per-question results only if asked."""

    def scores(s: SystemScores) -> dict[str, Any]:
        return {
            "turn_recall": {str(k): v for k, v in s.turn_recall.items()},
            "all_found": {str(k): v for k, v in s.all_found.items()},
            "any_found": {str(k): v for k, v in s.any_found.items()},
            "session_recall": {str(k): v for k, v in s.session_recall.items()},
            "budget_recall": s.budget_recall,
            "budget_tokens": s.budget_tokens,
        }

    def group(g: GroupResult) -> dict[str, Any]:
        return {
            "category": g.label,
            "name": g.name,
            "questions": g.questions,
            "scored": g.scored,
            "memoracle": scores(g.memoracle),
            BASELINE: scores(g.baseline),
        }

    def found(f: Found) -> dict[str, Any]:
        return {
            "turns": {str(k): v for k, v in f.turns.items()},
            "sessions": {str(k): v for k, v in f.sessions.items()},
            "budget": f.budget,
            "budget_tokens": f.budget_tokens,
        }

    data: dict[str, Any] = {
        "benchmark": "locomo",
        "path": report.path,
        "ks": list(report.ks),
        "budget": report.budget,
        "embedder": report.embedder,
        "tokenizer": report.tokenizer,
        "categories": [group(g) for g in report.categories],
        "overall": group(report.overall),
        "all": group(report.everything),
        "evidence": {
            "repaired": report.evidence.repaired,
            "dropped": list(report.evidence.dropped),
            "unscored_questions": report.evidence.unscored_questions,
        },
        "latency_ms": {
            "search": asdict(report.search_latency),
            "recall": asdict(report.recall_latency),
        },
        "search_modes": dict(report.search_modes),
        "degraded_recalls": report.degraded_recalls,
        "ingest_warnings": report.ingest_warnings,
        "conversations": [asdict(c) for c in report.conversations],
        "seconds": report.seconds,
    }
    if questions:
        data["questions"] = [
            {
                "sample_id": q.sample_id,
                "index": q.index,
                "category": q.category,
                "question": q.question,
                "evidence": list(q.evidence),
                "evidence_sessions": list(q.evidence_sessions),
                "memoracle": found(q.memoracle),
                BASELINE: found(q.baseline),
            }
            for q in report.questions
        ]
    return data
