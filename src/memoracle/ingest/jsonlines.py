"""Reading JSON-lines files a line at a time, in bounded memory.

Owns the line loop shared by the JSONL readers: byte offsets (so a second pass can seek
back to a line), 1-based line numbers for ``path:line`` origins, lines above a size limit
(kept as a short head for sniffing, never loaded whole), and per-line decoding errors
(invalid UTF-8, bad JSON) turned into messages. What a line means is the readers' job.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

# How much of an oversized line is kept, enough to sniff its type, id and parentId.
HEAD_BYTES = 4096
_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Line:
    """One line of the file, without its line ending.

    For an oversized line `data` is only its first `HEAD_BYTES` bytes and `size` is the
    full length.
    """

    number: int
    offset: int
    size: int
    data: bytes
    oversize: bool = False


def iter_lines(f: IO[bytes], max_bytes: int) -> Iterator[Line]:
    """Every non-blank line of `f` from its current position (which must be 0)."""
    offset = 0
    number = 0
    while (found := _next_line(f, max_bytes)) is not None:
        data, size, oversize = found
        number += 1
        start = offset
        offset += size
        if number == 1 and data.startswith(_BOM):
            data = data[len(_BOM) :]
        if oversize:
            yield Line(number, start, size, data, oversize=True)
        elif data.strip():
            yield Line(number, start, len(data), data)


def read_line_at(f: IO[bytes], offset: int, max_bytes: int) -> bytes | None:
    """The line starting at `offset`, or None when it is longer than `max_bytes`."""
    f.seek(offset)
    found = _next_line(f, max_bytes)
    if found is None or found[2]:
        return None
    data = found[0]
    return data[len(_BOM) :] if offset == 0 and data.startswith(_BOM) else data


def _next_line(f: IO[bytes], max_bytes: int) -> tuple[bytes, int, bool] | None:
    """The next line without its ending, the bytes it spans, and whether it is longer
    than `max_bytes` (then only its first `HEAD_BYTES` are returned and the rest is read
    past in chunks, never held). None at the end of the file."""
    parts: list[bytes] = []
    kept = 0
    size = 0
    newline = False
    while chunk := f.readline(_CHUNK):
        size += len(chunk)
        if kept <= max_bytes + 1:
            parts.append(chunk)
            kept += len(chunk)
            if kept > max_bytes + 1:
                parts = [_head(parts)]
        if chunk.endswith(b"\n"):
            newline = True
            break
    if size == 0:
        return None
    if (size - 1 if newline else size) > max_bytes:
        return _head(parts), size, True
    return b"".join(parts).rstrip(b"\r\n"), size, False


def _head(parts: list[bytes]) -> bytes:
    head = bytearray()
    for part in parts:
        head += part[: HEAD_BYTES - len(head)]
        if len(head) >= HEAD_BYTES:
            break
    return bytes(head)


def decode_json(data: bytes) -> tuple[Any, str | None]:
    """``(value, None)`` for a valid UTF-8 JSON text, else ``(None, why)``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start + 1} of the line)"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at column {exc.colno})"
    except RecursionError:
        return None, "not valid JSON (nested too deeply)"
