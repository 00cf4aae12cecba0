"""Lifecycle by meaning: which later words finish a task, change a plan, or describe
memories to forget — in every language the slot files speak. Pure: texts in, answers
out; the words are data (the ``[meaning]`` table of ``language/rules/slots/<lang>.toml``).

Words are compared as stems: folded (case, accents) and cut to their first
`STEM` letters, and two stems meet when one starts with the other's first `STEM - 1`
letters too, so "сдать"/"сдал", "llamar"/"llamé", "réserve"/"réservé" meet while
"bank" and "plumber" do not. Topics (``[meaning.topics]``) join the words of one
subject across languages: "job", "работа", "travail", "trabajo" are one topic, so
"forget what I told you about my old job" finds "I work at Oracle".

A description ("forget …") is matched more strictly (`described`): a memory speaks of
one of its words when it holds that word whole, or a word of the same topic *in the
memory's own language* with the same Snowball stem in that language ("chat" finds "my
cat" and "mon chaton"'s topic, never "change" or "charged"; "gato" never "gate") — no
prefix of a word from another language's list.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import snowballstemmer

from memoracle.capture.lang import detect_language
from memoracle.language import datafiles
from memoracle.language.kit import read_kind
from memoracle.language.words import content_words, fold
from memoracle.lifecycle.slots.model import SlotFileError

__all__ = [
    "STEM",
    "Words",
    "change_of_plan",
    "described",
    "keeps_alive",
    "only_repeats",
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
    # language -> topic -> its folded words in that language (a file's language is its
    # name: slots/fr.toml is "fr"), for matching a description in a memory's language
    by_lang: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)


@functools.cache
def meaning_words() -> Words:
    """The packaged words, read once per process."""
    files, _ = read_kind("slots", error=SlotFileError, shared="values.toml")
    return words_from([(f.data.get("meaning", {}), f.source) for f in files.values()])


def words_from(tables: Iterable[tuple[Mapping[str, object], str]]) -> Words:
    """`Words` from `[meaning]` tables; `SlotFileError` naming the file for a bad one."""
    lists: dict[str, set[str]] = {key: set() for key in _KEYS - {"topics"}}
    groups: dict[str, set[str]] = {}
    by_lang: dict[str, dict[str, set[str]]] = {}
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
            lang = PurePosixPath(source).stem
            by_lang.setdefault(lang, {}).setdefault(str(name), set()).update(fold(w) for w in found)
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
        by_lang={
            lang: {name: frozenset(ws) for name, ws in topics.items()}
            for lang, topics in by_lang.items()
        },
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


def described(
    description: str,
    text: str,
    words: Words | None = None,
    *,
    asked_in: str | None = None,
    lang: str | None = None,
    whole: bool = False,
) -> tuple[int, int]:
    """(words of the description `text` speaks of, words it has): each naming word of
    `description` ("my old job" -> "job") counts when `text` holds it whole, or holds a
    word of its topic in `text`'s own language (`lang`, else detected) with the same
    Snowball stem in that language ("I work at Oracle"; "mon chat" finds "I have a cat"
    and "Mon chaton"); a word in the description's language (`asked_in`, else detected)
    also by its stem when `text` is in that language too. Never by a prefix, never by a
    word of another language's topic list: "chat" does not find "Change of plans" nor "I
    charged my laptop", "gato" not "the gate code". `whole`: its lead words count too
    ("old" in "old office", which "our new office" does not speak of)."""
    w = words or meaning_words()
    said_in = lang or detect_language(text)
    asked = asked_in or detect_language(description)
    wanted = [x for x in _folded_words(description) if whole or _stem(x) not in w.lead]
    said = set(_folded_words(text))
    said_stems = {word_stem(t, said_in) for t in said}
    hit = 0
    for word in wanted:
        topics = _topics_of(word, asked, w)
        family = {f for t in topics for f in w.by_lang.get(said_in, {}).get(t, ())}
        if said_in == asked:
            family.add(word)
        if word in said or any(f in said or word_stem(f, said_in) in said_stems for f in family):
            hit += 1
    return hit, len(wanted)


def keeps_alive(turn: str, memory: str, words: Words | None = None) -> bool:
    """Whether a turn that asked to forget `memory` repeats something of it beyond the
    topic it names: a word they share that is no topic's nor a description's lead word
    ("forget what I told you about my dog" only names the topic of "My dog is called
    Toby"; "forget that my dog is called Toby" or "… about Toby" keeps Toby alive)."""
    w = words or meaning_words()
    topical = {f for topics in w.by_lang.values() for ws in topics.values() for f in ws}
    lang = detect_language(memory)
    stems_of_memory = {word_stem(t, lang) for t in _folded_words(memory)}
    return any(
        word_stem(x, lang) in stems_of_memory
        for x in _folded_words(turn)
        if x not in topical and _stem(x) not in w.lead
    )


def only_repeats(turn: str, memory: str, *, subject: str | None = None) -> bool:
    """Whether `turn` says nothing but what `memory` says: every content word of it is
    one of the memory's ("Toby is my dog." repeats "My dog is called Toby."), or it holds
    every one of them and at most `_ASIDE` words more ("Noted: your dog is called
    Toby."); by stems in the memory's language, the memory's `subject` ("user") aside.
    "Toby loves the park" says more."""
    lang = detect_language(memory)
    said = {word_stem(x, lang) for x in _folded_words(turn)}
    aside = {word_stem(fold(subject), lang)} if subject else set()
    held = {word_stem(x, lang) for x in _folded_words(memory)} - aside
    if not said or not held:
        return False
    return said <= held | aside or (held <= said and len(said - held) <= _ASIDE)


_ASIDE = 2  # words a turn may add to a memory it repeats whole ("noted", "remember")
_SNOWBALL = {"en": "english", "fr": "french", "es": "spanish", "ru": "russian"}


@functools.cache
def _stemmer(lang: str) -> object | None:
    name = _SNOWBALL.get(lang)
    return snowballstemmer.stemmer(name) if name else None


@functools.lru_cache(maxsize=65536)
def word_stem(word: str, lang: str) -> str:
    """A folded word's Snowball stem in `lang` (itself for a language without one, or a
    word of two letters or less)."""
    stemmer = _stemmer(lang)
    if stemmer is None or len(word) <= 2 or not word.isalpha():
        return word
    stemmed = stemmer.stemWord(word)  # type: ignore[attr-defined]
    return stemmed if isinstance(stemmed, str) and stemmed else word


def _folded_words(text: str) -> list[str]:
    """The content words of `text`, folded, each once."""
    return list(dict.fromkeys(fold(w) for w in content_words(text)))


_TOPICS_OF: dict[tuple[str, str, int], tuple[Words, frozenset[str]]] = {}


def _topics_of(word: str, lang: str, words: Words) -> frozenset[str]:
    """The topics a description's word names: those listing it whole in any language,
    or a word with its stem in its own language `lang` (kept: asked once per memory)."""
    key = (word, lang, id(words))
    if (known := _TOPICS_OF.get(key)) is not None and known[0] is words:
        return known[1]
    found: set[str] = set()
    own = word_stem(word, lang)
    for code, topics in words.by_lang.items():
        for name, listed in topics.items():
            if word in listed or (code == lang and any(word_stem(f, lang) == own for f in listed)):
                found.add(name)
    if len(_TOPICS_OF) > 4096:
        _TOPICS_OF.clear()
    _TOPICS_OF[key] = (words, frozenset(found))
    return _TOPICS_OF[key][1]
