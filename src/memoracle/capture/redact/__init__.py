"""Secrets out of text before anything is stored or indexed.

`redact` replaces each secret by "[REDACTED:<kind>]", keeping the text around it. It
finds secrets by kind, not by example: the published shapes of service keys and tokens,
key-value, URL, CLI and environment shapes (`formats`); secret words of four languages
in prose of any shape, codes and PINs, identity numbers with their check digits, 2FA
seeds and backup codes, wallet seed phrases, base64 that decodes to credentials,
high-entropy strings near a secret word, and the neighbour of a value already found
(`kinds`). A turn continues the one before it: `previous` (that turn as stored, already
redacted) tells what it left open (a label without its value, a private key without its
end, a token cut in two), and `redact` takes the value from the new turn (`context`).
Pure: text in, text out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoracle.capture.redact.context import continued
from memoracle.capture.redact.formats import FORMATS
from memoracle.capture.redact.kinds import FINDERS, NEIGHBOUR_KINDS, neighbours

__all__ = ["KINDS", "Redaction", "redact"]

Span = tuple[int, int, str]


@dataclass(frozen=True)
class Redaction:
    """`text` with each secret replaced by "[REDACTED:<kind>]"; `kinds` found, in text
    order, each once (e.g. ("openai_key", "password")). No secret: the text unchanged."""

    text: str
    kinds: tuple[str, ...]


_DIGITS4 = re.compile(r"\d{4}")

KINDS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [f.kind for f in FORMATS]
        + [k for _, kinds in FINDERS for k in kinds]
        + list(NEIGHBOUR_KINDS)
        + ["private_key", "secret", "password"]
    )
)


def _add(found: list[Span], start: int, end: int, kind: str) -> None:
    """Keep the span unless it overlaps one found before; one that covers others whole
    replaces them (the passphrase "K x 9 p" over its first letter)."""
    if start >= end:
        return
    overlapping = [f for f in found if not (end <= f[0] or start >= f[1])]
    if not overlapping or all(
        start <= s and e <= end and (start, end) != (s, e) for s, e, _ in overlapping
    ):
        for f in overlapping:
            found.remove(f)
        found.append((start, end, kind if not overlapping else overlapping[0][2]))


def _formats(text: str, low: str, found: list[Span]) -> None:
    has_digits: bool | None = None
    for fmt in FORMATS:
        if fmt.hints and not any(h in low for h in fmt.hints):
            continue
        if fmt.digits:
            if has_digits is None:
                has_digits = _DIGITS4.search(text) is not None
            if not has_digits:
                continue
        for match in fmt.pattern.finditer(text):
            group = "secret" if "secret" in fmt.pattern.groupindex else 0
            start, end = match.span(group)
            if fmt.check is not None and not fmt.check(match[group]):
                continue
            _add(found, start, end, fmt.kind)


def _masked(text: str, found: list[Span]) -> str:
    """`text` with what was found blanked out (same length): the finders after the
    formats neither read a key's body again nor take a piece of it for something else."""
    parts: list[str] = []
    last = 0
    for start, end, _ in sorted(found):
        parts += [text[last:start], " " * (end - start)]
        last = end
    parts.append(text[last:])
    return "".join(parts)


def redact(text: str, *, previous: str | None = None) -> Redaction:
    """Replace every secret in `text` by "[REDACTED:<kind>]", keeping the text around it.
    `previous`: the turn before it in the same conversation, as stored (redacted)."""
    low = text.lower()
    found: list[Span] = []
    if previous:
        for span in continued(text, previous):
            _add(found, *span)
    _formats(text, low, found)
    view, view_low = (_masked(text, found), None) if found else (text, low)
    view_low = view_low if view_low is not None else view.lower()
    for finder, _ in FINDERS:
        for span in finder(view, view_low):
            _add(found, *span)
    for span in neighbours(view, view_low, found):
        _add(found, *span)
    if not found:
        return Redaction(text, ())
    found.sort()
    parts: list[str] = []
    last = 0
    for start, end, kind in found:
        parts += [text[last:start], f"[REDACTED:{kind}]"]
        last = end
    parts.append(text[last:])
    return Redaction("".join(parts), tuple(dict.fromkeys(kind for _, _, kind in found)))
