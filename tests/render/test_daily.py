from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.jobs.nightly import run_nightly
from memoracle.render.daily import (
    SECTION_OF_KIND,
    SECTIONS,
    append_entries,
    checkpoint,
    refs_in,
    without,
)
from memoracle.text import content_hash
from memoracle.types import KINDS, Memory, Turn

T0 = datetime(2026, 5, 14, 9, 0, tzinfo=UTC)
DAY = date(2026, 5, 14)


def mem(id: int, text: str, kind: str = "fact", *, minutes: int = 0) -> Memory:
    at = T0 + timedelta(minutes=minutes)
    return Memory(
        id=id,
        kind=kind,
        text=text,
        layer="episodic",
        status="active",
        created_at=at,
        observed_at=at,
        last_accessed_at=at,
        activation=1.0,
        importance=0.5,
        access_count=0,
        confidence=0.8,
        pinned=False,
        source="capture",
        content_hash=content_hash(text),
    )


def test_a_new_note_golden() -> None:
    note = append_entries(
        None,
        DAY,
        [
            mem(7, "Ship on Tuesdays from now on", "decision", minutes=5),
            mem(3, "The staging database moved to db2"),
            mem(9, "Call the bank", "task"),
            mem(4, "Lena lives in Lyon", "event", minutes=1),
        ],
    )
    assert note == (
        "# 2026-05-14\n"
        "\n"
        "## Facts Learned\n"
        "- The staging database moved to db2 <!-- m_3 -->\n"
        "- Lena lives in Lyon <!-- m_4 -->\n"
        "\n"
        "## Decisions Made\n"
        "- Ship on Tuesdays from now on <!-- m_7 -->\n"
        "\n"
        "## Action Items\n"
        "- Call the bank <!-- m_9 -->\n"
    )


def test_every_kind_has_a_section() -> None:
    assert set(SECTION_OF_KIND) == set(KINDS)
    note = append_entries(None, DAY, [mem(i, f"item {k}", k) for i, k in enumerate(KINDS)])
    assert refs_in(note) == {f"m_{i}" for i in range(len(KINDS))}
    assert "## Guardrails\n- item guardrail <!-- m_4 -->\n" in note
    assert "## Preferences Noted\n- item preference <!-- m_1 -->\n" in note


def test_no_duplicate_refs_on_re_append() -> None:
    first = append_entries(None, DAY, [mem(1, "a"), mem(2, "b", "task")])
    again = append_entries(first, DAY, [mem(1, "a"), mem(2, "b", "task"), mem(2, "b", "task")])
    assert again == first
    more = append_entries(first, DAY, [mem(2, "b", "task"), mem(3, "c", "task")])
    assert more.count("<!-- m_2 -->") == 1 and more.count("<!-- m_3 -->") == 1


def test_a_section_the_note_has_grows_where_it_is_never_a_second_heading() -> None:
    first = append_entries(None, DAY, [mem(1, "fact one"), mem(2, "do it", "task")])
    # A new task goes under Action Items (the end), a new fact under the Facts Learned
    # heading the note already has, and a new kind of entry opens its section at the end.
    second = append_entries(
        first, DAY, [mem(3, "fact two"), mem(4, "do more", "task"), mem(5, "a rule", "guardrail")]
    )
    assert second == (
        "# 2026-05-14\n\n## Facts Learned\n- fact one <!-- m_1 -->\n- fact two <!-- m_3 -->\n"
        "\n## Action Items\n- do it <!-- m_2 -->\n- do more <!-- m_4 -->\n"
        "\n## Guardrails\n- a rule <!-- m_5 -->\n"
    )
    assert second.count("## Facts Learned") == 1


def test_two_captures_and_two_nightly_renders_in_one_day_give_one_header(tmp_path: Path) -> None:
    """The daily note through the real writers: the nightly summary twice (two runs the
    same day) with a checkpoint between them, each adding facts and decisions."""
    settings = load(tmp_path / "home", env={}, overrides={"embedding.model": "hash"})
    clock = FixedClock(T0)
    Engine.init(settings, clock=clock)
    with Engine.open(settings, clock=clock) as engine:
        engine.capture([Turn("user", "I live in Paris. We decided to ship on Tuesdays.", T0)])
        run_nightly(engine, only="summarize")
        clock.advance(hours=2)
        path = settings.files_dir / "memory" / f"{DAY:%Y-%m-%d}.md"
        # a checkpoint of the live session between the two, as `memoracle checkpoint` writes
        path.write_text(checkpoint(path.read_text(), DAY, time(11, 0), ["deploy half done"]))
        engine.capture(
            [Turn("user", "My dog is called Rex. We decided to use Postgres for billing.", T0)]
        )
        clock.advance(hours=3)
        run_nightly(engine, only="summarize")
        note = path.read_text()
    for heading in ("## Facts Learned", "## Decisions Made"):
        assert note.count(heading) == 1, note
    for said in ("Rex", "Paris", "Postgres", "Tuesdays", "## Checkpoint [11:00]"):
        assert said in note


