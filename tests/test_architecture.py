"""The import rules of STYLE.md, held by a test: imports point one way, only `store/`
speaks SQL to our database, only `clock.py` reads the system clock."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memoracle"
MODULES = sorted(p for p in SRC.rglob("*.py"))


def _name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("memoracle")}


# module prefix -> memoracle packages it must never import
FORBIDDEN = {
    "memoracle.store": (
        "memoracle.engine",
        "memoracle.cli",
        "memoracle.capture",
        "memoracle.ingest",
    ),
    "memoracle.capture": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.cli",
        "memoracle.ingest",
    ),
    "memoracle.ingest": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.cli",
        "memoracle.capture",
    ),
    "memoracle.types": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.capture",
        "memoracle.ingest",
    ),
    "memoracle.datafiles": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.capture",
        "memoracle.lifecycle",
    ),
    "memoracle.config": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.capture",
        "memoracle.ingest",
    ),
    "memoracle.recall": (
        "memoracle.capture",
        "memoracle.ingest",
        "memoracle.engine",
        "memoracle.cli",
    ),
    "memoracle.embed": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.capture",
        "memoracle.recall",
    ),
    "memoracle.lifecycle": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.cli",
        "memoracle.ingest",
    ),
    "memoracle.render": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.cli",
        "memoracle.capture",
        "memoracle.ingest",
    ),
    "memoracle.engine": ("memoracle.cli", "memoracle.jobs.nightly"),
    "memoracle.jobs.nightly": ("memoracle.cli",),
    "memoracle.graph": (
        "memoracle.store",
        "memoracle.engine",
        "memoracle.cli",
        "memoracle.ingest",
        "memoracle.jobs.nightly",
    ),
    "memoracle.jobs.charts": ("memoracle.store", "memoracle.engine", "memoracle.cli"),
    "memoracle.jobs.pointers": ("memoracle.store", "memoracle.engine", "memoracle.cli"),
    "memoracle.jobs.canary": ("memoracle.cli", "memoracle.jobs.nightly", "memoracle.store"),
    "memoracle.jobs.health": (
        "memoracle.cli",
        "memoracle.jobs.nightly",
        "memoracle.capture",
        "memoracle.ingest",
    ),
    "memoracle.cli": ("memoracle.store", "memoracle.capture", "memoracle.ingest"),
    "memoracle.jobs.bench": ("memoracle.store", "memoracle.cli"),
    "memoracle.serialize": ("memoracle.engine", "memoracle.cli", "memoracle.jobs.nightly"),
    "memoracle.jobs.schedule": ("memoracle.store", "memoracle.engine", "memoracle.cli"),
    "memoracle.jobs.checkpoint": ("memoracle.cli", "memoracle.store"),
    "memoracle.jobs.transfer": ("memoracle.cli", "memoracle.jobs.nightly"),
    "memoracle.openclaw.workspace": ("memoracle.store", "memoracle.engine", "memoracle.cli"),
    "memoracle.openclaw.install": ("memoracle.cli", "memoracle.capture"),
    "memoracle.mcp_server": (
        "memoracle.cli",
        "memoracle.jobs.nightly",
        "memoracle.store",
        "memoracle.capture",
        "memoracle.ingest",
    ),
}


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_point_one_way(path: Path) -> None:
    module = _name(path)
    for prefix, banned in FORBIDDEN.items():
        if module == prefix or module.startswith(prefix + "."):
            bad = sorted(
                i for i in _imports(path) for b in banned if i == b or i.startswith(b + ".")
            )
            assert not bad, f"{module} must not import {bad}"


def test_only_store_opens_our_database() -> None:
    # ingest/openclaw_sqlite.py reads a *copy* of OpenClaw's own database, not ours;
    # bench.py builds its BM25 baseline in a throwaway in-memory database.
    allowed = {"memoracle.ingest.openclaw_sqlite", "memoracle.jobs.bench"}
    users = {
        _name(p)
        for p in MODULES
        if "sqlite3"
        in {
            a.name
            for n in ast.walk(ast.parse(p.read_text()))
            if isinstance(n, ast.Import)
            for a in n.names
        }
    }
    assert {u for u in users if not u.startswith("memoracle.store")} <= allowed


def test_only_clock_reads_the_system_clock() -> None:
    offenders = []
    for path in MODULES:
        if path.name == "clock.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("now", "today", "utcnow", "time")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("datetime", "date", "time")
            ):
                offenders.append(f"{_name(path)}:{node.lineno}")
    assert not offenders
