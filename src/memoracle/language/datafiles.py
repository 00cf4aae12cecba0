"""Reading the entries of the TOML rule files (language/rules/<kind>/*.toml): macros,
regexes, tables and string lists, where every failure is an error of the caller's class
naming the file and the entry. What the entries mean is the caller's; finding and
compiling the files is `kit`'s."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol, TypeVar

from memoracle.errors import InvalidInput
from memoracle.language import compiled

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
    """`text` compiled (kept compiled between processes: `compiled`)."""
    try:
        return compiled.regex(text, flags)
    except re.error as exc:
        raise error(f"{source}: {where}: bad regex: {exc}.") from None


def pattern(
    text: str, macros: Mapping[str, str], flags: int, source: str, where: str, error: FileError
) -> re.Pattern[str]:
    """A rule file's regex: `text` with its macros expanded (`expand`), compiled."""
    return regex(expand(text, macros, source, where, error), flags, source, where, error)


def macros(values: Mapping[str, Any], source: str, error: FileError) -> dict[str, str]:
    """A file's ``[macros]`` table, each value a regex string, expanded: macros may use
    other macros."""
    for key, value in values.items():
        if not isinstance(value, str):
            raise error(f"{source}: macro {key!r} must be a regex string.")
    return {
        key: expand(value, values, source, f"macro {key!r}", error) for key, value in values.items()
    }


def tables(data: Mapping[str, Any], key: str, source: str, error: FileError) -> list[Any]:
    """The array of tables ``[[key]]`` (none when absent); its items are the caller's to
    check."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise error(f"{source}: [[{key}]] must be an array of tables.")
    return value


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


Identified = TypeVar("Identified", bound=_HasId)


def unique(
    items: Iterable[Identified], noun: str, source: str, error: FileError
) -> Iterator[Identified]:
    """`items` as they come, each id once: the second of an id is an error."""
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise error(f"{source}: {noun} {item.id!r}: duplicate id.")
        seen.add(item.id)
        yield item


def flag(
    data: Mapping[str, Any], key: str, default: bool, source: str, where: str, error: FileError
) -> bool:
    """`key`'s true or false (`default` when absent)."""
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise error(f"{source}: {where}: {key} must be true or false.")
    return value


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
