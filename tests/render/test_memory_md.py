from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoracle.errors import InvalidInput
from memoracle.render.memory_md import (
    BEGIN_MARKER,
    END_MARKER,
    BlockError,
    extract_block,
    merge_into,
    read_edits,
    render_block,
)
from memoracle.text import content_hash
from memoracle.types import KINDS, Memory

T0 = datetime(2026, 5, 14, 9, 0, tzinfo=UTC)


def mem(
    id: int,
    text: str,
    kind: str = "fact",
    *,
    importance: float = 0.5,
    observed: datetime = T0,
    status: str = "active",
) -> Memory:
    return Memory(
        id=id,
        kind=kind,
        text=text,
        layer="semantic",
        status=status,
        created_at=observed,
        observed_at=observed,
        last_accessed_at=observed,
        activation=1.0,
        importance=importance,
        access_count=0,
        confidence=0.8,
        pinned=kind == "guardrail",
        source="capture",
        content_hash=content_hash(text),
    )


MEMORIES = [
    mem(12, "Never deploy on Fridays", "guardrail", importance=0.9),
    mem(3, "The staging database is on db2", importance=0.7),
    mem(4, "Lena moved to Lyon in March", "event", importance=0.5),
    mem(5, "Prefers answers in French", "preference"),
    mem(6, "Use Postgres 16 for the new service", "decision"),
    mem(7, "Renew the TLS certificate", "task", importance=0.8),
    mem(8, "Old fact", status="superseded"),
]
POINTERS = [("Travel", "memory/travel.md")]

GOLDEN = f"""\
{BEGIN_MARKER}
## Guardrails
- Never deploy on Fridays <!-- m_12 -->

## Key facts
- The staging database is on db2 <!-- m_3 -->
- Lena moved to Lyon in March <!-- m_4 -->

## Preferences
- Prefers answers in French <!-- m_5 -->

## Active decisions
- Use Postgres 16 for the new service <!-- m_6 -->

## Open tasks
- Renew the TLS certificate <!-- m_7 -->

## Topics
- Travel → memory/travel.md
{END_MARKER}
"""

# A person's MEMORY.md with OpenClaw Dreaming's promotion lines, CRLF line endings and
# no newline at the end of the file.
PERSON_TEXT = (
    "# MEMORY.md\r\n"
    "\r\n"
    "My own notes. Keep these.\r\n"
    "\r\n"
    "## Promoted From Short-Term Memory (2026-05-14)\r\n"
    "\r\n"
    "<!-- openclaw-memory-promotion:memory:memory/2026-05-13.md:4:4 -->\r\n"
    "- Swapped the 500 GB SSD for a 2 TB NVMe. [score=0.861 recalls=0 avg=0.620 "
    "source=memory/2026-05-13.md:4-4]"
)


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


# -- render ----------------------------------------------------------------------------


def test_render_block_golden() -> None:
    assert render_block(MEMORIES, pointers=POINTERS) == GOLDEN


def test_render_is_deterministic_whatever_the_input_order() -> None:
    shuffled = MEMORIES[:]
    random.Random(4).shuffle(shuffled)
    assert render_block(shuffled, pointers=POINTERS) == GOLDEN


def test_order_is_importance_then_recency_then_id() -> None:
    block = render_block(
        [
            mem(1, "low old", importance=0.2, observed=T0),
            mem(2, "high old", importance=0.9, observed=T0),
            mem(3, "high new", importance=0.9, observed=T0 + timedelta(days=1)),
            mem(5, "low old twin", importance=0.2, observed=T0),
        ]
    )
    order = [line.split(" <!--")[0] for line in _lines(block) if line.startswith("- ")]
    assert order == ["- high new", "- high old", "- low old", "- low old twin"]


def test_only_active_memories_each_ref_once() -> None:
    block = render_block([mem(1, "a"), mem(1, "a"), mem(2, "b", status="archived")])
    assert block.count("<!-- m_1 -->") == 1
    assert "m_2" not in block


def test_empty_block_is_just_the_markers() -> None:
    assert render_block([]) == f"{BEGIN_MARKER}\n{END_MARKER}\n"


def test_text_is_one_line_and_cannot_break_the_markers() -> None:
    sneaky = mem(1, "line one\nline two <!-- memoracle:end -->\r\n-->")
    block = render_block([sneaky])
    assert "- line one line two &lt;!-- memoracle:end --&gt; --&gt; <!-- m_1 -->" in block
    assert extract_block(block) == block.rstrip("\n")
    assert read_edits(block, block).empty


