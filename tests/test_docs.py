"""The docs stay in step with the code: every command, setting and export is covered."""

from __future__ import annotations

import dataclasses
import importlib
import re
from datetime import UTC, datetime
from pathlib import Path

import click
import pytest

import memoracle
from memoracle import errors, store
from memoracle.cli import main
from memoracle.config import Settings, load

ROOT = Path(__file__).resolve().parents[1]


def _commands(group: click.Group, prefix: str = "") -> list[str]:
    names = []
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            names += _commands(cmd, f"{prefix}{name} ")
        else:
            names.append(prefix + name)
    return names


def test_every_command_is_in_the_cli_doc() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in _commands(main) if f"`{name}" not in text]
    assert not missing


def test_every_setting_is_in_the_config_doc(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    missing = [key for key, *_ in load(tmp_path, env={}).items() if f"`{key}`" not in text]
    assert not missing


def test_public_api_is_what_we_mean_to_export() -> None:
    assert set(memoracle.__all__) == {
        "CaptureResult", "Clock", "Engine", "EngineError", "Episode", "FixedClock",
        "ImportedNote", "IngestReport", "IngestWarning", "InvalidInput", "Memory",
        "NotFound", "Scope", "Settings", "Stats", "StoreError", "SystemClock", "Turn",
        "WorkspaceError", "load", "recall_anyway",
    }  # fmt: skip
    assert all(hasattr(memoracle, name) for name in memoracle.__all__)


def test_readme_python_example_runs(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    example = example.replace('"~/agent-memory"', repr(str(tmp_path / "agent-memory")))
    namespace: dict[str, object] = {"print": lambda *args: None}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102
    assert (tmp_path / "agent-memory" / "memoracle.db").exists()


_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    found = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return found


@pytest.mark.parametrize(
    "page",
    sorted(
        [ROOT / "README.md", ROOT / "BENCHMARKS.md", *ROOT.glob("docs/*.md")]
        + [p for p in ROOT.glob("integrations/**/*.md") if "node_modules" not in p.parts]
    ),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_link_resolves_inside_the_repository(page: Path) -> None:
    broken = []
    for target in _LINK.findall(page.read_text(encoding="utf-8")):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        inside = dest == ROOT or ROOT in dest.parents
        if not inside or not dest.exists():
            broken.append(target)
        elif anchor and dest.is_file() and anchor not in _anchors(dest):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to what is not in the repository"


def test_every_range_is_in_the_config_doc() -> None:
    text = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    for section in dataclasses.fields(Settings):
        if section.name in ("home", "sources"):
            continue
        for f in dataclasses.fields(section.default_factory):  # type: ignore[arg-type]
            allowed = f.metadata.get("allowed")
            if allowed is not None:
                row = f"| `{section.name}.{f.name}` | {allowed.describe()} |"
                assert row in text, row


def _drawn_tree(doc: str) -> dict[str, str | None]:
    """The classes of the tree a docstring draws (a root line, then `├── Name` lines,
    down to the first blank line), each with the class drawn above it."""
    root = re.search(r"^ +EngineError\b", doc, re.MULTILINE)
    assert root, "no tree drawn"
    lines = doc[root.start() :].split("\n\n")[0].splitlines()
    drawn: dict[str, str | None] = {}
    above: list[tuple[int, str]] = []  # (column, name) of the open branches
    for line in lines:
        found = re.match(r"[ │]*(?:[├└]── )?([A-Z]\w*)", line)
        if not found:
            continue
        column, name = found.start(1), found.group(1)
        while above and above[-1][0] >= column:
            above.pop()
        drawn[name] = above[-1][1] if above else None
        above.append((column, name))
    return drawn


@pytest.mark.parametrize("module", ["memoracle.errors", "memoracle.llm.errors"])
def test_the_error_tree_draws_every_error(module: str) -> None:
    """Each error module's docstring draws every error class it defines, under its base."""
    loaded = importlib.import_module(module)
    classes = {
        name: value.__base__.__name__ if value is not errors.EngineError else None
        for name, value in vars(loaded).items()
        if isinstance(value, type)
        and issubclass(value, errors.EngineError)
        and value.__module__ == module
    }
    drawn = _drawn_tree(loaded.__doc__ or "")
    assert {name: drawn.get(name, "not drawn") for name in classes} == classes


def test_the_store_names_every_repository(tmp_path: Path) -> None:
    """store/__init__.py's docstring names each repository a `Store` exposes."""
    opened = store.Store.open(tmp_path / "memoracle.db", now=datetime(2026, 1, 1, tzinfo=UTC))
    try:
        repositories = {
            name
            for name, value in vars(opened).items()
            if not name.startswith("_") and type(value).__module__.startswith("memoracle.store.")
        }
    finally:
        opened.close()
    assert len(repositories) >= 8
    missing = sorted(r for r in repositories if f"`store.{r}`" not in (store.__doc__ or ""))
    assert not missing, f"store/__init__.py's docstring does not name {missing}"
