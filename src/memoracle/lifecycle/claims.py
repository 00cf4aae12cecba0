"""One memory, one claim: a sentence stating several independent claims about a subject
("I'm Alex, I work as an SRE at Datadog and I live in Berlin.") split into one
candidate per claim, so that a later change of one claim ("I moved to Munich") replaces
only that one.

A sentence is cut at its clause boundaries (a comma, a semicolon, a dash, "and" / "и" /
"et" / "y", "but" / "но" / "mais" / "pero") into pieces; a piece that fills a slot
(`slots.slots_of`, read alone) starts a claim, a piece that fills none belongs to the
claim before it (or to the first one: "I'm Alex, I work at Datadog" stays one claim when
"I'm Alex" names no slot), so "I like Simon and Garfunkel" or "I use vim and tmux" are
never cut. The sentence is split only when at least two claims fill slots of different
(subject, attribute), none of them shared: two pieces about the same attribute ("I live
in Paris and I live in Lyon too") are one claim, and so is a denial with what replaced
it ("I don't like green tea anymore, I prefer coffee now": one change). Each claim
keeps the sentence's kind unless the capture rules, reading the claim alone, type it
otherwise; its text is its words as said, from its first piece to its last, with the sentence's
closing stop.
Pure: text in, candidates out.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memoracle.capture.extract import extract
from memoracle.capture.lang import detect_language
from memoracle.lifecycle.slots import Slot, slots_of
from memoracle.types import Candidate

__all__ = ["MAX_CLAIMS", "split_claims"]

# Beyond this many pieces a sentence is a list or a paste, not a few claims: kept whole.
MAX_CLAIMS = 12
_KINDS = frozenset({"fact", "preference", "event", "decision"})
_BOUNDARY = re.compile(
    r"\s*[,;]\s*(?:(?:and|but|и|а|но|et|mais|y|e|pero)\s+)?"
    r"|\s+[-–—]\s+"
    r"|\s+(?:and|but|и|а|но|et|mais|y|e|pero)\s+",
    re.IGNORECASE,
)
_END = re.compile(r"[.!…]+$")
# A piece: its text and where it stands in the sentence.
_Piece = tuple[str, int, int]
# A claim: its pieces, the (subject, attribute) slots they fill, their language.
_Claim = tuple[list[_Piece], set[tuple[str, str]], str]


def split_claims(candidate: Candidate, *, speaker: str | None = None) -> list[Candidate]:
    """`candidate` as one candidate per independent claim (itself when it states one)."""
    if candidate.kind not in _KINDS or candidate.action != "store" or candidate.hedged:
        return [candidate]
    text = candidate.text.strip()
    ending = _END.search(text)
    body = text[: ending.start()] if ending else text
    pieces = _pieces(body)
    if len(pieces) < 2 or len(pieces) > MAX_CLAIMS:
        return [candidate]
    claims: list[_Claim] = []
    for piece in pieces:
        slots, lang = _slots(piece[0], candidate.lang, speaker)
        if any(s.negated or s.value == "dislike" for s in slots):
            return [candidate]  # "I don't like tea anymore, I prefer coffee": one change
        keys = {_key(s) for s in slots}
        if keys or not claims:
            claims.append(([piece], keys, lang))
        else:
            claims[-1][0].append(piece)
    claims = _merge_leading(claims)
    filled = [keys for _, keys, _ in claims if keys]
    if len(filled) < 2 or len(set().union(*filled)) < sum(len(k) for k in filled):
        return [candidate]
    if any(not keys for _, keys, _ in claims):
        return [candidate]
    stop = ending.group(0) if ending else ""
    return [  # each claim's words as said, separators and all, from its first to its last
        _claim(candidate, _capital(body[parts[0][1] : parts[-1][2]]) + stop, speaker, lang)
        for parts, _, lang in claims
    ]


def _slots(piece: str, lang: str, speaker: str | None) -> tuple[list[Slot], str]:
    """The slots `piece` fills read in the sentence's language, else in its own ("Vivo
    en Valencia, je travaille chez Renault": a sentence of two languages), and that
    language."""
    slots = list(slots_of(piece, lang=lang, speaker=speaker))
    if not slots and (own := detect_language(piece)) != lang:
        return list(slots_of(piece, lang=own, speaker=speaker)), own
    return slots, lang


def _pieces(body: str) -> list[_Piece]:
    spans: list[tuple[int, int]] = []
    start = 0
    for found in _BOUNDARY.finditer(body):
        if found.start() > start:
            spans.append((start, found.start()))
        start = found.end()
    spans.append((start, len(body)))
    pieces: list[_Piece] = []
    for a, b in spans:
        text = body[a:b]
        if text.strip():
            a += len(text) - len(text.lstrip())
            b -= len(text) - len(text.rstrip())
            pieces.append((body[a:b], a, b))
    return pieces


def _merge_leading(claims: list[_Claim]) -> list[_Claim]:
    """A first claim that fills no slot ("I'm Alex") joins the one after it."""
    if len(claims) > 1 and not claims[0][1]:
        first, second = claims[0], claims[1]
        return [(first[0] + second[0], second[1], second[2]), *claims[2:]]
    return claims


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _key(slot: Slot) -> tuple[str, str]:
    return (slot.subject, slot.attribute)


def _claim(candidate: Candidate, text: str, speaker: str | None, lang: str) -> Candidate:
    """The claim in its language, with the kind the rules give it alone (else the
    sentence's) and what they read of it alone (not the sentence's "likes")."""
    alone = extract(text, role="user", speaker=speaker, lang=lang).candidates
    if not alone:
        return replace(candidate, text=text, lang=lang, predicate=None, object=None)
    kind = alone[0].kind if alone[0].kind in _KINDS else candidate.kind
    return replace(
        candidate,
        text=text,
        kind=kind,
        lang=lang,
        predicate=alone[0].predicate,
        object=alone[0].object,
    )
