"""The floors of docs/architecture.md, held by a test: imports only point down the
order below, there is no import cycle (of modules, or of packages), only `store/` speaks
SQL to our database, only `clock.py` reads the system clock, modules and functions stay
small and no data folder is named like a module."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memoracle"
MODULES = sorted(p for p in SRC.rglob("*.py"))

# Top to bottom. A module may import a module of a unit further down the list, or of its
# own unit; never one further up. Units are packages or modules (the longest that
# contains a module is its unit). docs/architecture.md draws the same floors.
ORDER = (
    # doors
    "memoracle",  # the public API in __init__.py
    "memoracle.cli",
    "memoracle.serve",
    "memoracle.mcp_server",
    "memoracle.ui",
    "memoracle.reports",
    # integrations
    "memoracle.openclaw",
    # jobs
    "memoracle.jobs",
    # shapes
    "memoracle.serialize",
    # engine
    "memoracle.engine",
    # domain
    "memoracle.recall",
    "memoracle.graph",
    "memoracle.lifecycle",
    "memoracle.outbox",
    "memoracle.llm",
    "memoracle.capture",
    "memoracle.render",
    "memoracle.ingest",
    "memoracle.embed",
    # store
    "memoracle.store",
    # language
    "memoracle.language",
    # foundation
    "memoracle.data",
    "memoracle.workspace",
    "memoracle.config_file",
    "memoracle.config",
    "memoracle.files",
    "memoracle.clock",
    "memoracle.storage_types",
    "memoracle.text",
    "memoracle.types",
    "memoracle.errors",
)

# Inside these units the same holds among their parts (top to bottom): a part may import
# its own part or one further down. Parts not listed may not be imported by listed ones.
INSIDE: dict[str, tuple[str, ...]] = {
    "memoracle.engine": (
        "core",
        "browse",
        "amend",
        "completion",
        "guard",
        "replay",
        "arbitrate",
        "upkeep",
        "repeats",
        "housekeeping",
        "ingest",
        "search",
        "memories",
        "thinking",
        "write",
        "forgetting",
        "relate",
        "settle",
        "near",
        "graph",
        "scope",
        "state",
    ),
    "memoracle.jobs": (
        "doctor",
        "recover",
        "bench",
        "schedule",
        "checkpoint",
        "nightly",
        "scrub",
        "health",
        "thinking",
        "charts",
        "canary",
        "pointers",
        "migrate",
        "transfer",
        "graph_log",
        "cron",
        "advise",
    ),
    "memoracle.language": ("words", "kit", "datafiles", "prefilter"),
}

# Packages that never touch the store: text in, decisions out.
PURE = (
    "memoracle.capture",
    "memoracle.ingest",
    "memoracle.lifecycle",
    "memoracle.llm",
    "memoracle.outbox",
    "memoracle.render",
)

MAX_LINES = 600
# module -> why it is larger (docs/architecture.md says the same)
LARGER: dict[str, str] = {}


def _name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


NAMES = {_name(p) for p in MODULES}


@cache
def _imports(path: Path) -> frozenset[str]:
    """The memoracle modules `path` imports anywhere (top level, functions, TYPE_CHECKING);
    `from a import b` names the module a.b when there is one, else a."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in NAMES else node.module)
    return frozenset(n for n in found if n == "memoracle" or n.startswith("memoracle."))


def _unit(module: str) -> str:
    units = [u for u in ORDER if module == u or module.startswith(u + ".")]
    assert units, f"{module} belongs to no floor: add it to ORDER and docs/architecture.md"
    return max(units, key=len)


def _rank(module: str) -> tuple[int, int]:
    unit = _unit(module)
    parts = INSIDE.get(unit)
    inner = -1
    if parts is not None and module != unit:
        part = module[len(unit) + 1 :].split(".")[0]
        inner = parts.index(part) if part in parts else len(parts)
    return ORDER.index(unit), inner


def _upward(module: str, target: str) -> bool:
    (floor, part), (to_floor, to_part) = _rank(module), _rank(target)
    if floor != to_floor:
        return to_floor < floor
    return to_part != -1 and part != -1 and to_part < part


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_imports_only_point_down(path: Path) -> None:
    module = _name(path)
    bad = sorted(t for t in _imports(path) if t in NAMES and _upward(module, t))
    assert not bad, f"{module} imports {bad}, which sit above it (docs/architecture.md)"


def test_every_listed_part_exists() -> None:
    for unit in ORDER:
        assert unit in NAMES, f"ORDER names {unit}, which is not a module"
    for unit, parts in INSIDE.items():
        for part in parts:
            assert f"{unit}.{part}" in NAMES, f"INSIDE names {unit}.{part}"
        found = {n[len(unit) + 1 :].split(".")[0] for n in NAMES if n.startswith(unit + ".")}
        assert found <= set(parts), f"{unit} has parts in no order: {found - set(parts)}"


