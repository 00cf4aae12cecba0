from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoracle.errors import InvalidInput
from memoracle.recall import fallback
from memoracle.recall.budget import ELLIPSIS, EstimateCounter, TokenCounter, tiktoken_counter
from memoracle.recall.fallback import MAX_FILE_BYTES, recall_from_files
from memoracle.types import RecallBlock

ESTIMATE = EstimateCounter()
TIKTOKEN = tiktoken_counter()
COUNTERS: list[TokenCounter] = [ESTIMATE] + ([TIKTOKEN] if TIKTOKEN is not None else [])
REASON = "database is corrupt (file is not a database)"


@dataclass(frozen=True)
class Words:
    """A toy counter: one token per whitespace-separated word and per newline."""

    name: str = "words"

    def count(self, text: str) -> int:
        return len(text.split()) + text.count("\n")


def _workspace(root: Path, memory_md: str | None = None, **notes: str | bytes) -> Path:
    """A files_dir with MEMORY.md and daily notes, given as ``d2026_11_30="..."``."""
    root.mkdir(parents=True, exist_ok=True)
    if memory_md is not None:
        (root / "MEMORY.md").write_text(memory_md, encoding="utf-8")
    if notes:
        (root / "memory").mkdir(exist_ok=True)
    for key, body in notes.items():
        path = root / "memory" / (key.removeprefix("d").replace("_", "-") + ".md")
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return root


def _recall(
    files_dir: Path,
    message: str,
    *,
    budget: int = 500,
    counter: TokenCounter = ESTIMATE,
    for_owner: bool = True,
) -> RecallBlock:
    return recall_from_files(
        files_dir, message, budget=budget, counter=counter, for_owner=for_owner, reason=REASON
    )


def _refs(block: RecallBlock) -> list[str]:
    return [line.ref for line in block.lines]


# -- ranking ---------------------------------------------------------------------------


def test_the_matching_line_is_recalled(tmp_path: Path) -> None:
    files = _workspace(
        tmp_path,
        "- I live in Lyon\n- My sister is called Jennifer\n- Prefer tea over coffee\n",
    )
    block = _recall(files, "What is my sister's name?")
    assert block.text == "- [MEMORY.md:2] My sister is called Jennifer"
    assert _refs(block) == ["MEMORY.md:2"]
    line = block.lines[0]
    assert line.slot == "search" and line.hit is None
    assert line.tokens == ESTIMATE.count(line.text)
    assert block.tokens == ESTIMATE.count(block.text) <= block.budget == 500
    assert block.tokenizer == ESTIMATE.name


def test_a_rarer_word_outranks_a_common_one(tmp_path: Path) -> None:
    files = _workspace(
        tmp_path,
        "- project meeting on Monday\n"
        "- project budget is tight\n"
        "- project kickoff went well\n"
        "- the dentist appointment\n"
        "- dentist and project clash\n",
    )
    block = _recall(files, "project dentist")
    # Both words beat one; the rarer "dentist" beats "project"; then file order.
    assert _refs(block) == [
        "MEMORY.md:5",
        "MEMORY.md:4",
        "MEMORY.md:1",
        "MEMORY.md:2",
        "MEMORY.md:3",
    ]


def test_lines_with_no_query_word_are_not_returned(tmp_path: Path) -> None:
    files = _workspace(tmp_path, "- I live in Lyon\n- Prefer tea\n")
    block = _recall(files, "Which car do I drive?")
    assert block.text == "" and block.lines == () and block.tokens == 0
    assert block.degraded is not None and block.degraded.startswith(REASON)
    assert _recall(files, "the and of ?").lines == ()  # only stop words
    assert _recall(files, "").lines == ()


def test_daily_notes_are_dated_and_newer_ones_win_ties(tmp_path: Path) -> None:
    files = _workspace(
        tmp_path,
        "- dentist is Dr Smith\n",
        d2026_11_01="- dentist said floss\n",
        d2026_11_30="# 2026-11-30\n\n- lunch with Bob\n- dentist moved to Friday\n",
    )
    block = _recall(files, "when is the dentist?")
    assert block.text.split("\n") == [
        "- [memory/2026-11-30.md:4 2026-11-30] dentist moved to Friday",
        "- [memory/2026-11-01.md:1 2026-11-01] dentist said floss",
        "- [MEMORY.md:1] dentist is Dr Smith",
    ]


