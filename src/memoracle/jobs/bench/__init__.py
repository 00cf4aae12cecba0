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

The parts: `results` (what is measured, evidence repair), `baseline` (BM25 over raw
turns), `run` (`run_locomo`), `report` (text and JSON).
"""

from memoracle.jobs.bench.baseline import TurnBaseline, speaker_text, within_budget
from memoracle.jobs.bench.report import format_report, report_json
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
from memoracle.jobs.bench.run import run_locomo

__all__ = [
    "BASELINE",
    "CATEGORY_NAMES",
    "ConversationResult",
    "EvidenceRepair",
    "Found",
    "GroupResult",
    "Latency",
    "LocomoReport",
    "OVERALL_CATEGORIES",
    "QuestionResult",
    "SystemScores",
    "TurnBaseline",
    "format_report",
    "repair_evidence",
    "report_json",
    "run_locomo",
    "session_of",
    "speaker_text",
    "within_budget",
]
