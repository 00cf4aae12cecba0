"""install / uninstall: the workspace comes back byte for byte, the memory is imported
once and exported before anything goes, refusals change nothing."""

from __future__ import annotations

import hashlib
import json
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memoracle.clock import FixedClock
from memoracle.config import Settings, load
from memoracle.engine import Engine
from memoracle.errors import InvalidInput, NotFound, StoreError, WorkspaceError
from memoracle.jobs import nightly, schedule, transfer
from memoracle.openclaw import install as installer
from memoracle.openclaw.workspace import AGENTS_BEGIN, AGENTS_END

INSTALLED_AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MEMORY_MD = (
    "# MEMORY.md — long-term memory\n"
    "\n"
    "## Preferences\n"
    "- Prefers oat milk in coffee\n"
    "- Likes terse status updates ☕\n"
    "\n"
    "## Key facts\n"
    "- The staging database moved to db2 in November\n"
    "<!-- openclaw-memory-promotion:3f9a1c source=memory/2026-11-30.md score=0.82 -->\n"
    "- Alice is the on-call lead for billing\n"
    "\n"
    "Notes a person keeps by hand, not bullets.\r\n"
    "Last line without a newline"
).encode()
DAILY_NOTE = (
    "# 2026-11-30\n\n## Decisions Made\n- Ship the billing service on Tuesdays from now on\n"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A realistic OpenClaw workspace: bootstrap files, MEMORY.md with a person's lines and
    a Dreaming promotion marker, one daily note, and files memoracle never touches."""
    ws = tmp_path / "openclaw" / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "AGENTS.md").write_text("# AGENTS.md\n\nRead SOUL.md first.\n", encoding="utf-8")
    (ws / "SOUL.md").write_text("# SOUL.md\n\nCalm, curious, brief.\n", encoding="utf-8")
    (ws / "USER.md").write_text("# USER.md\n\n- Name: Sam\n", encoding="utf-8")
    (ws / "MEMORY.md").write_bytes(MEMORY_MD)
    (ws / "memory" / "2026-11-30.md").write_text(DAILY_NOTE, encoding="utf-8")
    (ws / "skills" / "weather").mkdir(parents=True)
    (ws / "skills" / "weather" / "SKILL.md").write_text("---\nname: weather\n---\n")
    return ws


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(INSTALLED_AT)


@pytest.fixture(autouse=True)
def _no_real_crontab(crontab: Path) -> None:
    """Every test here runs with the fake crontab (conftest)."""


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        found[path.relative_to(root).as_posix()] = path.read_bytes() if path.is_file() else None
    return found


def reload(settings: Settings) -> Settings:
    """The settings as the next command sees them (config.toml written by install)."""
    return load(settings.home, env={}, overrides={"embedding.model": "hash"})


def memories(settings: Settings, clock: FixedClock) -> list[str]:
    with Engine.open(reload(settings), clock=clock) as engine:
        return sorted(m.text for m in engine.list_memories(status=None, limit=1000))


def test_install_then_uninstall_leaves_the_workspace_as_it_was(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    before = tree(workspace)
    installer.install(settings, workspace, clock=clock)
    assert (workspace / "knowledge-graph").is_dir()  # memoracle's layout was made
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert tree(workspace) == before
    assert report.export is not None and report.export.is_file()
    assert not settings.db_path.exists() and report.db_deleted
    assert {a.kind for a in report.actions} == {"remove-folder"}  # reference/, knowledge-graph/


def test_install_imports_memory_md_lines_and_daily_note_bullets(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    report = installer.install(settings, workspace, clock=clock)
    assert report.to_import == (workspace / "MEMORY.md", workspace / "memory" / "2026-11-30.md")
    assert report.ingest is not None and report.ingest.memories_added == 5
    texts = memories(settings, clock)
    assert texts == [
        "Alice is the on-call lead for billing",
        "Likes terse status updates ☕",
        "Prefers oat milk in coffee",
        "Ship the billing service on Tuesdays from now on",
        "The staging database moved to db2 in November",
    ]  # the Dreaming marker and the paragraph are not memories
    assert (workspace / "MEMORY.md").read_bytes() == MEMORY_MD  # nothing rendered into it
    manifest = json.loads((settings.home / "install.json").read_text())
    backup = manifest["backups"][0]
    assert backup["path"] == "MEMORY.md" and Path(backup["backup"]).read_bytes() == MEMORY_MD
    assert manifest["workspace"] == str(workspace.resolve())
    assert "memory/2026-11-30.md" in manifest["before"]["files"]
    assert "skills/weather/SKILL.md" not in manifest["before"]["files"]  # not memoracle's
    assert manifest["imported"]["memories_added"] == 5 and manifest["imported_at"]


def test_installing_twice_imports_once_and_keeps_the_first_backup(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    first = installer.install(settings, workspace, clock=clock)
    manifest = (settings.home / "install.json").read_bytes()
    (workspace / "MEMORY.md").write_text("# changed by hand\n- A new line\n")
    clock.advance(days=1)
    again = installer.install(settings, workspace, clock=clock)
    assert again.already_installed and again.ingest is None and again.backups == ()
    assert len(memories(settings, clock)) == 5
    assert (settings.home / "install.json").read_bytes() == manifest
    assert first.backups[0].backup.read_bytes() == MEMORY_MD
    assert len(list((settings.home / "backups").glob("install-*"))) == 1


def test_uninstall_keep_db_keeps_it_and_the_export_round_trips(
    settings: Settings, workspace: Path, clock: FixedClock, tmp_path: Path
) -> None:
    installer.install(settings, workspace, clock=clock)
    export = tmp_path / "out" / "memory.jsonl"
    report = installer.uninstall(reload(settings), keep_db=True, export_path=export, clock=clock)
    assert report.export == export.resolve() and report.memories == 5
    assert settings.db_path.exists() and not report.db_deleted
    assert (tmp_path / "out" / "memory-install.json").is_file()  # the manifest, kept
    assert not (settings.home / "install.json").exists()
    other = load(tmp_path / "other", env={}, overrides={"embedding.model": "hash"})
    Engine.init(other, clock=clock)
    with Engine.open(other, clock=clock) as engine:
        imported = transfer.import_(engine, export)
        assert imported.counts["memories"] == 5
        assert len(engine.list_memories(limit=100)) == 5


def test_uninstall_deletes_the_database_and_its_wal(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    installer.install(settings, workspace, clock=clock)
    Path(f"{settings.db_path}-wal").write_bytes(b"")
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert report.db_deleted and report.memories == 5
    assert not any(settings.home.glob("memoracle.db*"))
    assert reload(settings).files_dir == settings.home / "workspace"  # unbound from it


def test_a_nightly_run_between_install_and_uninstall_is_undone(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    before = tree(workspace)
    installer.install(settings, workspace, clock=clock)
    clock.advance(days=20)  # old enough for the night to archive 2026-11-30.md
    with Engine.open(reload(settings), clock=clock) as engine:
        engine.remember("Never deploy on Fridays", kind="guardrail")
        nightly.run_nightly(engine)
    rendered = (workspace / "MEMORY.md").read_bytes()
    assert b"memoracle:begin" in rendered and rendered.startswith(MEMORY_MD)
    assert (workspace / "memory" / "archive" / "2026-11" / "2026-11-30.md").is_file()
    assert (workspace / "SESSION-START.md").is_file()
    agent_note = workspace / "memory" / "2026-12-21.md"  # the agent's own, after install
    agent_note.write_text("# 2026-12-21\n\n- Sam asked for the weekly report on Fridays\n")

    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)

    assert tree(workspace) == {**before, "memory/2026-12-21.md": agent_note.read_bytes()}
    assert (workspace / "MEMORY.md").read_bytes() == MEMORY_MD
    assert report.export is not None
    saved = report.export.parent / "memoracle-export-workspace"
    assert saved == report.saved
    assert (saved / "MEMORY.md").read_bytes() == rendered  # what a person added since: kept
    for created in (
        "SESSION-START.md",
        "INDEX.md",
        "reference/entities.md",
        "knowledge-graph/facts.jsonl",
    ):
        assert (saved / created).is_file() and not (workspace / created).exists()
    kinds = {a.path.relative_to(workspace).as_posix(): a.kind for a in report.actions}
    assert kinds["MEMORY.md"] == "restore"
    assert kinds["memory/2026-11-30.md"] == "put-back"
    assert kinds["memory/2026-12-21.md"] == "keep"
    assert kinds["memory/archive"] == "remove-folder"


def test_notes_memoracle_appended_to_are_cut_back_and_shared_ones_kept(
    settings: Settings, workspace: Path, tmp_path: Path
) -> None:
    clock = FixedClock(datetime(2026, 11, 30, 18, 0, tzinfo=UTC))  # the note's own day
    (workspace / "memory" / "2026-11-29.md").write_text("# 2026-11-29\n\n- Quiet day\n")
    before = tree(workspace)
    installer.install(settings, workspace, clock=clock)
    with Engine.open(reload(settings), clock=clock) as engine:
        nightly.append_daily_notes(engine)  # today's imports, appended to 2026-11-30.md
    grown = (workspace / "memory" / "2026-11-30.md").read_text()
    assert grown.startswith(DAILY_NOTE) and "<!-- m_" in grown
    shared = workspace / "memory" / "2026-11-29.md"
    shared.write_text(shared.read_text() + "- The agent added this line\n")

    report = installer.uninstall(reload(settings), keep_db=True, clock=clock)

    assert (workspace / "memory" / "2026-11-30.md").read_text() == DAILY_NOTE
    assert (report.saved / "memory" / "2026-11-30.md").read_text() == grown
    assert shared.read_bytes() != before["memory/2026-11-29.md"]  # someone else wrote: kept
    kinds = {a.path.name: a.kind for a in report.actions}
    assert kinds == {
        "2026-11-30.md": "trim",
        "2026-11-29.md": "keep",
        "reference": "remove-folder",
        "knowledge-graph": "remove-folder",
    }


def test_a_note_packed_away_by_the_clean_step_comes_back(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    before = tree(workspace)
    installer.install(settings, workspace, clock=clock)
    clock.advance(days=400)  # archived after 14 days, packed away after 365
    with Engine.open(reload(settings), clock=clock) as engine:
        nightly.run_nightly(engine)
    assert not (workspace / "memory" / "2026-11-30.md").exists()
    assert list((settings.home / "archive" / "cleaned").glob("*.tar.gz"))
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert tree(workspace) == before
    put_back = [a for a in report.actions if a.kind == "put-back"]
    assert [a.member for a in put_back] == ["memory/archive/2026-11/2026-11-30.md"]


def test_a_folder_that_is_not_a_workspace_is_refused(
    settings: Settings, tmp_path: Path, clock: FixedClock
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("- a line\n")
    with pytest.raises(WorkspaceError, match=r"does not look like an OpenClaw workspace.*--force"):
        installer.install(settings, folder, clock=clock)
    assert not settings.home.exists() and tree(folder) == {"MEMORY.md": b"- a line\n"}
    with pytest.raises(WorkspaceError, match="is not a folder"):
        installer.install(settings, tmp_path / "missing", clock=clock, force=True)
    forced = installer.install(settings, folder, clock=clock, force=True)
    assert forced.ingest is not None and forced.ingest.memories_added == 1


def test_dry_runs_change_nothing(settings: Settings, workspace: Path, clock: FixedClock) -> None:
    before = tree(workspace)
    plan = installer.install(settings, workspace, clock=clock, dry_run=True)
    assert plan.dry_run and [b.path for b in plan.backups] == ["MEMORY.md"]
    assert len(plan.to_import) == 2
    assert not settings.home.exists() and tree(workspace) == before

    installer.install(settings, workspace, clock=clock)
    with Engine.open(reload(settings), clock=clock) as engine:
        nightly.run_nightly(engine)
    after_night = tree(workspace)
    manifest = (settings.home / "install.json").read_bytes()
    again = installer.install(settings, workspace, clock=clock, dry_run=True)
    assert again.already_installed and again.to_import == ()

    plan_out = installer.uninstall(reload(settings), keep_db=False, dry_run=True, clock=clock)
    assert plan_out.dry_run and plan_out.memories == 5 and not plan_out.db_deleted
    assert {a.kind for a in plan_out.actions} >= {"restore", "set-aside", "remove-folder"}
    assert tree(workspace) == after_night
    assert (settings.home / "install.json").read_bytes() == manifest
    assert settings.db_path.exists() and plan_out.export is not None
    assert not plan_out.export.exists() and not (settings.home / "uninstall").exists()


def test_uninstall_without_a_manifest_says_what_it_can_still_do(
    settings: Settings, clock: FixedClock
) -> None:
    Engine.init(settings, clock=clock)
    with pytest.raises(NotFound, match=r"never installed.*export FILE.*schedule remove"):
        installer.uninstall(settings, keep_db=False, clock=clock)
    assert settings.db_path.exists()


def test_a_backup_that_no_longer_matches_is_not_put_back(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    report = installer.install(settings, workspace, clock=clock)
    (workspace / "MEMORY.md").write_text("# rewritten since\n")
    backup = report.backups[0].backup
    backup.write_bytes(MEMORY_MD + b"\n- tampered\n")
    before = tree(workspace)
    with pytest.raises(WorkspaceError, match=rf"{backup}.*no longer matches.*Nothing was changed"):
        installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert tree(workspace) == before
    assert settings.db_path.exists() and (settings.home / "install.json").exists()
    assert not (settings.home / "uninstall").exists()


def test_one_home_is_installed_into_one_workspace(
    settings: Settings, workspace: Path, clock: FixedClock, tmp_path: Path
) -> None:
    installer.install(settings, workspace, clock=clock)
    other = tmp_path / "other-workspace"
    other.mkdir()
    (other / "AGENTS.md").write_text("# AGENTS.md\n")
    with pytest.raises(WorkspaceError, match=r"is installed into .*uninstall first"):
        installer.install(settings, other, clock=clock)
    assert tree(other) == {"AGENTS.md": b"# AGENTS.md\n"}


def test_a_files_dir_override_elsewhere_is_refused(
    tmp_path: Path, workspace: Path, clock: FixedClock
) -> None:
    env = {"MEMORACLE_WORKSPACE_FILES_DIR": str(tmp_path / "elsewhere")}
    settings = load(tmp_path / "home", env=env, overrides={"embedding.model": "hash"})
    with pytest.raises(InvalidInput, match="MEMORACLE_WORKSPACE_FILES_DIR"):
        installer.install(settings, workspace, clock=clock)
    assert not settings.home.exists()


def test_without_fts5_nothing_changes(
    settings: Settings, workspace: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from memoracle.store import db

    real = sqlite3.connect

    class NoFts5(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if "fts5" in sql.lower():
                raise sqlite3.OperationalError("no such module: fts5")
            return super().execute(sql, *args)

    monkeypatch.setattr(db.sqlite3, "connect", lambda *a, **k: real(*a, factory=NoFts5, **k))
    before = tree(workspace)
    with pytest.raises(StoreError, match=r"has no FTS5.*Nothing was changed"):
        installer.install(settings, workspace, clock=clock)
    assert not settings.home.exists() and tree(workspace) == before
    with pytest.raises(StoreError, match="has no FTS5"):
        Engine.init(settings, clock=clock)
    assert not settings.home.exists()


def test_crontab_lines_go_and_a_missing_crontab_is_only_noted(
    settings: Settings,
    workspace: Path,
    clock: FixedClock,
    crontab: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    installer.install(settings, workspace, clock=clock)
    crontab.write_text("MAILTO=me\n")
    schedule.install_crontab(reload(settings))
    report = installer.uninstall(reload(settings), keep_db=True, clock=clock)
    assert report.crontab_removed == 4 and crontab.read_text() == "MAILTO=me\n"

    installer.install(settings, workspace, clock=clock)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    report = installer.uninstall(reload(settings), keep_db=True, clock=clock)
    assert report.crontab_removed is None
    assert any("no crontab program" in note for note in report.notes)


def test_the_agents_md_block_is_a_reminder_not_an_edit(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    installer.install(settings, workspace, clock=clock)
    agents = workspace / "AGENTS.md"
    pasted = agents.read_text() + f"\n{AGENTS_BEGIN}\n## Long-term memory\n{AGENTS_END}\n"
    agents.write_text(pasted)
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert agents.read_text() == pasted
    assert any("AGENTS.md still holds memoracle's block" in note for note in report.notes)
    assert any("openclaw.json" in note for note in report.notes)


def test_uninstall_names_the_plugin_settings_and_skill_folders_it_never_wrote(
    settings: Settings,
    workspace: Path,
    clock: FixedClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = tmp_path / "openclaw-state"
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(state))
    installer.install(settings, workspace, clock=clock)
    # `openclaw skills install` put the skill in one place, a person copied it to another.
    skills = [workspace / "skills" / "memoracle", state / "skills" / "memoracle"]
    for folder in skills:
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text("---\nname: memoracle\n---\n")
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    notes = "\n".join(report.notes)
    assert "agents.defaults.compaction.memoryFlush" in notes
    assert "openclaw plugins uninstall memoracle" in notes and "plugins.slots.memory" in notes
    assert "plugins.entries.memoracle" in notes
    for folder in skills:
        assert f"{folder} holds memoracle's OpenClaw skill" in notes
        assert (folder / "SKILL.md").is_file()  # install did not add it: not removed


def test_a_workspace_that_is_gone_is_named(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    installer.install(settings, workspace, clock=clock)
    workspace.rename(workspace.with_name("moved-away"))
    with pytest.raises(WorkspaceError, match=r"workspace .* is gone.*Nothing was changed"):
        installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert settings.db_path.exists()


def test_folders_memoracle_made_go_with_the_notes_only_it_wrote(
    settings: Settings, tmp_path: Path, clock: FixedClock
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "AGENTS.md").write_text("# AGENTS.md\n")
    installer.install(settings, bare, clock=clock)
    with Engine.open(reload(settings), clock=clock) as engine:
        engine.remember("The release train leaves on Thursdays")
        nightly.run_nightly(engine)
    assert (bare / "memory" / "2026-12-01.md").is_file() and (bare / "MEMORY.md").is_file()
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert tree(bare) == {"AGENTS.md": b"# AGENTS.md\n"}
    assert (report.saved / "memory" / "2026-12-01.md").is_file()
    assert (report.saved / "MEMORY.md").is_file()  # created by the night: saved, not lost


def test_the_cli_installs_prints_the_snippets_and_uninstalls_only_when_told(
    workspace: Path, tmp_path: Path, crontab: Path
) -> None:
    from click.testing import CliRunner

    from memoracle.cli import main

    before = tree(workspace)
    home = str(tmp_path / "home")
    env = {"MEMORACLE_EMBEDDING_MODEL": "hash", "MEMORACLE_NOW": INSTALLED_AT.isoformat()}

    def run(*args: str) -> tuple[int, str, str]:
        out = CliRunner().invoke(main, ["--home", home, *args], env=env)
        return out.exit_code, out.stdout, out.stderr

    code, out, _ = run("install", "--openclaw-workspace", str(workspace), "--yes")
    assert code == 0, out
    assert "back up MEMORY.md ->" in out and "memories added" in out
    assert "memoryFlush" in out and f"--home {home} checkpoint" in out
    assert "schedule: 3 job(s) in your crontab" in out and home in crontab.read_text()

    code, out, err = run("uninstall")  # no terminal to ask on: refused, nothing changed
    assert code == 1 and "--force" in err and "Nothing was changed" in err
    assert (Path(home) / "memoracle.db").exists()

    code, out, _ = run("uninstall", "--force")
    assert code == 0, out
    assert "export " in out and f"deleted {home}/memoracle.db" in out
    assert not (Path(home) / "memoracle.db").exists() and home not in crontab.read_text()
    assert tree(workspace) == before


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_session_logs_the_clean_step_packed_come_back_byte_for_byte(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    sessions = workspace / "sessions"
    sessions.mkdir()
    (sessions / "2026-11-20-before.jsonl").write_bytes(b'{"role": "user", "content": "hi"}\r\n')
    # A standalone HOME's earlier clean: not this workspace's past, never put into it.
    cleaned = settings.home / "archive" / "cleaned"
    cleaned.mkdir(parents=True)
    stray = settings.home / "2020-01-01-elsewhere.jsonl"
    stray.write_bytes(b"another workspace's log\n")
    with tarfile.open(cleaned / "2020-02-01.tar.gz", "w:gz") as tar:
        tar.add(stray, arcname="sessions/2020-01-01-elsewhere.jsonl")
    installer.install(settings, workspace, clock=clock)
    # After install OpenClaw writes on: a log grows, new ones come (any bytes at all).
    with (sessions / "2026-11-20-before.jsonl").open("ab") as f:
        f.write(b'{"role": "assistant", "content": "hello"}\n')
    (sessions / "2026-12-02-after.jsonl").write_bytes(bytes(range(256)) * 40)
    (sessions / "2026-12-03-after.md").write_text("# Session ✓\n", encoding="utf-8")
    logs = _hashes(sessions)
    clock.advance(days=60)  # past lifecycle.session_logs_keep_days (30)
    with Engine.open(reload(settings), clock=clock) as engine:
        nightly.run_nightly(engine)
    assert not list(sessions.iterdir())  # the clean step packed them away

    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)

    assert _hashes(sessions) == logs
    put_back = [a.path.name for a in report.actions if a.path.parent == sessions]
    assert put_back == sorted(logs)  # the stray log of 2020 stays in its archive
    assert all(a.kind == "put-back" for a in report.actions if a.path.parent == sessions)


def test_of_two_packings_of_a_session_log_the_newest_comes_back(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    installer.install(settings, workspace, clock=clock)
    log = workspace / "sessions" / "2026-11-01-s.jsonl"
    clock.advance(days=40)
    for n in range(1, 12):  # the day's 11th archive sorts before its 2nd by name
        log.parent.mkdir(exist_ok=True)
        log.write_text(f'{{"role": "user", "content": "version {n}"}}\n')
        with Engine.open(reload(settings), clock=clock) as engine:
            assert nightly.clean_old_files(engine) == [log]
    assert len(list((settings.home / "archive" / "cleaned").glob("*.tar.gz"))) == 11
    installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert log.read_text() == '{"role": "user", "content": "version 11"}\n'


def test_a_persons_own_index_md_comes_back_after_the_nights_rewrote_it(
    settings: Settings, workspace: Path, clock: FixedClock
) -> None:
    own = b"# Index\n\n- projects.md: what I keep by hand\n"
    (workspace / "INDEX.md").write_bytes(own)
    installer.install(settings, workspace, clock=clock)
    with Engine.open(reload(settings), clock=clock) as engine:
        nightly.run_nightly(engine)
    assert (workspace / "INDEX.md").read_bytes() != own  # the night wrote its catalogue
    report = installer.uninstall(reload(settings), keep_db=False, clock=clock)
    assert (workspace / "INDEX.md").read_bytes() == own
    kinds = {a.path.relative_to(workspace).as_posix(): a.kind for a in report.actions}
    assert kinds["INDEX.md"] == "restore"
