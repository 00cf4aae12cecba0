"""Text of one turn -> typed memory candidates, by rules, with no LLM and no I/O.

Owns sentence splitting, the per-sentence decision (question, hypothetical, small talk,
or which rule family fires) and attribution. The rules themselves are data
(`language/rules/capture/*.toml`, loaded by `rules`); language detection is `lang`; dropping
whole noise turns is `noise`; secrets, dates, dedup and storage are the capture
pipeline's, which calls `extract` after redaction and before date resolution.

Each sentence is read in its own language: the turn's, unless the sentence's own words
point to another (`lang.sentence_language`: "Мой ник — Lexa. I moved to Berlin in March."
is a Russian sentence, then an English one); a language left out of `languages` skips
the sentence as ``language:<code>``. Then, per sentence, in order:

1. longer than `MAX_SENTENCE_CHARS` (a paste, not a memory) -> skipped as ``too_long``;
2. no letters at all ("👍", "...") -> ``smalltalk``;
3. a hypothetical ("what if I moved to Berlin?", "si j'étais riche") -> ``hypothetical``;
4. a question ("Did you go?", "¿Vienes?") -> ``question``; but a polite request ("Could
   you remind me to…?") is not a question, and a statement with a question tag ("I went
   to Rome, have you been?") keeps its statement part;
5. small talk (greetings, thanks, "lol", reactions such as "that's awesome") ->
   ``smalltalk``;
6. otherwise the rule families in priority order (forget, remember, guardrail,
   decision, task, preference, error, event, fact): the first rule that matches yields
   the sentence's only candidate;
7. no rule matched: `meaning.judge` keeps the statement when its cues (who, what, when)
   say it is worth remembering; else ``no_match``.

`Extraction.skipped` has one reason per sentence that yielded nothing, in order.

Attribution: first-person statements belong to whoever said them: ``subject`` is the
`speaker` when given (LoCoMo's "Caroline"), else the `role` ("user"). "my sister" in a
subject becomes "Caroline's sister". Assistant turns (role ``"assistant"``) yield only
decision, task, error and event candidates: an assistant's "I think you'd like…" is not
a fact about anyone, and an assistant cannot give itself guardrails or ask itself to
remember; such sentences are skipped as ``assistant``. An assistant's offer or empty
promise ("I'll remind you Thursday.") is skipped as ``offer``; a sentence confirming
what the user said ("Noted: your address is…") may also be a fact or a preference, and
its subject is the user.

`Candidate.text` is the sentence as said, trimmed (bullets removed), never rewritten.
For remember/forget it is what to remember or forget ("Remember that I'm vegan." ->
"I'm vegan"), with the directive's closing punctuation dropped; its kind is inferred
from that content by the other rules, else ``fact``. Hedged sentences ("I might move to
Lyon") keep their candidate, with ``hedged=True`` and confidence × `HEDGE_FACTOR`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace

from memoracle.capture import meaning
from memoracle.capture.lang import detect_language, sentence_language
from memoracle.capture.rules import (
    ASSISTANT_KINDS,
    CONFIRMED_KINDS,
    DIRECTIVES,
    LanguageRules,
    Rule,
    default_rules,
)
from memoracle.language.prefilter import passes
from memoracle.language.words import fold_chars
from memoracle.types import Candidate, Extraction

__all__ = ["HEDGE_FACTOR", "MAX_SENTENCE_CHARS", "extract", "split_sentences"]

HEDGE_FACTOR = 0.6
# Longer "sentences" are pastes (logs, code, articles), not atomic memories.
MAX_SENTENCE_CHARS = 1000

_LETTER = re.compile(r"[^\W\d_]")
_LINE = re.compile(r"[^\r\n]+")
_BULLET = re.compile(
    r"\s*(?:(?:[-*•‣◦·▪►–—+>]+|\d{1,3}[.)]|[a-zA-Z][.)](?=\s)|#{1,6})\s+)+|\s*(?:```|~~~)\S*\s*$"
)
# A stop, or in chat a run of emoji pictographs between two sentences ("got a Fairphone
# 5 now 🌱 how do I move my photos?"): the emoji ends the first. Not flags or the older
# symbols (❤ ⚠ ✓ ★), which stand for words ("I ❤️ Python", "Never ⚠️ deploy on Fridays").
_EMOJI = "\U0001f300-\U0001faff"
_STOP = re.compile(
    rf"[.!?…;]+[\"'”’»)\]]*(?=\s|$)|[{_EMOJI}][{_EMOJI}\uFE0F\u200D\U0001F3FB-\U0001F3FF]*(?=\s+\w)"
)
_EMOJI_AFTER = 3  # words a sentence has at least before emoji may end it ("I love 🍕 pizza")
_WORD_BEFORE = re.compile(r"(\S+)$")
_QUESTION_END = re.compile(r"\?[\W_]*$")
_CHUNK = re.compile(r"[,.!;:…]+|\s[-–—]\s|\s*[\U0001F000-\U0001FFFF\u2600-\u27BF]+\s*")
_EDGE = re.compile(r"^[\W_]+|[\W_]+$")
_NAME = re.compile(r"(?:[A-ZÀ-ÖØ-ÞА-ЯЁ][^\W\d_]*)(?:\s+[A-ZÀ-ÖØ-ÞА-ЯЁ][^\W\d_]*)?")
_TRIM_CONTENT = re.compile(r"^[\s:,;\-–—]+|[\s.!?…;:,\-–—]+$")
_TRIM_OBJECT = re.compile(r"^[\s\"'“«]+|[\s.!?…;:,\"'”»]+$")
_SEPARATOR = re.compile(r"\s*(?:,|\s[-–—])\s*|\s*(?=¿)")
_PREDICATE_JUNK = re.compile(r"'s\b|[^\w]+")
_TAG_TRAIL = " \t,;:-–—"


def extract(
    text: str,
    *,
    role: str,
    speaker: str | None = None,
    lang: str | None = None,
    languages: Collection[str] | None = None,
) -> Extraction:
    """Typed memory candidates in `text`, one at most per sentence.

    `lang` forces one language ("en", "ru", "fr", "es") on every sentence; by default
    the turn's language is detected, then each sentence's (`sentence_language`), so an
    English sentence in a Russian turn is read by the English rules. A sentence in a
    language outside `languages` (when given) is skipped as ``language:<code>``.
    `Extraction.lang` is the turn's language. Raises `InvalidInput` for a language with
    no rule file.
    """
    ruleset = default_rules()
    turn = ruleset.get(lang if lang is not None else detect_language(text))
    owner = speaker or role
    allowed = ASSISTANT_KINDS if role == "assistant" else None
    outcomes: list[tuple[str, Candidate | str, LanguageRules]] = []
    spans = split_sentences(text, turn.abbreviations)
    mixed = lang is None and len(spans) > 1  # one sentence is the turn: already read
    context = allowed is None and meaning.about_speaker(text, turn)
    for start, end in spans:
        sentence = text[start:end]
        rules = ruleset.get(sentence_language(sentence, turn.code)) if mixed else turn
        if languages is not None and rules.code not in languages:
            outcomes.append((sentence, f"language:{rules.code}", rules))
            continue
        tail = _remember_tail(sentence, rules) if allowed is None else None
        if tail is None:
            # A forced language's cues mean nothing in a sentence said in another one.
            judge = lang is None or sentence_language(sentence, rules.code) == rules.code
            outcome = _sentence(sentence, rules, owner, allowed, context=context, judge=judge)
            outcomes.append((sentence, outcome, rules))
        elif tail > 0:
            head = sentence[:tail]
            outcome = _sentence(head, rules, owner, allowed)
            outcomes.append((head, _remembered(head, outcome, rules, owner), rules))
        elif outcomes:
            # "Remember that." points at the sentence before, read in its own language.
            before, outcome, said_in = outcomes[-1]
            outcomes[-1] = (before, _remembered(before, outcome, said_in, owner), said_in)
        else:
            outcomes.append((sentence, "no_match", rules))
    candidates = tuple(o for _, o, _ in outcomes if isinstance(o, Candidate))
    skipped = tuple(o for _, o, _ in outcomes if isinstance(o, str))
    unmatched = tuple((s, r.code) for s, o, r in outcomes if o == "no_match" and allowed is None)
    return Extraction(turn.code, candidates, skipped, unmatched)


def _remember_tail(sentence: str, rules: LanguageRules) -> int | None:
    """Where a trailing "…, remember that." starts in `sentence` (0: the whole sentence
    is the directive and points at the previous one); None without one."""
    if rules.remember_tail is None:
        return None
    folded = fold_chars(sentence)
    found = rules.remember_tail.search(folded, folded.casefold())
    if found is None:
        return None
    return found.start() if _LETTER.search(folded, 0, found.start()) else 0


def _remembered(
    text: str, outcome: Candidate | str, rules: LanguageRules, owner: str
) -> Candidate | str:
    """`text` (with what the rules made of it) as something the speaker asked to keep."""
    if isinstance(outcome, Candidate):
        if outcome.action != "store":
            return outcome
        # A rule's text is the sentence as said; a judged one is what to remember.
        said = outcome.text if ".meaning." not in outcome.rule else _TRIM_CONTENT.sub("", text)
        return replace(outcome, text=said, action="remember", rule=f"{outcome.rule}+remember.tail")
    if outcome in ("question", "hypothetical", "too_long", "assistant") or outcome.startswith(
        "language:"
    ):
        return outcome
    content = _TRIM_CONTENT.sub("", text)
    if not content or _vague(fold_chars(content).casefold(), rules):
        return outcome
    family = rules.family("remember")
    importance, confidence = (family[0].importance, family[0].confidence) if family else (0.8, 0.9)
    hedged = _hedged(content, rules)
    return Candidate(
        kind="fact",
        text=content,
        rule=f"{rules.code}.remember.tail",
        lang=rules.code,
        subject=_first_person(content, rules, owner),
        importance=importance,
        confidence=round(confidence * (HEDGE_FACTOR if hedged else 1.0), 3),
        action="remember",
        hedged=hedged,
    )


def split_sentences(
    text: str, abbreviations: frozenset[str] = frozenset()
) -> list[tuple[int, int]]:
    """Spans of the sentences in `text`: lines, then ". ! ? … ;" or emoji followed by a
    space (and, after emoji, a word; the emoji are in neither sentence).

    Bullets and list numbers at the start of a line are left out of the span. A "." after
    a known abbreviation or a single letter, or followed by a lower-case word, does not
    end a sentence.
    """
    spans: list[tuple[int, int]] = []
    for line in _LINE.finditer(text):
        start, end = line.span()
        bullet = _BULLET.match(text, start, end)
        if bullet is not None:
            start = bullet.end()
        cut = start
        for stop in _STOP.finditer(text, start, end):
            mark = stop.group()
            if mark[0] not in ".!?…;" and len(text[cut : stop.start()].split()) < _EMOJI_AFTER:
                continue  # a word said as an emoji, not the end of a sentence
            if mark[0] in ".…":
                if mark[0] == "…" or mark.startswith(".."):
                    # "I was like... whatever": an ellipsis before lower case trails off.
                    after = text[stop.end() : stop.end() + 2].lstrip()
                    if after[:1].islower():
                        continue
                if mark.rstrip("\"'”’»)]") == ".":
                    word = _WORD_BEFORE.search(text, cut, stop.start())
                    if word is not None:
                        token = word.group(1).lower().lstrip("(\"'“«")
                        if token in abbreviations or (len(token) == 1 and token.isalpha()):
                            continue
            # Emoji between two sentences belong to neither: the chat's decoration.
            _add_span(text, cut, stop.end() if mark[0] in ".!?…;" else stop.start(), spans)
            cut = stop.end()
        _add_span(text, cut, end, spans)
    return spans


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


def _sentence(
    text: str,
    rules: LanguageRules,
    owner: str,
    allowed: frozenset[str] | None,
    *,
    context: bool = False,
    judge: bool = True,
) -> Candidate | str:
    """What one sentence yields: a candidate, or why it yields none. Rules first; a
    statement none of them matched goes to `meaning.judge`."""
    if len(text) > MAX_SENTENCE_CHARS:
        return "too_long"
    folded = fold_chars(text)
    if _LETTER.search(folded) is None:
        return "smalltalk"
    lowered = folded.casefold()
    if rules.hypothetical is not None and rules.hypothetical.search(folded, lowered):
        return "hypothetical"
    body_start = 0
    polite = rules.polite.match(folded, lowered) if rules.polite is not None else None
    if polite is not None:
        body_start = polite.end()
    elif _is_question(folded, lowered, rules):
        head = _statement_before_tag(folded, rules)
        if head is None:
            return "question"
        text = text[:head].rstrip(_TAG_TRAIL)
        folded = folded[: len(text)]
    body = folded[body_start:]
    body_lowered = body.casefold()
    if _is_smalltalk(text, folded, rules):
        return "smalltalk"
    assistant = allowed is not None
    if assistant and meaning.offered(text, rules):
        return "offer"
    confirmed = assistant and meaning.confirmed(text, rules)
    if confirmed:
        # What the user confirmed is about them, not about the assistant that noted it.
        allowed, owner = CONFIRMED_KINDS, "user"
    found = _first(rules, body, body_lowered, text, body_start, owner, allowed)
    if confirmed and isinstance(found, Candidate) and found.subject is None:
        found = replace(found, subject=owner)
    if isinstance(found, Candidate) or polite is not None or not judge:
        return found
    judged = meaning.judge(text, rules, owner, assistant=assistant, context=context)
    return found if judged is None else judged


def _first(
    rules: LanguageRules,
    body: str,
    lowered: str,
    text: str,
    body_start: int,
    owner: str,
    allowed: frozenset[str] | None,
    *,
    directives: bool = True,
) -> Candidate | str:
    """The candidate of the first rule, in priority order, that matches `body`."""
    blocked = False
    vetoed: set[str] = set()
    entries = rules.entries
    for index in rules.candidates(lowered):
        rule, pattern, gate = entries[index]
        if gate is not None and not passes(gate, lowered):
            continue
        kind = rule.kind
        if kind in DIRECTIVES and not directives:
            continue
        if rule.id in vetoed:
            continue
        match = pattern.search(body)
        if match is None:
            continue
        if rule.unless.search(body, lowered) is not None:
            vetoed.add(rule.id)
            continue
        if allowed is not None and kind not in allowed:
            blocked = True
            continue
        if kind in DIRECTIVES:
            found = _directive(rule, match, text, body, body_start, rules, owner)
        else:
            found = _candidate(rule, match, text, body, body_start, rules, owner)
        if found is not None:
            return found
    return "assistant" if blocked else "no_match"


def _is_question(folded: str, lowered: str, rules: LanguageRules) -> bool:
    if _QUESTION_END.search(folded) or folded.lstrip().startswith("¿"):
        return True
    if rules.question is None or rules.question.match(folded, lowered) is None:
        return False
    return not folded.rstrip().endswith((".", "!", "…"))


def _statement_before_tag(folded: str, rules: LanguageRules) -> int | None:
    """End of the statement in "I went to Rome, have you been?", or None."""
    if folded.lstrip().startswith("¿") or (
        rules.question is not None and rules.question.match(folded, folded.casefold())
    ):
        return None
    separators = list(_SEPARATOR.finditer(folded))
    for separator in reversed(separators):
        head, tail = folded[: separator.start()], folded[separator.end() :]
        if len(head.split()) < 3:
            return None
        tail_lowered = tail.casefold()
        if tail.startswith("¿") or (
            (rules.question is not None and rules.question.match(tail, tail_lowered))
            or (rules.question_tags is not None and rules.question_tags.match(tail, tail_lowered))
        ):
            return separator.start()
    return None


def _is_smalltalk(text: str, folded: str, rules: LanguageRules) -> bool:
    """True when every chunk between commas/stops is small talk, or a name addressed
    alongside it ("Thanks, Maria!"); a name alone is not small talk."""
    if rules.smalltalk is None:
        return False
    position = 0
    talked = False
    for separator in (*_CHUNK.finditer(folded), None):
        end = separator.start() if separator is not None else len(folded)
        chunk = _EDGE.sub("", folded[position:end]).casefold()
        original = _EDGE.sub("", text[position:end])
        position = separator.end() if separator is not None else end
        if not chunk:
            continue
        if rules.smalltalk.fullmatch(chunk, chunk):
            talked = True
        elif not _NAME.fullmatch(original):
            return False
    return talked or _LETTER.search(folded) is None


def _directive(
    rule: Rule,
    match: re.Match[str],
    text: str,
    body: str,
    body_start: int,
    rules: LanguageRules,
    owner: str,
) -> Candidate | None:
    start, end = match.span("content")
    trimmed = _TRIM_CONTENT.sub("", body[start:end])
    trimmed_lowered = trimmed.casefold()
    if not trimmed or _vague(trimmed_lowered, rules):
        return None
    offset = body_start + body.index(trimmed, start)
    content = text[offset : offset + len(trimmed)]
    found = _first(rules, trimmed, trimmed_lowered, content, 0, owner, None, directives=False)
    inner = found if isinstance(found, Candidate) else None
    hedged = inner.hedged if inner is not None else _hedged(trimmed, rules)
    importance = max(rule.importance, inner.importance if inner is not None else 0.0)
    confidence = rule.confidence * (HEDGE_FACTOR if hedged else 1.0)
    subject = inner.subject if inner is not None else _first_person(trimmed, rules, owner)
    return Candidate(
        kind=inner.kind if inner is not None else "fact",
        text=content,
        rule=rule.id,
        lang=rules.code,
        subject=subject,
        predicate=inner.predicate if inner is not None else None,
        object=inner.object if inner is not None else None,
        importance=importance,
        confidence=round(confidence, 3),
        action="remember" if rule.kind == "remember" else "forget",
        hedged=hedged,
    )


def _candidate(
    rule: Rule,
    match: re.Match[str],
    text: str,
    body: str,
    body_start: int,
    rules: LanguageRules,
    owner: str,
) -> Candidate | None:
    groups = match.re.groupindex
    obj: str | None = None
    if "object" in groups and match.group("object") is not None:
        start, end = match.span("object")
        raw = _TRIM_OBJECT.sub("", text[body_start + start : body_start + end])
        if not raw or _vague(fold_chars(raw).casefold(), rules):
            return None
        obj = raw
    predicate = rule.predicate
    if "predicate" in groups and match.group("predicate") is not None:
        predicate = _predicate_name(match.group("predicate"), rules)
    subject: str | None = None
    if "subject" in groups and match.group("subject") is not None:
        start, end = match.span("subject")
        subject = _owned(text[body_start + start : body_start + end].strip(), rules, owner)
    elif rule.first_person:
        subject = owner
    else:
        subject = _first_person(body, rules, owner)
    hedged = rule.hedged or _hedged(body, rules)
    return Candidate(
        kind=rule.kind,
        text=text,
        rule=rule.id,
        lang=rules.code,
        subject=subject,
        predicate=predicate,
        object=obj,
        importance=rule.importance,
        confidence=round(rule.confidence * (HEDGE_FACTOR if hedged else 1.0), 3),
        hedged=hedged,
    )


def _vague(lowered: str, rules: LanguageRules) -> bool:
    return rules.vague is not None and rules.vague.fullmatch(lowered, lowered) is not None


def _hedged(text: str, rules: LanguageRules) -> bool:
    return rules.hedge is not None and rules.hedge.search(text, text.casefold()) is not None


def _first_person(text: str, rules: LanguageRules, owner: str) -> str | None:
    if rules.first_person is not None and rules.first_person.search(text, text.casefold()):
        return owner
    return None


def _owned(subject: str, rules: LanguageRules, owner: str) -> str:
    """ "my sister" said by Caroline -> "Caroline's sister"."""
    if rules.possessive is not None:
        folded = fold_chars(subject)
        mine = rules.possessive.match(folded, folded.casefold())
        if mine is not None:
            return f"{owner}'s {subject[mine.end() :]}"
    return subject


def _predicate_name(raw: str, rules: LanguageRules) -> str:
    """ "my favorite color" -> "favorite_color"; "my dog's name" -> "dog_name"."""
    folded = fold_chars(raw).strip()
    if rules.possessive is not None:
        mine = rules.possessive.match(folded, folded.casefold())
        if mine is not None:
            folded = folded[mine.end() :]
    return _PREDICATE_JUNK.sub("_", folded.lower()).strip("_")
