"""A secret that runs over two turns: what the previous turn (as stored, redacted) left
open, and the part of the new turn that closes it — the value after a label said alone
("the wifi password?" / "Tournesol88"), the rest of a private key whose beginning was
redacted, the second half of a token cut in two, the codes or words after their label."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memoracle.capture.redact.ids import _CODE_ITEM, _SEED_RUN, backup_label, seed_label
from memoracle.capture.redact.loose import SECRET_TALK, made_up_tokens
from memoracle.capture.redact.words import (
    CODE_WORDS,
    KEY_WORDS,
    PASSWORD_WORDS,
    STOP,
    bare,
    generated,
    plausible,
)

Span = tuple[int, int, str]

# The previous turn ends on a secret word (a label, a question about it): its value is next.
_OPEN_LABEL = re.compile(
    rf"(?<!\w)(?:(?P<pw>{PASSWORD_WORDS})|(?P<code>{CODE_WORDS})|(?P<key>{KEY_WORDS}))(?!\w)"
    r"[^.!\n]{0,40}?(?:[:=—–-]|\b(?:is|es|est|это|c['’]est))?\s*[?:!.…]*\s*$",
    re.IGNORECASE,
)
_OPEN_KEY = re.compile(r"\[REDACTED:private_key\]\s*$")
_OPEN_TOKEN = re.compile(r"\[REDACTED:[a-z_]+\]\s*$")
_END_KEY = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_KEY_LINES = re.compile(r"\A(?:\s*[A-Za-z0-9+/=]{8,}\s*(?:\n|\Z))+")
_LEAD = re.compile(
    r"\A\s*(?:(?:it['’]?s|it\s+is|its|that['’]?s|c['’]est|это|es|est|son|is|sure|oui|да|sí|si"
    r"|ok(?:ay)?|yes)[\s,:—-]*)*(?P<value>\"[^\"\n]+\"|'[^'\n]+'|«[^»\n]+»|[^\s\"'«,;]+)"
    r"(?P<rest>[^\n]*)"
)
_FRAGMENT = re.compile(r"\A\s*(?P<value>[A-Za-z0-9_\-+/=.]{6,})(?![\w-])")


def _value(text: str, kind: str) -> Span | None:
    m = _LEAD.match(text)
    if m is None:
        return None
    value = m["value"]
    alone = len(m["rest"].split()) <= 3
    ok = generated(value) or (alone and plausible(value) and bare(value).lower() not in STOP)
    if kind == "code":
        ok = any(c.isdigit() for c in value)
    if not ok:
        return None
    start, end = m.span("value")
    if value[:1] in "\"'«":
        start, end = start + 1, end - 1
    while end > start and text[end - 1] in ".,;:!?)":
        end -= 1
    return start, end, {"pw": "password", "code": "code", "key": "secret"}[kind]


def continued(text: str, previous: str) -> Iterator[Span]:
    """What of `text` completes a secret `previous` left open."""
    tail = previous[-200:]
    if _OPEN_KEY.search(tail) and not _END_KEY.search(tail):
        end = _END_KEY.search(text)
        if end is not None:
            yield 0, end.end(), "private_key"
        elif lines := _KEY_LINES.match(text):
            yield 0, lines.end(), "private_key"
        return
    if "[REDACTED:card_number]" in tail:
        from memoracle.capture.redact.kinds import neighbours

        yield from neighbours(text, text.lower(), [(0, 0, "card_number")])
    if _OPEN_TOKEN.search(tail):
        if m := _FRAGMENT.match(text):
            value = m["value"]
            if any(c.isdigit() for c in value) or len(value) >= 12:
                yield m.start("value"), m.end("value"), "secret"
                return
    tail_low = tail.lower()
    if backup_label(tail_low, tail):
        for m in _CODE_ITEM.finditer(text):
            yield m.start(), m.end(), "backup_code"
    elif seed_label(tail_low, tail):
        if m := _SEED_RUN.search(text):
            yield m.start(), m.end(), "seed_phrase"
    elif label := _OPEN_LABEL.search(tail):
        if span := _value(text, label.lastgroup or "key"):
            yield span
    if "[REDACTED:" in tail or SECRET_TALK.search(tail):
        yield from made_up_tokens(text, strict=False)
