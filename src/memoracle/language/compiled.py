"""The rule files' regexes kept compiled between processes.

A process that captures compiles about three thousand regexes from the rule files
(capture rules, slots, dates, the injection book, the graph's words) and parses each
again for its prefilter's literals (`prefilter.required_literals`): most of a cold
`memoracle capture`'s second of CPU. What `re.compile` makes of a pattern is a list of
integers (the matcher's program) built by CPython's pure-Python parser and compiler;
this module keeps that program, and the literals, in one file under HOME/cache
(a `marshal` of bytes, strings and numbers, behind its SHA-256)
(`keep_in`), so a later process builds each `re.Pattern` from its program in C.

The same pattern, exactly: an entry is written only when the pattern built from it
equals the one `re.compile` returned (`re.Pattern.__eq__` compares the program), the
file is named by the interpreter's version and regex engine's magic number (another
Python never reads it), and a file whose digest does not match its contents, or that
cannot be read, is ignored and written again. Without `keep_in`, or on any failure,
`regex` is `re.compile`. Deleting the file is safe.

The rule files' parsed TOML is kept there too (`parsed`, by the hash of the file's
text): the pure-Python TOML parser costs a capture another 0.1-0.2 s of CPU.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib
import logging
import marshal
import os
import re
import sys
import tempfile
import threading
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)

try:  # CPython's regex compiler, whose output is kept
    _sre: Any = importlib.import_module("_sre")
    _parser: Any = importlib.import_module("re._parser")
    _compiler: Any = importlib.import_module("re._compiler")
    TAG = f"{sys.implementation.name}-{sys.version.split()[0]}-{_sre.MAGIC}-{_sre.CODESIZE}"
    # A program is kept as the bytes of an array of unsigned code words of its size.
    _WORD = next(t for t in "ILQ" if array(t).itemsize == _sre.CODESIZE)
except (ImportError, AttributeError, StopIteration):  # pragma: no cover - other Pythons
    _sre = None
    TAG = _WORD = ""

Literals = tuple[str, ...] | None
T = TypeVar("T")
_Key = tuple[str, int]


class _Cache:
    """The programs and literals of one HOME's file, loaded on first use, written back
    at exit when a process added to them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.programs: dict[_Key, list[Any]] = {}
        self.literals: dict[_Key, Literals] = {}
        self.derived: dict[tuple[str, str, int], Any] = {}  # by (what, text, flags)
        self.tables: dict[str, bytes] = {}  # a rule file's parsed data, by its text's hash
        self.loaded = self.changed = False
        self.lock = threading.Lock()

    def load(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        try:
            raw = self.path.read_bytes()
            digest, _, body = raw.partition(b"\n")
            if hashlib.sha256(body).hexdigest().encode() != digest:
                raise ValueError("its digest does not match")
            data = marshal.loads(body)  # our own file, its digest checked
            if data["tag"] != TAG:
                raise ValueError("another interpreter's")
            self.programs = {(t, f): rest for t, f, *rest in data["programs"]}
            self.literals = {(t, f): _literals(v) for t, f, v in data["literals"]}
            self.tables = {k: v for k, v in data["tables"] if isinstance(v, bytes)}
            self.derived = {(w, t, f): v for w, t, f, v in data["derived"]}
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
            log.debug("regex cache %s unusable (%s): compiling", self.path, exc)
            self.programs, self.literals, self.tables, self.derived = {}, {}, {}, {}

    def save(self) -> None:
        """Write the file (to a temporary file, then renamed) if this process added to it."""
        if not self.changed:
            return
        data = {
            "tag": TAG,
            "programs": [[t, f, *rest] for (t, f), rest in self.programs.items()],
            "literals": [[t, f, v] for (t, f), v in self.literals.items()],
            "tables": list(self.tables.items()),
            "derived": [[w, t, f, v] for (w, t, f), v in self.derived.items()],
        }
        body = marshal.dumps(data)
        digest = hashlib.sha256(body).hexdigest().encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".regex-", dir=self.path.parent)
        except OSError as exc:
            log.debug("regex cache not written (%s)", exc)
            return
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(digest + b"\n" + body)
            os.replace(temp, self.path)
            self.changed = False
        except OSError as exc:
            log.debug("regex cache not written (%s)", exc)
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _literals(value: Any) -> Literals:
    if value is None:
        return None
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("literals must be a list of strings or null")


_caches: dict[Path, _Cache] = {}
_current: _Cache | None = None