def _cycles(graph: dict[str, list[str]]) -> Iterator[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return iter(found)


def test_no_import_cycles() -> None:
    # The package itself (memoracle/__init__.py, the public API) imports the engine, and
    # every submodule's import runs it first; that is Python's, not a cycle of ours.
    graph = {_name(p): sorted(t for t in _imports(p) if t in NAMES) for p in MODULES}
    cycles = [c for c in _cycles(graph) if c != ["memoracle"]]
    assert not cycles, f"import cycles: {cycles}"


def _package(path: Path) -> str:
    """The package a module stands in: its folder's (memoracle.jobs.nightly for
    jobs/nightly/runner.py). A module the floors rank by itself is a package of its
    own: one directly under memoracle/ (ORDER), or a part of a unit in INSIDE
    (memoracle.jobs.health)."""
    name = _name(path)
    folder = name.rpartition(".")[0]
    if path.name == "__init__.py" or path.parent == SRC or folder in INSIDE:
        return name
    return folder


def _package_cycles(depth: int) -> list[list[str]]:
    """The circles among packages seen `depth` names deep (2: memoracle.jobs holds all
    of jobs/; 3: memoracle.jobs.nightly apart from the rest of jobs/)."""
    package_of = {_name(p): ".".join(_package(p).split(".")[:depth]) for p in MODULES}
    graph: dict[str, set[str]] = {package: set() for package in package_of.values()}
    for path in MODULES:
        source = package_of[_name(path)]
        graph[source] |= {package_of[t] for t in _imports(path) if t in NAMES} - {source}
    return list(_cycles({package: sorted(targets) for package, targets in graph.items()}))


def test_no_package_cycles() -> None:
    """Each package stands on one floor: no two packages import each other, however
    far round, whether subpackages are told apart or folded into their top package (a
    package whose modules sit on two floors makes such a circle even when no module
    does)."""
    deepest = max(len(_package(p).split(".")) for p in MODULES)
    cycles = {depth: c for depth in range(2, deepest + 1) if (c := _package_cycles(depth))}
    assert not cycles, f"package circles: {cycles}"


@pytest.mark.parametrize("package", PURE)
def test_pure_packages_never_touch_the_store(package: str) -> None:
    for path in MODULES:
        if _name(path) == package or _name(path).startswith(package + "."):
            store = [t for t in _imports(path) if t.startswith("memoracle.store")]
            assert not store, f"{_name(path)} imports {store}"


def test_doors_hold_no_store_or_capture() -> None:
    for path in MODULES:
        if _unit(_name(path)) in ("memoracle.cli", "memoracle.mcp_server", "memoracle.ui"):
            banned = ("memoracle.store", "memoracle.capture", "memoracle.ingest")
            bad = [t for t in _imports(path) if t.startswith(banned)]
            assert not bad, f"{_name(path)} imports {bad}: doors call the engine"


# The engine keeps its store to itself (`Engine._store`): the jobs, the shapes, the
# integrations and the doors ask the engine, so that a store of another kind can stand
# behind it. Only the engine and the store read a `store` attribute; recall's searcher
# is handed the store by the engine and reads its own (`self.store`, `searcher.store`).
STORE_KEEPERS = ("memoracle.engine", "memoracle.store")


def _store_reads(path: Path) -> list[tuple[str, str]]:
    """Each `X.store` or `X._store` read in `path`: (X, `module:line: X.store`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("store", "_store"):
            where = f"{_name(path)}:{node.lineno}: {ast.unparse(node)}"
            found.append((ast.unparse(node.value), where))
    return found


def test_only_the_engine_holds_its_store() -> None:
    bad = []
    for path in MODULES:
        name = _name(path)
        if name.startswith(STORE_KEEPERS):
            continue
        searcher = name.startswith("memoracle.recall.")
        bad += [w for x, w in _store_reads(path) if not (searcher and x in ("self", "searcher"))]
    assert not bad, f"only the engine reads its store; ask the engine instead: {bad}"
    state = _store_reads(SRC / "engine" / "state.py")
    public = [w for _x, w in state if w.endswith(".store")]
    assert state and not public, f"the engine's store is private (`_store`): {public}"


# Modules that speak SQL to a database that is not ours: ingest/openclaw_sqlite.py reads
# a *copy* of OpenClaw's own database; the benchmark builds its BM25 baseline in a
# throwaway in-memory database.
OTHER_DATABASES = {
    "memoracle.ingest.openclaw_sqlite",
    "memoracle.ingest.openclaw_cron",  # its cron jobs, from the same kind of copy
    "memoracle.jobs.bench.baseline",
}


def test_only_store_opens_our_database() -> None:
    allowed = OTHER_DATABASES
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


# FTS5's query syntax in a string: an operator joining words (" AND ", " OR ", " NOT "),
# the doubled quote of a quoted word ('""'), a quoted prefix ('"*'), NEAR( or MATCH.
FTS5_SYNTAX = re.compile(r'^\s*(AND|OR|NOT)\s*$|^""$|"\*|\bNEAR\(|\bMATCH\b')


def _code_strings(path: Path) -> Iterator[ast.Constant]:
    """The strings of `path`'s code (f-strings' parts too), docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    said = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in said:
            yield node


