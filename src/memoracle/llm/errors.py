"""The two ways asking a model fails, under memoracle.errors' tree (`EngineError`).

    EngineError
    ├── ModelUnavailable      no answer: unreachable, timed out, rate-limited (429) or a
    │                         server error (5xx) still there after the bounded retries
    └── ModelOutputInvalid    an answer, but not one we may use: it did not parse as JSON
                              or did not satisfy the ask's schema even after repair, or
                              it was larger than the reply cap

Neither is fatal to a night: the caller queues the work (ModelUnavailable) or
quarantines the output (ModelOutputInvalid) and goes on with the rule steps.
"""

from __future__ import annotations

from memoracle.errors import EngineError

RAW_KEPT = 2000  # characters of a refused reply kept on the error (for the quarantine)


class ModelUnavailable(EngineError):
    """The model gave no answer after the bounded retries. `retry_after` is the seconds
    the server last asked us to wait (its Retry-After header) when it said, else None."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ModelOutputInvalid(EngineError):
    """The model answered, but the answer is not usable: `reason` says why (did not
    parse, failed the schema and where, too large), `raw` holds the reply as received,
    cut to its first RAW_KEPT characters. Nothing of it may reach the store."""

    def __init__(self, message: str, *, reason: str, raw: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.raw = raw[:RAW_KEPT]
