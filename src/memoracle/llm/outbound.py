"""What a request may carry: its text scrubbed of the PII classes asked for ("[EMAIL]",
…), then redacted as capture redacts a turn (secrets become "[REDACTED:<kind>]").
Personal data goes first, found in the text as written: a secret's redaction can cut
an address or a phone number in two and leave half of it for no class to recognise
("221B Baker Street" beside a card number lost its house number, as a CVV, and kept
its street). Every message of every request goes through `outbound` before it is put
in a request body."""

from __future__ import annotations

from collections.abc import Iterable

from memoracle.capture.redact import redact
from memoracle.llm.pii import scrub_pii


def outbound(text: str, scrub: Iterable[str]) -> str:
    """`text` as it may leave the process: PII scrubbed, then secrets redacted."""
    scrubbed, _counts = scrub_pii(text, scrub)
    return redact(scrubbed).text