def test_a_repeated_text_comes_once_from_the_newest_place(tmp_path: Path) -> None:
    files = _workspace(
        tmp_path,
        "- Never push to main\n",
        d2026_01_02="- never push to MAIN.\n",
        d2026_01_01="- Never push to main\n",
    )
    assert _refs(_recall(files, "push to main")) == ["memory/2026-01-02.md:1"]


# -- reading ---------------------------------------------------------------------------

MARKDOWN = """\
---
title: my memory
tags: [dentist]
---
# Memory about the dentist

<!-- memoracle:begin -->
## Dentist
- [m_12 2023-05-07] dentist appointment on Friday
* [ ] call the dentist back
+ [x] paid the dentist
1. dentist number one
2) dentist number two
- - dentist nested by Dreaming
> dentist quoted
<!-- dentist in a comment -->
<!-- a comment about the dentist
that goes on --> dentist after a comment
```
dentist in a fenced block
```
~~~python
dentist = "in a tilde fence"
~~~
A paragraph line about the dentist.
    an indented dentist continuation
<!-- memoracle:end -->
#dentist-hashtag is not a heading
"""


def test_headings_comments_fences_and_markers_are_skipped(tmp_path: Path) -> None:
    files = _workspace(tmp_path, MARKDOWN)
    block = _recall(files, "dentist")
    by_ref = {line.ref: line.text for line in block.lines}
    assert by_ref == {
        "MEMORY.md:9": "- [MEMORY.md:9 2023-05-07] dentist appointment on Friday",
        "MEMORY.md:10": "- [MEMORY.md:10] call the dentist back",
        "MEMORY.md:11": "- [MEMORY.md:11] paid the dentist",
        "MEMORY.md:12": "- [MEMORY.md:12] dentist number one",
        "MEMORY.md:13": "- [MEMORY.md:13] dentist number two",
        "MEMORY.md:14": "- [MEMORY.md:14] dentist nested by Dreaming",
        "MEMORY.md:15": "- [MEMORY.md:15] dentist quoted",
        "MEMORY.md:18": "- [MEMORY.md:18] dentist after a comment",
        "MEMORY.md:25": "- [MEMORY.md:25] A paragraph line about the dentist.",
        "MEMORY.md:26": "- [MEMORY.md:26] an indented dentist continuation",
        "MEMORY.md:28": "- [MEMORY.md:28] #dentist-hashtag is not a heading",
    }
    assert "memoracle:" not in block.text and "<!--" not in block.text


def test_only_memory_md_and_dated_notes_are_read(tmp_path: Path) -> None:
    files = _workspace(tmp_path, "- dentist in MEMORY\n", d2026_03_01="- dentist in a note\n")
    notes = files / "memory"
    (notes / "archive").mkdir()
    (notes / "archive" / "2026-01-01.md").write_text("- dentist archived\n")
    (notes / "notes.md").write_text("- dentist in notes.md\n")
    (notes / "2026-02-30.md").write_text("- dentist on a day that never was\n")
    (notes / "2026-03-02.txt").write_text("- dentist in a txt\n")
    (notes / "2026-03-03.md").mkdir()  # a folder named like a note
    (files / "README.md").write_text("- dentist in the readme\n")
    block = _recall(files, "dentist")
    assert sorted(_refs(block)) == ["MEMORY.md:1", "memory/2026-03-01.md:1"]
    assert block.degraded == (
        f"{REASON}: recalled from MEMORY.md and 1 daily note by plain-text search "
        "instead of the database"
    )


def test_daily_notes_alone_are_enough(tmp_path: Path) -> None:
    files = _workspace(tmp_path, None, d2026_03_01="- dentist\n", d2026_03_02="- dentist too\n")
    block = _recall(files, "dentist")
    assert len(block.lines) == 2
    assert block.degraded == (
        f"{REASON}: recalled from 2 daily notes by plain-text search instead of the database"
    )


def test_a_missing_folder_gives_an_empty_block_that_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    block = _recall(missing, "dentist")
    assert block.text == "" and block.lines == () and block.tokens == 0
    assert block.budget == 500 and block.tokenizer == ESTIMATE.name
    assert block.degraded == f"{REASON}: no MEMORY.md or daily notes in {missing}; nothing recalled"
    # A files_dir that is a file, and one with an empty memory/ folder, are no better.
    (tmp_path / "file").write_text("- dentist\n")
    assert _recall(tmp_path / "file", "dentist").lines == ()
    (tmp_path / "empty" / "memory").mkdir(parents=True)
    assert "nothing recalled" in (_recall(tmp_path / "empty", "dentist").degraded or "")


