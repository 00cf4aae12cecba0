"""What crosses the model boundary: one question (`Ask`), one validated answer
(`Answer`), the `Model` protocol every provider satisfies, and the audit entry
(`RequestRecord`) of each request sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

Outcome = Literal["ok", "invalid", "unavailable", "retry"]


@dataclass(frozen=True)
class Ask:
    """One question to a model.

    `purpose` names the step that asks ("extract", "arbitrate", …), `prompt_version`
    the version of its prompt (stamped on whatever the answer becomes). `system` and
    `user` are the two messages, as the step wrote them: they are redacted and scrubbed
    of PII before they leave the process. `schema` is the JSON schema the answer must
    satisfy; `max_tokens` caps the reply."""

    purpose: str
    prompt_version: str
    system: str
    user: str
    schema: dict[str, Any]
    max_tokens: int


@dataclass(frozen=True)
class Answer:
    """A model's answer to an `Ask`: `data` is the parsed JSON, already validated against
    the ask's schema. `sent_sha256` and `sent_bytes` name the request body that went out
    (its SHA-256 and size, never its text)."""

    data: Any
    model_id: str
    prompt_version: str
    tokens_in: int
    tokens_out: int
    sent_sha256: str
    sent_bytes: int


@dataclass(frozen=True)
class RequestRecord:
    """The audit entry of one HTTP request to a model (a retry is a request of its own).

    `outcome`: "ok" (a usable answer), "invalid" (an answer refused: ModelOutputInvalid),
    "retry" (failed, tried again), "unavailable" (failed, no more tries). `detail` says
    why for anything but "ok" (an HTTP status, "timeout", a parse reason), never the
    content sent or received."""

    purpose: str
    model_id: str
    prompt_version: str
    sent_sha256: str
    sent_bytes: int
    tokens_in: int
    tokens_out: int
    outcome: Outcome
    duration_s: float
    detail: str = ""


class Model(Protocol):
    """A chat model behind one call. `ask` sends the ask (redacted and scrubbed), and
    returns an Answer whose data satisfies `ask.schema`; it raises ModelUnavailable
    (no answer after bounded retries) or ModelOutputInvalid (an answer not usable).
    `close` releases its connections (a model is also a context manager)."""

    model_id: str

    def ask(self, ask: Ask) -> Answer: ...

    def close(self) -> None: ...
