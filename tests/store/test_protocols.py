"""The storage seam (`memoracle.store.protocols`) lists exactly what is used of a
backend's repositories from outside store/, both ways: every method a module above
store/ calls on `store.memories`, `store.index`, … is in its repository's protocol, and
every method a protocol lists is called from above store/.

mypy holds the first direction for the callers typed against the protocols (the engine's
state, recall, the redaction's database pass): a method missing from a protocol is a type
error there. To hold both directions for every module, this test reads each module
above store/ and collects what it calls: on `<anything>.store.<repo>` or
`<anything>._store.<repo>` (the engine's store is private), on a name bound to one
(`index = st._store.index`), and on a parameter annotated with a repository protocol
(`index: SearchIndex`)."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from memoracle.store import Store, protocols
from memoracle.store.protocols import StoreBackend

SRC = Path(__file__).resolve().parents[2] / "src" / "memoracle"
REPOSITORIES = {
    "memories": protocols.MemoryRepository,
    "episodes": protocols.EpisodeRepository,
    "audit": protocols.AuditRepository,
    "runs": protocols.RunRepository,
    "index": protocols.SearchIndex,
    "archive": protocols.ArchiveRepository,
    "graph": protocols.GraphRepository,
    "held": protocols.HeldRepository,
    "scrub": protocols.ScrubRepository,
    "browse": protocols.BrowseRepository,
}
STORE_NAMES = ("store", "_store")  # the engine's is private
BY_PROTOCOL = {p.__name__: repo for repo, p in REPOSITORIES.items()}


def members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def _repo_of(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The repository `node` stands for: `<x>.store.<repo>`, `store.<repo>`, or a name
    bound to one."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr in REPOSITORIES:
        owner = node.value
        if (isinstance(owner, ast.Name) and owner.id in STORE_NAMES) or (
            isinstance(owner, ast.Attribute) and owner.attr in STORE_NAMES
        ):
            return node.attr
    return None


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _walk(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope`, without the functions defined in it (their own scopes)."""
    for child in ast.iter_child_nodes(scope):
        if not isinstance(child, FUNCTIONS):
            yield child
            yield from _walk(child)


def _functions(scope: ast.AST) -> Iterator[ast.AST]:
    """The functions defined in `scope` (in its classes too), not those inside them."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, FUNCTIONS):
            yield child
        else:
            yield from _functions(child)


def _bindings(scope: ast.AST) -> dict[str, str]:
    """Names bound to a repository in `scope`: assignments (tuples too) and parameters
    annotated with a repository protocol."""
    bound: dict[str, str] = {}
    params = [*scope.args.args, *scope.args.kwonlyargs] if isinstance(scope, FUNCTIONS) else []
    for node in [*params, *_walk(scope)]:
        if isinstance(node, ast.arg) and node.annotation is not None:
            name = ast.unparse(node.annotation).strip("'\"")
            if name in BY_PROTOCOL:
                bound[node.arg] = BY_PROTOCOL[name]
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                pairs: list[tuple[ast.expr, ast.expr]] = [(target, node.value)]
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs = list(zip(target.elts, node.value.elts, strict=False))
                for name, value in pairs:
                    repo = _repo_of(value, {})
                    if isinstance(name, ast.Name) and repo is not None:
                        bound[name.id] = repo
    return bound


def calls_in(source: str) -> set[tuple[str, str]]:
    """(repository, method) pairs a module's source uses."""
    found: set[tuple[str, str]] = set()

    def scan(scope: ast.AST, outer: dict[str, str]) -> None:
        bound = {**outer, **_bindings(scope)}  # a nested function sees its outer names
        for node in _walk(scope):
            if isinstance(node, ast.Attribute):
                repo = _repo_of(node.value, bound)
                if repo is not None and not node.attr.startswith("__"):
                    found.add((repo, node.attr))
        for function in _functions(scope):
            scan(function, bound)

    scan(ast.parse(source), {})
    return found


@cache
def used_above_store() -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        if "store" not in path.relative_to(SRC).parts:
            found |= calls_in(path.read_text(encoding="utf-8"))
    return frozenset(found)


def test_the_scan_sees_each_way_of_reaching_a_repository() -> None:
    source = """
def f(st, store, index: SearchIndex):
    st.store.memories.get(1)
    store.episodes.count(view)
    audit = st.store.audit
    audit.entries(limit=3)
    runs, held = st.store.runs, st.store.held
    runs.last("x"), held.same("t")
    index.fresh(view)
"""
    assert calls_in(source) == {
        ("memories", "get"),
        ("episodes", "count"),
        ("audit", "entries"),
        ("runs", "last"),
        ("held", "same"),
        ("index", "fresh"),
    }


@pytest.mark.parametrize("repo", sorted(REPOSITORIES))
def test_every_method_used_above_store_is_in_its_protocol(repo: str) -> None:
    used = {method for r, method in used_above_store() if r == repo}
    missing = used - members(REPOSITORIES[repo])
    assert not missing, f"store.{repo}: used above store/ but not in its protocol: {missing}"


@pytest.mark.parametrize("repo", sorted(REPOSITORIES))
def test_every_method_a_protocol_lists_is_used_above_store(repo: str) -> None:
    used = {method for r, method in used_above_store() if r == repo}
    unused = members(REPOSITORIES[repo]) - used
    assert not unused, (
        f"{REPOSITORIES[repo].__name__} lists what nothing above store/ uses: {unused}"
    )


@pytest.mark.parametrize("repo", sorted(REPOSITORIES))
def test_the_sqlite_repositories_declare_each_method_as_the_protocol_does(
    repo: str, tmp_path: Path
) -> None:
    """The protocols copy the SQLite signatures (mypy checks they are compatible; this,
    that they are the same, so a protocol never drifts from what it describes)."""
    from datetime import UTC, datetime

    store = Store.open(tmp_path / "m.db", now=datetime(2026, 1, 1, tzinfo=UTC))
    try:
        concrete = type(getattr(store, repo))
        for name in members(REPOSITORIES[repo]):
            declared = inspect.signature(getattr(REPOSITORIES[repo], name))
            assert inspect.signature(getattr(concrete, name)) == declared, f"{repo}.{name}"
    finally:
        store.close()


def test_the_backend_protocol_is_what_the_sqlite_store_has(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    store = Store.open(tmp_path / "m.db", now=datetime(2026, 1, 1, tzinfo=UTC))
    try:
        for name in members(StoreBackend):
            assert hasattr(store, name), name
        for repo, protocol in REPOSITORIES.items():
            for name in members(protocol):
                assert callable(getattr(getattr(store, repo), name)), f"{repo}.{name}"
    finally:
        store.close()