def test_every_kind_has_a_section() -> None:
    block = render_block([mem(i, f"item {kind}", kind) for i, kind in enumerate(KINDS)])
    assert all(f"<!-- m_{i} -->" in block for i in range(len(KINDS)))


# -- budget ----------------------------------------------------------------------------


def test_budget_drops_lowest_priority_tail_first_and_says_how_many() -> None:
    memories = [mem(100 + i, f"fact number {i}", importance=1 - i / 100) for i in range(50)]
    memories += [mem(i, f"guardrail {i}", "guardrail") for i in range(3)]
    memories += [mem(10 + i, f"task {i}", "task") for i in range(3)]
    block = render_block(memories, max_lines=18)
    lines = _lines(block)
    assert len(lines) == 18
    assert all(f"guardrail {i}" in block for i in range(3))
    assert all(f"task {i}" in block for i in range(3))
    # Guardrails and tasks (4 + 4 lines) go first; three facts fit in what is left.
    assert all(f"fact number {i} " in block for i in range(3))
    assert "fact number 3 " not in block
    shown = sum(1 for line in lines if line.startswith("- "))
    assert lines[-2] == (
        f"_{56 - shown} more not shown (budget: 18 lines, 10000 characters);"
        " memoracle search finds them._"
    )


def test_guardrails_are_the_last_to_go() -> None:
    memories = [mem(1, "guardrail kept", "guardrail"), mem(2, "a preference", "preference")]
    full = render_block(memories)
    block = render_block(memories, max_lines=len(_lines(full)) - 1)
    assert "guardrail kept" in block and "a preference" not in block
    assert "_1 more not shown" in block


def test_a_long_line_is_skipped_and_a_shorter_one_still_fits() -> None:
    memories = [mem(1, "x" * 500, importance=0.9), mem(2, "short", importance=0.1)]
    block = render_block(memories, max_chars=400)
    assert "short" in block and "x" * 500 not in block and len(block) <= 400


def test_budget_too_small_for_the_markers_is_refused() -> None:
    with pytest.raises(InvalidInput):
        render_block([], max_lines=1)
    with pytest.raises(InvalidInput):
        render_block([mem(1, "a")], max_chars=len(BEGIN_MARKER) + len(END_MARKER) + 2)


texts = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=300
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(
        st.tuples(st.sampled_from(KINDS), texts, st.floats(0, 1), st.integers(0, 10)),
        max_size=60,
    ),
    pointers=st.lists(st.tuples(texts, texts), max_size=5),
    max_lines=st.integers(0, 80),
    max_chars=st.one_of(st.integers(0, 600), st.integers(600, 6000)),
)
def test_budget_is_never_exceeded(
    items: list[tuple[str, str, float, int]],
    pointers: list[tuple[str, str]],
    max_lines: int,
    max_chars: int,
) -> None:
    memories = [
        mem(i, text, kind, importance=imp, observed=T0 + timedelta(days=age))
        for i, (kind, text, imp, age) in enumerate(items)
    ]
    try:
        block = render_block(memories, max_lines=max_lines, max_chars=max_chars, pointers=pointers)
    except InvalidInput:
        # Only when not even the markers and the "N more" line fit.
        assert max_lines < 5 or max_chars < len(BEGIN_MARKER) + len(END_MARKER) + 100
        return
    assert len(_lines(block)) <= max_lines
    assert len(block) <= max_chars
    assert extract_block(block) == block.removesuffix("\n")
    tagged = sum(1 for line in _lines(block) if line.startswith("- "))
    note = [line for line in _lines(block) if line.startswith("_") and "more not shown" in line]
    left_out = int(note[0][1:].split(" ")[0]) if note else 0
    shown_memories = len({m.id for m in memories if m.text.split()})
    shown_pointers = sum(1 for _, path in pointers if path.split())
    assert tagged + left_out == shown_memories + shown_pointers
    assert read_edits(block, block).empty


# -- merge -----------------------------------------------------------------------------


def test_no_file_gives_just_the_block() -> None:
    assert merge_into(None, GOLDEN) == GOLDEN
    assert merge_into("", GOLDEN) == GOLDEN


