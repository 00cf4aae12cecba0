"""What a request may carry: its text redacted as capture redacts a turn (secrets become
"[REDACTED:<kind>]"), then scrubbed of the PII classes asked for ("[EMAIL]", …). Every
message of every request goes through `outbound` before it is put in a request body."""

from __future__ import annotations

from collections.abc import Iterable

from memoracle.capture.redact import redact
from memoracle.llm.pii import scrub_pii


def outbound(text: str, scrub: Iterable[str]) -> str:
    """`text` as it may leave the process: secrets redacted, then PII scrubbed."""
    clean, _counts = scrub_pii(redact(text).text, scrub)
    return clean
