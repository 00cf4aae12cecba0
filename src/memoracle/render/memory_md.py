"""memoracle's block in MEMORY.md: render it, merge it into the file, read a person's edits.

Owns the block format (its markers, sections, item lines and budget) and the three pure
steps around it: `render_block` (memories in, block text out), `merge_into` (the block
into the file's text, every byte outside it untouched) and `read_edits` (what a person
added or deleted inside the block since memoracle last wrote it). Text in, text out: it
reads no file, no store and no clock. Choosing which memories to show (active, in scope,
not expired) is the caller's; so is turning `BlockEdits` into `remember` / `forget`.

The block, as `render_block` returns it::

    <!-- memoracle:begin v1 · kept by memoracle: add a line to remember it, delete ... -->
    ## Guardrails
    - Never deploy on Fridays <!-- m_12 -->

    ## Key facts
    - The staging database is on db2 <!-- m_3 -->

    ## Topics
    - Travel → memory/travel.md

    _4 more not shown (budget: 200 lines, 10000 characters); memoracle search finds them._
    <!-- memoracle:end -->

- Each memory is one bullet, its text as stored with runs of whitespace collapsed to one
  space, tagged with its ref in a trailing HTML comment (``<!-- m_12 -->``): invisible
  when the Markdown is viewed, easy to keep when the line is edited, and dropped by the
  Markdown importer like any comment. A memory that expires says so in a second one,
  ``<!-- until 2026-12-11 -->`` (kept to the end of that day) or ``<!-- until
  2026-12-11T18:00 -->``, in the workspace timezone (`clock.format_until`); a line a
  person adds with such a comment is remembered with that expiry. ``<!--`` and ``-->``
  inside a memory's text are written ``&lt;!--`` and ``--&gt;`` so a text can never
  close the tag or fake a marker.
- Sections, in this order, each only when it has lines: Guardrails (kind guardrail), Key
  facts (fact, event, error, pattern, insight, and any unknown kind), Preferences,
  Active decisions (decision), Open tasks (task), Topics (the `pointers`, untagged).
- Only memories with status "active" are shown, each ref once. Within a section:
  importance (highest first), then `observed_at` (newest first), then id (lowest first);
  the caller's order does not matter, so the output is deterministic.
- Budget: the block as returned (LF line ends, markers and final newline included) has
  at most `max_lines` lines and `max_chars` characters (Python ``len``). Lines are taken
  whole in priority order — Guardrails, Open tasks, Active decisions, Preferences, Topics,
  Key facts — so the last section's tail goes first and guardrails go last. A line that
  does not fit is left out and a shorter later one may still fit. When anything is left
  out, a final line says how many (it is counted in the budget too).
- `merge_into` writes the block with the file's own line ending (that of the existing
  begin marker's line, else the file's first line break), so the budget holds for the LF
  form. Callers read and write MEMORY.md with ``newline=""`` so CRLF survives.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from typing import NamedTuple

from memoracle.clock import format_until, parse_until
from memoracle.errors import InvalidInput
from memoracle.text import UNTIL_COMMENT
from memoracle.types import Memory

__all__ = [
    "BEGIN_MARKER",
    "END_MARKER",
    "FORMAT_VERSION",
    "SECTION_TITLES",
    "BlockEdits",
    "BlockError",
    "block_body",
    "extract_block",
    "line_ending",
    "budget_warning",
    "one_line",
    "merge_into",
    "read_edits",
    "render_block",
    "tagged_line",
    "without_block",
]

FORMAT_VERSION = 1
BEGIN_MARKER = (
    f"<!-- memoracle:begin v{FORMAT_VERSION} · kept by memoracle: add a line to remember it,"
    " delete a line to forget it; text outside this block is yours -->"
)
END_MARKER = "<!-- memoracle:end -->"

# (key, heading title) in display order; the key is the section's kind ("topic": pointers).
SECTION_TITLES: tuple[tuple[str, str], ...] = (
    ("guardrail", "Guardrails"),
    ("fact", "Key facts"),
    ("preference", "Preferences"),
    ("decision", "Active decisions"),
    ("task", "Open tasks"),
    ("topic", "Topics"),
)
# Filled first, dropped last: the budget trims this list from its end.
_PRIORITY = ("guardrail", "task", "decision", "preference", "topic", "fact")
# Every other kind (fact, event, error, pattern, insight, unknown) goes under Key facts.
_SECTION_OF_KIND = {k: k for k in ("guardrail", "preference", "decision", "task")}
_HEADINGS = {key: f"## {title}" for key, title in SECTION_TITLES}
_KIND_OF_TITLE = {title.casefold(): key for key, title in SECTION_TITLES if key != "topic"}

_WHITESPACE = re.compile(r"\s+")
_BEGIN = re.compile(r"^[ \t]*<!--[ \t]*memoracle:begin[ \t]+v(?P<version>\d+)\b.*-->[ \t]*$")
_END = re.compile(r"^[ \t]*<!--[ \t]*memoracle:end[ \t]*-->[ \t]*$")
# Anything that looks like a piece of a marker; on a line that is not a whole marker it
# means the marker was damaged (a person cut the "-->", or typed text onto its line).
_FRAGMENT = re.compile(r"<!--\s*memoracle:(begin|end)|memoracle:(begin|end)\b[^<>]*-->", re.I)
_REF_TAG = re.compile(r"<!--\s*(m_\d+)\s*-->")
_COMMENT = re.compile(r"<!--.*?-->")
_HEADING = re.compile(r"^#{1,6}(?:\s+(?P<title>.*?))?\s*#*\s*$")
_BULLET = re.compile(r"^(?:[-*+]|\d{1,3}[.)])(?:\s+|$)")
_CHECKBOX = re.compile(r"^\[[ xX]\](?:\s+|$)")
_NOTE = re.compile(r"^_\d+ more not shown\b.*_$")


class BlockError(InvalidInput):
    """memoracle's markers in MEMORY.md are damaged, missing, doubled, or of a newer
    format. `line` is the 1-based line of the offending marker, when there is one."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class BlockEdits:
    """What a person changed inside the block since memoracle last wrote it.

    `added`: texts of new lines (bullet, checkbox and HTML comments stripped, whitespace
    collapsed), in file order: each is a new user-stated memory. `added_kinds[i]` is the
    kind of the section `added[i]` sits under ("guardrail", "fact", "preference",
    "decision", "task"), None outside those. `added_until[i]` is the end its line gives
    in an ``<!-- until … -->`` comment (a date, or a time without an offset: both in the
    workspace timezone), None when it gives none. `forgotten`: refs whose line was
    deleted or whose text was changed. `edited`: (ref, new text) for each changed line,
    which is also in `forgotten` and `added` — an edit forgets the old memory and states
    a new one.
    """

    added: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    added_kinds: list[str | None] = field(default_factory=list)
    edited: list[tuple[str, str]] = field(default_factory=list)
    added_until: list[date | datetime | None] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.added and not self.forgotten


