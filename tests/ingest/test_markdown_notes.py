from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pi_builders import FIXTURES

from memoracle.ingest import detect_format, read
from memoracle.ingest.markdown import heading_kind
from memoracle.types import ImportedNote, IngestWarning


def notes(path: Path, warnings: list[IngestWarning], fmt: str | None = None) -> list[ImportedNote]:
    items = list(read(path, fmt, on_warning=warnings.append))
    assert all(isinstance(n, ImportedNote) for n in items)
    return [n for n in items if isinstance(n, ImportedNote)]


def test_memory_md_bullets_with_headings_and_kinds(warnings: list[IngestWarning]) -> None:
    path = FIXTURES / "MEMORY.md"
    assert detect_format(path) == "memory-md"
    got = notes(path, warnings)
    assert [(n.kind, n.text) for n in got] == [
        ("guardrail", "Never run database migrations on a Friday."),
        ("guardrail", "Always ask before deleting anything under /srv."),
        ("preference", "Prefers Docker Compose over Kubernetes for the home server."),
        ("preference", "Short answers, in bullet points (she reads them on her phone)."),
        ("decision", "PostgreSQL 16 for Nextcloud."),
        ("decision", "Caddy as the reverse proxy."),
        ("task", "Nightly backups to the Synology NAS (due 2026-05-17)"),
        ("task", "Fix the Nextcloud restart loop"),
        ("fact", 'The home server is called "Kladovka".'),
        ("fact", "It is an Intel NUC with a 2 TB NVMe."),
        ("error", "Databases need a healthcheck before dependants start."),
        ("preference", "Отвечать коротко."),
        ("decision", "Utiliser Caddy pour les certificats."),
        ("task", "Preparar el Caddyfile."),
        (None, "Lena: owner of the workspace."),
        (None, "Swapped the 500 GB SSD for a 2 TB NVMe."),
    ]
    assert got[0].heading == "Guardrails" and got[0].day is None
    assert got[0].origin == f"{path}:6"
    assert got[-1].heading == "Promoted From Short-Term Memory (2026-05-14)"
    assert warnings == []


def test_daily_note_sections_and_day(tmp_path: Path, warnings: list[IngestWarning]) -> None:
    path = FIXTURES / "memory" / "2026-05-13.md"
    assert detect_format(path) == "daily-note"
    got = notes(path, warnings)
    assert [(n.heading, n.kind) for n in got] == [
        ("Facts Learned", "fact"),
        ("Decisions Made", "decision"),
        ("Preferences Noted", "preference"),
        ("Action Items", "task"),
        ("Checkpoint [21:40]", None),
    ]
    assert {n.day for n in got} == {date(2026, 5, 13)}
    assert got[-1].text == "Compose files live in /srv/compose/<service>/."


def test_sub_headings_inherit_the_kind_of_their_section(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## Preferences\n### Editor\n- Vim, always\n## Misc\n- loose\n")
    got = notes(path, warnings)
    assert [(n.heading, n.kind) for n in got] == [("Editor", "preference"), ("Misc", None)]


def test_a_blank_line_ends_a_bullet_and_continuations_join(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("## Facts\n- one\n  continued\n\n  not part of it\n- two\n")
    assert [n.text for n in notes(path, warnings)] == ["one continued", "two"]


def test_invalid_utf8_and_huge_lines_warn_and_the_rest_is_read(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"# Facts\n- ok one\n- caf\xe9\n- " + b"x" * 2_000 + b"\n- ok two\n")
    got = list(read(path, on_warning=warnings.append, max_text_bytes=1_000))
    assert [n.text for n in got if isinstance(n, ImportedNote)] == ["ok one", "ok two"]
    assert [w.origin for w in warnings] == [f"{path}:3", f"{path}:4"]


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("Guardrails", "guardrail"),
        ("Key Rules", "guardrail"),
        ("Правила", "guardrail"),
        ("Règles", "guardrail"),
        ("Reglas", "guardrail"),
        ("Preferences Noted", "preference"),
        ("Préférences", "preference"),
        ("Preferencias", "preference"),
        ("Decisions Made", "decision"),
        ("Решения", "decision"),
        ("Decisiones", "decision"),
        ("TODO", "task"),
        ("Tasks", "task"),
        ("Action Items", "task"),
        ("Задачи", "task"),
        ("Tâches", "task"),
        ("À faire", "task"),
        ("Tareas", "task"),
        ("Key facts", "fact"),
        ("Facts Learned", "fact"),
        ("Факты", "fact"),
        ("Faits", "fact"),
        ("Hechos", "fact"),
        ("Events", "event"),
        ("События", "event"),
        ("Événements", "event"),
        ("Eventos", "event"),
        ("Errors", "error"),
        ("Lessons Learned", "error"),
        ("Ошибки", "error"),
        ("Erreurs", "error"),
        ("Errores", "error"),
        ("People", None),
        ("Checkpoint [14:30]", None),
        ("2026-05-13", None),
    ],
)
def test_heading_kind(heading: str, kind: str | None) -> None:
    assert heading_kind(heading) == kind


def test_memoracles_own_block_is_not_imported_again(
    tmp_path: Path, warnings: list[IngestWarning]
) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text(
        "# Memory\n- Mine: keep the garden gate shut.\n"
        "<!-- memoracle:begin v1 · kept by memoracle -->\n## Guardrails\n"
        "- Never deploy on Fridays <!-- m_12 -->\n<!-- memoracle:end -->\n"
        "- After the block: water the tomatoes.\n"
    )
    assert [n.text for n in notes(path, warnings, "memory-md")] == [
        "Mine: keep the garden gate shut.",
        "After the block: water the tomatoes.",
    ]
