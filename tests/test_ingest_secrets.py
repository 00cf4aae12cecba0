"""`ingest DIR` leaves secrets where they are: version-control folders, dot-env files,
keys and key stores, secret folders and files whose names say they hold credentials (in
English, Russian, French and Spanish) are skipped and named; a file given by name is
read, and redacted like any turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memoracle.cli import main
from memoracle.engine import Engine
from memoracle.ingest.secret_names import file_reason, folder_reason
from memoracle.ingest.walk import walk_folder

NEEDLE = "hunter2"
NOTE = "# Facts\n\n- my token is hunter2\n"
CHAT = {"role": "user", "content": "I live in Lyon.", "timestamp": "2026-01-05T10:00:00Z"}


@pytest.fixture
def repro(tmp_path: Path) -> Path:
    """The reproduction: a notes folder that is also a git checkout with secrets in it."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "chat.jsonl").write_text(json.dumps(CHAT) + "\n", encoding="utf-8")
    (root / "MEMORY.md").write_text("# Facts\n\n- Ship the billing service on Tuesdays\n")
    secret_files = {
        ".git/notes.md": NOTE,
        ".git/logs/HEAD.jsonl": json.dumps({"role": "user", "content": "my token is hunter2"}),
        ".secrets/notes.md": NOTE,
        "secrets/old.md": NOTE,
        "credentials.md": NOTE,
        "api_token.md": NOTE,
        ".env": "API_TOKEN=hunter2\n",
        ".env.local.md": NOTE,
        "prod.env": NOTE,
        "id_rsa": NOTE,
        "server.pem": NOTE,
        "vault.kdbx": NOTE,
        ".ssh/config.md": NOTE,
        ".aws/credentials": NOTE,
        ".netrc": NOTE,
        "пароли.md": NOTE,
        "mots-de-passe.md": NOTE,
        "contraseñas.md": NOTE,
        "Private Key backup.md": NOTE,
        "apiKey.md": NOTE,
    }
    for rel, text in secret_files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "notes-link.md").symlink_to(root / "credentials.md")
    return root


def _files_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_a_folder_with_secrets_stores_no_trace_of_them(engine: Engine, repro: Path) -> None:
    report = engine.ingest([repro])
    assert report.files == 2  # chat.jsonl and MEMORY.md
    texts = [m.text for m in engine.list_memories()]
    assert sorted(texts) == ["I live in Lyon.", "Ship the billing service on Tuesdays"]
    skipped = {Path(s.path).relative_to(repro).as_posix(): s.reason for s in report.skipped_files}
    # A folder skipped is named once, not walked into.
    assert set(skipped) == {
        ".git", ".secrets", "secrets", "credentials.md", "api_token.md", ".env",
        ".env.local.md", "prod.env", "id_rsa", "server.pem", "vault.kdbx", ".ssh", ".aws",
        ".netrc", "пароли.md", "mots-de-passe.md", "contraseñas.md", "Private Key backup.md",
        "apiKey.md", "notes-link.md",
    }  # fmt: skip
    assert "version-control" in skipped[".git"]
    assert "keys or secrets" in skipped[".secrets"] and "keys or secrets" in skipped[".ssh"]
    assert "'credentials'" in skipped["credentials.md"]
    assert "'token'" in skipped["api_token.md"]
    assert ".env" in skipped[".env"] and ".env" in skipped["prod.env"]
    assert "*.pem" in skipped["server.pem"] and "SSH key" in skipped["id_rsa"]
    assert "'пароли'" in skipped["пароли.md"]
    assert "'mots de passe'" in skipped["mots-de-passe.md"]
    assert "'contrasenas'" in skipped["contraseñas.md"]
    assert "'private key'" in skipped["Private Key backup.md"]
    assert "'api key'" in skipped["apiKey.md"]
    assert "credentials.md" in skipped["notes-link.md"]
    # No trace: not in what the engine says, nor in the bytes of the store.
    assert all(NEEDLE not in e.text for page in engine.turns() for e in page)
    engine.compact_store()
    home = engine.settings.home
    for path in _files_under(home):
        assert NEEDLE.encode() not in path.read_bytes(), path


def test_the_count_line_and_json_name_every_secret_skipped(repro: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(main, ["--home", str(home), "init"]).exit_code == 0
    out = runner.invoke(main, ["--home", str(home), "ingest", str(repro)]).output
    assert f"skipped {repro / '.git'}: a version-control folder (.git); not read" in out
    assert "read 2 file(s) (1 jsonl, 1 memory-md; 20 skipped)" in out
    result = runner.invoke(main, ["--home", str(home), "ingest", str(repro), "--json"])
    data = json.loads(result.output)
    reasons = {Path(s["path"]).name: s["reason"] for s in data["skipped_files"]}
    assert reasons["credentials.md"] == "its name says it holds secrets ('credentials'); not read"
    for path in _files_under(home):
        assert NEEDLE.encode() not in path.read_bytes(), path


def test_a_file_named_on_the_command_line_is_read_and_redacted(engine: Engine, repro: Path) -> None:
    creds = repro / "credentials.md"
    creds.write_text("# Facts\n\n- The deploy password: hunter2\n", encoding="utf-8")
    report = engine.ingest([creds])
    assert report.files == 1 and report.skipped_files == ()
    [memory] = engine.list_memories()
    assert NEEDLE not in memory.text and "[REDACTED" in memory.text


def test_ordinary_names_are_read() -> None:
    for name in (
        "tokenizer-notes.md", "2026-01-04.md", "MEMORY.md", "chat.jsonl", "keynotes.md",
        "secretary.md", "passe-partout.md", "env.md", "environment.md", "monkey.md",
    ):  # fmt: skip
        assert file_reason(name) is None, name
    for name in ("memory", "sessions", "notes", "git", "envs", "tokenizers"):
        assert folder_reason(name) is None, name


def test_the_walk_lists_secrets_as_skipped_not_as_files(repro: Path) -> None:
    listing = walk_folder(repro)
    assert [f.path.name for f in listing.files] == ["MEMORY.md", "chat.jsonl"]
    assert len(listing.skipped) == 20
