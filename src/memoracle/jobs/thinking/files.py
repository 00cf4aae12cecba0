"""The model steps' files in HOME/llm/: the pending queue (`pending.jsonl`: work the
model could not do, taken first by the next night), the quarantine (`quarantine.jsonl`:
model output refused, with the reason; never in the store) and `state.json` (how far
the steps have read, the last model error). One JSON object a line; a line that does
not parse is kept aside, never dropped. Read by `health`, so it loads nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memoracle.errors import WorkspaceError
from memoracle.files import write_atomically

LLM_DIR = "llm"
PENDING_FILE = "pending.jsonl"
QUARANTINE_FILE = "quarantine.jsonl"
STATE_FILE = "state.json"
UNREADABLE_FILE = "pending.unreadable.jsonl"


@dataclass(frozen=True)
class Work:
    """One question a step will ask: `step`, a `key` that names it (the same work
    planned twice is one), and what it is about (`payload`: ids and times, read again
    from the store when asked, so queued work sees the store as it is then)."""

    step: str
    key: str
    payload: dict[str, Any]
    queued_at: str = ""
    reason: str = ""  # why it waits (the model's error, the budget)


@dataclass
class State:
    """How far the steps have read and the last model error."""

    extract_through: str | None = None
    light_through: str | None = None
    deep_at: str | None = None
    last_error: str | None = None
    last_error_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def folder(home: Path) -> Path:
    return home / LLM_DIR


def read_pending(home: Path) -> list[Work]:
    """The queued work, oldest first. Lines that are not work are moved to
    pending.unreadable.jsonl (kept, named by `status`)."""
    path = folder(home) / PENDING_FILE
    works: list[Work] = []
    bad: list[str] = []
    for line in _lines(path):
        try:
            data = json.loads(line)
            works.append(
                Work(
                    str(data["step"]),
                    str(data["key"]),
                    dict(data["payload"]),
                    str(data.get("queued_at", "")),
                    str(data.get("reason", "")),
                )
            )
        except (ValueError, KeyError, TypeError):
            bad.append(line)
    if bad:
        with _append(folder(home) / UNREADABLE_FILE) as f:
            f.writelines(line + "\n" for line in bad)
        write_pending(home, works)
    return works


def write_pending(home: Path, works: list[Work]) -> None:
    """The queue replaced by `works` (removed when empty)."""
    path = folder(home) / PENDING_FILE
    if not works:
        path.unlink(missing_ok=True)
        return
    write_atomically(path, [json.dumps(asdict(w), ensure_ascii=False) + "\n" for w in works])


def quarantine(home: Path, record: dict[str, Any]) -> None:
    """Append one refused output (step, reason, model, prompt version, what it said)."""
    with _append(folder(home) / QUARANTINE_FILE) as f:
        f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def quarantined(home: Path) -> list[dict[str, Any]]:
    """The quarantine's records, oldest first (unparsable lines left out)."""
    found: list[dict[str, Any]] = []
    for line in _lines(folder(home) / QUARANTINE_FILE):
        try:
            found.append(dict(json.loads(line)))
        except (ValueError, TypeError):
            continue
    return found


def read_state(home: Path) -> State:
    path = folder(home) / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return State()
    except (OSError, ValueError):
        return State()  # rewritten whole by the next night
    known = {
        k: data.get(k)
        for k in ("extract_through", "light_through", "deep_at", "last_error", "last_error_at")
    }
    return State(**known, extra=dict(data.get("extra", {})))


def write_state(home: Path, state: State) -> None:
    write_atomically(folder(home) / STATE_FILE, json.dumps(asdict(state), indent=1) + "\n")


def status(home: Path) -> dict[str, Any]:
    """For `health`: queued work, quarantined outputs, the last model error."""
    state = read_state(home)
    return {
        "pending": sum(1 for _ in _lines(folder(home) / PENDING_FILE)),
        "quarantined": sum(1 for _ in _lines(folder(home) / QUARANTINE_FILE)),
        "last_error": state.last_error,
        "last_error_at": state.last_error_at,
    }


def health(home: Path, warn: Callable[[str, str], None]) -> dict[str, Any]:
    """`status`, and a warning (`model_unavailable`) while the last night's model steps
    could not reach the model and their work waits."""
    found = status(home)
    if found["last_error"]:
        warn(
            "model_unavailable",
            f"The nightly model steps could not use the model ({found['last_error']}); "
            f"{found['pending']} question(s) wait in {folder(home) / PENDING_FILE} for the "
            "next night. Check llm.endpoint and that the model server runs.",
        )
    return found


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(f"{path}: cannot read it ({exc.strerror or exc}).") from None
    return [line for line in text.splitlines() if line.strip()]


class _append:
    """An open file to append lines to, its folder made first; errors name the file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Any:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise WorkspaceError(f"{self.path}: cannot write it ({exc.strerror or exc}).") from None
        return self.file

    def __exit__(self, *exc: object) -> None:
        self.file.close()


def now_text(at: datetime) -> str:
    return at.isoformat()
