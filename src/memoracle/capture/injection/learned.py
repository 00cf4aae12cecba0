"""The write audit's learned decision: a logistic head over the sentence embedding of the
default embedder (USE, 512-d) plus a few cheap cues, asked about a text the rules left
clean.

The rules read wording; an attack said in other words ("the guidance you were handed
before this message has lapsed") slips past them. What attacks share shows in their
meaning, so the head reads the text's embedding. Embedding costs milliseconds, and most
of what people say is plainly not addressed to a machine, so the head is asked only when
the text carries a cheap intent cue (`gate`): it comes from a tool or is an assistant's,
names the assistant or its instructions ("AI", "model", "bot", "prompt", "instructions"
in en/ru/fr/es; not French "j'ai", not Home or Google Assistant) or what an attack is
after (guardrails, credentials, passwords, configuration), holds a URL, a domain name or
an e-mail address, or a role marker ("system:", ``<|im_start|>``, ``[INST]``, ``###``).
Of the repository's benign corpora (8,002 texts with LoCoMo's chat turns) 70 that the
rules leave clean carry one. A text the rules read as narration (an attack quoted in a
question about attacks, `unmask.narrated_spans`) is not asked either: its meaning is the
attack's, its intent is not.

The weights ship in ``memoracle/data`` (`WEIGHTS`, `META`), trained by
``bench/train_injection.py``; the metadata names the embedder and the threshold chosen
on held-out data. With any other embedder `load` returns None (the audit is then rules
only). numpy only at run time.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memoracle.capture.injection.classify import classify
from memoracle.capture.injection.model import Span, Verdict
from memoracle.capture.injection.unmask import narrated_spans
from memoracle.data import weights
from memoracle.embed import Embedder

__all__ = ["META", "REASON", "WEIGHTS", "Head", "audit", "cues", "gate", "load", "read_head"]

log = logging.getLogger(__name__)

WEIGHTS = "injection-head.npz"
META = "injection-head.json"

REASON = "meaning"  # the reason a write the head held gives (not a rule's)

Floats = npt.NDArray[np.float32]

_ADDRESS = re.compile(
    r"\b(?<!home )(?<!google )(?:assistants?|(?<!['’])ai|a\.i\.|models?|bots?|chatbots?"
    r"|agents?|llms?|gpt|claude|copilot"
    r"|prompts?|instructions?|guidelines|"
    r"ассистент\w*|модел\w*|бот\w*|агент\w*|ии|нейросет\w*|инструкци\w*|промпт\w*"
    r"|ia|modèles?|consignes|assistante?s?|"
    r"modelos?|asistentes?|agentes?|instrucciones)\b",
    re.IGNORECASE,
)
_URL = re.compile(
    r"https?://|www\.|\b[\w.+-]+@[\w-]+\.\w|\]\(|\b[\w-]+\."
    r"(?:com|net|org|io|dev|app|example|ru|fr|es|co|info|xyz)\b",
    re.IGNORECASE,
)
# What an attack is after, beside the assistant's own rules: its guardrails, credentials.
_ASSETS = re.compile(
    r"\b(?:guardrails?|restrictions?|credentials?|passwords?|configuration|config"
    r"|garde-fous|identifiants|mots? de passe|limites|contraseñas?|credenciales"
    r"|configuración|límites|пароль\w*|учётн\w*|настройк\w*|ограничени\w*)\b",
    re.IGNORECASE,
)
_MARKER = re.compile(
    r"^\s*(?:system|assistant|user|human|developer)\s*:|<\|?/?\w+\|?>|\[/?INST\]|###",
    re.IGNORECASE | re.MULTILINE,
)


def cues(text: str, role: str | None) -> list[float]:
    """The cheap cues beside the embedding, each 0 or 1."""
    return [
        float(role == "tool"),
        float(role == "assistant"),
        float(_ADDRESS.search(text) is not None),
        float(_URL.search(text) is not None),
        float(_MARKER.search(text) is not None),
        float(_ASSETS.search(text) is not None),
    ]


def gate(text: str, role: str | None) -> bool:
    """True when the text carries a cue that makes it worth asking the head, and is not
    narration (an attack quoted in a question about attacks)."""
    cued = role in ("tool", "assistant") or any(
        p.search(text) is not None for p in (_ADDRESS, _URL, _MARKER, _ASSETS)
    )
    return cued and not narrated_spans(text)


def audit(
    text: str,
    *,
    lang: str | None = None,
    role: str | None = None,
    head: Head | Callable[[], Head | None] | None = None,
) -> Verdict:
    """The write audit: `classify` by the rules, then, for a text they leave clean that
    passes the `gate`, the head (when given; a callable is asked for it only then, so
    the embedder is not loaded for a text the gate lets by): held as ``suspicious`` for
    the reason `REASON` when it scores at or above the shipped threshold."""
    verdict = classify(text, lang=lang, role=role)
    if verdict.level != "clean" or head is None or not gate(text, role):
        return verdict
    judge = head if isinstance(head, Head) else head()
    if judge is None or judge.score(text, role) < judge.model.threshold:
        return verdict
    return Verdict("suspicious", (REASON,), (Span(REASON, 0, len(text)),))


@dataclass(frozen=True)
class HeadModel:
    """`w`·x + `b` over [embedding, cues]; held at or above `threshold`."""

    embedder: str
    threshold: float
    w: Floats
    b: float
    meta: dict[str, Any]


def read_head() -> HeadModel:
    """The shipped weights and their metadata."""
    meta, arrays = weights(META, WEIGHTS)
    w, b = arrays["w"], arrays["b"]
    return HeadModel(
        embedder=str(meta["embedder"]),
        threshold=float(meta["threshold"]),
        w=w.astype(np.float32),
        b=float(b),
        meta=meta,
    )


class Head:
    """The learned decision over one embedder (the one it was trained for)."""

    def __init__(self, model: HeadModel, embedder: Embedder) -> None:
        self.model = model
        self._embedder = embedder

    def score(self, text: str, role: str | None) -> float:
        """The probability that `text` is an attack (embeds it: milliseconds)."""
        vector = np.asarray(self._embedder.embed_documents([text]), dtype=np.float32)[0]
        x = np.concatenate([vector, np.asarray(cues(text, role), dtype=np.float32)])
        z = float(x @ self.model.w) + self.model.b
        return float(1.0 / (1.0 + np.exp(-min(max(z, -30.0), 30.0))))

    def holds(self, text: str, role: str | None) -> bool:
        """True when the text carries a cue (`gate`) and scores at or above the threshold."""
        return gate(text, role) and self.score(text, role) >= self.model.threshold


def load(embedder: Embedder | None) -> Head | None:
    """The head when `embedder` is the one its weights were trained on; else None, with
    a log line saying the audit is rules only and why."""
    try:
        model = read_head()
    except (OSError, ValueError, KeyError) as exc:
        log.warning("injection head off (weights unreadable: %s): rules only", exc)
        return None
    if embedder is None or embedder.model_id != model.embedder:
        log.info(
            "injection head off: trained for embedder %s, this store uses %s; rules only",
            model.embedder,
            "none" if embedder is None else embedder.model_id,
        )
        return None
    return Head(model, embedder)
