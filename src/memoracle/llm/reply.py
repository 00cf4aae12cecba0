"""A model's reply made into checked data: parsed as JSON (or, when it is not, the first
JSON value in it found and repaired: code fences, trailing commas, single quotes,
Python literals, an unclosed end), its strings cleaned (the caller redacts secrets a
model may echo), then validated against the ask's JSON schema.
Anything that does not come out valid raises ModelOutputInvalid with the reason. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from memoracle.llm.errors import ModelOutputInvalid

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SINGLE_QUOTED = re.compile(r"'((?:[^'\\\n]|\\.)*)'")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}


def parse_reply(
    text: str, schema: dict[str, Any], clean: Callable[[str], str] = lambda s: s
) -> Any:
    """The reply's JSON value, each string in it (keys too) passed through `clean`, then
    valid against `schema`; ModelOutputInvalid otherwise."""
    value = _cleaned(_parse(text), clean)
    problem = schema_problem(value, schema)
    if problem:
        raise ModelOutputInvalid(
            f"The model's answer does not satisfy the schema: {problem}",
            reason=f"schema: {problem}",
            raw=text,
        )
    return value


def schema_problem(value: Any, schema: dict[str, Any]) -> str:
    """Why `value` fails `schema` (the first error, with its path), or ""."""
    from jsonschema import Draft202012Validator  # the llm extra; only once a model answers

    error = next(iter(Draft202012Validator(schema).iter_errors(value)), None)
    if error is None:
        return ""
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message[:300]}"


def _cleaned(value: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [_cleaned(v, clean) for v in value]
    if isinstance(value, dict):
        return {clean(k): _cleaned(v, clean) for k, v in value.items()}
    return value


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        pass
    for candidate in _candidates(text):
        for repaired in _repairs(candidate):
            try:
                return json.loads(repaired)
            except ValueError:
                continue
    raise ModelOutputInvalid(
        "The model's answer is not JSON, and no JSON value could be repaired out of it.",
        reason="not JSON",
        raw=text,
    )


def _candidates(text: str) -> list[str]:
    """Texts that may hold the answer: a fenced block, then from the first { or [ on."""
    found = [m.group(1) for m in _FENCE.finditer(text)]
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        found.append(_first_value(text[min(starts) :]))
    return found


def _first_value(text: str) -> str:
    """The text up to where its first bracketed value closes (strings respected), or all
    of it when the value never closes."""
    depth, in_string, escaped = 0, "", False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == in_string:
                in_string = ""
        elif c in "\"'":
            in_string = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
    return text


def _repairs(text: str) -> list[str]:
    text = text.strip()
    fixed = _TRAILING_COMMA.sub(r"\1", text)
    words = re.sub(r"\b(True|False|None)\b", lambda m: _PY_LITERALS[m.group()], fixed)
    quoted = _SINGLE_QUOTED.sub(lambda m: json.dumps(m.group(1).replace("\\'", "'")), words)
    return [text, fixed, words, quoted, _TRAILING_COMMA.sub(r"\1", _close(quoted))]


def _close(text: str) -> str:
    """An unclosed value (a reply cut at max_tokens) closed: the open string, then each
    open bracket, innermost first."""
    stack: list[str] = []
    in_string, escaped = False, False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]" and stack:
            stack.pop()
    return text + ('"' if in_string else "") + "".join(reversed(stack))
