"""Recall without the database: plain-text search over MEMORY.md and the daily notes.

Owns `recall_from_files`, the recall used when the database is missing or corrupt. It
reads ``MEMORY.md`` and ``memory/YYYY-MM-DD.md`` from the workspace folder, splits them
into candidate lines (bullets and paragraph lines; headings, HTML comments, front matter
and fenced code are skipped), ranks the lines that share words with the message by the
summed IDF of the query words they contain, and packs the best into the budget with
`budget.pack`. Each line is tagged with where it came from (``memory/2026-11-30.md:4``)
and dated with its daily note's day. A line of a forgotten memory (tagged with its ref,
or the same text as it or one of its turns) is left out, as the database would leave it:
`HOME/forgotten.txt` (`FORGOTTEN_FILE`, written by the engine after every forget and
restore) lists their refs and content hashes, since MEMORY.md and the notes still hold
them until the next night rewrites them.

It uses no SQLite and no embeddings, so it works when those are what broke; that is why
it ranks with a few lines of IDF instead of FTS5's BM25. It never raises on file
content: a missing folder, an unreadable, non-UTF-8 or oversized file gives fewer lines
and a clause in `RecallBlock.degraded`. Query words and their folding are `query`'s;
deciding when to fall back, and printing `degraded` on stderr, are the engine's and the
CLI's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from memoracle.errors import InvalidInput
from memoracle.language.words import content_words, fold  # as search folds
from memoracle.recall.budget import TokenCounter, format_line, pack
from memoracle.recall.query import cut_ending
from memoracle.text import clean, content_hash, drop_comments, for_hash, fts_terms
from memoracle.types import RecallBlock, RecallLine
from memoracle.workspace import MEMORY_FILE, NOTES_DIR

__all__ = [
    "FORGOTTEN_FILE",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "forgotten_marks",
    "recall_from_files",
]

FORGOTTEN_FILE = "forgotten.txt"
"""In the home folder: refs and content hashes of forgotten memories and their turns."""

MAX_FILE_BYTES = 5 * 1024 * 1024
"""A file larger than this is skipped, never read into memory."""
MAX_TOTAL_BYTES = 50 * 1024 * 1024
"""Once this much is read, older daily notes are skipped (MEMORY.md is read first)."""
_STEM_WEIGHT = 0.5  # a word found only by its stem ("квартиру" ~ "квартира") counts half
_MAX_LISTED = 5  # skipped files named in `degraded`; the rest are counted

_DAILY_NOTE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")
# Quote marks, bullets (nested ones too: Dreaming writes "- - text") and a checkbox.
_MARKERS = re.compile(r"^(?:>\s*)*(?:(?:[-*+]|\d{1,3}[.)])\s+)*(?:\[[ xX~!-]\]\s+)?")
# A tag memoracle itself wrote: "[m_12 2023-05-07]" or "[e_3]".
_TAG = re.compile(r"^\[([a-z]_\d+)(?:\s+(\d{4}-\d{2}-\d{2}))?\]\s*")
_REF_COMMENT = re.compile(r"<!--\s*(m_\d+)\s*-->")  # MEMORY.md's and the notes' tag


@dataclass(frozen=True)
class _Source:
    name: str  # relative to files_dir, with "/": what the ref shows
    path: Path
    day: date | None  # a daily note's day
    rank: int  # tie-break: newer daily notes first, then MEMORY.md


@dataclass(frozen=True)
class _Line:
    ref: str
    text: str
    when: date | None
    order: tuple[int, int]  # (source rank, line number)
    matched: dict[str, float]  # query word -> 1.0 (the word) or _STEM_WEIGHT (its stem)


def recall_from_files(
    files_dir: Path,
    message: str,
    *,
    budget: int,
    counter: TokenCounter,
    for_owner: bool = True,
    reason: str,
    forgotten: frozenset[str] = frozenset(),
) -> RecallBlock:
    """The recall block for `message`, found by plain-text search of the Markdown files.

    `files_dir` is `Settings.files_dir`. Lines sharing a content word with `message`
    (`language.words.content_words`, folded for case and accents, long words also by their stem)
    are ranked by the sum of those words' IDF over all candidate lines; ties go to the
    newer daily note, then MEMORY.md, then the earlier line. Each is formatted with
    `format_line`, its ref ``MEMORY.md:12`` or ``memory/2026-11-30.md:4`` and its date
    the daily note's (or that of a ``[m_12 2023-05-07]`` tag it already carried), and
    the block never exceeds `budget` tokens. `degraded` starts with `reason` and says
    what was read and skipped. These files are the workspace owner's (docs/scopes.md):
    any other context (`for_owner` false: another user, or a group) gets an empty
    block. `budget` ≤ 0 is `InvalidInput`. `forgotten` (`forgotten_marks`) holds the
    refs and content hashes of lines never to give back.
    """
    if budget <= 0:
        raise InvalidInput(f"The recall budget must be a positive number of tokens, not {budget}.")
    reason = reason.strip().rstrip(".")

    def empty(degraded: str) -> RecallBlock:
        return RecallBlock("", (), budget, 0, counter.name, degraded)

    if not for_owner:
        return empty(
            f"{reason}: the fallback can only read MEMORY.md and the daily notes, which are "
            "the workspace owner's and this context may not see; nothing recalled"
        )
    sources = _sources(files_dir)
    if not sources:
        return empty(f"{reason}: no MEMORY.md or daily notes in {files_dir}; nothing recalled")

    terms = _query_terms(message)
    lines: list[_Line] = []
    candidates = 0
    read: list[_Source] = []
    skipped: list[tuple[str, str]] = []
    total = 0
    for source in sources:
        if total >= MAX_TOTAL_BYTES:
            skipped.append((source.name, f"past the {_mb(MAX_TOTAL_BYTES)} read limit"))
            continue
        text, size, why = _read(source.path)
        if text is None:
            skipped.append((source.name, why))
            continue
        read.append(source)
        total += size
        for number, line, tagged, refs in _candidates(text):
            if forgotten and (refs & forgotten or content_hash(line) in forgotten):
                continue
            candidates += 1
            matched = _match(line, terms)
            if matched:
                ref = f"{source.name}:{number}"
                order = (source.rank, number)
                lines.append(_Line(ref, line, source.day or tagged, order, matched))

    # Every line costs at least a token, so no block holds more than `budget` lines;
    # offering only the best `budget` keeps a 5 MB file from being counted line by line.
    ranked = _rank(lines, candidates, limit=budget)
    packing = pack(
        [("search", 1.0, [(x.ref, format_line(x.ref, x.text, x.when)) for x in ranked])],
        budget,
        counter,
    )
    return RecallBlock(
        text=packing.text,
        lines=tuple(RecallLine("search", p.ref, p.text, p.tokens) for p in packing.lines),
        budget=budget,
        tokens=packing.tokens,
        tokenizer=packing.tokenizer,
        degraded=_degraded(reason, files_dir, read, skipped),
    )


# -- reading ---------------------------------------------------------------------------


def _sources(files_dir: Path) -> list[_Source]:
    """MEMORY.md, then the daily notes newest first (the order they are read in)."""
    notes: list[tuple[date, Path]] = []
    for entry in _entries(files_dir / NOTES_DIR):
        m = _DAILY_NOTE.match(entry.name)
        if m is None:
            continue
        try:
            day = date.fromisoformat(m.group(1))
        except ValueError:  # 2026-02-30.md
            continue
        if _is_file(entry):
            notes.append((day, entry))
    notes.sort(reverse=True)
    found = [
        _Source(f"{NOTES_DIR}/{path.name}", path, day, rank)
        for rank, (day, path) in enumerate(notes)
    ]
    memory_md = files_dir / MEMORY_FILE
    if _is_file(memory_md):
        # Read first so the read limit never crowds it out, but ranked after the notes.
        found.insert(0, _Source(MEMORY_FILE, memory_md, None, len(notes)))
    return found


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:  # missing, not a folder, not readable
        return []


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()  # a FIFO or device is not: opening it could block
    except OSError:
        return False


def _read(path: Path) -> tuple[str | None, int, str]:
    """(text, bytes read, "") or (None, bytes read, why it was skipped). At most
    MAX_FILE_BYTES + 1 bytes are read, whatever size the file claims."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, 0, f"unreadable: {exc.strerror or type(exc).__name__}"
    if len(data) > MAX_FILE_BYTES:
        return None, len(data), f"over {_mb(MAX_FILE_BYTES)}"
    try:
        return clean(data.decode("utf-8-sig")), len(data), ""
    except UnicodeDecodeError as exc:
        return None, len(data), f"not UTF-8 at byte {exc.start + 1}"