# -- lines -----------------------------------------------------------------------------


def one_line(text: str) -> str:
    """`text` on one line for a Markdown item: whitespace runs collapsed to a space, and
    ``<!--`` / ``-->`` escaped so it cannot open or close an HTML comment."""
    text = _WHITESPACE.sub(" ", text).strip()
    return text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")


def tagged_line(ref: str, text: str, until: str | None = None) -> str:
    """One item: ``- text <!-- m_12 -->`` (text on one line, comment delimiters escaped),
    and ``<!-- until 2026-12-11 -->`` after it when it expires."""
    tail = f" <!-- until {until} -->" if until else ""
    return f"- {one_line(text)} <!-- {ref} -->{tail}"


def line_ending(text: str) -> str:
    """The line ending of `text`'s first line break: "\\r\\n" or "\\n" (also when none)."""
    at = text.find("\n")
    return "\r\n" if at > 0 and text[at - 1] == "\r" else "\n"


class _Line(NamedTuple):
    number: int  # 1-based
    start: int  # offset of the line's first character
    end: int  # offset just past its content (before "\r\n" or "\n")
    content: str
    eol: str


def _lines(text: str) -> Iterator[_Line]:
    pos, number = 0, 1
    while pos < len(text):
        nl = text.find("\n", pos)
        stop = len(text) if nl < 0 else nl
        end = stop - 1 if stop > pos and text[stop - 1] == "\r" else stop
        eol = "" if nl < 0 else text[end : nl + 1]
        yield _Line(number, pos, end, text[pos:end], eol)
        pos, number = stop + 1, number + 1