def test_only_store_writes_full_text_queries() -> None:
    """Above store/, a lexical query is a value (`storage_types.LexicalQuery`); only the
    store renders it in its backend's syntax (FTS5's: `store.fts`), so no module above it
    builds a MATCH expression (save those querying a database not ours)."""
    offenders = [
        f"{_name(path)}:{node.lineno} {node.value!r}"
        for path in MODULES
        if _unit(_name(path)) != "memoracle.store" and _name(path) not in OTHER_DATABASES
        for node in _code_strings(path)
        if FTS5_SYNTAX.search(node.value)
    ]
    assert not offenders, f"FTS5 syntax outside store/: {offenders}"


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


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_modules_stay_small(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    module = _name(path)
    assert lines <= MAX_LINES or module in LARGER, (
        f"{module} has {lines} lines (> {MAX_LINES}): split it, or say in LARGER and "
        "docs/architecture.md why it must stay whole"
    )


MAX_FUNCTION_LINES = 100
# "module.function" -> why it stays longer than MAX_FUNCTION_LINES
LONGER: dict[str, str] = {
    "memoracle.store.schema.m001_initial": "a migration: what it creates must never change",
}


def _long_functions() -> list[str]:
    """Every function (or method) in src/ over MAX_FUNCTION_LINES, from `def` to its
    last line, as "module.function (lines)"."""
    found = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{_name(path)}.{node.name} ({length})")
    return found


def test_functions_stay_short() -> None:
    """A function over MAX_FUNCTION_LINES is split into named steps, or says in LONGER
    why it must stay whole."""
    offenders = [f for f in _long_functions() if f.split(" (")[0] not in LONGER]
    assert not offenders, (
        f"over {MAX_FUNCTION_LINES} lines: {offenders}: split them into named steps, or "
        "say in LONGER why one must stay whole"
    )


def test_longer_functions_are_still_long() -> None:
    """An entry of LONGER whose function was split or removed is taken out."""
    long = {f.split(" (")[0] for f in _long_functions()}
    assert set(LONGER) <= long, f"no longer over {MAX_FUNCTION_LINES} lines: {set(LONGER) - long}"


def test_no_data_folder_is_named_like_a_module() -> None:
    clashes = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if p.with_suffix("").is_dir()]
    assert not clashes, f"a module and a folder share a name: {clashes}"


# The Markdown files a text may name besides the repository's own: an OpenClaw
# workspace's, which memoracle reads or writes (docs/openclaw.md), and a daily note.
WORKSPACE_FILES = frozenset(
    {
        "AGENTS.md",
        "BOOTSTRAP.md",
        "HEARTBEAT.md",
        "IDENTITY.md",
        "INDEX.md",
        "CRON-HEALTH.md",
        "DREAMS.md",
        "MEMORY.md",
        "SESSION-START.md",
        "SKILL.md",
        "SOUL.md",
        "TOOLS.md",
        "USER.md",
        "YYYY-MM-DD.md",
    }
)
NAMED_FILE = re.compile(r"\b[A-Z][A-Z_-]*\.md\b")
SECTION_SIGN = "\u00a7"  # how a document outside the repository was cited, by section


def test_nothing_points_outside_the_repository() -> None:
    """Every document a text names can be opened from this repository
    (docs/architecture.md): no section citations, and every upper-case Markdown name is
    a file here or one of an OpenClaw workspace's."""
    root = SRC.parents[1]
    texts = [*MODULES, *root.glob("tests/**/*.py"), *root.glob("docs/*.md"), root / "README.md"]
    ours = {
        p.name for p in [*root.glob("*.md"), *root.glob("docs/*.md"), *root.glob("bench/**/*.md")]
    }
    outside = {
        str(p.relative_to(root)): sorted(set(NAMED_FILE.findall(body)) - ours - WORKSPACE_FILES)
        + ([SECTION_SIGN] if SECTION_SIGN in body else [])
        for p in texts
        if (body := p.read_text(encoding="utf-8"))
    }
    assert not {k: v for k, v in outside.items() if v}, "cite docs/ instead"


def test_the_picture_in_the_docs_is_this_order() -> None:
    text = (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    # the units, without the floors' names in the first column
    picture = "\n".join(line[16:] for line in text.split("```\n", 2)[1].splitlines())
    names: list[str] = []
    for unit in ORDER:
        short = unit.removeprefix("memoracle.") if unit != "memoracle" else "memoracle"
        names += list(INSIDE[unit]) if unit in INSIDE else [short]
    at = 0
    for name in names:
        found = re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", picture[at:])
        assert found, f"docs/architecture.md's picture lacks {name} (or has it out of order)"
        at += found.end()
