"""What the benchmark measures, as data: scores per system and category, each question's
found evidence, latencies, and LoCoMo's evidence ids repaired (`repair_evidence`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

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
