"""A topic file's text (L2, `memory/topics/<entity>.md`): every memory of the topic, or,
once the topic is complete ("compress on completion", docs/lifecycle.md), a short
summary that points to `<entity>_full.md`, the full notes beside it. Pure: memories in,
Markdown out."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from memoracle.render.memory_md import tagged_line
from memoracle.types import Memory

SUMMARY_ITEMS = 8  # lines a completed topic's summary keeps, at most
_SUMMARY_KINDS = ("decision", "task", "guardrail", "preference", "fact", "event")


def plain(name: str, type_: str, memories: Sequence[Memory]) -> str:
    """The topic file of a topic still open: its memories, newest first, tagged."""
    lines = [
        f"# {name}",
        "",
        f"_Written by memoracle each night: the memories naming {name} ({type_}), newest first._",
        "",
        *(tagged_line(m.ref, m.text) for m in memories),
    ]
    return "\n".join(lines) + "\n"


def summary(
    name: str,
    full_name: str,
    completed: Sequence[Memory],
    since: Sequence[Memory],
    *,
    at: datetime,
    zone: ZoneInfo,
) -> str:
    """A completed topic's file: when it completed, how many memories over which days,
    a link to `full_name`, then at most `SUMMARY_ITEMS` of them — decisions, tasks
    (done or not), then the most recalled — and what was said of it since, in full."""
    days = sorted(m.observed_at.astimezone(zone).date() for m in completed)
    span = f"{days[0]:%Y-%m-%d} to {days[-1]:%Y-%m-%d}" if days else "no day"
    lines = [
        f"# {name} (complete)",
        "",
        f"_Completed {at.astimezone(zone):%Y-%m-%d}: a summary by memoracle of"
        f" {len(completed)} {'memory' if len(completed) == 1 else 'memories'} ({span})."
        f" The full notes: [{full_name}]({full_name});"
        " every memory is still searchable (`memoracle search`), and"
        f" `memoracle complete --undo {name}` reopens the topic._",
        "",
        "## Summary",
        "",
        *(_item(m) for m in key_memories(completed)),
    ]
    if len(completed) > SUMMARY_ITEMS:
        lines.append(f"- … and {len(completed) - SUMMARY_ITEMS} more in [{full_name}]({full_name})")
    if since:
        lines += ["", "## Since it completed", "", *(tagged_line(m.ref, m.text) for m in since)]
    return "\n".join(lines) + "\n"


def _item(m: Memory) -> str:
    done = " (done)" if m.kind == "task" and m.details.get("done") else ""
    return tagged_line(m.ref, f"{m.kind}{done}: {m.text}")


def key_memories(memories: Sequence[Memory]) -> list[Memory]:
    """What a summary keeps: by kind (`_SUMMARY_KINDS` order), then the most recalled,
    then the newest; `SUMMARY_ITEMS` at most."""
    rank = {kind: i for i, kind in enumerate(_SUMMARY_KINDS)}
    ordered = sorted(
        memories,
        key=lambda m: (
            rank.get(m.kind, len(rank)),
            -m.access_count,
            -m.observed_at.timestamp(),
            m.id,
        ),
    )
    return ordered[:SUMMARY_ITEMS]


def full(name: str, memories: Sequence[Memory], *, at: datetime, zone: ZoneInfo) -> str:
    """`<entity>_full.md`: every memory the completion marked, newest first, tagged."""
    lines = [
        f"# {name}: the full notes",
        "",
        f"_Set aside by memoracle when {name} completed on {at.astimezone(zone):%Y-%m-%d}:"
        " every memory of the topic, newest first. Each is still stored and searchable;"
        f" `memoracle complete --undo {name}` puts them back in the topic file._",
        "",
        *(tagged_line(m.ref, m.text) for m in memories),
    ]
    return "\n".join(lines) + "\n"