# -- finding the block -----------------------------------------------------------------


class _Span(NamedTuple):
    begin: _Line
    end: _Line


def _find(text: str, what: str) -> _Span | None:
    begins: list[_Line] = []
    ends: list[_Line] = []
    for line in _lines(text):
        if m := _BEGIN.match(line.content):
            if int(m.group("version")) != FORMAT_VERSION:
                raise BlockError(
                    f"{what} line {line.number}: the memoracle block is format "
                    f"v{m.group('version')}; this memoracle reads v{FORMAT_VERSION}. "
                    "Upgrade memoracle, or delete the block to let this version rewrite it.",
                    line.number,
                )
            begins.append(line)
        elif _END.match(line.content):
            ends.append(line)
        elif _FRAGMENT.search(line.content):
            raise BlockError(
                f"{what} line {line.number}: a memoracle marker is damaged. Put it back "
                f"alone on its line, exactly '{END_MARKER}' or '<!-- memoracle:begin "
                f"v{FORMAT_VERSION} -->'.",
                line.number,
            )
    if not begins and not ends:
        return None
    if len(begins) > 1:
        raise BlockError(
            f"{what} line {begins[1].number}: a second memoracle:begin marker (the first "
            f"is on line {begins[0].number}). Keep one block: delete the other's markers.",
            begins[1].number,
        )
    if len(ends) > 1:
        raise BlockError(
            f"{what} line {ends[1].number}: a second memoracle:end marker (the first is on "
            f"line {ends[0].number}). Keep one block: delete the extra marker.",
            ends[1].number,
        )
    if not ends:
        raise BlockError(
            f"{what} line {begins[0].number}: the memoracle block opened here has no "
            f"end marker. Put '{END_MARKER}' back after its last line.",
            begins[0].number,
        )
    if not begins:
        raise BlockError(
            f"{what} line {ends[0].number}: a memoracle:end marker with no begin marker "
            f"before it. Put '<!-- memoracle:begin v{FORMAT_VERSION} -->' back above the block.",
            ends[0].number,
        )
    if ends[0].number < begins[0].number:
        raise BlockError(
            f"{what} line {ends[0].number}: the memoracle:end marker comes before the "
            f"begin marker (line {begins[0].number}). Swap them back.",
            ends[0].number,
        )
    return _Span(begins[0], ends[0])


def extract_block(text: str) -> str | None:
    """The block in `text`, from its begin marker to its end marker (both lines whole,
    no line ending after the end marker), or None when `text` has no markers.

    Raises `BlockError` when the markers are damaged, doubled or unpaired.
    """
    span = _find(text, "MEMORY.md")
    return None if span is None else text[span.begin.start : span.end.end]


def without_block(text: str) -> str:
    """`text` (MEMORY.md's) with memoracle's block cut out: what the person wrote
    around it. Raises `BlockError` when the markers are damaged, doubled or unpaired."""
    span = _find(text, "MEMORY.md")
    if span is None:
        return text
    return text[: span.begin.start] + text[span.end.end :]


def block_body(block: str) -> str:
    """The block's lines without its begin and end markers (a copy of it elsewhere, where
    the markers' "add a line to remember it" would promise what does not happen)."""
    lines = block.splitlines()
    return "\n".join(x for x in lines if not (_BEGIN.match(x) or _END.match(x))).strip()


