"""Turns that must not be stored at all: silent tokens, heartbeats, flush prompts, tool noise.

Owns `is_noise`. It looks at a whole turn, before anything else (redaction, sentence
splitting) and says why the turn is noise, or None. What counts as noise comes from how
OpenClaw runs an agent:

- ``no_reply`` — the silent token ``NO_REPLY`` alone, or opening/closing a short reply
  (OpenClaw suppresses such replies; case does not matter);
- ``heartbeat_ok`` — the heartbeat acknowledgement ``HEARTBEAT_OK`` alone, or
  leading/trailing a short reply (OpenClaw drops those acks);
- ``heartbeat_poll`` — the periodic heartbeat prompt (read HEARTBEAT.md, follow it,
  reply HEARTBEAT_OK if nothing needs attention), in any of its configured wordings;
- ``flush_prompt`` — the pre-compaction memory flush prompt (store durable memories now,
  in memory/YYYY-MM-DD.md, reply NO_REPLY if there is nothing to store);
- ``tool_noise`` — serialized tool calls and results that leaked into message text;
- ``empty`` — nothing but whitespace.

Prompts are recognized by a few independent cues, not by exact text, so reworded or
localized-by-config prompts still match while a person *talking about* heartbeats does
not. Stripping a token out of an otherwise real reply is the caller's business.
"""

from __future__ import annotations

import json
import re

__all__ = ["ACK_MAX_CHARS", "is_noise"]

# A reply that only wraps an ack/silent token around this much text is still an ack
# (OpenClaw's default ackMaxChars is 300).
ACK_MAX_CHARS = 300
# Real heartbeat and flush prompts are short; a long message mentioning them is a person
# writing about them.
_PROMPT_MAX_CHARS = 3000

_INVISIBLE = re.compile(r"[\s\u200b-\u200f\u2060\ufeff]*")
_TOKEN_EDGE = r"[\s\W_]*?"
_NO_REPLY = re.compile(r"no[\s_-]?reply", re.IGNORECASE)
_HEARTBEAT_OK = re.compile(r"heartbeat[\s_-]?ok", re.IGNORECASE)
_ONLY_NO_REPLY = re.compile(rf"{_TOKEN_EDGE}no[\s_-]?reply{_TOKEN_EDGE}", re.IGNORECASE)
_ONLY_HEARTBEAT_OK = re.compile(rf"{_TOKEN_EDGE}heartbeat[\s_-]?ok{_TOKEN_EDGE}", re.IGNORECASE)
_EDGE_NO_REPLY = re.compile(r"^[\s`*_\[(]*NO_REPLY\b|\bNO_REPLY[\s`*_\])]*[.!]?\s*$", re.IGNORECASE)
_EDGE_HEARTBEAT_OK = re.compile(
    r"^[\s`*_\[(]*HEARTBEAT[_ ]OK\b|\bHEARTBEAT[_ ]OK[\s`*_\])]*[.!]?\s*$", re.IGNORECASE
)

_HEARTBEAT_CUES = tuple(
    re.compile(cue, re.IGNORECASE)
    for cue in (
        r"\bread\s+(?:the\s+)?`?heartbeat(?:\.md|\s+file)\b",
        r"\bnothing\s+(?:else\s+)?(?:needs|requires|warrants)\s+(?:your\s+)?attention\b",
        r"\bfollow\s+it\s+strictly\b",
        r"\bdo\s+not\s+(?:infer|repeat)\s+(?:or\s+repeat\s+)?old\s+tasks\b",
        r"\bheartbeat\s+(?:poll|check|tick|run|prompt|wake)\b",
        r"\bif\s+nothing\s+(?:to\s+report|is\s+(?:pending|due|urgent))\b",
        r"\b(?:if\s+)?all\s+(?:is\s+(?:well|ok|good|quiet)|clear|good)\b",
    )
)
_FLUSH_CUES = tuple(
    re.compile(cue, re.IGNORECASE)
    for cue in (
        r"\bpre-?\s?compaction\b",
        r"\b(?:approaching|nearing|near|close\s+to)\s+(?:the\s+)?(?:context\s+)?(?:limit|limits|compaction)\b|\bsession\s+(?:is\s+)?(?:nearing|approaching)\b",
        r"\bmemory\s+flush\b|\bflush(?:ing)?\s+(?:your\s+)?memor(?:y|ies)\b",
        r"\b(?:store|save|write|persist|record)\s+(?:any\s+|all\s+)?(?:durable|lasting|important|long-term|persistent)\s+(?:memories|notes|context|facts|state)\b",
        r"\bmemory/(?:YYYY-MM-DD|\d{4}-\d{2}-\d{2}|<date>|\{date\})\.md\b",
        r"\bbefore\s+(?:the\s+)?(?:context\s+(?:is\s+)?)?compact(?:ion|ed|s)?\b",
        r"\bif\s+(?:there\s+is\s+)?nothing\s+(?:to\s+store|worth\s+(?:storing|saving))\b",
        r"\b(?:memories|notes|context)\s+now\b",
    )
)

