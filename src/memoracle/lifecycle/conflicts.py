"""The conflict verdict: is a new memory a CONTRADICTION, REDUNDANT or COMPATIBLE with an
active one? Pure: slots in, verdicts out.

Owns `judge` (one slot against another), `same_value`, the single- vs multi-valued
attributes and `resolve_against` / `SlotIndex` (one new memory against many active ones).
What a sentence's slot is belongs to `slots`; acting on a verdict (supersede with
``superseded_by`` and the time, mark disputed, raise confidence), and choosing which
memories to compare, belong to the engine and the nightly job.

The rules (docs/lifecycle.md), for a new slot against an old one:

- different subject or attribute -> COMPATIBLE;
- same value (see `same_value`), both affirmed or both negated -> REDUNDANT;
- one affirms what the other negates ("I live in Paris" / "I no longer live in Paris")
  -> CONTRADICTION;
- different values, both affirmed, on a single-valued attribute -> CONTRADICTION;
- anything else (different values of a multi-valued attribute, a negation of another
  value) -> COMPATIBLE.

``strength`` is "weak" when the new slot is hedged ("I might move to Lyon"), else
"strong": a strong contradiction supersedes the old memory, a weak one disputes it.

Single-valued: every attribute except `MULTI_VALUED`: people write in several
programming languages, frameworks, clouds, package managers and chat tools at once, and
``prefers:other`` /
``decision:other`` / ``uses:other`` gather unrelated values under one name. Those only
ever come out REDUNDANT or COMPATIBLE, or CONTRADICTION against their own negation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from memoracle.lifecycle.scripts import same_name
from memoracle.lifecycle.slots import ANY_VALUE, Slot, SlotBook, default_slots

__all__ = [
    "MULTI_VALUED",
    "SlotIndex",
    "Verdict",
    "graver",
    "judge",
    "resolve_against",
    "same_value",
    "single_valued",
    "value_prefix",
]

Kind = Literal["CONTRADICTION", "REDUNDANT", "COMPATIBLE"]
Strength = Literal["strong", "weak"]

# Attributes that hold several values at once; every other attribute holds one.
MULTI_VALUED: frozenset[str] = frozenset(
    {
        "uses:language",
        "uses:framework",
        "uses:cloud",
        "uses:container",
        "uses:package_manager",
        "uses:communication",
        "uses:other",
        "prefers:other",
        "decision:other",
        "pet",
    }
)

_RANK: dict[str, int] = {"COMPATIBLE": 0, "REDUNDANT": 1, "CONTRADICTION": 2}
_MIN_PHONE_DIGITS = 7
_PHONE_DIGITS = 10
_MIN_FUZZY = 4
_FUZZY_LETTERS = 2
_CYRILLIC = re.compile(r"[\u0400-\u04ff-]+")
_VERSION = re.compile(r"\d+(?:\.\d+)*")


@dataclass(frozen=True)
class Verdict:
    """How a new slot stands against an old one, and why (``reason`` is for people)."""

    kind: Kind
    strength: Strength
    reason: str
    new: Slot | None = None
    old: Slot | None = None

    @property
    def supersedes(self) -> bool:
        """A strong contradiction: the old memory is replaced."""
        return self.kind == "CONTRADICTION" and self.strength == "strong"

    @property
    def disputes(self) -> bool:
        """A weak (hedged) contradiction: the old memory is put in doubt."""
        return self.kind == "CONTRADICTION" and self.strength == "weak"


def single_valued(attribute: str) -> bool:
    """Whether `attribute` holds one value at a time (see `MULTI_VALUED`)."""
    return attribute not in MULTI_VALUED


def same_value(attribute: str, a: str, b: str) -> bool:
    """Whether two values of `attribute` (in `Slot.value` form) say the same thing.

    Phones: the same last digits, up to ten ("06 12 34 56 78" / "+33 6 12 34 56 78",
    "8 912 345 67 89" / "+7 912 345 67 89").
    Versions: one is a prefix of the other by components ("16" / "16.2", not "3.1" /
    "3.12"). Otherwise words: equal, or the shorter is the start of the longer ("Lyon" /
    "Lyon France", "New York" / "New York City") or one of its comma-separated parts
    ("France" / "Lyon, France"); Russian words also match when one is the other plus up
    to two letters, what the crude stemmer in `slots` leaves between case forms.
    """
    if a == b:
        return True
    if not a or not b:
        return False
    if attribute == "phone":
        # National and international forms share their last digits: compare up to ten.
        size = min(len(a), len(b), _PHONE_DIGITS)
        return size >= _MIN_PHONE_DIGITS and a[-size:] == b[-size:]
    if attribute.startswith("version_of:") and _VERSION.fullmatch(a) and _VERSION.fullmatch(b):
        left, right = a.split("."), b.split(".")
        size = min(len(left), len(right))
        return left[:size] == right[:size]
    if attribute in ("email", "age"):
        return False
    short, long = sorted((a, b), key=lambda value: len(value.split()))
    parts = [part.split() for part in long.split(", ")]
    words = short.replace(",", "").split()
    flat = long.replace(",", "").split()
    return _same_words(flat[: len(words)], words) or any(_same_words(part, words) for part in parts)


def value_prefix(attribute: str, value: str) -> str | None:
    """What every other value of `attribute` that `same_value` could take for `value`
    begins with, unless it has a comma; None when that cannot narrow the search.

    Only a multi-valued attribute is narrowed: there a different value is COMPATIBLE, so
    only the old memories with the same value (a repeat, or a negation) need a verdict,
    and those begin with the first letters of the new value's first word (the whole word
    when it is shorter than the fuzzy match allows, else its first `_MIN_FUZZY`
    letters). A value with a comma matches by its parts, so a new one is not narrowed
    and an old one is always a candidate (see the store's `in_slot`). On a single-valued
    attribute every old value is a candidate: a different one is a contradiction."""
    words = value.split()
    if single_valued(attribute) or not words or "," in value or value != value.lstrip():
        return None
    return words[0][:_MIN_FUZZY]


def _same_words(left: Sequence[str], right: Sequence[str]) -> bool:
    return len(left) == len(right) and all(map(_same_word, left, right))


def _same_word(a: str, b: str) -> bool:
    """Equal, or (Cyrillic) one stem the other's plus at most two letters: the crude
    stemmer leaves "амстерд" for "Амстердам" but "амстердам" for "в Амстердаме"; or one
    Cyrillic, the other Latin, and the same name ("париж" / "paris", `scripts`)."""
    if a == b:
        return True
    if (_CYRILLIC.fullmatch(a) is None) != (_CYRILLIC.fullmatch(b) is None):
        return same_name(a, b)
    short, long = sorted((a, b), key=len)
    return (
        len(short) >= _MIN_FUZZY
        and len(long) - len(short) <= _FUZZY_LETTERS
        and long.startswith(short)
        and _CYRILLIC.fullmatch(long) is not None
    )


def judge(new: Slot, old: Slot) -> Verdict:
    """The verdict of `new` against `old` (see the module docstring)."""
    strength: Strength = "weak" if new.hedged else "strong"
    if new.subject != old.subject:
        return Verdict(
            "COMPATIBLE", strength, f"different subjects: {new.subject} / {old.subject}", new, old
        )
    if new.attribute != old.attribute:
        return Verdict(
            "COMPATIBLE",
            strength,
            f"different attributes: {new.attribute} / {old.attribute}",
            new,
            old,
        )
    about = f"{new.subject} {new.attribute}"
    same = same_value(new.attribute, new.value, old.value)
    if same and new.negated == old.negated:
        return Verdict("REDUNDANT", strength, f"{about}: {_shown(new)} again", new, old)
    if same:
        if new.negated:
            reason = f"{about}: no longer {_shown(old)}"
        else:
            reason = f"{about}: {_shown(new)} again, after it was denied"
        return Verdict("CONTRADICTION", strength, _weak(reason, new), new, old)
    if new.negated and new.value == ANY_VALUE and not old.negated:
        reason = f"{about}: no longer {_shown(old)} (nor any other)"
        return Verdict("CONTRADICTION", strength, _weak(reason, new), new, old)
    if new.negated or old.negated:
        return Verdict(
            "COMPATIBLE",
            strength,
            f"{about}: denying {_shown(new if new.negated else old)} says nothing of "
            f"{_shown(old if new.negated else new)}",
            new,
            old,
        )
    if not single_valued(new.attribute):
        return Verdict(
            "COMPATIBLE",
            strength,
            f"{about}: holds several values ({_shown(new)} and {_shown(old)})",
            new,
            old,
        )
    reason = f"{about}: {_shown(new)} replaces {_shown(old)}"
    return Verdict("CONTRADICTION", strength, _weak(reason, new), new, old)


class SlotIndex:
    """Active memories' slots, indexed by (subject, attribute), for repeated checks.

    Build it once from ``(memory_id, text)`` pairs and ask `against` for each new text;
    each text is read once. The languages of the texts are detected unless `lang` is
    given; `speaker` says who "I" is in all of them.
    """

    def __init__(
        self,
        candidates: Iterable[tuple[int, str]],
        *,
        lang: str | None = None,
        speaker: str | None = None,
        book: SlotBook | None = None,
    ) -> None:
        self._book = book if book is not None else default_slots()
        self._speaker = speaker
        self._order: dict[int, int] = {}
        self._by_key: dict[tuple[str, str], list[tuple[int, Slot]]] = {}
        for position, (memory_id, text) in enumerate(candidates):
            self._order.setdefault(memory_id, position)
            for slot in self._book.slots_of(text, lang=lang, speaker=speaker):
                self._by_key.setdefault(slot.key, []).append((memory_id, slot))

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._by_key.values())

    def against(
        self,
        new_text: str,
        *,
        lang: str | None = None,
        speaker: str | None = None,
        include_compatible: bool = False,
    ) -> list[tuple[int, Verdict]]:
        """The verdict of `new_text` against each indexed memory it shares a slot with.

        One verdict per memory, the gravest over their slot pairs (CONTRADICTION, then
        REDUNDANT, then COMPATIBLE), in the order the memories were given. COMPATIBLE
        verdicts are left out unless `include_compatible`: an empty list means nothing to
        do. Memories with no slot in common are never listed.
        """
        who = speaker if speaker is not None else self._speaker
        new_slots = self._book.slots_of(new_text, lang=lang, speaker=who)
        return self.verdicts(new_slots, include_compatible=include_compatible)

    def verdicts(
        self, new_slots: Sequence[Slot], *, include_compatible: bool = False
    ) -> list[tuple[int, Verdict]]:
        """As `against`, for slots already read."""
        best: dict[int, Verdict] = {}
        for new in new_slots:
            for memory_id, old in self._by_key.get(new.key, ()):
                verdict = judge(new, old)
                held = best.get(memory_id)
                if held is None or graver(verdict, held):
                    best[memory_id] = verdict
        found = [
            (memory_id, verdict)
            for memory_id, verdict in best.items()
            if include_compatible or verdict.kind != "COMPATIBLE"
        ]
        found.sort(key=lambda item: self._order[item[0]])
        return found


def resolve_against(
    new_text: str,
    candidates: Sequence[tuple[int, str]],
    *,
    lang: str | None = None,
    speaker: str | None = None,
    include_compatible: bool = False,
) -> list[tuple[int, Verdict]]:
    """Check one new memory's text against active memories ``(id, text)``.

    `lang` is the new text's language (default: detected; the candidates' languages are
    always detected); `speaker` says who "I" is. Returns ``(id, verdict)`` for each
    candidate that shares a subject and attribute with the new text and is not merely
    COMPATIBLE (unless `include_compatible`), in candidate order. For many new texts
    against the same memories, build a `SlotIndex` once.
    """
    index = SlotIndex(candidates, speaker=speaker)
    return index.against(new_text, lang=lang, include_compatible=include_compatible)


def graver(verdict: Verdict, held: Verdict) -> bool:
    """Whether `verdict` weighs more than `held` (a contradiction over a repeat over
    nothing; a strong one over a hedged one): of two slots a text shares with one memory,
    the graver verdict is the one acted on."""
    if _RANK[verdict.kind] != _RANK[held.kind]:
        return _RANK[verdict.kind] > _RANK[held.kind]
    return verdict.strength == "strong" and held.strength == "weak"


def _weak(reason: str, new: Slot) -> str:
    return f"{reason} (hedged: disputes, does not supersede)" if new.hedged else reason


def _shown(slot: Slot) -> str:
    return repr(slot.said or slot.value)