def test_a_non_utf8_file_is_skipped_and_named(tmp_path: Path) -> None:
    files = _workspace(
        tmp_path,
        "- dentist on Friday\n",
        d2026_01_01="- dentist à Lyon\n".encode("latin-1"),
        d2026_01_02=b"\xff\xfe- \x00d\x00e\x00n\x00t\x00i\x00s\x00t\x00",  # UTF-16
    )
    block = _recall(files, "dentist")
    assert _refs(block) == ["MEMORY.md:1"]
    assert block.degraded == (
        f"{REASON}: recalled from MEMORY.md by plain-text search instead of the database; "
        "skipped memory/2026-01-02.md (not UTF-8 at byte 1), "
        "memory/2026-01-01.md (not UTF-8 at byte 11)"
    )


def test_a_utf8_bom_is_not_text(tmp_path: Path) -> None:
    files = _workspace(tmp_path, None, d2026_01_01="\ufeff- dentist\n".encode())
    assert _recall(files, "dentist").text == "- [memory/2026-01-01.md:1 2026-01-01] dentist"


def test_an_oversized_file_is_skipped_unread(tmp_path: Path) -> None:
    files = _workspace(tmp_path, None, d2026_01_01="- dentist on Monday\n")
    huge = files / "MEMORY.md"
    with huge.open("wb") as f:
        f.write(b"- dentist in a huge file\n")
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: cheap to make
    block = _recall(files, "dentist")
    assert _refs(block) == ["memory/2026-01-01.md:1"]
    assert block.degraded == (
        f"{REASON}: recalled from 1 daily note by plain-text search instead of the database; "
        "skipped MEMORY.md (over 5 MB)"
    )


def test_only_unreadable_files_means_nothing_recalled(tmp_path: Path) -> None:
    files = _workspace(tmp_path, None, d2026_01_01=b"\xff dentist")
    block = _recall(files, "dentist")
    assert block.lines == ()
    assert block.degraded == (
        f"{REASON}: could not read MEMORY.md or the daily notes in {files}; "
        "skipped memory/2026-01-01.md (not UTF-8 at byte 1); nothing recalled"
    )


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_a_file_without_read_permission_is_skipped(tmp_path: Path) -> None:
    files = _workspace(tmp_path, "- dentist\n", d2026_01_01="- dentist note\n")
    note = files / "memory" / "2026-01-01.md"
    note.chmod(0)
    try:
        block = _recall(files, "dentist")
    finally:
        note.chmod(0o644)
    assert _refs(block) == ["MEMORY.md:1"]
    assert "memory/2026-01-01.md (unreadable: Permission denied)" in (block.degraded or "")


def test_reading_stops_at_the_total_limit_but_memory_md_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fallback, "MAX_TOTAL_BYTES", 40)
    notes = {f"d2026_01_{day:02d}": f"- dentist visit {day}\n" for day in range(1, 9)}
    files = _workspace(tmp_path, "- dentist is Dr Smith\n", **notes)
    block = _recall(files, "dentist")
    # MEMORY.md (22 bytes) and the newest note (19) reach 40; older notes are left.
    assert sorted(_refs(block)) == ["MEMORY.md:1", "memory/2026-01-08.md:1"]
    assert block.degraded is not None
    assert "skipped memory/2026-01-07.md (past the" in block.degraded
    assert block.degraded.endswith(" and 2 more")


# -- languages -------------------------------------------------------------------------

POLYGLOT = """\
- Мы купили квартиру в Казани
- Ёлка стоит в углу
- Élodie a déménagé à Lyon en mars
- Mi hermano vive en Sevilla
- I moved to Berlin
"""


@pytest.mark.parametrize(
    ("message", "ref"),
    [
        ("Где мы купили квартиру?", "MEMORY.md:1"),
        ("Какая у нас квартира?", "MEMORY.md:1"),  # by the stem: квартира ~ квартиру
        ("ЁЛКА", "MEMORY.md:2"),  # ё folds to е, case folds
        ("елка где?", "MEMORY.md:2"),
        ("Où habite Élodie ?", "MEMORY.md:3"),
        ("elodie demenage", "MEMORY.md:3"),  # accents are optional
        ("¿Dónde vive mi hermano?", "MEMORY.md:4"),
    ],
)
def test_russian_french_and_spanish_lines_match_their_words(
    tmp_path: Path, message: str, ref: str
) -> None:
    files = _workspace(tmp_path, POLYGLOT)
    assert _refs(_recall(files, message)) == [ref]


