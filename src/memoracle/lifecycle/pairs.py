"""The learned decision over a pair: how does a new statement relate to one memory the
same person already has? `update` (the same thing, a new value: the old one is no longer
true), `same` (the same claim again, in other words or another language), `negate` (the
old claim withdrawn, no new value given) or `coexist` (both stay true: another
attribute, a second value of a many-valued thing, someone else's, a wish or a question).

The slot rules and the attribute prototypes read templates; people say "handed in my
notice" and, weeks later, "first week at the new place is brutal". What such a pair
shares shows in the two meanings together, so the decision reads the default embedder's
vectors of both texts, u (the memory) and v (the new statement), as
[u, v, |u − v|, u ⊙ v], plus a few cheap cues of the words (`cues`), and applies a
softmax layer trained by ``bench/train_pairs.py`` on pairs written for this by
independent writers (``bench/data/pairs/``) and pairs taken from the dev lifecycle sets.

The weights ship in ``memoracle/data`` (`WEIGHTS`, `META`); the metadata names the
embedder they were trained on. With any other embedder the vectors mean something
else, so `load` logs why and returns None: the lifecycle is then the rules' alone.
What the engine does with a decision (supersede, dispute, confirm) is
`engine/relate.py`'s. Pure but for the embedder it is given; numpy only at run time.
"""

from __future__ import annotations

import logging
import math
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.data import weights
from memoracle.embed.core import Embedder, Vector
from memoracle.lifecycle.attributes import values_in
from memoracle.lifecycle.meaning import stems

__all__ = [
    "CUES",
    "LABELS",
    "META",
    "WEIGHTS",
    "Decision",
    "PairModel",
    "cues",
    "features",
    "load",
    "read_model",
]

log = logging.getLogger(__name__)

WEIGHTS = "pair-model.npz"
META = "pair-model.json"
LABELS = ("update", "same", "negate", "coexist")
BANDS = ("supersede", "dispute", "confirm")  # the probabilities the engine acts at
CUES = 9  # the cues beside the four vector blocks

_DIGITS = re.compile(r"\d+")

Floats = npt.NDArray[np.float32]


def _share(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a) if a else 0.0


def cues(old: str, new: str) -> list[float]:
    """The cheap cues beside the vectors: the share of each text's word stems the other
    holds, their Jaccard, names each holds that the other lacks (a value dropped, a
    value given), a name both hold, numbers that differ, the new text a question, and
    the lengths' log ratio."""
    a, b = set(stems(old)), set(stems(new))
    union = a | b
    old_names = {n.casefold() for n in values_in(old)}
    new_names = {n.casefold() for n in values_in(new)}
    numbers = set(_DIGITS.findall(old)), set(_DIGITS.findall(new))
    return [
        _share(a, b),
        _share(b, a),
        len(a & b) / len(union) if union else 0.0,
        float(bool(old_names - new_names)),
        float(bool(new_names - old_names)),
        float(bool(old_names & new_names)),
        float(bool(numbers[0]) and bool(numbers[1]) and numbers[0] != numbers[1]),
        float(new.rstrip().endswith("?")),
        math.log((len(new) + 1) / (len(old) + 1)) / 3.0,
    ]


def features(u: Vector | Floats, v: Vector | Floats, old: str, new: str) -> Floats:
    """One row: the memory's vector `u`, the new statement's `v`, |u − v|, u ⊙ v, the
    cosine, then `cues`."""
    a = np.asarray(u, dtype=np.float32)
    b = np.asarray(v, dtype=np.float32)
    extra = np.array([float(a @ b), *cues(old, new)], dtype=np.float32)
    return np.concatenate([a, b, np.abs(a - b), a * b, extra])


@dataclass(frozen=True)
class Decision:
    label: str  # one of LABELS
    probability: float  # of that label
    probabilities: dict[str, float]

    @property
    def change(self) -> float:
        """How likely the new statement ends the old claim: update or negate."""
        return self.probabilities["update"] + self.probabilities["negate"]

    @property
    def how(self) -> str:
        """Which change it is, the likelier of update and negate."""
        p = self.probabilities
        return "update" if p["update"] >= p["negate"] else "negate"