def test_outside_text_is_kept_byte_for_byte_across_render_merge_render() -> None:
    first = merge_into(PERSON_TEXT, render_block(MEMORIES[:2]))
    assert first.startswith(PERSON_TEXT + "\r\n\r\n" + BEGIN_MARKER + "\r\n")
    assert "\n" not in first.replace("\r\n", "")  # the block took the file's CRLF
    block = extract_block(first)
    assert block is not None and block.replace("\r\n", "\n") + "\n" == render_block(MEMORIES[:2])

    # A person writes below the block, again without a final newline.
    edited = first + "\r\nA line of mine after the block."
    second = merge_into(edited, render_block(MEMORIES, pointers=POINTERS))
    start = edited.index(BEGIN_MARKER)
    end = edited.index(END_MARKER) + len(END_MARKER)
    assert second.startswith(edited[:start])
    assert second.endswith(edited[end:])
    assert merge_into(second, render_block(MEMORIES, pointers=POINTERS)) == second
    third = merge_into(second, render_block(MEMORIES[:2]))
    assert third == edited


def test_block_in_the_middle_keeps_both_sides_and_the_end_markers_line_ending() -> None:
    before = "# Notes\n\n- mine\n\n"
    after = "\n## Later\n- also mine"
    text = before + render_block([mem(1, "a")]).removesuffix("\n") + after
    merged = merge_into(text, render_block([mem(2, "b")]))
    assert merged == before + render_block([mem(2, "b")]).removesuffix("\n") + after


@pytest.mark.parametrize(
    ("existing", "gap"),
    [("text", "\n\n"), ("text\n", "\n"), ("text\n\n", ""), ("text\r\n", "\r\n")],
)
def test_appended_block_is_separated_by_one_blank_line(existing: str, gap: str) -> None:
    merged = merge_into(existing, GOLDEN)
    assert merged.startswith(existing + gap + BEGIN_MARKER)


outside = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200
).filter(lambda s: "memoracle:" not in s.casefold())


@settings(max_examples=200, deadline=None)
@given(before=outside, after=outside, crlf=st.booleans())
def test_merge_never_touches_outside_bytes(before: str, after: str, crlf: bool) -> None:
    eol = "\r\n" if crlf else "\n"
    first = merge_into(before or None, render_block([mem(1, "one")]))
    if before:
        assert first.startswith(before)
    with_after = first + eol + after
    start = with_after.index(BEGIN_MARKER)
    end = with_after.index(END_MARKER) + len(END_MARKER)
    again = merge_into(with_after, render_block([mem(2, "two"), mem(3, "three")]))
    assert again.startswith(with_after[:start])
    assert again.endswith(with_after[end:])


# -- markers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (f"a\n{BEGIN_MARKER}\n- x <!-- m_1 -->\n<!-- memoracle:end\n", 4),  # cut "-->"
        (f"a\n{BEGIN_MARKER}\n- x <!-- m_1 -->\n", 2),  # end marker gone
        (f"a\n- x <!-- m_1 -->\n{END_MARKER}\n", 3),  # begin marker gone
        (f"{BEGIN_MARKER}\n{BEGIN_MARKER}\n{END_MARKER}\n", 2),  # a second begin
        (f"{BEGIN_MARKER}\n{END_MARKER}\n\n{END_MARKER}\n", 4),  # a second end
        (f"{END_MARKER}\nx\n{BEGIN_MARKER}\n", 1),  # swapped
        (f"x\n{BEGIN_MARKER} and text\n{END_MARKER}\n", 2),  # text typed onto the marker
        ("x\n<!-- memoracle:begin v9 -->\n<!-- memoracle:end -->\n", 2),  # newer format
    ],
)
def test_damaged_markers_name_the_line(text: str, line: int) -> None:
    with pytest.raises(BlockError) as info:
        read_edits(text, GOLDEN)
    assert info.value.line == line
    assert f"line {line}" in str(info.value)
    assert isinstance(info.value, InvalidInput)
    with pytest.raises(BlockError):
        merge_into(text, GOLDEN)


def test_a_block_deleted_whole_is_an_error_not_a_forget_all() -> None:
    with pytest.raises(BlockError) as info:
        read_edits(PERSON_TEXT, GOLDEN)
    assert info.value.line is None


def test_markers_survive_a_hint_edit_and_crlf() -> None:
    text = merge_into(PERSON_TEXT, GOLDEN).replace("add a line to remember it", "ajoutez une ligne")
    assert read_edits(text, GOLDEN).empty


# -- edits -----------------------------------------------------------------------------


def _file(block: str) -> str:
    return merge_into(PERSON_TEXT, block)


def test_unchanged_block_means_no_edits() -> None:
    assert read_edits(_file(GOLDEN), GOLDEN).empty


