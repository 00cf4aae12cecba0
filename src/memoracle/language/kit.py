"""The one way per-language rule files are read and compiled.

Every package that matches text by rules — capture (``rules/capture``), dates
(``rules/timewords``), the write audit (``rules/injection``), lifecycle slots
(``rules/slots``), the knowledge graph (``rules/graph``) and query words
(``rules/querywords``) — keeps one TOML file per language, ``<code>.toml`` with a
``[language] code`` equal to its name, beside an optional shared file (``values.toml``,
``shared.toml``). The kit finds them (`packaged`, or a folder a caller names), reads
them with errors that name the file (`read_folder`, `read_toml`), and compiles each
language the first time it is used, once per process, under one lock (`PerLanguage`).
What a file *means* is its user's: each supplies only its own compile function and
error type.
"""

from __future__ import annotations

import re
import threading
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Generic, TypeVar

from memoracle.errors import InvalidInput
from memoracle.language import compiled, datafiles

__all__ = [
    "PerLanguage",
    "RuleFile",
    "language_code",
    "packaged",
    "read_folder",
    "read_kind",
    "read_toml",
]

T = TypeVar("T")

_LANG_CODE = re.compile(r"[a-z]{2,3}")


@dataclass(frozen=True)
class RuleFile:
    """One rule file read: its data, and the name its errors use."""

    data: Mapping[str, Any]
    source: str


def packaged(kind: str) -> Traversable:
    """The packaged folder of one kind of rule file (``"capture"``, ``"slots"``, …)."""
    return resources.files(__package__) / "rules" / kind


def read_toml(text: str, source: str, error: type[InvalidInput]) -> dict[str, Any]:
    """TOML `text` -> data; `error` naming `source` when it is not valid TOML. Kept
    parsed between processes (`compiled`)."""
    try:
        return compiled.parsed(text, tomllib.loads)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: not valid TOML: {exc}") from None


def language_code(
    data: Mapping[str, Any],
    source: str,
    error: type[InvalidInput],
    code_at: tuple[str, ...] = ("language", "code"),
) -> str:
    """A rule file's language code (``[language] code``, or the key `code_at` names),
    which must be a 2-3 letter code."""
    *tables, key = code_at
    holder: Mapping[str, Any] = data
    for name in tables:
        holder = datafiles.table(holder, name, source, error)
    code = holder.get(key)
    if not isinstance(code, str) or not _LANG_CODE.fullmatch(code):
        raise error(f"{source}: {_where(code_at)} must be a 2-3 letter code, got {code!r}.")
    return code


def _where(code_at: tuple[str, ...]) -> str:
    *tables, key = code_at
    return f"[{'.'.join(tables)}] {key}" if tables else key


def read_folder(
    folder: Traversable | Path,
    *,
    label: str,
    error: type[InvalidInput],
    shared: str | None = None,
    what: str = "rule",
    code_at: tuple[str, ...] = ("language", "code"),
) -> tuple[dict[str, RuleFile], RuleFile | None]:
    """Each ``<code>.toml`` in `folder` by language code, and the `shared` file if there
    is one. Errors are `error`s naming the file: `label`/NAME (a packaged folder's name,
    e.g. "language/rules/capture") or, when `label` is empty, the file's own path. A
    language file's code (``[language] code``, or the key `code_at` names) must be a 2-3
    letter code equal to its file name; a folder without any language file is an error
    too."""
    entries = sorted(
        (entry for entry in folder.iterdir() if entry.name.endswith(".toml")),
        key=lambda entry: entry.name,
    )
    languages: dict[str, RuleFile] = {}
    common: RuleFile | None = None
    for entry in entries:
        source = f"{label}/{entry.name}" if label else str(entry)
        data = read_toml(entry.read_text(encoding="utf-8"), source, error)
        if entry.name == shared:
            common = RuleFile(data, source)
            continue
        code = language_code(data, source, error, code_at)
        if code != entry.name.removesuffix(".toml"):
            raise error(
                f"{source}: {_where(code_at)} is {code!r} but the file is named "
                f"{entry.name!r}. Rename one so they agree."
            )
        languages[code] = RuleFile(data, source)
    if not languages:
        raise error(f"{folder}: no <lang>.toml {what} files found.")
    return languages, common


def read_kind(
    kind: str,
    directory: Traversable | Path | None = None,
    *,
    error: type[InvalidInput],
    shared: str | None = None,
    what: str = "rule",
    code_at: tuple[str, ...] = ("language", "code"),
) -> tuple[dict[str, RuleFile], RuleFile | None]:
    """`read_folder` over one kind of rule file: the packaged folder (its errors naming
    ``language/rules/<kind>/NAME``), or `directory` when a caller names one (its errors
    naming each file's path)."""
    if directory is None:
        return read_folder(
            packaged(kind),
            label=f"language/rules/{kind}",
            error=error,
            shared=shared,
            what=what,
            code_at=code_at,
        )
    return read_folder(directory, label="", error=error, shared=shared, what=what, code_at=code_at)


class PerLanguage(Generic[T]):
    """Rule files compiled per language on first use, once, under one lock (compiling a
    language's patterns can take a few hundred milliseconds; most processes use one)."""

    def __init__(self, files: Mapping[str, RuleFile], compile: Callable[[RuleFile], T]) -> None:
        self._files = dict(files)
        self._compile = compile
        self._compiled: dict[str, T] = {}
        self._lock = threading.Lock()

    @property
    def codes(self) -> tuple[str, ...]:
        """Language codes, sorted."""
        return tuple(sorted(self._files))

    @property
    def files(self) -> Mapping[str, RuleFile]:
        return self._files

    def get(self, code: str) -> T | None:
        """The compiled rules of `code`, or None if there is no such file."""
        compiled = self._compiled.get(code)
        if compiled is not None or code not in self._files:
            return compiled
        with self._lock:
            if code not in self._compiled:
                self._compiled[code] = self._compile(self._files[code])
        return self._compiled[code]

    def compile_all(self) -> None:
        """Compile every language now, so that a malformed file fails here."""
        for code in self.codes:
            self.get(code)