# -- rendering -------------------------------------------------------------------------


def _note(left_out: int, max_lines: int, max_chars: int) -> str:
    return (
        f"_{left_out} more not shown (budget: {max_lines} lines, {max_chars} characters);"
        " memoracle search finds them._"
    )


def _ordered(memories: Sequence[Memory]) -> list[Memory]:
    seen: set[int] = set()
    shown: list[Memory] = []
    for m in memories:
        if m.status != "active" or m.id in seen or not one_line(m.text):
            continue
        seen.add(m.id)
        shown.append(m)
    # Stable sorts, last key first: importance desc, then observed_at desc, then id asc.
    shown.sort(key=lambda m: m.id)
    shown.sort(key=lambda m: m.observed_at, reverse=True)
    shown.sort(key=lambda m: m.importance, reverse=True)
    return shown


def render_block(
    memories: Sequence[Memory],
    *,
    max_lines: int = 200,
    max_chars: int = 10_000,
    pointers: Sequence[tuple[str, str]] = (),
    zone: tzinfo = UTC,
) -> str:
    """The block for `memories` and topic `pointers` ((title, relative path) pairs, shown
    in the order given), within `max_lines` lines and `max_chars` characters; expiries
    are written in `zone` (the workspace timezone).

    See the module docstring for the format, order and budget rules. Raises
    `InvalidInput` when the budget cannot hold even the two markers (and, if anything
    must be left out, the line saying how many).
    """
    lines_by_key: dict[str, list[str]] = {key: [] for key, _ in SECTION_TITLES}
    for m in _ordered(memories):
        until = None if m.expires_at is None else format_until(m.expires_at, zone)
        lines_by_key[_SECTION_OF_KIND.get(m.kind, "fact")].append(tagged_line(m.ref, m.text, until))
    for title, path in pointers:
        if target := one_line(path):
            lines_by_key["topic"].append(f"- {one_line(title) or target} → {target}")
    queue = [(key, line) for key in _PRIORITY for line in lines_by_key[key]]

    # Sizes are kept as running totals so choosing is linear in the number of lines.
    fixed_chars = len(BEGIN_MARKER) + 1 + len(END_MARKER) + 1

    def fits(sections: int, heading_chars: int, items: int, item_chars: int, left: int) -> bool:
        lines = 2 + sections + max(sections - 1, 0) + items
        chars = fixed_chars + heading_chars + max(sections - 1, 0) + item_chars
        if left:
            gap = 1 if sections else 0
            lines += 1 + gap
            chars += len(_note(left, max_lines, max_chars)) + 1 + gap
        return lines <= max_lines and chars <= max_chars

    chosen: dict[str, list[str]] = {key: [] for key, _ in SECTION_TITLES}
    sections = heading_chars = items = item_chars = 0
    for key, line in queue:
        opens = not chosen[key]
        new_sections = sections + opens
        new_heading_chars = heading_chars + (len(_HEADINGS[key]) + 1 if opens else 0)
        left = len(queue) - items - 1
        if fits(new_sections, new_heading_chars, items + 1, item_chars + len(line) + 1, left):
            chosen[key].append(line)
            sections, heading_chars = new_sections, new_heading_chars
            items, item_chars = items + 1, item_chars + len(line) + 1
    left_out = len(queue) - items
    if not fits(sections, heading_chars, items, item_chars, left_out):
        raise InvalidInput(
            f"A MEMORY.md budget of {max_lines} lines and {max_chars} characters cannot hold "
            "memoracle's block markers. Raise render.memory_md_max_lines / _max_chars."
        )

    out = [BEGIN_MARKER]
    for key, _title in SECTION_TITLES:
        if chosen[key]:
            if len(out) > 1:
                out.append("")
            out.append(_HEADINGS[key])
            out.extend(chosen[key])
    if left_out:
        if len(out) > 1:
            out.append("")
        out.append(_note(left_out, max_lines, max_chars))
    out.append(END_MARKER)
    return "\n".join(out) + "\n"


