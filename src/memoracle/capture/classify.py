"""The learned capture decision: does a sentence no rule matched still carry something
worth remembering (a durable fact about the speaker or someone they know, a preference,
a plan, a decision, an event, a relation)?

Rules and cues read templates; people say "Did a pottery class yesterday, still sore",
"Ходил на полумарафон в субботу", "Mon chien Poivre a peur de l'orage" in endless
other ways. What such sentences share shows in their meaning, so the decision reads the
sentence embedding of the default embedder (USE, 512-d) plus a few cheap cues (first
person, a name, a date word, a relative, a digit, a question mark, hedging, length) and
applies two logistic heads trained by ``bench/train_capture.py``: *keep* (a probability,
kept at or above the threshold chosen on the dev set) and *kind* (fact, preference or
event; fact when unsure). Only sentences the rules left as ``no_match`` are asked, so
guardrails, remember/forget, secrets, dates, questions, hypotheticals and small talk
stay with the rules; assistant turns are never asked, nor is a turn from which the rules
or the cues already made a memory (what else it says is, on the dev set, mostly what the
person adds about it: "moved into the new flat in Leith, *still living out of boxes*"),
and of a turn's sentences at most one is kept (`keep_one`). Two kinds of sentence the rules
let through are never kept by the learned decision, whatever its score (`barred`): one
that ends on a question mark (a statement with a question tag, "Mondays are the worst,
right?", asks for agreement, it tells nothing) and a hedged one ("I guess…", "peut-être
…"): the embedding reads their topic, not their mood.

The weights ship in ``memoracle/data`` (`WEIGHTS`, `META`); the metadata names the
embedder they were trained on. With any other embedder (``hash``, e5, an HTTP model)
the vectors mean something else, so `load` logs why and returns None: capture is then
rules-only, as before. numpy only at run time.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.capture.meaning import about_speaker
from memoracle.capture.rules import LanguageRules
from memoracle.data import weights
from memoracle.embed import Embedder
from memoracle.language.words import fold_chars

__all__ = ["KINDS", "META", "WEIGHTS", "Classifier", "barred", "cues", "load", "read_model"]

log = logging.getLogger(__name__)

WEIGHTS = "capture-classifier.npz"
META = "capture-classifier.json"
KINDS = ("fact", "preference", "event")

_ANCHOR = re.compile(r"(?<=[\s\"'(«“])[A-ZÀ-ÖØ-ÞА-ЯЁ][\w&'’.-]*")
_DIGIT = re.compile(r"\d")

Floats = npt.NDArray[np.float32]


def cues(text: str, rules: LanguageRules) -> list[float]:
    """The cheap cues beside the embedding, each 0 or 1 but the length."""
    folded = fold_chars(text)
    lowered = folded.casefold()

    def hit(matcher: Any) -> float:
        return float(matcher is not None and matcher.search(folded, lowered) is not None)

    return [
        float(about_speaker(text, rules)),
        float(_ANCHOR.search(text) is not None),
        hit(rules.when),
        hit(rules.kin),
        float(_DIGIT.search(text) is not None),
        float(text.rstrip().endswith("?")),
        hit(rules.hedge),
        math.log1p(len(text)) / 5.0,
    ]


def barred(text: str, rules: LanguageRules) -> bool:
    """True for a sentence the learned decision never keeps: one asking for agreement
    (it ends on "?") or a hedged one (the language's ``hedge`` markers)."""
    if text.rstrip().endswith("?"):
        return True
    folded = fold_chars(text)
    return rules.hedge is not None and rules.hedge.search(folded, folded.casefold()) is not None


@dataclass(frozen=True)
class Model:
    """The two heads: keep (`keep_w`·x + `keep_b`) and kind (`kind_w`·x + `kind_b`)."""

    embedder: str
    threshold: float
    keep_w: Floats
    keep_b: float
    kind_w: Floats  # (features, len(KINDS))
    kind_b: Floats
    meta: dict[str, Any]


def read_model() -> Model:
    """The shipped weights and their metadata."""
    meta, arrays = weights(META, WEIGHTS)
    keep_w, keep_b = arrays["keep_w"], arrays["keep_b"]
    kind_w, kind_b = arrays["kind_w"], arrays["kind_b"]
    return Model(
        embedder=str(meta["embedder"]),
        threshold=float(meta["threshold"]),
        keep_w=keep_w.astype(np.float32),
        keep_b=float(keep_b),
        kind_w=kind_w.astype(np.float32),
        kind_b=kind_b.astype(np.float32),
        meta=meta,
    )


class Classifier:
    """The learned decision over one embedder (the one it was trained for)."""

    def __init__(self, model: Model, embedder: Embedder) -> None:
        self.model = model
        self._embedder = embedder

    def features(self, sentences: Sequence[tuple[str, LanguageRules]]) -> Floats:
        """One row per sentence: its embedding, then its cues (one embed call a turn)."""
        vectors = self._embedder.embed_documents([text for text, _ in sentences])
        extra = np.array([cues(text, rules) for text, rules in sentences], dtype=np.float32)
        return np.hstack([np.asarray(vectors, dtype=np.float32), extra])

    def decide(self, sentences: Sequence[tuple[str, LanguageRules]]) -> list[str | None]:
        """For each sentence, the kind to keep it as, or None to leave it. A barred
        sentence is not even embedded (one embed call a turn, for the others only)."""
        return [None if s is None else s[1] for s in self.scores(sentences)]

    def keep_one(self, sentences: Sequence[tuple[str, LanguageRules]]) -> tuple[int, str] | None:
        """The one sentence of a turn to keep (its index and kind): the best scored at
        or above the threshold, or None. One, because the others of a turn that says
        something worth keeping were, on the dev set, mostly what the person added
        about it ("…, still living out of boxes lol")."""
        kept = [(s[0], i, s[1]) for i, s in enumerate(self.scores(sentences)) if s is not None]
        if not kept:
            return None
        _, i, kind = max(kept)
        return i, kind

    def scores(
        self, sentences: Sequence[tuple[str, LanguageRules]]
    ) -> list[tuple[float, str] | None]:
        """For each sentence, its keep probability and kind when it is at or above the
        threshold, else None; barred sentences are not embedded."""
        asked = [i for i, (text, rules) in enumerate(sentences) if not barred(text, rules)]
        decided: list[tuple[float, str] | None] = [None] * len(sentences)
        if not asked:
            return decided
        x = self.features([sentences[i] for i in asked])
        keep = _sigmoid(x @ self.model.keep_w + self.model.keep_b)
        kinds = np.argmax(x @ self.model.kind_w + self.model.kind_b, axis=1)
        for i, p, k in zip(asked, keep, kinds, strict=True):
            if float(p) >= self.model.threshold:
                decided[i] = (float(p), KINDS[int(k)])
        return decided


def load(embedder: Embedder | None) -> Classifier | None:
    """The classifier when `embedder` is the one its weights were trained on; else None,
    with a log line saying capture is rules-only and why."""
    try:
        model = read_model()
    except (OSError, ValueError, KeyError) as exc:
        log.warning("capture classifier off (weights unreadable: %s): rules only", exc)
        return None
    if embedder is None or embedder.model_id != model.embedder:
        log.info(
            "capture classifier off: trained for embedder %s, this store uses %s; "
            "capture uses the rules only",
            model.embedder,
            "none" if embedder is None else embedder.model_id,
        )
        return None
    return Classifier(model, embedder)


def _sigmoid(z: Floats) -> Floats:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -30, 30))), dtype=np.float32)