def keep_in(folder: Path | None) -> None:
    """Keep the regexes compiled from now on in `folder` (HOME/cache); None: stop."""
    global _current
    if folder is None or not TAG:
        _current = None
        return
    path = folder / f"regex-{TAG}.bin"
    if path not in _caches:
        _caches[path] = _Cache(path)
    _current = _caches[path]


@atexit.register
def save_all() -> None:
    """Write every cache a process added to (at exit, and when a test asks)."""
    for cache in list(_caches.values()):
        with cache.lock:
            cache.save()


def regex(text: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(text, flags)`, built from the kept program when there is one."""
    cache = _current
    if cache is None:
        return re.compile(text, flags)
    flags = int(flags)
    with cache.lock:
        cache.load()
        entry = cache.programs.get((text, flags))
    if entry is not None:
        try:
            return _build(text, entry)
        except (RuntimeError, ValueError, TypeError) as exc:  # not this engine's program
            log.debug("regex cache entry unusable (%s): compiling", exc)
    pattern = re.compile(text, flags)  # raises re.error for a bad pattern, as ever
    program = _program(text, flags, pattern)
    if program is not None:
        with cache.lock:
            cache.programs[(text, flags)] = program
            cache.changed = True
    return pattern


def literals(pattern: re.Pattern[str], compute: Any) -> Literals:
    """`compute(pattern)` (the prefilter's literals, a pure function of the pattern's
    text and flags), kept beside the programs."""
    cache = _current
    if cache is None:
        result: Literals = compute(pattern)
        return result
    key = (pattern.pattern, int(pattern.flags))
    with cache.lock:
        cache.load()
        if key in cache.literals:
            return cache.literals[key]
    result = compute(pattern)
    with cache.lock:
        cache.literals[key] = result
        cache.changed = True
    return result


def derived(what: str, pattern: re.Pattern[str], compute: Callable[[re.Pattern[str]], T]) -> T:
    """`compute(pattern)`, a pure function of the pattern's text and flags made of
    strings, numbers, tuples, frozensets and lists (`what` names it: the injection
    book's gates), kept beside the programs. A list comes back as a new list."""
    cache = _current
    if cache is None:
        return compute(pattern)
    key = (what, pattern.pattern, int(pattern.flags))
    with cache.lock:
        cache.load()
        if key in cache.derived:
            found = cache.derived[key]
            return list(found) if isinstance(found, list) else found  # type: ignore[return-value]
    result = compute(pattern)
    try:
        marshal.dumps(result)  # type: ignore[arg-type]
    except ValueError:  # not a value the file can hold
        return result
    with cache.lock:
        cache.derived[key] = result
        cache.changed = True
    return result


def parsed(text: str, parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """`parse(text)` (a rule file's TOML, a pure function of its text), kept beside the
    programs by the text's SHA-256; a fresh copy each call. Data `marshal` cannot hold
    (a TOML date) is parsed each time."""
    cache = _current
    if cache is None:
        return parse(text)
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    with cache.lock:
        cache.load()
        blob = cache.tables.get(key)
    if blob is not None:
        with contextlib.suppress(ValueError, EOFError, TypeError):
            data = marshal.loads(blob)
            if isinstance(data, dict):
                return data
    data = parse(text)  # raises the parser's error for a bad file, as ever
    try:
        blob = marshal.dumps(data)
    except ValueError:  # a date or time: not kept
        return data
    with cache.lock:
        cache.tables[key] = blob
        cache.changed = True
    return data


def _build(text: str, entry: list[Any]) -> re.Pattern[str]:
    final, program, groups, groupindex = entry
    code = array(_WORD, program).tolist() if isinstance(program, bytes) else program
    indexgroup: list[str | None] = [None] * (groups + 1)
    for name, index in groupindex.items():
        indexgroup[index] = name
    built: re.Pattern[str] = _sre.compile(text, final, code, groups, groupindex, tuple(indexgroup))
    return built


def _program(text: str, flags: int, pattern: re.Pattern[str]) -> list[Any] | None:
    """What `re.compile` made of `text`: its flags, program, groups and group names; None
    unless a pattern built from them equals `pattern`."""
    try:
        parsed = _parser.parse(text, flags)
        code = _compiler._code(parsed, flags)
        entry = [flags | parsed.state.flags, array(_WORD, code).tobytes(),
                 parsed.state.groups - 1, dict(parsed.state.groupdict)]  # fmt: skip
        same = _build(text, entry) == pattern
    except Exception as exc:  # noqa: BLE001 - an interpreter whose compiler differs
        log.debug("regex %r not kept (%s)", text[:40], exc)
        return None
    return entry if same else None
