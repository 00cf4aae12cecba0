"""Attributes by meaning: which single-valued attribute (where someone lives, works, who
their partner is, …) a statement that no slot rule read is about, and the value it
names. Rules know templates; people say "got the keys to the new place in Sheffield" or
"first week at Zalando done-ish". What such sentences share with "I live in Berlin" is
their meaning, so each attribute has prototype sentences in every language (data: the
``[prototypes]`` table of ``language/rules/slots/<lang>.toml``, an attribute a key,
``other`` the sentences that name something without stating an attribute: a trip, a
visit, a meeting), embedded once per process and model, and a statement is read as the
attribute whose prototypes are closest to it.

`AttributeReader.read` gives the attribute, how alike the closest prototype is, and the
margin over the runner-up (another attribute or `other`); `values_in` the names a text
holds (a proper name inside a sentence, a model name with a number), the candidates for
its value. Whether a reading is sure enough to supersede, or only to dispute, is the
engine's (`engine/settle.by_attribute`). Pure but for the embedder it is given.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from memoracle.capture.dates import find_dates
from memoracle.embed import mapped
from memoracle.embed.core import Embedder, Vector
from memoracle.language import datafiles
from memoracle.language.kit import read_kind
from memoracle.lifecycle.slots.model import SlotFileError

__all__ = [
    "OTHER",
    "AttributeReader",
    "Reading",
    "prototypes",
    "prototypes_from",
    "reader_for",
    "values_in",
]

OTHER = "other"  # the prototypes that state no attribute
_TOP = 2  # an attribute's score: the mean of its closest prototypes' cosines

# A run of capitalised words that does not open the sentence ("I" aside), optionally
# ending on a model number ("Hyde Park Rd", "MacBook Air", "Model 3", "Pixel 8"), or a
# «quoted» name. The capture anchor's shape (capture/meaning.py), with the words joined.
_WORD = r"(?!I(?:'|’|\b))(?-i:[A-ZÀ-ÖØ-ÞА-ЯЁ])[\w&'’.-]*"
_NAME = re.compile(
    rf"(?<=[\s\"'(«“,])(?:{_WORD})(?:\s+(?:{_WORD}|\d+[A-Za-z]?\b))*"
    r"|\b(?-i:[A-Z])[A-Za-z]*[ -]?\d+[A-Za-z]?\b|\b[A-Za-z]+\d+[A-Za-z]?\b|«[^»]+»|“[^”]+”"
)
_NOT_NAMES = frozenset({"User"})  # how a statement made self-contained names the speaker
_SENTENCE_END = re.compile(r"[.!?…]\s+$")
_ANCHOR = datetime(2001, 1, 3, 12, tzinfo=UTC)  # any instant: a date's words are the same


@dataclass(frozen=True)
class Reading:
    attribute: str  # never `OTHER`
    cosine: float  # the attribute's score (mean of its closest prototypes)
    margin: float  # over the runner-up, `OTHER` included


@functools.cache
def prototypes() -> Mapping[str, tuple[str, ...]]:
    """The packaged prototype sentences by attribute, every language's merged."""
    files, _ = read_kind("slots", error=SlotFileError, shared="values.toml")
    return prototypes_from([(f.data.get("prototypes", {}), f.source) for f in files.values()])


def prototypes_from(
    tables: Sequence[tuple[Mapping[str, object], str]],
) -> Mapping[str, tuple[str, ...]]:
    """Prototype sentences by attribute from ``[prototypes]`` tables; `SlotFileError`
    naming the file and attribute for a bad entry."""
    found: dict[str, list[str]] = {}
    for table, source in tables:
        if not isinstance(table, Mapping):
            raise SlotFileError(f"{source}: [prototypes] must be a table.")
        for attribute, sentences in table.items():
            said = datafiles.strings(sentences, source, f"[prototypes] {attribute}", SlotFileError)
            found.setdefault(str(attribute), []).extend(s.strip() for s in said if s.strip())
    return {a: tuple(s) for a, s in sorted(found.items()) if s}


class AttributeReader:
    """The prototypes of every attribute as unit vectors of one model."""

    def __init__(self, embedder: Embedder, table: Mapping[str, tuple[str, ...]]) -> None:
        self.model_id = embedder.model_id
        self.labels = [a for a, sentences in table.items() for _ in sentences]
        texts = [s for sentences in table.values() for s in sentences]
        self.matrix = mapped.fixed(embedder, texts)  # kept beside the model: mapped
        self.attributes = sorted(set(self.labels))
        self._rows = {a: [i for i, b in enumerate(self.labels) if b == a] for a in self.attributes}

    def read(self, vector: Vector) -> Reading | None:
        """The attribute closest in meaning to `vector`, or None when that is `OTHER`
        (or there are no prototypes)."""
        if not self.labels:
            return None
        cosines = self.matrix @ np.asarray(vector, dtype=np.float32)
        scores = sorted(
            (
                (float(np.mean(np.sort(cosines[rows])[-_TOP:])), attribute)
                for attribute, rows in self._rows.items()
            ),
            reverse=True,
        )
        best, attribute = scores[0]
        if attribute == OTHER:
            return None
        runner_up = scores[1][0] if len(scores) > 1 else 0.0
        return Reading(attribute, best, best - runner_up)


_READERS: dict[str, AttributeReader] = {}
_LOCK = threading.Lock()


def reader_for(embedder: Embedder) -> AttributeReader:
    """The packaged prototypes embedded with `embedder`'s model, once per process (they
    are package data; every store using the model shares them)."""
    with _LOCK:
        reader = _READERS.get(embedder.model_id)
        if reader is None:
            reader = _READERS[embedder.model_id] = AttributeReader(embedder, prototypes())
        return reader


def values_in(text: str, lang: str | None = None) -> list[str]:
    """The names `text` holds, in order, each once: the candidates for the value of the
    attribute it states ("ok we're out!! got the keys to the new place in Sheffield" ->
    ["Sheffield"]). A word that opens a sentence is not a name by its capital alone, nor
    one inside a date ("on Monday", "le 12 Mars") with `lang` given, and a word in
    capitals (an acronym, or shouting: "AGAIN") only when there is no other."""
    dates = [m.span for m in find_dates(text, _ANCHOR, lang)] if lang else []
    found: list[str] = []
    for match in _NAME.finditer(text):
        start = match.start()
        before = text[:start]
        if not before.strip() or _SENTENCE_END.search(before):
            continue  # opens the text or a sentence
        if any(a <= start < b for a, b in dates):
            continue  # a weekday or a month
        name = match.group().strip("«»“”.'’ ")
        if name.split("'")[0].split("’")[0] in _NOT_NAMES:
            continue  # the statement's own word for the speaker ("User's manager")
        if name and name.casefold() not in (f.casefold() for f in found):
            found.append(name)
    proper = [n for n in found if not n.isupper()]
    return proper or found  # "the landlord in Leeds is putting the rent up AGAIN": Leeds
