"""Capture by meaning: a sentence no rule matched is still kept when it says something
about someone that a person would want remembered, in whatever phrasing.

Rules (`extract`) know templates: "I live in …", "my favourite … is …". People also say
"Switched to a MacBook Air M3 last week", "Жена Анна работает в Siemens", "Mon chien
Poivre a peur de l'orage". What such sentences share is not a template but three cues,
each read from the language's rule file (``[markers]``: ``speaker``, ``kin``, ``when``)
or from the text's shape:

- *who*: the speaker (a first-person word, or a form that implies one: a sentence that
  opens on a past verb, "у меня", "on a", "me pasé") or one of the speaker's people
  ("my sister Noor", "Жена Анна", "ma cheffe Priya");
- *what*: an anchor, a proper name inside the sentence ("Siemens", "Fernwood Labs"), a
  model name with a number ("Pixel 8"), a «quoted» name;
- *when*: a date word ("yesterday", "вчера", "mañana", "le 12 décembre").

A statement is kept when it is about someone and names something or a time, when a
person of the speaker's is named ("Mon chien Poivre…"), when it names something at a
time ("Meeting with Carlos mañana at 10"), or when it names something in a turn whose
other sentences are about the speaker ("first day at Fernwood Labs done! I'm a data
engineer now"). Hedged sentences ("I think Rust is nicer") are opinions, not kept.
The kind is a task, a decision or a preference when the language's kind cues say so
("Need to renew…", "Decided to…", "Huge fan of…"), else ``event`` with a time (a
habit's time, "every Tuesday", is none), ``fact`` without; the subject is the person named
("user's sister Noor") or the speaker. Confidence is below any rule's, so a rule's
memory wins a dedup or a conflict.

Assistant turns: an offer ("I'll remind you Thursday.", "Хотите, добавлю…") makes
nothing; a sentence that confirms what the user said or commits to what they asked
("Noted: your new address is…", "as you asked", "Записал:") is kept, as a ``task`` with
a time and a ``fact`` without, about the user. Pure, regexes only: microseconds a
sentence.
"""

from __future__ import annotations

import re

from memoracle.capture.rules import LanguageRules
from memoracle.language.words import fold_chars
from memoracle.types import Candidate

__all__ = ["CONFIDENCE", "IMPORTANCE", "about_speaker", "judge", "learned", "offered"]

CONFIDENCE = 0.55
LEARNED_CONFIDENCE = 0.5
IMPORTANCE = 0.5

# A capitalised word that does not open the sentence ("I" aside), a model name with a
# number ("Pixel 8", "M3", "X1 Carbon"), or a «quoted» name.
_ANCHOR = re.compile(
    r"(?<=[\s\"'(«“])(?!I(?:'|’|\b))[A-ZÀ-ÖØ-ÞА-ЯЁ][\w&'’.-]*"
    r"|\b[A-Za-z]+[ -]?\d+[A-Za-z]?\b|«[^»]+»|“[^”]+”"
)
_NUMBER = re.compile(r"\d")
_CAPITAL = re.compile(r"[A-ZÀ-ÖØ-ÞА-ЯЁ]")


def about_speaker(text: str, rules: LanguageRules) -> bool:
    """True when `text` speaks of the speaker, by a first-person word or a form that
    implies one (a dropped subject: "Switched to…", "Переехал…", "Me mudé…")."""
    folded = fold_chars(text)
    lowered = folded.casefold()
    return any(
        matcher is not None and matcher.search(folded, lowered) is not None
        for matcher in (rules.first_person, rules.speaker)
    )


def offered(text: str, rules: LanguageRules) -> bool:
    """True for an assistant's offer or promise with nothing confirmed in it."""
    folded = fold_chars(text)
    lowered = folded.casefold()
    if rules.confirmed is not None and rules.confirmed.search(folded, lowered) is not None:
        return False
    return rules.offer is not None and rules.offer.search(folded, lowered) is not None


def confirmed(text: str, rules: LanguageRules) -> bool:
    """True when an assistant's sentence confirms or carries out what the user said."""
    folded = fold_chars(text)
    return rules.confirmed is not None and (
        rules.confirmed.search(folded, folded.casefold()) is not None
    )