def test_stop_words_do_not_match(tmp_path: Path) -> None:
    files = _workspace(tmp_path, POLYGLOT)
    assert _recall(files, "Где мы в это время?").lines == ()  # мы, в: stop words
    assert _recall(files, "Quand est-ce que elle a fait ça ?").lines == ()


# -- budget and visibility -------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, -1])
def test_no_budget_is_invalid_input(tmp_path: Path, budget: int) -> None:
    with pytest.raises(InvalidInput, match="positive number of tokens"):
        _recall(_workspace(tmp_path, "- dentist\n"), "dentist", budget=budget)


def test_a_context_other_than_the_owner_sees_nothing(tmp_path: Path) -> None:
    files = _workspace(tmp_path, "- dentist\n", d2026_01_01="- dentist\n")
    block = _recall(files, "dentist", for_owner=False)
    assert block.text == "" and block.lines == () and block.tokens == 0
    assert block.degraded is not None
    assert block.degraded.startswith(f"{REASON}: ")
    assert "the workspace owner's" in block.degraded and "nothing recalled" in block.degraded


def test_the_reason_is_not_doubly_punctuated(tmp_path: Path) -> None:
    files = _workspace(tmp_path, "- dentist\n")
    block = recall_from_files(
        files, "dentist", budget=100, counter=ESTIMATE, reason="  database is missing. "
    )
    assert (block.degraded or "").startswith("database is missing: recalled from MEMORY.md")


def test_the_block_stops_at_the_budget(tmp_path: Path) -> None:
    lines = "".join(f"- dentist visit number {i}\n" for i in range(50))
    files = _workspace(tmp_path, lines)
    block = _recall(files, "dentist", budget=20, counter=Words())
    # Each line is 6 words (tag included) and a newline: three lines are 6 + 7 + 7.
    assert _refs(block) == ["MEMORY.md:1", "MEMORY.md:2", "MEMORY.md:3"]
    assert block.tokens == Words().count(block.text) == 20


def test_a_lone_long_line_is_cut_to_fit(tmp_path: Path) -> None:
    files = _workspace(tmp_path, "- dentist " + "word " * 500 + "\n")
    block = _recall(files, "dentist", budget=30)
    assert block.text.startswith("- [MEMORY.md:1] dentist word")
    assert block.text.endswith(ELLIPSIS)
    assert block.tokens == ESTIMATE.count(block.text) <= 30


# -- the property ----------------------------------------------------------------------

_WORDS = ["dentist", "Lyon", "квартира", "квартиру", "Élodie", "main", "push", "the", "16"]
_PIECES = st.sampled_from(
    [
        *_WORDS,
        "- ",
        "# ",
        "* [x] ",
        "<!--",
        "-->",
        "```",
        "---",
        "[m_1 2023-05-07] ",
        "\n",
        "\n\n",
        " ",
        "😀",
    ]
)
_FILE = st.one_of(
    st.lists(_PIECES, max_size=60).map("".join),
    st.text(max_size=300),
)


@pytest.mark.parametrize("counter", COUNTERS, ids=lambda c: c.name)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    memory_md=st.one_of(st.none(), _FILE),
    notes=st.dictionaries(
        st.dates().map(lambda d: d.isoformat()),
        st.one_of(_FILE, st.binary(max_size=100)),
        max_size=4,
    ),
    message=st.one_of(st.lists(st.sampled_from(_WORDS), max_size=4).map(" ".join), st.text()),
    budget=st.one_of(st.integers(1, 60), st.integers(1, 3000)),
)
def test_never_over_budget(
    counter: TokenCounter,
    memory_md: str | None,
    notes: dict[str, str | bytes],
    message: str,
    budget: int,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        files = Path(folder)
        if memory_md is not None:
            (files / "MEMORY.md").write_text(memory_md, encoding="utf-8", errors="surrogatepass")
        (files / "memory").mkdir()
        for day, body in notes.items():
            path = files / "memory" / f"{day}.md"
            if isinstance(body, bytes):
                path.write_bytes(body)
            else:
                path.write_text(body, encoding="utf-8", errors="surrogatepass")
        block = recall_from_files(files, message, budget=budget, counter=counter, reason="x")
    assert block.tokens == counter.count(block.text) <= budget
    assert block.text == "\n".join(line.text for line in block.lines)
    refs = _refs(block)
    assert len(refs) == len(set(refs))
    for line in block.lines:
        assert line.slot == "search" and line.hit is None
        assert line.text.startswith(f"- [{line.ref}")
        assert line.ref.startswith(("MEMORY.md:", "memory/"))
    assert block.degraded is not None and block.degraded.startswith("x: ")
