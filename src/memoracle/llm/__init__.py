"""The optional model path: one small interface over a chat model the user chooses.

A step asks (`Ask`: two messages and the JSON schema its answer must satisfy) and gets
an `Answer` whose data satisfies that schema, or an error: `ModelUnavailable` (queue
the work) or `ModelOutputInvalid` (quarantine it). Before a request leaves the process
its text is redacted as capture redacts it and scrubbed of the PII classes
`llm.scrub` names; each request is reported to `on_request` as a `RequestRecord`
(hash and size of what was sent, never its content). `open_model(settings)` gives
None when `llm.provider` is empty: the model path is off by default, and then no
model client is imported. Never touches the store. docs/llm.md.
"""

from __future__ import annotations

from memoracle.llm.errors import ModelOutputInvalid, ModelUnavailable
from memoracle.llm.factory import open_model
from memoracle.llm.types import Answer, Ask, Model, RequestRecord

__all__ = [
    "Answer",
    "Ask",
    "Model",
    "ModelOutputInvalid",
    "ModelUnavailable",
    "RequestRecord",
    "open_model",
]
