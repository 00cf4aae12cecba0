"""MEMORY.md and daily notes (``memory/YYYY-MM-DD.md``) as imported notes.

Owns reading the Markdown memory files an agent already keeps: every bullet (``-``,
``*``, ``+``, ``1.``; ``[ ]``/``[x]`` checkboxes dropped; indented continuation lines
joined) becomes an `ImportedNote` with the heading it sits under and a kind guessed from
that heading, or from the nearest ancestor heading that names one ("Guardrails",
"Preferences", "Decisions Made", "Action Items", "Key facts", "Events", "Lessons", in
English, Russian, French and Spanish; other headings give ``kind=None``).

Skipped: memoracle's own block in MEMORY.md (between its ``<!-- memoracle:begin … -->``
and ``<!-- memoracle:end -->`` markers: views of stored memories), HTML comments
(OpenClaw Dreaming's ``<!-- openclaw-memory-promotion:... -->`` markers), except an
``<!-- until 2026-12-11 -->`` on a bullet, which is its expiry (`ImportedNote.until`;
one that gives no date or time skips the bullet with a warning),
Dreaming's trailing ``[score=... source=...]`` annotations, front matter, fenced code,
paragraphs that are not bullets, and placeholders such as ``(none yet)``, ``TBD`` or
``<fact>``. A daily note's ``day`` comes from its file name.
Deciding what a note means is the capture layer's job. Origins are ``path:line``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from memoracle.clock import parse_until
from memoracle.ingest.callbacks import (
    LINE_FACTOR,
    OnProgress,
    OnWarning,
    Throttle,
    mb,
    too_big,
)
from memoracle.ingest.jsonlines import Line, iter_lines
from memoracle.text import UNTIL_COMMENT, drop_comments
from memoracle.types import ImportedNote, IngestWarning

# The block memoracle renders into MEMORY.md: its lines are views of stored memories.
_OWN_BEGIN = re.compile(r"^\s*<!--\s*memoracle:begin\b")
_OWN_END = re.compile(r"^\s*<!--\s*memoracle:end\b")
DAILY_NOTE_NAME = re.compile(r"^(?P<day>\d{4}-\d{2}-\d{2})(?:[-_ .][^/\\]*)?\.(?:md|markdown)$")

# Checked in this order, so "Key Rules" is a guardrail and "Lessons Learned" an error.
_HEADING_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "guardrail",
            r"\b(guardrails?|rules?|constraints?|boundaries|never|правил|ограничен|запрет"
            r"|règles?|regles?|garde-fous?|interdi|reglas?|restricci|prohibi)",
        ),
        ("preference", r"\b(preferenc|préférenc|предпочтен|preferencia)"),
        ("decision", r"\b(decisions?|decided|décisions?|решени|decisi[oó]n)"),
        (
            "task",
            r"\b(tasks?|todo|to-do|to do|action items?|next steps?|pending|задач|дела\b"
            r"|сделать|tâches?|taches?|à faire|a faire|actions? à|tareas?|pendientes?"
            r"|acciones)",
        ),
        (
            "error",
            r"\b(errors?|lessons?|mistakes?|gotchas?|bugs?|ошибк|урок|erreurs?|leçons?"
            r"|lecons?|errores|lecci[oó]n)",
        ),
        ("event", r"\b(events?|событи|événements?|evenements?|eventos?|acontecimientos?)"),
        ("fact", r"\b(facts?|факт|faits?|hechos?|datos)"),
    )
)

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(?P<level>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(?P<indent>\s*)(?:[-*+]|\d{1,3}[.)])\s+(?P<text>.*)$")
_CHECKBOX = re.compile(r"^\[[ xX~!-]\]\s*")
_NESTED_MARKER = re.compile(r"^(?:[-*+]\s+)+")  # Dreaming writes "- - Candidate: ..."
_DREAMING_TAIL = re.compile(r"\s*\[score=[^\]]*\]\s*$")
_PLACEHOLDER = re.compile(
    r"^[\s(\[_*]*(none( yet)?|n/?a|tbd|todo|nothing( yet)?|empty|\.\.\.|…|-+|—|–|ничего"
    r"|нет|пока нет|rien|aucune?|nada|ninguno|ninguna)[\s)\]_*.!]*$",
    re.IGNORECASE,
)
_TEMPLATE = re.compile(
    r"^<(?![a-z]+:)[^<>@]{1,80}>$|^\[(add|insert|your)\b[^\]]*\]$", re.IGNORECASE
)


def heading_kind(heading: str) -> str | None:
    """The memory kind a heading names, if any."""
    for kind, pattern in _HEADING_KINDS:
        if pattern.search(heading):
            return kind
    return None


def daily_note_day(path: Path) -> date | None:
    """The day in a daily note's file name (``2026-05-14.md``), if it is one."""
    m = DAILY_NOTE_NAME.match(path.name)
    if m is None:
        return None
    try:
        return date.fromisoformat(m.group("day"))
    except ValueError:
        return None


