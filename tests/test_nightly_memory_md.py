"""MEMORY.md's own bullets and memoracle's block: what a person wrote shows once."""

from __future__ import annotations

from pathlib import Path

from memoracle.clock import FixedClock
from memoracle.engine import Engine
from memoracle.jobs import nightly
from memoracle.render.memory_md import extract_block, merge_into, render_block
from memoracle.workspace import LAST_BLOCK

THEIRS = (
    "# Memory\n\n"
    "## Guardrails\n"
    "- Never push to main without review.\n\n"
    "## Key facts\n"
    "- The staging   database is on db2.\n"
    "- [x] Backups run at 03:00\n"
    "  every night.\n\n"
    "## Notes\n"
    "* Anna's birthday is on May 14. <!-- ttl:90d -->\n"
)
BULLETS = (
    "Never push to main without review.",
    "The staging database is on db2.",
    "Backups run at 03:00 every night.",
    "Anna's birthday is on May 14.",
)


def _memory_md(engine: Engine) -> Path:
    path = engine.settings.files_dir / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _shown(text: str, bullet: str) -> int:
    """How many times `text` says `bullet` (whitespace, line breaks and the checkbox
    aside)."""
    return " ".join(text.replace("[x] ", "").split()).count(bullet)


def test_imported_bullets_are_not_repeated_in_the_block(engine: Engine, clock: FixedClock) -> None:
    path = _memory_md(engine)
    path.write_text(THEIRS)
    assert engine.ingest([path]).memories_added == len(BULLETS)
    mine, _ = engine.remember("Deploys need a green canary.", kind="guardrail")
    for _ in range(2):
        report = nightly.run_nightly(engine)
        clock.advance(days=1)
        text = path.read_text()
        assert text.startswith(THEIRS)  # theirs, byte for byte
        for bullet in BULLETS:
            assert _shown(text, bullet) == 1, (bullet, text)
        block = extract_block(text) or ""
        assert mine.text in block and not any(_shown(block, b) for b in BULLETS)
        assert report.memory_md is not None and report.memory_md.forgotten == ()
    assert all(m.status == "active" for m in engine.list_memories(status=None))


def test_a_block_that_already_repeats_them_heals_without_forgetting(engine: Engine) -> None:
    path = _memory_md(engine)
    path.write_text(THEIRS)
    engine.ingest([path])
    # As the nightly run wrote it before: every imported bullet again in the block.
    block = render_block(engine.list_memories())
    path.write_text(merge_into(THEIRS, block))
    last = engine.settings.home / LAST_BLOCK
    last.parent.mkdir(parents=True, exist_ok=True)
    last.write_text(block)
    report = nightly.render_memory_md(engine)
    assert report.changed and report.forgotten == () and report.added == ()
    text = path.read_text()
    assert all(_shown(text, bullet) == 1 for bullet in BULLETS)
    assert all(m.status == "active" for m in engine.list_memories(status=None))


def test_a_bullet_a_person_deletes_comes_back_in_the_block(engine: Engine) -> None:
    path = _memory_md(engine)
    path.write_text(THEIRS)
    engine.ingest([path])
    nightly.render_memory_md(engine)
    path.write_text(path.read_text().replace("- Never push to main without review.\n", ""))
    nightly.render_memory_md(engine)
    text = path.read_text()
    block = extract_block(text) or ""
    assert _shown(text, BULLETS[0]) == 1 and BULLETS[0] in block