def forgotten_marks(path: Path) -> frozenset[str]:
    """The refs and content hashes `path` (`FORGOTTEN_FILE`) lists; none when it is
    missing or unreadable (the files are then read as they are)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return frozenset()
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def _candidates(text: str) -> Iterator[tuple[int, str, date | None, frozenset[str]]]:
    """(1-based line number, text, date of a memoracle tag, the memory refs it is
    tagged with) for each bullet or paragraph line, with its markers and any memoracle
    tag stripped."""
    in_fence = in_comment = in_front_matter = False
    for number, raw in enumerate(text.split("\n"), 1):
        if number == 1 and raw.strip() == "---":
            in_front_matter = True
            continue
        if in_front_matter:
            in_front_matter = raw.strip() != "---"
            continue
        if not in_comment and _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        refs = set(_REF_COMMENT.findall(raw))
        line, in_comment = drop_comments(raw, in_comment)
        line = line.strip()
        if not line or _HEADING.match(line):
            continue
        line = _MARKERS.sub("", line)
        tagged: date | None = None
        if tag := _TAG.match(line):
            line = line[tag.end() :]
            tagged = _day(tag.group(2))
            refs.add(tag.group(1))
        if line.strip():
            yield number, line.strip(), tagged, frozenset(refs)


def _day(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


# -- ranking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Terms:
    words: frozenset[str]  # folded query words
    stems: dict[int, dict[str, list[str]]]  # stem length -> stem -> query words
    folded: dict[str, str]  # cache: index-form word -> folded (files repeat their words)


def _query_terms(message: str) -> _Terms:
    words = {fold(w) for w in content_words(message)}
    stems: dict[int, dict[str, list[str]]] = {}
    for word in sorted(words):
        cut = cut_ending(word)
        if cut is not None:
            stems.setdefault(len(cut), {}).setdefault(cut, []).append(word)
    return _Terms(frozenset(words), stems, {})


def _match(line: str, terms: _Terms) -> dict[str, float]:
    """The query words in `line`: 1.0 each if the word itself is there, else
    `_STEM_WEIGHT` if a word starting with its stem is."""
    if not terms.words:
        return {}
    matched: dict[str, float] = {}
    for word in fts_terms(line):
        key = terms.folded.get(word)
        if key is None:
            key = terms.folded[word] = fold(word)
        if key in terms.words:
            matched[key] = 1.0
        for length, stems in terms.stems.items():
            for query_word in stems.get(key[:length], ()):
                matched.setdefault(query_word, _STEM_WEIGHT)
    return matched


def _rank(lines: list[_Line], candidates: int, *, limit: int) -> list[_Line]:
    """The best `limit` lines, best first: summed IDF of the matched words, then the newer
    daily note, then MEMORY.md, then the earlier line. A repeated text comes once."""
    df: dict[str, int] = {}
    for line in lines:  # a line that holds a query word is one of `lines`
        for word in line.matched:
            df[word] = df.get(word, 0) + 1
    # BM25's IDF over all `candidates` lines: always positive, so a word on every line
    # still weighs a little, and a rarer word always outweighs a commoner one.
    idf = {w: math.log(1 + (candidates - n + 0.5) / (n + 0.5)) for w, n in df.items()}

    def score(line: _Line) -> float:
        return round(sum(idf[w] * weight for w, weight in sorted(line.matched.items())), 9)

    ranked: list[_Line] = []
    seen: set[str] = set()
    for line in sorted(lines, key=lambda x: (-score(x), x.order)):
        key = for_hash(line.text)
        if key not in seen:
            seen.add(key)
            ranked.append(line)
            if len(ranked) >= limit:
                break
    return ranked


# -- the sentence ----------------------------------------------------------------------


def _degraded(
    reason: str, files_dir: Path, read: list[_Source], skipped: list[tuple[str, str]]
) -> str:
    notes = sum(1 for s in read if s.day is not None)
    what = [MEMORY_FILE] if any(s.day is None for s in read) else []
    if notes:
        what.append(f"{notes} daily note{'s' if notes != 1 else ''}")
    if what:
        sentence = (
            f"{reason}: recalled from {' and '.join(what)} by plain-text search "
            "instead of the database"
        )
    else:
        sentence = f"{reason}: could not read MEMORY.md or the daily notes in {files_dir}"
    if skipped:
        listed = ", ".join(f"{name} ({why})" for name, why in skipped[:_MAX_LISTED])
        more = len(skipped) - _MAX_LISTED
        sentence += f"; skipped {listed}" + (f" and {more} more" if more > 0 else "")
    return sentence if what else sentence + "; nothing recalled"


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):g} MB"