def test_a_person_adds_a_line() -> None:
    text = _file(GOLDEN).replace(
        "- Prefers answers in French <!-- m_5 -->\r\n",
        "- Prefers answers in French <!-- m_5 -->\r\n- Likes  tea, not coffee\r\n",
    )
    edits = read_edits(text, GOLDEN)
    assert edits.added == ["Likes tea, not coffee"]
    assert edits.added_kinds == ["preference"]
    assert edits.forgotten == [] and edits.edited == []


def test_a_line_added_to_an_empty_block() -> None:
    last = render_block([])
    text = merge_into("mine\n", last).replace(
        END_MARKER, "- Никогда не пушить в main\n" + END_MARKER
    )
    edits = read_edits(text, last)
    assert edits.added == ["Никогда не пушить в main"]
    assert edits.added_kinds == [None]


def test_a_person_deletes_a_tagged_line() -> None:
    text = _file(GOLDEN).replace("- Renew the TLS certificate <!-- m_7 -->\r\n", "")
    edits = read_edits(text, GOLDEN)
    assert edits.forgotten == ["m_7"] and edits.added == []


def test_a_person_edits_a_tagged_line() -> None:
    text = _file(GOLDEN).replace(
        "Never deploy on Fridays <!-- m_12 -->", "Never deploy on Fridays or Mondays <!-- m_12 -->"
    )
    edits = read_edits(text, GOLDEN)
    assert edits.forgotten == ["m_12"]
    assert edits.added == ["Never deploy on Fridays or Mondays"]
    assert edits.added_kinds == ["guardrail"]
    assert edits.edited == [("m_12", "Never deploy on Fridays or Mondays")]


def test_cosmetic_changes_are_not_edits() -> None:
    text = (
        _file(GOLDEN)
        .replace(
            "- Renew the TLS certificate <!-- m_7 -->",
            "* [x]  Renew the TLS certificate <!-- m_7 -->",
        )
        .replace("- Never deploy on Fridays <!-- m_12 -->", "- Never deploy on Fridays")  # tag gone
        .replace("## Topics\r\n- Travel → memory/travel.md\r\n", "")  # a pointer is no memory
    )
    # Moving a line to another section keeps its ref: nothing to do.
    text = text.replace("- Prefers answers in French <!-- m_5 -->\r\n", "").replace(
        "## Guardrails\r\n", "## Guardrails\r\n- Prefers answers in French <!-- m_5 -->\r\n"
    )
    assert read_edits(text, GOLDEN) == read_edits(_file(GOLDEN), GOLDEN)
    assert read_edits(text, GOLDEN).empty


def test_headings_comments_and_the_note_line_are_not_memories() -> None:
    last = render_block([mem(i, f"fact {i}") for i in range(20)], max_lines=8)
    text = last.replace(END_MARKER, "## My heading\n<!-- a comment of mine -->\n\n" + END_MARKER)
    assert read_edits(text, last).empty


def test_a_copied_tagged_line_with_new_text_is_added() -> None:
    text = _file(GOLDEN).replace(
        "- Renew the TLS certificate <!-- m_7 -->\r\n",
        "- Renew the TLS certificate <!-- m_7 -->\r\n- Renew the domain <!-- m_7 -->\r\n",
    )
    edits = read_edits(text, GOLDEN)
    assert edits.added == ["Renew the domain"] and edits.forgotten == []


def test_a_ref_memoracle_did_not_write_is_just_text() -> None:
    text = _file(GOLDEN).replace(
        END_MARKER, "- Hola, prefiero el té <!-- m_999 -->\r\n" + END_MARKER
    )
    edits = read_edits(text, GOLDEN)
    assert edits.added == ["Hola, prefiero el té"] and edits.forgotten == []


def test_lines_outside_the_block_are_never_read() -> None:
    text = "- a new line outside\n" + _file(GOLDEN) + "\n- another"
    assert read_edits(text, GOLDEN).empty


def test_several_edits_in_file_order() -> None:
    text = (
        _file(GOLDEN)
        .replace("- The staging database is on db2 <!-- m_3 -->\r\n", "")
        .replace("Lena moved to Lyon in March", "Lena moved to Lyon in April")
        .replace("## Open tasks\r\n", "## Open tasks\r\n- Appeler le notaire\r\n")
    )
    edits = read_edits(text, GOLDEN)
    assert edits.forgotten == ["m_3", "m_4"]
    assert edits.added == ["Lena moved to Lyon in April", "Appeler le notaire"]
    assert edits.added_kinds == ["fact", "task"]
