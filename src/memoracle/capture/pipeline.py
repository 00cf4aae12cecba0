"""One turn in, proposed memories out: redact → noise → language → rules → dates.

Pure: no store, no clock. The engine decides what to do with the proposals (dedup,
insert, forget). The rule data, sentence handling and date vocabulary live in the
modules this one calls; this module only fixes their order and what each sees: secrets
are removed first, so nothing after this step (episode, memory, index) ever holds one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memoracle.capture.dates import find_dates
from memoracle.capture.extract import extract
from memoracle.capture.lang import detect_language
from memoracle.capture.noise import is_noise
from memoracle.capture.redact import redact
from memoracle.types import Candidate, DateMention, Turn


@dataclass(frozen=True)
class Proposal:
    candidate: Candidate
    dates: tuple[DateMention, ...]


@dataclass(frozen=True)
class TurnAnalysis:
    text: str
    lang: str
    noise: str | None
    redacted: tuple[str, ...]
    proposals: tuple[Proposal, ...]
    skipped: tuple[str, ...]


def analyse(
    turn: Turn,
    at: datetime,
    *,
    day_first: bool = True,
    extract_memories: bool = True,
    languages: tuple[str, ...] = ("en", "ru", "fr", "es"),
) -> TurnAnalysis:
    """Everything the rules say about one turn. `at` anchors relative dates."""
    clean = redact(turn.text)
    noise = is_noise(clean.text)
    if noise is not None:
        return TurnAnalysis(clean.text, "", noise, clean.kinds, (), (noise,))
    lang = detect_language(clean.text)
    if turn.kind != "message" or not extract_memories or lang not in languages:
        return TurnAnalysis(clean.text, lang, None, clean.kinds, (), ())
    found = extract(clean.text, role=turn.role, speaker=turn.speaker, lang=lang)
    proposals = tuple(
        Proposal(c, tuple(find_dates(c.text, at, c.lang, day_first=day_first)))
        for c in found.candidates
    )
    return TurnAnalysis(clean.text, lang, None, clean.kinds, proposals, found.skipped)