def test_checkpoint_sections() -> None:
    note = append_entries(None, DAY, [mem(1, "fact one")])
    with_cp = checkpoint(
        note, DAY, time(14, 5), ["- deploy script half-migrated", "  ", mem(1, "x")]
    )
    assert with_cp == note + "\n## Checkpoint [14:05]\n- deploy script half-migrated\n"
    # After a checkpoint, a fact goes under the Facts Learned the note already has.
    after = append_entries(with_cp, DAY, [mem(2, "fact two")])
    assert after == note + "- fact two <!-- m_2 -->\n" + with_cp[len(note) :]
    assert after.count("## Facts Learned") == 1
    # A second checkpoint in the same minute goes under the first one.
    again = checkpoint(after, DAY, time(14, 5), ["tests green"])
    assert again == after + "- tests green\n" and again.count("## Checkpoint [14:05]") == 1
    assert checkpoint(after, DAY, time(15, 0), []) == after
    assert checkpoint(None, DAY, time(9, 30), [mem(5, "saved", "task")]) == (
        "# 2026-05-14\n\n## Checkpoint [09:30]\n- saved <!-- m_5 -->\n"
    )


def test_a_persons_note_with_crlf_and_no_final_newline_is_a_prefix() -> None:
    existing = "# 14 May\r\n\r\nWrote this myself.\r\n\r\n## Facts Learned\r\n- mine, no tag"
    note = append_entries(existing, DAY, [mem(1, "a fact"), mem(2, "a choice", "decision")])
    assert note == existing + (
        "\r\n- a fact <!-- m_1 -->\r\n\r\n## Decisions Made\r\n- a choice <!-- m_2 -->\r\n"
    )
    cp = checkpoint(note, DAY, time(23, 59), ["late thought"])
    assert cp == note + "\r\n## Checkpoint [23:59]\r\n- late thought\r\n"


def test_nothing_new_leaves_the_note_untouched() -> None:
    assert append_entries("mine", DAY, []) == "mine"
    assert append_entries(None, DAY, [mem(1, "   ")]) == "# 2026-05-14\n"


def test_ru_fr_es_text_is_written_as_stored() -> None:
    texts = {
        1: "Лена переехала в Лион в марте, ёлка стоит",
        2: "Préfère les réponses en français — « merci »",
        3: "Decidimos usar Postgres 16 para el nuevo servicio, ¿vale?",
        4: "Llamar al banco mañana",
    }
    kinds = {1: "fact", 2: "preference", 3: "decision", 4: "task"}
    note = append_entries(None, DAY, [mem(i, t, kinds[i]) for i, t in texts.items()])
    for i, text in texts.items():
        assert f"- {text} <!-- m_{i} -->\n" in note


def _kept_in_order(old: str, new: str) -> bool:
    """Every line of `old` is in `new`, in order (a line that ended the file without a
    line break may have gained one)."""
    lines = iter(new.splitlines())
    return all(any(line == other for other in lines) for line in old.splitlines())


lines = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120)


@settings(max_examples=200, deadline=None)
@given(
    existing=st.one_of(st.none(), lines),
    batches=st.lists(
        st.lists(st.tuples(st.integers(1, 20), st.sampled_from(KINDS), lines), max_size=6),
        max_size=4,
    ),
    checkpoints=st.lists(st.lists(lines, max_size=3), max_size=2),
)
def test_old_lines_are_always_kept_in_order_and_refs_are_written_once(
    existing: str | None,
    batches: list[list[tuple[int, str, str]]],
    checkpoints: list[list[str]],
) -> None:
    note = existing
    for n, batch in enumerate(batches):
        entries = [mem(i, text, kind) for i, kind, text in batch]
        new = append_entries(note, DAY, entries)
        assert _kept_in_order(note or "", new)
        note = new
        if n < len(checkpoints):
            new = checkpoint(note, DAY, time(12, n), checkpoints[n])
            assert _kept_in_order(note, new)
            note = new
    for section in SECTIONS:  # memoracle never repeats a heading the note had once
        before = (existing or "").count(f"## {section}")
        assert (note or "").count(f"\n## {section}") <= max(before, 1)
    written = {i for batch in batches for i, _, text in batch if text.split()}
    for i in written:
        tag = f"<!-- m_{i} -->"
        before = (existing or "").count(tag)
        assert note is not None and note.count(tag) == (before or 1)


def test_without_takes_out_only_the_lines_of_forgotten_memories() -> None:
    note = (
        "# 2026-05-14\r\n\r\n## Facts Learned\r\n- My dog is called Toby. <!-- m_3 -->\r\n"
        "- We ship on Tuesdays <!-- m_4 -->\r\n\r\n## Checkpoint [14:05]\r\n"
        "- Toby is my dog.\r\n- assistant: Noted, your dog is Toby.\r\n- I like tea.\r\n"
        "Toby is my dog.\r\n"  # not a bullet: a person's prose stays
    )
    hashes = {content_hash("Toby is my dog."), content_hash("Noted, your dog is Toby.")}
    kept = without(note, {"m_3"}, hashes)
    assert kept == (
        "# 2026-05-14\r\n\r\n## Facts Learned\r\n- We ship on Tuesdays <!-- m_4 -->\r\n\r\n"
        "## Checkpoint [14:05]\r\n- I like tea.\r\nToby is my dog.\r\n"
    )
    assert without(note, set(), set()) == note