@dataclass(frozen=True)
class Model:
    """A softmax layer over standardised features (`mean`, `scale`), or, with `hidden`,
    one hidden layer of ReLUs before it."""

    embedder: str
    mean: Floats
    scale: Floats
    w: Floats  # (features or hidden, len(LABELS))
    b: Floats
    hidden_w: Floats | None
    hidden_b: Floats | None
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "pair-model"))


def read_model() -> Model:
    """The shipped weights and their metadata."""
    meta, arrays = weights(META, WEIGHTS)
    if tuple(meta["labels"]) != LABELS:
        raise ValueError(f"{META}: labels {meta['labels']} are not {list(LABELS)}")
    bands = meta.get("bands")
    if not isinstance(bands, dict) or any(
        not isinstance(bands.get(band), int | float) for band in BANDS
    ):
        raise ValueError(f"{META}: 'bands' must give a probability for each of {list(BANDS)}")
    hidden = "hidden_w" in arrays
    return Model(
        embedder=str(meta["embedder"]),
        mean=arrays["mean"].astype(np.float32),
        scale=arrays["scale"].astype(np.float32),
        w=arrays["w"].astype(np.float32),
        b=arrays["b"].astype(np.float32),
        hidden_w=arrays["hidden_w"].astype(np.float32) if hidden else None,
        hidden_b=arrays["hidden_b"].astype(np.float32) if hidden else None,
        meta=meta,
    )


def probabilities(model: Model, x: Floats) -> Floats:
    """The label probabilities of each row of features `x` (rows × `LABELS`)."""
    z = (np.atleast_2d(x) - model.mean) / model.scale
    if model.hidden_w is not None and model.hidden_b is not None:
        z = np.maximum(z @ model.hidden_w + model.hidden_b, 0.0)
    logits = z @ model.w + model.b
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    return np.asarray(p / p.sum(axis=1, keepdims=True), dtype=np.float32)


class PairModel:
    """The learned decision over one embedder (the one it was trained for)."""

    def __init__(self, model: Model, embedder: Embedder) -> None:
        self.model = model
        self.embedder = embedder

    @property
    def name(self) -> str:
        return self.model.name

    def decide(self, pairs: Sequence[tuple[Vector, str, Vector, str]]) -> list[Decision]:
        """For each (memory's vector, memory's text, new vector, new text), the label
        the model gives and its probability."""
        if not pairs:
            return []
        x = np.vstack([features(u, v, old, new) for u, old, v, new in pairs])
        decided = []
        for row in probabilities(self.model, x):
            best = int(np.argmax(row))
            decided.append(
                Decision(
                    LABELS[best],
                    float(row[best]),
                    {label: round(float(p), 4) for label, p in zip(LABELS, row, strict=True)},
                )
            )
        return decided

    def decide_texts(self, pairs: Sequence[tuple[str, str]]) -> list[Decision]:
        """`decide` for (memory, new statement) texts, embedded here."""
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        vectors = dict(zip(texts, self.embedder.embed_documents(texts), strict=True))
        return self.decide([(vectors[old], old, vectors[new], new) for old, new in pairs])


def load(embedder: Embedder | None) -> PairModel | None:
    """The pair model when `embedder` is the one its weights were trained on; else None,
    with a log line saying the lifecycle is the rules' alone and why."""
    try:
        model = read_model()
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        log.warning("pair model off (weights unreadable: %s): rules only", exc)
        return None
    if embedder is None or embedder.model_id != model.embedder:
        log.info(
            "pair model off: trained for embedder %s, this store uses %s; the lifecycle "
            "uses the rules only",
            model.embedder,
            "none" if embedder is None else embedder.model_id,
        )
        return None
    return PairModel(model, embedder)