_TOOL_TAG = re.compile(
    r"^\s*<(?:tool_call|tool_use|tool_result|function_calls?|function_results?|invoke|antml:[a-z_]+)\b",
    re.IGNORECASE,
)
_TOOL_PREFIX = re.compile(
    r"^\s*\[(?:tool(?:[ _](?:call|result|use|output))?|toolresult|toolcall"
    r"|function(?:[ _]call)?|exec|system)\b[^\]\n]*\]",
    re.IGNORECASE,
)
_TOOL_LINE = re.compile(
    r"^\s*(?:tool (?:call|result|output)|called tool|calling tool|function call"
    r"|tool_call_id)\s*[:=]",
    re.IGNORECASE,
)
_TOOL_KEYS = frozenset(
    {
        "tool_call_id",
        "toolCallId",
        "tool_calls",
        "toolCalls",
        "tool_use_id",
        "function_call",
        "toolName",
        "tool_name",
    }
)
_TOOL_TYPES = frozenset(
    {"tool_use", "tool_result", "toolCall", "toolResult", "function_call", "function", "tool"}
)


def is_noise(text: str) -> str | None:
    """Why this turn must not be stored ("no_reply", "heartbeat_poll", …), or None."""
    if _INVISIBLE.fullmatch(text):
        return "empty"
    stripped = text.strip()
    if _ONLY_NO_REPLY.fullmatch(stripped):
        return "no_reply"
    if _ONLY_HEARTBEAT_OK.fullmatch(stripped):
        return "heartbeat_ok"
    if len(stripped) <= _PROMPT_MAX_CHARS:
        if _is_flush_prompt(stripped):
            return "flush_prompt"
        if _is_heartbeat_poll(stripped):
            return "heartbeat_poll"
    if _is_tool_noise(stripped):
        return "tool_noise"
    if len(stripped) <= ACK_MAX_CHARS + len("HEARTBEAT_OK"):
        if _EDGE_HEARTBEAT_OK.search(stripped):
            return "heartbeat_ok"
        if _EDGE_NO_REPLY.search(stripped):
            return "no_reply"
    return None


def _is_heartbeat_poll(text: str) -> bool:
    if not _HEARTBEAT_OK.search(text) and "heartbeat" not in text.lower():
        return False
    cues = sum(1 for cue in _HEARTBEAT_CUES if cue.search(text))
    mentions_ack = _HEARTBEAT_OK.search(text) is not None
    return (mentions_ack and cues >= 2) or cues >= 3


def _is_flush_prompt(text: str) -> bool:
    lowered = text.lower()
    if "compact" not in lowered and "flush" not in lowered and "durable" not in lowered:
        return False
    cues = sum(1 for cue in _FLUSH_CUES if cue.search(text))
    mentions_silent = _NO_REPLY.search(text) is not None
    return (mentions_silent and cues >= 2) or cues >= 3


def _is_tool_noise(text: str) -> bool:
    if _TOOL_TAG.match(text) or _TOOL_PREFIX.match(text) or _TOOL_LINE.match(text):
        return True
    if text[:1] in "[{" and text[-1:] in "]}":
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return False
        return _looks_like_tool(value)
    return False


def _looks_like_tool(value: object) -> bool:
    items = value if isinstance(value, list) else [value]
    for item in items[:20]:
        if not isinstance(item, dict):
            continue
        if _TOOL_KEYS.intersection(item):
            return True
        kind = item.get("type") or item.get("role")
        if isinstance(kind, str) and kind in _TOOL_TYPES:
            return True
    return False