def judge(
    text: str,
    rules: LanguageRules,
    owner: str,
    *,
    assistant: bool = False,
    context: bool = False,
) -> Candidate | None:
    """The memory a statement no rule matched is worth, or None (see the module doc).

    `text` is one sentence, already known not to be a question, a hypothetical or small
    talk; `context` says another sentence of the turn is about the speaker.
    """
    folded = fold_chars(text)
    lowered = folded.casefold()
    if rules.hedge is not None and rules.hedge.search(folded, lowered) is not None:
        return None
    when = rules.when is not None and rules.when.search(folded, lowered) is not None
    kin = rules.kin.search(folded, lowered) if rules.kin is not None else None
    # The name in "my sister Noor" is the subject, not something said about her.
    anchors = [
        m for m in _ANCHOR.finditer(text) if kin is None or not kin.start() <= m.start() < kin.end()
    ]
    if assistant:
        if not (confirmed(text, rules) and (anchors or when or _NUMBER.search(text))):
            return None
        return _make(text, rules, "task" if when else "fact", "user", "assistant")
    speaker = about_speaker(text, rules)
    named_kin = kin is not None and _CAPITAL.search(text, kin.start() + 1, kin.end()) is not None
    keep = (
        (speaker and (bool(anchors) or when))
        or named_kin
        or (kin is not None and (bool(anchors) or when or _NUMBER.search(text) is not None))
        or (bool(anchors) and (when or context))
    )
    if not keep:
        return None
    subject = _kin_subject(text[kin.start() : kin.end()], rules, owner) if kin else owner
    return _make(text, rules, _kind(folded, lowered, rules, when), subject, "said")


def _kind(folded: str, lowered: str, rules: LanguageRules, when: bool) -> str:
    """A kept statement's kind by its cues (``[markers]``): a task ("Need to renew my
    passport before March"), a decision ("Decided to take the offer"), a preference
    ("Huge fan of Studio Ghibli"), in that order; else an event when it names a time
    that is not a habit ("every Tuesday" is a fact), else a fact."""
    for kind, cue in (
        ("task", rules.task_cue),
        ("decision", rules.decision_cue),
        ("preference", rules.preference_cue),
    ):
        if cue is not None and cue.search(folded, lowered) is not None:
            return kind
    habit = rules.habit is not None and rules.habit.search(folded, lowered) is not None
    return "event" if when and not habit else "fact"


def learned(text: str, rules: LanguageRules, owner: str, kind: str) -> Candidate:
    """The memory a sentence is worth when only the learned decision (`classify`) kept
    it: `kind` from its kind head, but ``event`` when a date word is said; the subject
    as `judge` would name it; confidence a little below the cues'."""
    folded = fold_chars(text)
    lowered = folded.casefold()
    if rules.when is not None and rules.when.search(folded, lowered) is not None:
        kind = "event"
    kin = rules.kin.search(folded, lowered) if rules.kin is not None else None
    subject = _kin_subject(text[kin.start() : kin.end()], rules, owner) if kin else owner
    return _make(text, rules, kind, subject, "learned", confidence=LEARNED_CONFIDENCE)


def _make(
    text: str,
    rules: LanguageRules,
    kind: str,
    subject: str,
    how: str,
    *,
    confidence: float = CONFIDENCE,
) -> Candidate:
    return Candidate(
        kind=kind,
        text=text.strip(),
        rule=f"{rules.code}.meaning.{how}",
        lang=rules.code,
        subject=subject,
        importance=IMPORTANCE,
        confidence=confidence,
    )


def _kin_subject(said: str, rules: LanguageRules, owner: str) -> str:
    """ "my sister Noor" said by the user -> "user's sister Noor"; "Жена Анна" ->
    "user's жена Анна" (a relation without a possessive is the speaker's too)."""
    said = said.strip(" ,:;.!")
    if rules.possessive is not None:
        folded = fold_chars(said)
        mine = rules.possessive.match(folded, folded.casefold())
        if mine is not None:
            said = said[mine.end() :]
    return f"{owner}'s {said[:1].lower()}{said[1:]}"