# -- merging ---------------------------------------------------------------------------


def merge_into(existing: str | None, block: str) -> str:
    """`existing` (MEMORY.md's text, None when there is no file) with `block` in place.

    A block already there is replaced, from the start of its begin marker's line to the
    end of its end marker's line; what follows the end marker (its line ending, or none)
    and everything before and after is kept exactly. No block yet: `block` is appended,
    after one blank line. No file (or an empty one): just `block`. The block is written
    with the file's line ending (see the module docstring). Raises `BlockError` when the
    file's markers are damaged, or when `block` is not a block.
    """
    if _find(block, "the rendered block") is None:
        raise BlockError("The text to merge into MEMORY.md is not a memoracle block.")
    body = block.removesuffix("\n").removesuffix("\r")
    if not existing:
        return block
    span = _find(existing, "MEMORY.md")
    if span is None:
        eol = line_ending(existing)
        if not existing.endswith("\n"):
            gap = eol + eol
        elif re.search(r"\n[ \t]*\r?\n\Z", existing) or existing.strip(" \t\r\n") == "":
            gap = ""
        else:
            gap = eol
        return existing + gap + _with_eol(body, eol) + eol
    eol = span.begin.eol or line_ending(existing)
    return existing[: span.begin.start] + _with_eol(body, eol) + existing[span.end.end :]


def _with_eol(text: str, eol: str) -> str:
    text = text.replace("\r\n", "\n")
    return text if eol == "\n" else text.replace("\n", eol)


# -- reading a person's edits ----------------------------------------------------------


class _Item(NamedTuple):
    number: int
    ref: str | None
    text: str
    kind: str | None
    until: date | datetime | None = None


def _items(text: str, span: _Span) -> list[_Item]:
    """The block's content lines (not markers, headings, blank lines, comment-only lines
    or the "N more not shown" line), with their ref tag and normalised text."""
    found: list[_Item] = []
    kind: str | None = None
    for line in _lines(text[span.begin.start : span.end.end]):
        content = line.content.strip()
        if line.number == 1 or not content or _END.match(content):
            continue
        if m := _HEADING.match(content):
            kind = _KIND_OF_TITLE.get(" ".join((m.group("title") or "").split()).casefold())
            continue
        tag = _REF_TAG.search(content)
        plain = _WHITESPACE.sub(" ", _COMMENT.sub(" ", content)).strip()
        if _NOTE.match(plain):
            continue
        plain = _CHECKBOX.sub("", _BULLET.sub("", plain)).strip()
        if tag is None and not plain:
            continue
        number = span.begin.number + line.number - 1
        until = _until(content, number)
        found.append(_Item(number, tag.group(1) if tag else None, plain, kind, until))
    return found


def _until(content: str, number: int) -> date | datetime | None:
    """The end an ``<!-- until … -->`` comment on line `number` gives, if it has one."""
    m = UNTIL_COMMENT.search(content)
    if m is None:
        return None
    try:
        return parse_until(m.group(1))
    except ValueError as exc:
        raise BlockError(
            f"MEMORY.md line {number}: the until comment is not understood ({exc}). Write "
            "<!-- until 2026-12-11 --> (kept to the end of that day) or "
            "<!-- until 2026-12-11T18:00 -->.",
            number,
        ) from None


