"""Writing the files memoracle renders (MEMORY.md, notes, health.json, charts, canary.json)
so that a reader never sees half of one: `write_atomically`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from memoracle.errors import WorkspaceError


def write_atomically(path: Path, text: str | Iterable[str]) -> None:
    """Write `text` (or its pieces, one after the other: a big file need not be one
    string) to `path` as UTF-8, line endings as given: a temp file in the same folder,
    then a rename. A failure raises `WorkspaceError` naming the file and leaves the old
    file whole and no temp file behind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot write it ({exc.strerror or exc}); check the folder's permissions."
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise WorkspaceError(
            f"{path}: cannot write it ({exc.strerror or exc}); check free space and the "
            "folder's permissions."
        ) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