def read_memory_md(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[ImportedNote]:
    """The bullets of a MEMORY.md-style file."""
    return _read(path, None, on_warning, on_progress, max_text_bytes)


def read_daily_note(
    path: Path, *, on_warning: OnWarning, on_progress: OnProgress, max_text_bytes: int
) -> Iterator[ImportedNote]:
    """The bullets of a daily note, each carrying the note's day."""
    day = daily_note_day(path)
    if day is None:
        on_warning(IngestWarning(str(path), "no YYYY-MM-DD in the file name; notes have no day"))
    return _read(path, day, on_warning, on_progress, max_text_bytes)


@dataclass
class _Bullet:
    line: int
    indent: int
    parts: list[str] = field(default_factory=list)
    until: str | None = None  # what its <!-- until … --> comment says


def _read(
    path: Path,
    day: date | None,
    on_warning: OnWarning,
    on_progress: OnProgress,
    max_text_bytes: int,
) -> Iterator[ImportedNote]:
    name = str(path)
    max_line = max_text_bytes * LINE_FACTOR
    progress = Throttle(on_progress, path.stat().st_size, 1 << 20)
    notes = _Notes(name, day, on_warning, max_text_bytes)
    previous = 0
    with path.open("rb") as f:
        for line in iter_lines(f, max_line):  # blank lines are not yielded: see the gap
            progress(line.offset)
            if line.number > previous + 1 and not notes.in_fence:
                yield from notes.end_bullet()  # a blank line ends a bullet
            previous = line.number
            raw = _decoded(line, f"{name}:{line.number}", max_line, on_warning)
            if raw is not None:
                yield from notes.line(raw, line.number)
    yield from notes.end_bullet()
    progress.finish()


def _decoded(line: Line, origin: str, max_line: int, on_warning: OnWarning) -> str | None:
    """The line's text, or None (with a warning) when it is too long or not UTF-8."""
    if line.oversize:
        limit = f"above the {mb(max_line)} limit"
        on_warning(IngestWarning(origin, f"line of {mb(line.size)} is {limit}; skipped"))
        return None
    try:
        return line.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        on_warning(IngestWarning(origin, f"not valid UTF-8 (byte {exc.start + 1}); skipped"))
        return None


class _Notes:
    """One file's lines in, its notes out: the headings above the line, the bullet
    being read, and whether the line is in front matter, fenced code, an HTML comment
    or memoracle's own block."""

    def __init__(
        self, name: str, day: date | None, on_warning: OnWarning, max_text_bytes: int
    ) -> None:
        self.name, self.day, self.on_warning = name, day, on_warning
        self.max_text_bytes = max_text_bytes
        self.headings: list[tuple[int, str]] = []
        self.bullet: _Bullet | None = None
        self.in_fence = self.in_comment = self.in_front_matter = self.in_own_block = False

    def line(self, raw: str, number: int) -> Iterator[ImportedNote]:
        """The notes one line ends (at most one), the line read into the state."""
        if self._not_text(raw, number):
            return
        if _OWN_BEGIN.match(raw) or self.in_own_block:  # memoracle's block: ours already
            if _OWN_BEGIN.match(raw):
                yield from self.end_bullet()
            self.bullet = None
            self.in_own_block = not _OWN_END.match(raw)
            return
        said_until = None if self.in_comment else UNTIL_COMMENT.search(raw)
        text, self.in_comment = drop_comments(raw, self.in_comment)
        if not text.strip():
            if said_until and self.bullet is not None:
                self.bullet.until = said_until.group(1)
            return  # only a comment (a Dreaming marker): the bullet goes on
        if m := _HEADING.match(text):
            yield from self.end_bullet()
            level = len(m.group("level"))
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.headings.append((level, " ".join(m.group("text").split())))
            return
        if m := _BULLET.match(text):
            yield from self.end_bullet()
            self.bullet = _Bullet(number, len(m.group("indent").expandtabs(4)))
            self.bullet.parts.append(_CHECKBOX.sub("", _NESTED_MARKER.sub("", m.group("text"))))
            if said_until:
                self.bullet.until = said_until.group(1)
            return
        indent = len(text) - len(text.lstrip())
        if self.bullet is not None and indent > self.bullet.indent:
            self.bullet.parts.append(text.strip())
            if said_until:
                self.bullet.until = said_until.group(1)
            return
        yield from self.end_bullet()  # a paragraph ends the bullet

    def _not_text(self, raw: str, number: int) -> bool:
        """Whether the line is front matter or fenced code (or opens or closes one)."""
        if number == 1 and raw.strip() == "---":
            self.in_front_matter = True
            return True
        if self.in_front_matter:
            self.in_front_matter = raw.strip() != "---"
            return True
        if _FENCE.match(raw):
            self.in_fence = not self.in_fence
            return True
        return self.in_fence

    def end_bullet(self) -> Iterator[ImportedNote]:
        """The bullet being read ends: its note, if it makes one."""
        bullet, self.bullet = self.bullet, None
        done = self._note(bullet) if bullet is not None else None
        if done is not None:
            yield done

    def _note(self, b: _Bullet) -> ImportedNote | None:
        """A bullet's note, under the current headings; None (with a warning when there
        is something to say) when it is empty, too big or its until is not understood."""
        text = _clean(" ".join(b.parts))
        if not text:
            return None
        origin = f"{self.name}:{b.line}"
        size = too_big(text, self.max_text_bytes)
        if size is not None:
            limit = f"above the {mb(self.max_text_bytes)} limit"
            self.on_warning(IngestWarning(origin, f"bullet of {mb(size)} is {limit}; skipped"))
            return None
        try:
            until = None if b.until is None else parse_until(b.until)
        except ValueError as exc:
            self.on_warning(
                IngestWarning(origin, f"its until comment is not understood ({exc}); skipped")
            )
            return None
        headings = self.headings
        heading = headings[-1][1] if headings else None
        kind = next((k for _, h in reversed(headings) if (k := heading_kind(h)) is not None), None)
        return ImportedNote(
            text=text, origin=origin, heading=heading, kind=kind, day=self.day, until=until
        )


def _clean(text: str) -> str:
    text = _DREAMING_TAIL.sub("", text)
    text = " ".join(text.split())
    if _PLACEHOLDER.match(text) or _TEMPLATE.match(text):
        return ""
    return text
