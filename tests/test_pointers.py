"""The pointer check: which pointers are checked, which are skipped, damaged files."""

from __future__ import annotations

from pathlib import Path

from memoracle.jobs import pointers

MEMORY_MD = """\
# MEMORY.md

- Travel → memory/travel.md
- Gone → memory/gone.md
- Setup notes in [setup](reference/setup.md) and [old setup](reference/old-setup.md).
- Deploy with `scripts/deploy.sh`; the backup script was `scripts/backup.sh`.
- Docs at [the site](https://example.com/docs) and [mail](mailto:me@example.com).
- Absolute: [hosts](/etc/hosts), `/var/lib/thing.db`, `~/notes/x.md`.
- Anchors: [top](#top) and [travel flights](memory/travel.md#flights).
- Placeholders: `memory/YYYY-MM-DD.md`, `memory/<topic>.md`, `memory/{name}.md`,
  `reference/*.md`, `memory/...`, [x](path/to/file.md), `path/to/thing.md`.
- Example of a dead path: `memory/example.md` <!-- pointer-check:ignore -->
- Not workspace paths: `src/app/main.py`, `README.md`, `and/or`, `npm run build`.
- Line refs: `memory/travel.md:12` and `memory/missing.md:3-4`.
- An HTML comment is no arrow <!-- m_12 --> memory/nope.md

```bash
cat memory/fenced.md
ls `reference/fenced.md`
```

~~~
→ memory/tilde-fenced.md
~~~
"""

TRAVEL_MD = """\
# Travel

- Flights: [details](flights.md), [hotels](hotels.md).
- Back to [MEMORY](../MEMORY.md).
"""


def _workspace(root: Path) -> Path:
    (root / "memory" / "archive").mkdir(parents=True)
    (root / "reference").mkdir()
    (root / "scripts").mkdir()
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (root / "memory" / "travel.md").write_text(TRAVEL_MD, encoding="utf-8")
    (root / "memory" / "flights.md").write_text("# Flights\n", encoding="utf-8")
    (root / "reference" / "setup.md").write_text("# Setup\n", encoding="utf-8")
    (root / "scripts" / "deploy.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (root / "memory" / "archive" / "2023-01-01.md").write_text(
        "- Moved to `memory/long-gone.md`\n", encoding="utf-8"
    )
    return root


def _broken(report: pointers.PointerReport) -> list[tuple[str, int, str]]:
    return [(b.file, b.line, b.pointer) for b in report.broken]


def test_broken_pointers_are_reported_where_they_are_written(tmp_path: Path) -> None:
    report = pointers.check(_workspace(tmp_path))

    assert _broken(report) == [
        ("MEMORY.md", 4, "memory/gone.md"),  # arrow
        ("MEMORY.md", 5, "reference/old-setup.md"),  # link
        ("MEMORY.md", 6, "scripts/backup.sh"),  # inline code
        ("MEMORY.md", 14, "memory/missing.md:3-4"),  # as written, checked without :3-4
        ("memory/travel.md", 3, "hotels.md"),  # beside the citing file, or at the root
    ]
    assert report.broken[0].resolved == tmp_path / "memory" / "gone.md"
    assert report.broken[-1].resolved == tmp_path / "memory" / "hotels.md"
    assert report.files == 4  # MEMORY.md, memory/flights.md, memory/travel.md, reference/setup.md
    assert report.problems == ()
    assert not report.ok


def test_existing_pointers_are_counted_and_pass(tmp_path: Path) -> None:
    report = pointers.check(_workspace(tmp_path))

    # travel.md (arrow), gone.md; setup.md, old-setup.md; deploy.sh, backup.sh;
    # memory/travel.md#flights; travel.md:12, missing.md:3-4; flights.md, hotels.md,
    # ../MEMORY.md
    assert report.checked == 12


def test_the_archive_and_nested_folders_are_not_live(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "MEMORY.md").write_text("# Nothing here\n", encoding="utf-8")
    (root / "memory" / "travel.md").unlink()
    (root / "reference" / "archive").mkdir()
    (root / "reference" / "archive" / "trip.md").write_text("→ memory/gone.md\n", encoding="utf-8")
    (root / "notes.md").write_text("→ memory/gone.md\n", encoding="utf-8")  # not a live root file

    report = pointers.check(root)

    assert report.broken == ()
    assert report.ok


def test_a_file_that_is_not_utf8_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "reference" / "latin1.md").write_bytes("- See `memory/café.md`\n".encode("latin-1"))

    report = pointers.check(root)

    assert len(report.problems) == 1
    assert "latin1.md" in report.problems[0] and "UTF-8" in report.problems[0]
    assert report.files == 4
    assert len(report.broken) == 5  # the other files were still checked


def test_a_workspace_folder_at_the_root_makes_its_paths_workspace_paths(tmp_path: Path) -> None:
    (tmp_path / "trips").mkdir()
    (tmp_path / "MEMORY.md").write_text(
        "- `trips/lisbon.md`, `elsewhere/x.md`\n- [spaced](<memory/my notes.md>)\n"
        '- [encoded](memory/my%20notes.md "title")\n[ref]: reference/defined.md\n',
        encoding="utf-8",
    )

    report = pointers.check(tmp_path)

    assert _broken(report) == [
        ("MEMORY.md", 1, "trips/lisbon.md"),
        ("MEMORY.md", 2, "<memory/my notes.md>"),
        ("MEMORY.md", 3, "memory/my%20notes.md"),
        ("MEMORY.md", 4, "reference/defined.md"),
    ]


def test_a_missing_workspace_has_nothing_to_check(tmp_path: Path) -> None:
    report = pointers.check(tmp_path / "nowhere")

    assert (report.files, report.checked, report.broken, report.problems) == (0, 0, (), ())
    assert report.to_json() == {"files": 0, "checked": 0, "broken": [], "problems": []}


def test_the_report_as_json(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("→ memory/gone.md\n", encoding="utf-8")

    body = pointers.check(tmp_path).to_json()

    assert body["broken"] == [
        {
            "file": "MEMORY.md",
            "line": 1,
            "pointer": "memory/gone.md",
            "resolved": str(tmp_path / "memory" / "gone.md"),
        }
    ]


def test_every_daily_note_and_topic_file_is_checked(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "here.md").write_text("x\n", encoding="utf-8")
    line = "- A fact with `memory/here.md`, [a link](here.md) and → memory/gone.md\n"
    for day in range(1, 6):
        note = tmp_path / "memory" / f"2026-01-{day:02d}.md"
        note.write_text("# Notes\n" + (line + "Plain prose.\n") * 10, encoding="utf-8")

    report = pointers.check(tmp_path)

    assert (report.files, report.checked, len(report.broken)) == (6, 5 * 10 * 3, 5 * 10)
    assert {b.file for b in report.broken} == {f"memory/2026-01-0{d}.md" for d in range(1, 6)}
