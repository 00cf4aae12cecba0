"""Daily notes, ``memory/YYYY-MM-DD.md``: appended to, never rewritten — but for what
was forgotten.

Owns the note's layout, the two appends: `append_entries` (the day's new memories,
under their section) and `checkpoint` (a ``## Checkpoint [HH:MM]`` section), and
`without` (the lines of forgotten memories taken out). Text in, text out: an append
only adds lines — every line of the existing note stays, byte for byte and in its
order, so whatever a person or the agent wrote is kept — and never repeats a section
heading within the day; `without` drops whole lines and changes no other byte.
Choosing the day's entries (in which timezone a memory falls on which day), reading and
writing the file (with ``newline=""``, so CRLF survives) and naming it are the caller's.

A note memoracle starts::

    # 2026-05-14

    ## Facts Learned
    - The staging database moved to db2 <!-- m_3 -->

    ## Decisions Made
    - Ship on Tuesdays from now on <!-- m_7 -->

    ## Checkpoint [14:05]
    - Deploy script half-migrated to the new runner

Entries are one bullet each, tagged with their ref the way MEMORY.md's block tags them
(`memoracle.render.memory_md.tagged_line`): the memory's text as stored, whitespace
collapsed to single spaces, nothing translated or renamed. A ref already anywhere in the
note is not written again. Kinds go to sections: fact, event, error, pattern, insight →
Facts Learned; decision → Decisions Made; preference → Preferences Noted; task → Action
Items; guardrail → its own ``## Guardrails`` (so re-importing the note keeps the kind;
the importer reads that heading as guardrail); an unknown kind → Facts Learned.

A day's note has each section heading once: an entry whose section the note already
has (a ``## Facts Learned`` written by an earlier capture, nightly run or person) is
added at the end of that section — after its last line that is not blank, before the
next heading — and only a section the note lacks gets a new heading, appended at the
end, in the order Facts Learned, Decisions Made, Preferences Noted, Guardrails, Action
Items; within a section entries are in `observed_at` order (then id). A checkpoint at a
minute the note already has a ``## Checkpoint [HH:MM]`` for is added under it. A note
that already repeats a heading (written by an older version) grows under the last one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from datetime import date, time

from memoracle.render.memory_md import line_ending, one_line, tagged_line
from memoracle.text import content_hash
from memoracle.types import Memory

__all__ = ["SECTION_OF_KIND", "SECTIONS", "append_entries", "checkpoint", "refs_in", "without"]

SECTIONS: tuple[str, ...] = (
    "Facts Learned",
    "Decisions Made",
    "Preferences Noted",
    "Guardrails",
    "Action Items",
)
SECTION_OF_KIND: dict[str, str] = {
    "fact": "Facts Learned",
    "event": "Facts Learned",
    "error": "Facts Learned",
    "pattern": "Facts Learned",
    "insight": "Facts Learned",
    "decision": "Decisions Made",
    "preference": "Preferences Noted",
    "guardrail": "Guardrails",
    "task": "Action Items",
}

_REF_TAG = re.compile(r"<!--\s*(m_\d+)\s*-->")
_H2 = re.compile(r"^##[ \t]+(?P<title>.*?)[ \t]*#*[ \t]*\r?$", re.MULTILINE)
_ANY_HEADING = re.compile(r"^#{1,6}(?:[ \t]|\r?$)", re.MULTILINE)
_WHITESPACE = re.compile(r"\s+")
_BULLET = re.compile(r"^[-*+]\s+")
_SAID_BY = re.compile(r"^assistant:\s*")  # a checkpoint's assistant line
_BLANK_LINE_AT_END = re.compile(r"\n[ \t]*\r?\n\Z")


def refs_in(note: str) -> set[str]:
    """The memory refs tagged anywhere in a note (``<!-- m_12 -->``)."""
    return set(_REF_TAG.findall(note))


def _title(day: date) -> str:
    return f"# {day.isoformat()}\n"


def _section_end(lines: Sequence[str], title: str) -> int | None:
    """Where lines go at the end of the note's last level-2 section named `title`
    (whitespace aside): after its last line that is not blank, before the next heading;
    None when the note has no such section."""
    wanted = " ".join(title.split())
    start = None
    for index, line in enumerate(lines):
        m = _H2.match(line)
        if m is not None and " ".join(m.group("title").split()) == wanted:
            start = index
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(lines)) if _ANY_HEADING.match(lines[i])), len(lines)
    )
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return end


def _insert(note: str, eol: str, title: str, bullets: Sequence[str]) -> str | None:
    """`note` with `bullets` at the end of its section `title`, or None when it has
    none. Every existing line is kept as it is; one that ends the file without a line
    break gets one, as an append would give it."""
    lines = note.splitlines(keepends=True)
    at = _section_end(lines, title)
    if at is None:
        return None
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += eol
    lines[at:at] = [bullet + eol for bullet in bullets]
    return "".join(lines)


class _Appender:
    """Builds the suffix; `text` is always existing + what was appended so far."""

    def __init__(self, existing: str) -> None:
        self.text = existing
        self.eol = line_ending(existing)

    def add_lines(self, lines: Sequence[str]) -> None:
        if self.text and not self.text.endswith("\n"):
            self.text += self.eol
        self.text += "".join(line + self.eol for line in lines)

    def add_section(self, heading: str, lines: Sequence[str]) -> None:
        if self.text and not self.text.endswith("\n"):
            self.text += self.eol
        if self.text.strip(" \t\r\n") and not _BLANK_LINE_AT_END.search(self.text):
            self.text += self.eol
        self.add_lines([heading, *lines])


def _start(existing: str | None, day: date) -> str:
    return existing if existing else _title(day)


def append_entries(existing: str | None, day: date, entries: Sequence[Memory]) -> str:
    """The note `existing` (None or "" when there is none yet: it starts with the title
    ``# YYYY-MM-DD``) with `entries` added under their sections, each heading once.

    Entries whose ref the note already holds, and entries with no text, are skipped;
    with nothing new the note comes back unchanged. Every line of `existing` is kept,
    in order. The caller decides which memories belong to `day` (no status filter here: a
    daily note is a log of what was learned that day).
    """
    base = _start(existing, day)
    seen = refs_in(base)
    by_section: dict[str, list[str]] = {}
    for m in sorted(entries, key=lambda m: (m.observed_at, m.id)):
        if m.ref in seen or not _WHITESPACE.sub("", m.text):
            continue
        seen.add(m.ref)
        section = SECTION_OF_KIND.get(m.kind, "Facts Learned")
        by_section.setdefault(section, []).append(tagged_line(m.ref, m.text))
    eol = line_ending(base)
    for section in SECTIONS:  # a section the note has grows where it is
        if section in by_section:
            grown = _insert(base, eol, section, by_section[section])
            if grown is not None:
                base = grown
                del by_section[section]
    out = _Appender(base)
    for section in SECTIONS:
        if section in by_section:
            out.add_section(f"## {section}", by_section[section])
    return out.text


def checkpoint(existing: str | None, day: date, at: time, lines: Sequence[str | Memory]) -> str:
    """The note with a ``## Checkpoint [HH:MM]`` section appended, one bullet per line.

    A `Memory` is written like an entry (tagged with its ref; skipped when the note
    already has that ref); a string is written as given, on one line (see
    `memory_md.one_line`), without a leading bullet it may already have. With nothing
    to write the note comes back unchanged (or, when there is none, as just its title).
    Every line of `existing` is kept, in order; a checkpoint of a minute the note has
    one for is added under it.
    """
    base = _start(existing, day)
    seen = refs_in(base)
    bullets: list[str] = []
    for line in lines:
        if isinstance(line, Memory):
            if line.ref in seen or not _WHITESPACE.sub("", line.text):
                continue
            seen.add(line.ref)
            bullets.append(tagged_line(line.ref, line.text))
        elif text := one_line(_BULLET.sub("", line.strip())):
            bullets.append(f"- {text}")
    if not bullets:
        return base
    title = f"Checkpoint [{at.strftime('%H:%M')}]"
    grown = _insert(base, line_ending(base), title, bullets)
    if grown is not None:
        return grown
    out = _Appender(base)
    out.add_section(f"## {title}", bullets)
    return out.text


def without(note: str, refs: Set[str], hashes: Set[str]) -> str:
    """`note` without the lines of forgotten memories: a line tagged with one of `refs`
    (``<!-- m_12 -->``), or a bullet whose text has one of the content `hashes` (a
    checkpoint line that said a forgotten memory or one of its turns). Every other line
    is kept byte for byte; a section left empty keeps its heading."""
    kept: list[str] = []
    for line in note.splitlines(keepends=True):
        tags = set(_REF_TAG.findall(line))
        said = _SAID_BY.sub("", _REF_TAG.sub("", _BULLET.sub("", line.strip())).strip())
        if tags & refs or (said and line.lstrip().startswith(("-", "*", "+"))
                           and content_hash(said) in hashes):  # fmt: skip
            continue
        kept.append(line)
    return "".join(kept)
