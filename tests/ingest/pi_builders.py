"""Builders for OpenClaw (pi v3) session files, so tests say what a session holds, not its JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
SESSION_ID = "9d1c7e2a-0000-4000-8000-00000000c1a0"


class Session:
    """Appends pi v3 entries; each new entry's parent is the previous one unless told."""

    def __init__(self, session_id: str = SESSION_ID) -> None:
        self.entries: list[dict[str, Any]] = [
            {
                "type": "session",
                "version": 3,
                "id": session_id,
                "timestamp": "2026-05-14T08:00:00.000Z",
                "cwd": "/home/test/.openclaw/workspace",
            }
        ]
        self.last: str | None = None
        self._n = 0

    def add(self, entry: dict[str, Any], parent: str | None | bool = True) -> str:
        self._n += 1
        entry_id = f"e{self._n:07d}"
        full = {
            "type": entry.pop("type"),
            "id": entry_id,
            "parentId": self.last if parent is True else parent,
            "timestamp": entry.pop("timestamp", f"2026-05-14T08:{self._n % 60:02d}:00.000Z"),
            **entry,
        }
        self.entries.append(full)
        self.last = entry_id
        return entry_id

    def user(self, text: str, parent: str | None | bool = True, **extra: Any) -> str:
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
        return self.add({"type": "message", "message": message, **extra}, parent)

    def assistant(self, *blocks: Any, parent: str | None | bool = True) -> str:
        content = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        message = {"role": "assistant", "content": content, "stopReason": "stop"}
        return self.add({"type": "message", "message": message}, parent)

    def tool_result(self, text: str) -> str:
        message = {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "exec",
            "content": [{"type": "text", "text": text}],
            "isError": False,
        }
        return self.add({"type": "message", "message": message})

    def compaction(self, summary: str) -> str:
        return self.add({"type": "compaction", "summary": summary, "firstKeptEntryId": "e0000001"})

    def lines(self) -> list[str]:
        return [json.dumps(e, ensure_ascii=False) for e in self.entries]

    def write(self, path: Path) -> Path:
        path.write_text("\n".join(self.lines()) + "\n", encoding="utf-8")
        return path
