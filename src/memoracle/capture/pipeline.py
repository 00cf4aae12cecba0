"""One turn in, proposed memories out, in two steps the engine calls in order.

`prepare` makes the text safe (broken characters repaired, secrets redacted) and says
whether the turn is noise; nothing after it (episode, memory, index, turn key) ever holds
a secret. `propose` runs the rules, each sentence in its own language (one in a
language left out of `languages` yields nothing), and the date resolver in each
candidate's language, then makes each candidate's text a self-contained statement
(`statement`: people named, relative times resolved); it is only called for a turn
that is new. Both are pure: no store, no clock. The engine decides what the proposals
become (dedup, insert, forget).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from memoracle.capture.classify import Classifier
from memoracle.capture.dates import find_dates
from memoracle.capture.extract import extract
from memoracle.capture.meaning import learned
from memoracle.capture.noise import is_noise
from memoracle.capture.redact import redact
from memoracle.capture.rules import default_rules
from memoracle.capture.statement import statement
from memoracle.text import clean
from memoracle.types import PHOTO_CAPTION, Candidate, DateMention

# "[shares photo: a dog on a beach]": what a photo showed, kept in the episode but not
# said by anyone, so not a source of memories.
_CAPTION = re.compile(re.escape(PHOTO_CAPTION) + r"[^\]]*\]")


@dataclass(frozen=True)
class Prepared:
    text: str
    redacted: tuple[str, ...]
    noise: str | None


@dataclass(frozen=True)
class Proposal:
    candidate: Candidate
    dates: tuple[DateMention, ...]


@dataclass(frozen=True)
class Proposals:
    lang: str
    proposals: tuple[Proposal, ...]
    skipped: tuple[str, ...]


def prepare(text: str, *, previous: str | None = None) -> Prepared:
    """Repair, redact, and classify noise. `previous`: the turn before it in the same
    session, as stored, for a secret it left open (`redact`)."""
    safe = redact(clean(text), previous=previous)
    return Prepared(safe.text, safe.kinds, is_noise(safe.text))


def propose(
    text: str,
    *,
    role: str,
    speaker: str | None,
    at: datetime,
    day_first: bool = True,
    languages: tuple[str, ...] = ("en", "ru", "fr", "es"),
    classifier: Classifier | None = None,
    split: Callable[[Candidate], list[Candidate]] | None = None,
) -> Proposals:
    """The typed memories the rules find in prepared `text`; `at` (aware, in the zone the
    words were said in) anchors relative dates. With a `classifier`, when the rules and
    cues made nothing of a person's turn, the one statement the learned decision rates
    best is kept, if it rates it high enough (`capture.classify`). `split`, when given,
    makes one candidate of several claims (`lifecycle.claims`), each dated and made a
    statement on its own."""
    said = _CAPTION.sub("", text).strip()
    if not said:
        return Proposals("", (), ())
    found = extract(said, role=role, speaker=speaker, languages=languages)
    candidates = list(found.candidates)
    skipped = found.skipped
    if classifier is not None and found.unmatched and not candidates:
        kept = _learned(found.unmatched, classifier, speaker or role)
        if kept is not None:  # a kept sentence is no longer one that yielded nothing
            candidates.append(kept)
            i = skipped.index("no_match")
            skipped = skipped[:i] + skipped[i + 1 :]
    if split is not None:
        candidates = [claim for c in candidates for claim in split(c)]
    proposals = []
    for c in candidates:
        ahead = c.kind == "task"  # a task's bare "March" or "Friday" is the next one
        dates = tuple(find_dates(c.text, at, c.lang, day_first=day_first, ahead=ahead))
        said = statement(c, dates, speaker=speaker, role=role)
        proposals.append(Proposal(replace(c, text=said), dates))
    return Proposals(found.lang, tuple(proposals), skipped)


def _learned(
    unmatched: tuple[tuple[str, str], ...], classifier: Classifier, owner: str
) -> Candidate | None:
    """The statement no rule matched that the learned decision keeps (one embed call)."""
    ruleset = default_rules()
    said = [(text, ruleset.get(code)) for text, code in unmatched]
    kept = classifier.keep_one(said)
    if kept is None:
        return None
    text, rules = said[kept[0]]
    return learned(text, rules, owner, kept[1])
