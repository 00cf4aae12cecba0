"""Writing the files memoracle renders (MEMORY.md, notes, health.json, charts, canary.json)
so that a reader never sees half of one: `write_atomically` for text, `replacing` for
every other writer (backups, archives, indexes, logs), and reading them back
(`read_text`); `pid_lock`, the lock file
that keeps a second nightly run or daemon off a HOME; `os_lock`, a short lock that
two writers of the same file (the graph log, a daily note) take in turn; and `tree_bytes`,
what a folder's files weigh."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memoracle.errors import WorkspaceError

log = logging.getLogger(__name__)


def write_atomically(path: Path, text: str | Iterable[str]) -> None:
    """Write `text` (or its pieces, one after the other: a big file need not be one
    string) to `path` as UTF-8, line endings as given, through `replacing`. A failure
    raises `WorkspaceError` naming the file and leaves the old file whole and no temp
    file behind."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with replacing(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
            if isinstance(text, str):
                f.write(text)
            else:
                f.writelines(text)
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot write it ({exc.strerror or exc}); check free space and the "
            "folder's permissions."
        ) from None


@contextmanager
def replacing(path: Path, *, temp: Path | None = None, durable: bool = False) -> Iterator[Path]:
    """A temporary path beside `path` for the new file: when the block ends without an
    exception it is renamed over `path`, so a reader sees the old file or the new one,
    never half of one; on an exception it is removed and the exception goes on.

    `temp` names the temporary file (a fixed name that a later run can find and remove
    after a kill); by default a fresh one in the same folder, so two writers never share
    it. `durable` syncs the new file and the folder to disk (backups, indexes, logs that
    must survive a power cut), at the cost of two fsyncs."""
    if temp is None:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        temp = Path(name)
    try:
        yield temp
        if durable:
            fsync_path(temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)


def fsync_path(path: Path) -> None:
    """Flush a written file's bytes to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX; Windows has no directory handles)."""
    if sys.platform == "win32" or not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_text(path: Path) -> str | None:
    """A file memoracle renders, as it is (line endings kept), or None when there is none
    yet; one that cannot be read or decoded is a `WorkspaceError` naming it."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise WorkspaceError(
            f"{path}: not UTF-8 text (byte {exc.start + 1}); it was left as it is."
        ) from None
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read it ({exc.strerror or exc}).") from None


@contextmanager
def pid_lock(path: Path, *, busy: Callable[[int], str]) -> Iterator[None]:
    """Hold `path` (a file with our pid) for the block's length: one process at a time.
    While the holder lives, raise `WorkspaceError(busy(pid))`; a lock left by a process
    that is gone is taken over."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _pid_in(path)
            if holder is not None and _alive(holder):
                raise WorkspaceError(busy(holder)) from None
            log.warning("taking over %s left by a process that is gone", path)
            path.unlink(missing_ok=True)
            continue
        except OSError as exc:
            raise WorkspaceError(
                f"{path}: cannot create the lock ({exc.strerror or exc})."
            ) from None
        with os.fdopen(fd, "w") as f:
            f.write(str(os.getpid()))
        break
    else:
        raise WorkspaceError(f"{path}: another process keeps taking the lock; try again.")
    try:
        yield
    finally:
        if _pid_in(path) == os.getpid():
            path.unlink(missing_ok=True)


def _pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, someone else's
        return True
    return True


@contextmanager
def os_lock(path: Path, *, wait_seconds: float, busy: str) -> Iterator[None]:
    """Hold `path` (an OS lock: released when the process ends, even killed) for the
    block's length, waiting up to `wait_seconds` for another holder; then
    `WorkspaceError(busy)`. The file stays; only the lock comes and goes."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot take the lock ({exc.strerror or exc}); check the folder's permissions."
        ) from None
    try:
        deadline = time.monotonic() + wait_seconds
        while not _try_lock(fd):
            if time.monotonic() > deadline:
                raise WorkspaceError(busy)
            time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _try_lock(fd: int) -> bool:
    if sys.platform == "win32":
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def tree_bytes(folder: Path) -> int:
    """Bytes of the files under `folder` (0 when it does not exist); links not followed."""
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                continue  # removed while we walked (an old backup pruned, a temp renamed)
    return total
