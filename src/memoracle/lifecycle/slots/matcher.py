"""Matching: the slots a sentence states (`SlotBook.slots_of`), with the guards that keep
a sentence from claiming what it does not (questions, vague or vetoed values,
negation, other people's facts).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

from memoracle.capture.extract import split_sentences
from memoracle.capture.lang import detect_language
from memoracle.capture.rules import LanguageRules, default_rules
from memoracle.language.kit import PerLanguage, RuleFile
from memoracle.language.prefilter import Matcher, passes
from memoracle.language.words import fold_chars
from memoracle.lifecycle.slots.model import (
    DEFAULT_SUBJECT,
    LanguageSlots,
    Slot,
    SlotRule,
    Vocabulary,
)
from memoracle.lifecycle.slots.names import (
    _NAME_WORD,
    _TRIM,
    _VERSIONED,
    _category,
    _comparable,
    _fold_words,
    _name_key,
    key_of,
)

_CLAUSE = re.compile(r"[,;:]|\s[-–—]\s")


class SlotBook:
    """Every language's slot rules, each compiled on first use, and the shared
    vocabulary. (Compiling a language's patterns takes a few hundred milliseconds.)"""

    def __init__(
        self,
        files: Mapping[str, RuleFile],
        vocabulary: Vocabulary,
        compile: Callable[[RuleFile, Vocabulary], LanguageSlots],
    ) -> None:
        self._languages = PerLanguage(files, lambda f: compile(f, vocabulary))
        self.vocabulary = vocabulary

    @property
    def codes(self) -> tuple[str, ...]:
        """Language codes, sorted."""
        return self._languages.codes

    def language(self, code: str) -> LanguageSlots | None:
        """The compiled rules of `code`, or None if there is no such file."""
        return self._languages.get(code)

    def compile_all(self) -> None:
        """Compile every language now, so that a malformed file fails here."""
        self._languages.compile_all()

    def slots_of(
        self, text: str, *, lang: str | None = None, speaker: str | None = None
    ) -> tuple[Slot, ...]:
        """See the module function `slots_of`."""
        owner = _name_key(speaker, self.vocabulary) if speaker else DEFAULT_SUBJECT
        if lang is not None:
            return self._text(text, lang, owner)
        # Short texts fool language detection ("Mom lives in Florida" looks Spanish), so
        # when the detected language finds nothing the others are tried; their patterns
        # hardly ever fire on a foreign sentence, and literal gates keep this cheap.
        detected = detect_language(text)
        for code in (detected, *(code for code in self.codes if code != detected)):
            if code != detected and not _script_fits(code, text):
                continue
            found = self._text(text, code, owner)
            if found:
                return found
        return ()

    def _text(self, text: str, code: str, owner: str) -> tuple[Slot, ...]:
        language = self.language(code)
        if language is None:
            return ()
        capture = default_rules().get(code) if code in default_rules().codes else None
        found: list[Slot] = []
        abbreviations = capture.abbreviations if capture is not None else frozenset()
        for start, end in split_sentences(text, abbreviations):
            found.extend(self._sentence(text[start:end], language, capture, owner))
        return tuple(found)

    def _sentence(
        self, sentence: str, language: LanguageSlots, capture: LanguageRules | None, owner: str
    ) -> Iterator[Slot]:
        folded = fold_chars(sentence)
        lowered = folded.casefold()
        if _not_a_claim(folded, lowered, capture):
            return
        hedged = language.hedge is not None and language.hedge.search(folded, lowered) is not None
        claimed: list[tuple[int, int]] = []
        done: set[int] = set()  # rules that yielded, or were vetoed
        for index in language.candidates(lowered):
            number, pattern, gate = language.entries[index]
            if number in done or not passes(gate, lowered):
                continue
            match = pattern.search(folded)
            if match is None:
                continue
            rule = language.rules[number]
            if rule.unless is not None and rule.unless.search(folded, lowered) is not None:
                done.add(number)
                continue
            made = self._slots(rule, match, folded, language, capture, owner, hedged, claimed)
            if made:
                done.add(number)
                yield from made

    def _slots(
        self,
        rule: SlotRule,
        match: re.Match[str],
        folded: str,
        language: LanguageSlots,
        capture: LanguageRules | None,
        owner: str,
        hedged: bool,
        claimed: list[tuple[int, int]],
    ) -> list[Slot]:
        span = _span(match, "value") or _span(match, "topic") or match.span()
        if any(start < span[1] and span[0] < end for start, end in claimed):
            return []
        said = rule.value if rule.value is not None else _group(match, "value")
        topic_said = _group(match, "topic")
        # A rule that fixes the value ("dislike") vets what the sentence is about instead.
        vetted = said if rule.value is None else topic_said
        if not said or (vetted is not None and _vetoed(rule.not_values, vetted)):
            return []
        if any(text is not None and _vague(text, capture) for text in (vetted, topic_said)):
            return []
        if _group(match, "subject") is not None:
            subject = _subject(_group(match, "subject") or "", language, owner, self.vocabulary)
            if subject is None:
                return []
        else:
            subject = owner
        negated = rule.negated or (rule.negatable and _negated(match, folded, language))
        vocabulary = self.vocabulary
        slots: list[Slot] = []
        base = rule.attribute
        value_said = said
        if rule.versioned:
            versioned = _VERSIONED.match(said)
            if versioned is not None:
                tool = key_of(versioned.group("tool"), vocabulary)
                version = versioned.group("version").casefold()
                slots.append(
                    Slot(subject, f"version_of:{tool}", version, hedged, negated, said, rule.id)
                )
                value_said = versioned.group("tool")
        value = _comparable(base, value_said, vocabulary)
        if not value or (rule.uncategorised and self._a_tool(value, _group(match, "other"))):
            return []
        attribute = self._attribute(base, value, topic_said, _group(match, "other"), rule)
        if attribute is not None:
            slots.insert(0, Slot(subject, attribute, value, hedged, negated, said, rule.id))
        if slots:
            claimed.append(span)
        return slots

    def _a_tool(self, value: str, other_said: str | None) -> bool:
        """Whether the value or the alternative left is in a category of tools."""
        other = key_of(other_said, self.vocabulary) if other_said else ""
        return any(_category(v, self.vocabulary) is not None for v in (value, other) if v)

    def _attribute(
        self,
        template: str,
        value: str,
        topic_said: str | None,
        other_said: str | None,
        rule: SlotRule,
    ) -> str | None:
        vocabulary = self.vocabulary
        if "{thing}" in template:
            if topic_said is None:
                return None
            thing = key_of(topic_said, vocabulary)
            return template.replace("{thing}", thing) if thing else None
        if "{topic}" not in template:
            return template
        topic = _category(value, vocabulary)
        if topic is None and topic_said is not None:
            key = key_of(topic_said, vocabulary)
            topic = vocabulary.topics.get(key, key) or None
        other = key_of(other_said, vocabulary) if other_said is not None else None
        if topic is None and other:
            topic = _category(other, vocabulary) or "|".join(sorted({value, other}))
        if topic is None:
            topic = rule.fallback
        return template.replace("{topic}", topic) if topic else None


def _script_fits(code: str, text: str) -> bool:
    """Whether a language worth trying on `text`: one with its own script (Russian) only
    when that script occurs in it."""
    detection = default_rules().detection.get(code)
    script = detection.script if detection is not None else None
    return script is None or script.search(text) is not None


def _not_a_claim(folded: str, lowered: str, capture: LanguageRules | None) -> bool:
    """Questions and hypotheticals state nothing (capture's markers decide)."""
    stripped = folded.strip()
    if stripped.endswith("?") or stripped.startswith("¿"):
        return True
    if capture is None:
        return False
    if capture.hypothetical is not None and capture.hypothetical.search(folded, lowered):
        return True
    return (
        capture.question is not None
        and capture.question.match(folded, lowered) is not None
        and not stripped.endswith((".", "!", "…"))
    )


def _span(match: re.Match[str], group: str) -> tuple[int, int] | None:
    if group not in match.re.groupindex or match.group(group) is None:
        return None
    return match.span(group)


def _group(match: re.Match[str], group: str) -> str | None:
    if group not in match.re.groupindex or match.group(group) is None:
        return None
    trimmed = _TRIM.sub("", match.group(group))
    return trimmed or None


def _vague(said: str, capture: LanguageRules | None) -> bool:
    if capture is None or capture.vague is None:
        return False
    lowered = said.casefold()
    return capture.vague.fullmatch(lowered, lowered) is not None


def _vetoed(not_values: Matcher | None, said: str) -> bool:
    return not_values is not None and not_values.search(said, said.casefold()) is not None


def _negated(match: re.Match[str], folded: str, language: LanguageSlots) -> bool:
    """A negation word in the value's clause before it, or one right after it."""
    start, end = _span(match, "value") or _span(match, "topic") or match.span()
    clause_start = 0
    for separator in _CLAUSE.finditer(folded, 0, match.start()):
        clause_start = separator.end()
    before = folded[clause_start:start]
    if language.negation is not None and language.negation.search(before, before.casefold()):
        return True
    after = folded[end:]
    return (
        language.negation_after is not None
        and language.negation_after.match(after, after.casefold()) is not None
    )


def _subject(said: str, language: LanguageSlots, owner: str, vocabulary: Vocabulary) -> str | None:
    """ "I" -> owner, "Anna's" / "my wife Anna" -> "anna", "my wife" -> "user's wife",
    "She" -> None (who?). Names lose case endings like values do ("Анны" -> "анн")."""
    words = _NAME_WORD.findall(fold_chars(said))
    if words and words[-1].casefold() in ("s", "'s"):
        words = words[:-1]
    lowered = [_fold_words(word) for word in words]
    while len(lowered) > 1 and lowered[0] in language.skip:  # "Yesterday Anna moved"
        words, lowered = words[1:], lowered[1:]
    if not lowered or lowered[0] in language.skip:
        return None
    if all(word in language.self_words for word in lowered):
        return owner
    possessive = lowered[0] in language.self_words
    rest = list(zip(words, lowered, strict=True))[1 if possessive else 0 :]
    kin = next((language.kin[low] for _, low in rest if low in language.kin), None)
    names = [low for word, low in rest if word[:1].isupper() and low not in language.kin]
    if any(name in language.skip or name in language.self_words for name in names):
        return None
    if names:
        return _name_key(" ".join(names), vocabulary)
    if kin is not None:  # "my wife", or "Mom" said as a name
        return f"{owner}'s {kin}"
    return None
