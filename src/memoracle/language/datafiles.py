"""Reading the entries of the TOML rule files (language/rules/<kind>/*.toml): macros,
regexes, tables and string lists, where every failure is an error of the caller's class
naming the file and the entry. What the entries mean is the caller's; finding and
compiling the files is `kit`'s."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from memoracle.errors import InvalidInput

MACRO = re.compile(r"\{\{([a-z_][a-z0-9_]*)\}\}")

FileError = type[InvalidInput]


def expand(text: str, macros: Mapping[str, str], source: str, where: str, error: FileError) -> str:
    """`text` with each ``{{name}}`` replaced by ``(?:macro)``, nested up to 8 deep."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in macros:
            raise error(
                f"{source}: {where}: unknown macro {{{{{name}}}}}. "
                f"Defined: {', '.join(sorted(macros)) or 'none'}."
            )
        return f"(?:{macros[name]})"

    for _ in range(8):
        if "{{" not in text:
            return text
        text = MACRO.sub(substitute, text)
    raise error(f"{source}: {where}: macros nest too deeply (a cycle?).")


def regex(text: str, flags: int, source: str, where: str, error: FileError) -> re.Pattern[str]:
    try:
        return re.compile(text, flags)
    except re.error as exc:
        raise error(f"{source}: {where}: bad regex: {exc}.") from None


def table(
    data: Mapping[str, Any], key: str, source: str, error: FileError, *, required: bool = True
) -> Mapping[str, Any]:
    value = data.get(key)
    if value is None:
        if required:
            raise error(f"{source}: missing [{key}] table.")
        return {}
    if not isinstance(value, dict):
        raise error(f"{source}: [{key}] must be a table.")
    return value


def strings(value: object, source: str, where: str, error: FileError) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise error(f"{source}: {where}: expected a string or a list of strings.")


def no_unknown(
    data: Mapping[str, Any], known: Iterable[str], source: str, where: str, error: FileError
) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise error(
            f"{source}: {where}: unknown key(s) {', '.join(unknown)}. "
            f"Known: {', '.join(sorted(known))}."
        )
