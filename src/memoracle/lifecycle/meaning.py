"""Lifecycle by meaning: which later words finish a task, change a plan, or describe
memories to forget — in every language the slot files speak. Pure: texts in, answers
out; the words are data (the ``[meaning]`` table of ``language/rules/slots/<lang>.toml``).

Words are compared as stems: folded (case, accents) and cut to their first
`STEM` letters, and two stems meet when one starts with the other's first `STEM - 1`
letters too, so "сдать"/"сдал", "llamar"/"llamé", "réserve"/"réservé" meet while
"bank" and "plumber" do not. Topics (``[meaning.topics]``) join the words of one
subject across languages: "job", "работа", "travail", "trabajo" are one topic, so
"forget what I told you about my old job" finds "I work at Oracle".
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memoracle.language import datafiles
from memoracle.language.kit import packaged, read_folder
from memoracle.language.words import content_words, fold
from memoracle.lifecycle.slots.model import SlotFileError

__all__ = [
    "STEM",
    "Words",
    "change_of_plan",
    "described",
    "meaning_words",
    "reports_done",
    "stems",
]

STEM = 5
_MIN_SHARED = 2  # task stems a report must share when the task names two or more
_ABOUT = 3  # a report is about its task: a third of its own words at least are the task's
_KEYS = frozenset({"modal", "done", "not_done", "change", "lead", "topics"})


@dataclass(frozen=True)
class Words:
    """The `[meaning]` words of every language, merged (a turn may mix languages)."""

    modal: frozenset[str]  # stems of task words that do not name the task ("need")
    done: tuple[str, ...]  # folded phrases reporting something finished
    not_done: tuple[str, ...]  # folded phrases saying it is not ("not yet")
    change: tuple[str, ...]  # folded phrases replacing an earlier plan or date
    lead: frozenset[str]  # stems of a description's words that name nothing ("old")
    topics: Mapping[str, frozenset[str]]  # stem -> the stems of its topic


@functools.cache
def meaning_words() -> Words:
    """The packaged words, read once per process."""
    files, _ = read_folder(
        packaged("slots"), label="language/rules/slots", error=SlotFileError, shared="values.toml"
    )
    return words_from([(f.data.get("meaning", {}), f.source) for f in files.values()])


def words_from(tables: Iterable[tuple[Mapping[str, object], str]]) -> Words:
    """`Words` from `[meaning]` tables; `SlotFileError` naming the file for a bad one."""
    lists: dict[str, set[str]] = {key: set() for key in _KEYS - {"topics"}}
    groups: dict[str, set[str]] = {}
    for table, source in tables:
        where = "[meaning]"
        if not isinstance(table, Mapping):
            raise SlotFileError(f"{source}: {where} must be a table.")
        datafiles.no_unknown(table, _KEYS, source, where, SlotFileError)
        for key in lists:
            lists[key].update(
                _phrase(w)
                for w in datafiles.strings(
                    table.get(key, []), source, f"{where} {key}", SlotFileError
                )
            )
        topics = table.get("topics", {})
        if not isinstance(topics, Mapping):
            raise SlotFileError(f"{source}: [meaning.topics] must be a table.")
        for name, words in topics.items():
            found = datafiles.strings(words, source, f"[meaning.topics] {name}", SlotFileError)
            groups.setdefault(str(name), set()).update(_stem(fold(w)) for w in found)
    topics_by_stem: dict[str, frozenset[str]] = {}
    for group in groups.values():
        for stem in group:
            topics_by_stem[stem] = frozenset(group | topics_by_stem.get(stem, frozenset()))
    return Words(
        modal=frozenset(_stem(w) for w in lists["modal"]),
        done=tuple(sorted(lists["done"])),
        not_done=tuple(sorted(lists["not_done"])),
        change=tuple(sorted(lists["change"])),
        lead=frozenset(_stem(w) for w in lists["lead"]),
        topics=topics_by_stem,
    )


def _phrase(text: str) -> str:
    return " ".join(fold(w) for w in text.split())


def _stem(word: str) -> str:
    return word[:STEM]


def stems(text: str) -> list[str]:
    """The content words of `text` as stems, in order, each once."""
    return list(dict.fromkeys(_stem(fold(w)) for w in content_words(text)))


def meet(a: str, b: str, *, loose: bool = False) -> bool:
    """Whether two stems are one word's: equal, or sharing all but their last letter
    (at least three letters): "llamar"/"llamé", "сдать"/"сдал", "réserve"/"réservé".
    `loose` also lets two short stems (five letters or fewer) differ in their last two
    ("pagar"/"pagué"), for verbs whose endings change more; only where two words must
    meet (a task's report), never for one alone (a description)."""
    if a == b:
        return True
    shortest = min(len(a), len(b))
    cut = min(STEM - 1, shortest - 1)
    if loose and max(len(a), len(b)) <= STEM:
        cut = min(cut, max(3, shortest - 2))
    return cut >= 3 and a[:cut] == b[:cut]


def _says(text: str, phrases: Sequence[str]) -> bool:
    """Whether folded `text` holds one of `phrases` as whole words."""
    folded = " " + " ".join(fold(w) for w in re.findall(r"[\w'’@.-]+", text)) + " "
    folded = folded.replace("’", "'")
    return any(re.search(rf"(?<![\w]){re.escape(p)}(?![\w])", folded) for p in phrases if p)


def reports_done(task: str, report: str, words: Words | None = None) -> bool:
    """Whether `report` says the task `task` is finished: it shares the task's naming
    stems (its words but "need", "надо", "dois", "tengo que" …) — at least two and at
    least half of them, or the one there is when the report also says "done" — and does
    not say it is not ("I haven't finished the report yet"); and it is about the task:
    a third of its own words at least are the task's, so a long turn that happens to
    use two of them reports nothing, and one of those shared is a word of five letters
    or more (short ones — "take", "soon" — name no task)."""
    w = words or meaning_words()
    if _says(report, w.not_done):
        return False
    named = [s for s in stems(task) if s not in w.modal]
    said = stems(report)
    met = [s for s in named if any(meet(s, t, loose=True) for t in said)]
    shared = len(met)
    if not named or shared * _ABOUT < len(said):  # a long turn passing by is no report
        return False
    if all(len(s) < STEM for s in met):  # "take", "soon": no thing named
        return False
    if len(named) == 1:
        return shared == 1 and _says(report, w.done)
    return shared >= max(_MIN_SHARED, math.ceil(len(named) / 2))


def change_of_plan(text: str, words: Words | None = None) -> bool:
    """Whether `text` says an earlier plan or date no longer holds ("change of plans",
    "the meeting moved to Thursday", "передумали", "finalement", "al final")."""
    return _says(text, (words or meaning_words()).change)


def overlap(a: str, b: str) -> int:
    """How many stems of `a` meet one of `b` (how near two plans are in their words)."""
    other = stems(b)
    return sum(any(meet(s, t) for t in other) for s in stems(a))


def described(description: str, text: str, words: Words | None = None) -> tuple[int, int]:
    """(words of the description `text` speaks of, words it has): each naming word of
    `description` ("my old job" -> "job") counts when `text` holds it or a word of its
    topic in any language ("I work at Oracle")."""
    w = words or meaning_words()
    wanted = [s for s in stems(description) if s not in w.lead]
    said = stems(text)
    hit = 0
    for s in wanted:
        family = w.topics.get(s, frozenset()) | {s}
        if any(meet(f, t) for f in family for t in said):
            hit += 1
    return hit, len(wanted)