def read_edits(current_file: str, last_rendered_block: str) -> BlockEdits:
    """What a person changed in the block of `current_file` (MEMORY.md as it is now)
    relative to `last_rendered_block` (what `render_block` last returned and was merged).

    Lines are compared one by one, by ref, after dropping the bullet, a checkbox, HTML
    comments and extra whitespace (so ticking ``[x]``, re-indenting or moving a line to
    another section changes nothing):

    - a ref'd line still there with the same text: kept;
    - a ref'd line gone: its ref is forgotten — unless an untagged line with the very
      same text is in the block (the person only deleted the tag): then it is kept;
    - a ref'd line whose text changed: the ref is forgotten and the new text added
      (also listed in `edited`); a copy of a kept line under the same ref is added;
    - any other new line (no ref, or a ref memoracle did not write there): added, its
      text without the tag. Lines memoracle wrote without a ref (headings, topic
      pointers) that were deleted or changed are not instructions: a changed one is
      just a new line.

    Outside the block nothing is read. Raises `BlockError` when the block's markers in
    `current_file` are damaged, doubled or missing altogether.
    """
    span = _find(current_file, "MEMORY.md")
    if span is None:
        raise BlockError(
            "MEMORY.md has no memoracle block (both markers are gone), so its edits cannot "
            "be read; nothing was forgotten. Render MEMORY.md again to restore the block."
        )
    last_span = _find(last_rendered_block, "the last rendered block")
    if last_span is None:
        raise BlockError("The last rendered block has no memoracle markers.")
    now = _items(current_file, span)
    before = _items(last_rendered_block, last_span)

    before_text: dict[str, str] = {}
    for item in before:
        if item.ref is not None:
            before_text.setdefault(item.ref, item.text)
    structural = Counter(item.text for item in before if item.ref is None)
    by_ref: dict[str, list[_Item]] = {}
    for item in now:
        if item.ref is not None and item.ref in before_text:
            by_ref.setdefault(item.ref, []).append(item)

    new: list[_Item] = []
    forgotten: list[str] = []
    edited: list[tuple[str, str]] = []
    vanished: list[str] = []
    for ref, text in before_text.items():
        lines = by_ref.get(ref, [])
        same = next((item for item in lines if item.text == text), None)
        if same is not None:
            new.extend(item for item in lines if item is not same and item.text)
            continue
        forgotten.append(ref)
        if not lines:
            vanished.append(ref)
        elif changed := [item for item in lines if item.text]:
            edited.append((ref, changed[0].text))
            new.extend(changed)
    for item in now:
        if item.ref is not None and item.ref in before_text:
            continue
        if item.ref is None and structural[item.text] > 0:
            structural[item.text] -= 1
            continue
        if item.text:
            new.append(item)
    # A tag deleted, text kept: not a forget-then-add of the same words.
    for ref in vanished:
        twin = next((i for i in new if i.ref is None and i.text == before_text[ref]), None)
        if twin is not None:
            new.remove(twin)
            forgotten.remove(ref)
    new.sort(key=lambda item: item.number)
    return BlockEdits(
        added=[item.text for item in new],
        forgotten=forgotten,
        added_kinds=[item.kind for item in new],
        edited=edited,
        added_until=[item.until for item in new],
    )


def budget_warning(
    lines: int, chars: int, max_lines: int, max_chars: int, *, full: float, prune: float
) -> tuple[str, str] | None:
    """The warning (code, what it says after "memoracle's block in MEMORY.md has") for a
    block of `lines` and `chars` against its budget: `memory_md_near_budget` from `full`
    of either (what does not fit is left out); below it, the L1 prune warning,
    `memory_md_prune`, from `prune` of the line budget (layered-memstack's "MEMORY.md
    over about 70 lines: prune"); else None."""
    if lines >= full * max_lines or chars >= full * max_chars:
        return "memory_md_near_budget", (
            f"{lines} lines and {chars:,} characters, {full:.0%} or more of its budget "
            f"(render.memory_md_max_lines {max_lines}, render.memory_md_max_chars "
            f"{max_chars:,}); what does not fit is left out. Run `memoracle archive "
            "--apply` to retire faded memories, or raise the budget."
        )
    if lines >= prune * max_lines:
        return "memory_md_prune", (
            f"{lines} lines, {prune:.0%} or more of its line budget "
            f"(render.memory_md_max_lines {max_lines}): L1 prune. The agent reads it at "
            "every session's start: keep it to pointers, move detail to topic and reference "
            "files, run `memoracle archive --apply` to retire faded memories and "
            "`memoracle dedup --fix` to merge repeats."
        )
    return None
