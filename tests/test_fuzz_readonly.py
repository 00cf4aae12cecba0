"""A home that cannot be written, and a --home that does not exist.

The read commands must work on a read-only home: the store is opened `mode=ro` (or
`immutable=1` when SQLite cannot even make its -shm file), access statistics are not
recorded, health prints instead of writing health.json. As root `chmod -R a-w` stops
nothing, so the in-process tests also make `os.access` answer as it does for anyone
else on such a home; SQLite then really opens the file read-only, and the database's
bytes are compared before and after. The slow test runs the CLI on a read-only bind
mount (a user namespace: no root needed) where every write fails whoever you are.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memoracle.cli import main
from memoracle.errors import StoreError
from memoracle.store import Store

HASH = ("--set", "embedding.model=hash")

READ_COMMANDS = [
    ["stats"],
    ["stats", "--json"],
    ["search", "dark mode"],
    ["search", "--json", "main"],
    ["recall", "dark mode"],
    ["recall", "--json", "push"],
    ["list"],
    ["list", "--json"],
    ["get", "m_1"],
    ["get", "--json", "m_2"],
    ["export", "{out}"],
    ["doctor"],
    ["health"],
    ["health", "--json"],
]


def cli(home: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--home", str(home), *HASH, *args])


def fingerprint(home: Path) -> str:
    return hashlib.sha256((home / "memoracle.db").read_bytes()).hexdigest()


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert cli(home, "init").exit_code == 0
    said = "I prefer dark mode. Never push to main."
    assert cli(home, "capture", "--user", said).exit_code == 0
    return home


@pytest.fixture
def readonly(filled: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`filled`, chmod -R a-w, with os.access answering as for a non-root user."""
    real = os.access

    def access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        inside = str(path).startswith(str(filled))
        if inside and mode & os.W_OK:
            return False
        return real(path, mode, *args, **kwargs)  # type: ignore[arg-type]

    for path in [filled, *filled.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    monkeypatch.setattr(os, "access", access)
    yield filled
    for path in [filled, *filled.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a))
def test_read_commands_work_on_a_read_only_home(
    readonly: Path, tmp_path: Path, args: list[str]
) -> None:
    before = fingerprint(readonly)
    result = cli(readonly, *[a.format(out=tmp_path / "out.jsonl") for a in args])
    assert result.exit_code in (0, 1), result.output  # 1: health/doctor found warnings
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "readonly database" not in result.output
    assert "Error" not in result.output
    assert fingerprint(readonly) == before


def test_recall_on_a_read_only_home_says_it_did_not_record_the_use(readonly: Path) -> None:
    result = cli(readonly, "recall", "--json", "dark mode")
    assert result.exit_code == 0, result.output
    block = json.loads(result.stdout)
    assert any("dark mode" in line["text"] for line in block["lines"])
    assert "read-only" in block["degraded"]
    shown = json.loads(cli(readonly, "get", "--json", "m_1").stdout)
    assert shown["memory"]["scores"]["access_count"] == 0


def test_health_on_a_read_only_home_prints_and_says_it_wrote_nothing(readonly: Path) -> None:
    result = cli(readonly, "health")
    assert "health.json not written (read-only workspace)" in result.output
    assert not (readonly / "health.json").exists()


def test_a_write_on_a_read_only_home_is_a_clear_error_and_changes_nothing(
    readonly: Path,
) -> None:
    before = fingerprint(readonly)
    result = cli(readonly, "remember", "I like tea")
    assert result.exit_code == 1
    assert "read-only" in result.output and "Traceback" not in result.output
    assert fingerprint(readonly) == before


def test_a_store_not_writable_opens_read_only(readonly: Path) -> None:
    store = Store.open(readonly / "memoracle.db", now=_now())
    try:
        assert store.readonly
        assert store.memories.get(1) is not None
        with pytest.raises(StoreError, match="read-only"), store.transaction():
            store.runs.start("probe", now=_now())
    finally:
        store.close()


def test_a_writable_store_opens_read_write(filled: Path) -> None:
    store = Store.open(filled / "memoracle.db", now=_now())
    assert not store.readonly
    store.close()


def _now() -> datetime:
    return datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


# -- a --home that does not exist ------------------------------------------------------

EVERY_COMMAND_BUT_INIT = [
    ["stats"],
    ["search", "x"],
    ["recall", "x"],
    ["list"],
    ["get", "m_1"],
    ["export", "{out}"],
    ["import", "{out}"],
    ["doctor"],
    ["health"],
    ["capture", "--user", "I like tea"],
    ["remember", "I like tea"],
    ["forget", "m_1"],
    ["nightly"],
    ["archive", "--dry-run"],
    ["dedup", "--check"],
    ["score"],
    ["pending"],
    ["reindex"],
    ["audit"],
    ["pointers"],
    ["graph", "entities"],
    ["explain", "m_1", "--query", "x"],
    ["restore", "m_1"],
    ["schedule", "print"],
    ["mcp"],
    ["openclaw", "snippets"],
    ["daemon"],
]
# Not here: `checkpoint` never fails its host (it exits 0 and prints the same problem).


def test_checkpoint_on_a_missing_home_says_so_but_exits_0(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-home"
    result = cli(missing, "checkpoint", "--text", "x")
    assert result.exit_code == 0 and "memoracle init --home" in result.output


@pytest.mark.parametrize("args", EVERY_COMMAND_BUT_INIT, ids=lambda a: " ".join(a))
def test_a_missing_home_is_exit_2_with_the_init_hint(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "out.jsonl").write_text("")
    missing = tmp_path / "no-such-home"
    result = cli(missing, *[a.format(out=tmp_path / "out.jsonl") for a in args])
    assert result.exit_code == 2, result.output
    assert f"memoracle init --home {missing}" in result.output
    assert not missing.exists()


def test_init_makes_the_missing_home(tmp_path: Path) -> None:
    result = cli(tmp_path / "new", "init")
    assert result.exit_code == 0 and (tmp_path / "new" / "memoracle.db").exists()


# -- a real read-only mount ------------------------------------------------------------

MOUNTED = """
set -e
mount --bind "$1" "$2"
mount -o remount,bind,ro "$2"
shift 2
"$@"
"""


@pytest.mark.slow
@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a))
def test_read_commands_on_a_read_only_mount(filled: Path, tmp_path: Path, args: list[str]) -> None:
    """The real thing: the home on a read-only bind mount (where even root cannot
    write, and SQLite cannot make a -shm file: the `immutable=1` path)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) here")
    view = tmp_path / "view"
    view.mkdir()
    before = fingerprint(filled)
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "memoracle.cli", "--home", str(view), *HASH]
    command += [a.format(out=out) for a in args]
    done = subprocess.run(
        [unshare, "-rm", "sh", "-c", MOUNTED, "sh", str(filled), str(view), *command],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=120,
    )
    if "mount" in done.stderr and done.returncode != 0 and "memoracle" not in done.stderr:
        pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()}")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "readonly database" not in done.stderr
    assert fingerprint(filled) == before
