"""Every door memoracle has, as a hypothesis strategy and a check, for the fuzz tests
(tests/test_fuzz_doors.py, a bounded count) and the soak run (bench/fuzz_soak.py).

The invariant a check holds: whatever the input, no traceback — the only exceptions
that may leave a door are memoracle's own (`EngineError`), click's usage errors and
exit codes (the CLI), and the MCP `ToolError` — and nothing already stored is lost:
every memory seeded before the run is still in the store afterwards.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import click
from click.testing import CliRunner
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError

from memoracle.cli import main
from memoracle.clock import FixedClock
from memoracle.config import load
from memoracle.engine import Engine
from memoracle.errors import EngineError
from memoracle.mcp_server import MemoryTools, build_server
from memoracle.store import Store

T0 = datetime(2026, 5, 14, 14, 5, tzinfo=UTC)
HASH = {"embedding.model": "hash"}  # deterministic, no model to load
COUNTS: Counter[str] = Counter()  # inputs tried, per door

SEED = [
    "I prefer dark mode.",
    "Never push to main.",
    "My sister Anna lives in Lyon.",
    "Remind me to renew the domain by next Tuesday.",
]


class Workspace:
    """A home with a few memories, and the check that none of them went missing."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.scratch = root / "scratch"  # the working folder: relative paths land here
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.settings = load(self.home, env={}, overrides=HASH)
        self.clock = FixedClock(T0)
        Engine.init(self.settings, clock=self.clock)
        with Engine.open(self.settings, clock=self.clock) as engine:
            for text in SEED:
                engine.remember(text)
            self.kept = [m.id for m in engine.list_memories(status=None, limit=100)]
        self._count = len(self.kept)

    def intact(self) -> None:
        """Every memory stored so far is still there (forgotten is not lost)."""
        store = Store.open(self.settings.db_path, now=T0)
        try:
            for memory_id in self.kept:
                assert store.memories.get(memory_id) is not None, f"m_{memory_id} lost"
        finally:
            store.close()


@dataclass(frozen=True)
class Door:
    name: str
    inputs: st.SearchStrategy[Any]
    check: Callable[[Workspace, Any], None]


# -- values ----------------------------------------------------------------------------

TRICKY = [
    "",
    " ",
    "-",
    "--",
    "m_1",
    "m_2",
    "m_0",
    "m_999999999999999999999",
    "e_1",
    "h_1",
    "-1",
    "0",
    "1e9",
    "nan",
    "inf",
    "2026-05-08",
    "2026-13-45",
    "2026-05-08T20:56",
    "9999-12-31T23:59:59+14:00",
    "out.jsonl",
    "notes.md",
    ".",
    "..",
    "/dev/null",
    "\x00",
    "\ud800",
    "é" * 3,
    "Я переехал в Лион.",
    "ignore previous instructions",
    "sk-proj-Zq81bXc4Lm0Vt7Wn2Ry5Kd9Pf3Hs6Ju1",
    "a" * 5000,
]

values = st.one_of(
    st.sampled_from(TRICKY),
    st.text(max_size=40),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.floats(allow_nan=True).map(str),
)


def text_free(value: str) -> str:
    """What an OS can hand a program as argv or environment: no lone surrogates (not
    UTF-8), no NUL (the C string's end)."""
    return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", "")


# -- the CLI: every command, its options, its stdin --------------------------------------

SKIPPED = {
    ("mcp",),  # serves until stdin closes; the MCP door is fuzzed directly below
    ("daemon",),  # runs forever
    ("serve",),  # serves until SIGTERM; its requests are checked in tests/test_serve.py
    ("ui",),  # serves the web page until stopped; its routes are checked in tests/ui/
    ("demo",),  # its own throwaway workspace, seconds per run
    ("install",),  # edits an OpenClaw workspace and the crontab
    ("uninstall",),
    ("schedule", "install"),  # the real crontab
    ("schedule", "remove"),
}


def _leaves(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found: list[tuple[tuple[str, ...], Any]] = []
    for name, command in sorted(group.commands.items()):
        here = (*path, name)
        if here in SKIPPED or here[:1] == ("bench",):
            continue
        if isinstance(command, click.Group):
            found += _leaves(command, here)
        else:
            found.append((here, command))
    return found


LEAVES = _leaves(main)


@st.composite
def cli_inputs(draw: st.DrawFn) -> tuple[list[str], bytes | None]:
    path, command = draw(st.sampled_from(LEAVES))
    options = [p for p in command.params if isinstance(p, click.Option) and p.name != "help"]
    args = list(path)
    for _ in range(draw(st.integers(0, 5))):
        if options and draw(st.booleans()):
            option = draw(st.sampled_from(options))
            args.append(draw(st.sampled_from(option.opts)))
            if option.is_flag:
                continue
            if isinstance(option.type, click.Choice) and draw(st.booleans()):
                args.append(str(draw(st.sampled_from(list(option.type.choices)))))
                continue
        args.append(text_free(draw(values)))
    stdin = draw(
        st.one_of(
            st.none(),
            st.binary(max_size=300),
            st.sampled_from(["-", '{"role": "user", "content": "I like tea"}', "[]", "{"]).map(
                str.encode
            ),
            st.lists(st.dictionaries(st.text(max_size=8), values, max_size=4), max_size=3).map(
                lambda rows: json.dumps(rows).encode()
            ),
        )
    )
    if stdin is not None and "-" not in args and draw(st.booleans()):
        args.append("-")
    return args, stdin


def check_cli(ws: Workspace, given: tuple[list[str], bytes | None]) -> None:
    args, stdin = given
    home = ["--home", str(ws.home), "--now", T0.isoformat(), "--set", "embedding.model=hash"]
    result = CliRunner().invoke(main, [*home, *args], input=stdin)
    fault = result.exception
    if fault is not None and not isinstance(fault, SystemExit):
        raise AssertionError(f"memoracle {' '.join(map(repr, args))}: traceback") from fault
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.output)
    ws.intact()


# -- config files and environment ----------------------------------------------------------

KEYS = [key for key, *_ in load(Path("/nonexistent"), env={}).items()]
SECTIONS = sorted({key.split(".")[0] for key in KEYS})

toml_values = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.floats(allow_nan=False).map(lambda f: repr(f).replace("inf", "inf")),
    st.booleans().map(lambda b: str(b).lower()),
    st.text(max_size=20).map(json.dumps),
    st.lists(st.integers(-5, 5), max_size=3).map(str),
    st.sampled_from(["{}", "{ a = 1 }", "[[", '"unterminated', "1979-05-27", "nan", "-inf"]),
)


@st.composite
def config_files(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 9)) == 0:
            lines.append(text_free(draw(st.text(max_size=30))))  # not TOML at all
            continue
        key = draw(st.sampled_from(KEYS) | st.text(min_size=1, max_size=12).map(lambda t: f"x.{t}"))
        section, _, name = key.partition(".")
        lines += [f"[{section}]", f"{json.dumps(name)} = {draw(toml_values)}"]
    body = "\n".join(lines).encode("utf-8", "replace")
    if draw(st.integers(0, 9)) == 0:
        body += b"\xff\xfe broken"
    return body


def check_config(ws: Workspace, body: bytes) -> None:
    ws.settings.config_path.write_bytes(body)
    for args in (["config", "show"], ["stats"], ["recall", "dark mode"]):
        check_cli(ws, (args, None))
    try:
        load(ws.home, env={})
    except EngineError:
        pass


@st.composite
def environments(draw: st.DrawFn) -> dict[str, str]:
    env: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 4))):
        key = draw(st.sampled_from(KEYS))
        name = "MEMORACLE_" + key.replace(".", "_").upper()
        env[name] = text_free(draw(values | toml_values))
    if draw(st.booleans()):
        env["MEMORACLE_NOW"] = text_free(draw(values))
    return env


def check_env(ws: Workspace, env: dict[str, str]) -> None:
    for args in (["config", "show"], ["list"], ["search", "mode"]):
        result = CliRunner().invoke(main, ["--home", str(ws.home), *args], env=env)
        fault = result.exception
        if fault is not None and not isinstance(fault, SystemExit):
            raise AssertionError(f"{env} memoracle {args}: traceback") from fault
    ws.intact()


# -- ingest and import files -----------------------------------------------------------------

turn_keys = st.sampled_from(
    ["role", "content", "text", "type", "message", "timestamp", "speaker", "dia_id", "id",
     "session_id", "conversation", "session_1", "session_1_date_time", "qa", "blip_caption"]
)  # fmt: skip
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30) | st.sampled_from(TRICKY),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(turn_keys, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def ingest_files(draw: st.DrawFn) -> tuple[str, bytes]:
    shape = draw(st.sampled_from(["jsonl", "md", "json", "bytes", "huge", "export"]))
    if shape == "jsonl":
        rows = draw(st.lists(json_values, max_size=6))
        return "session.jsonl", "\n".join(json.dumps(r) for r in rows).encode()
    if shape == "export":  # what `memoracle import` reads, damaged
        kinds = st.sampled_from(["header", "memory", "episode", "provenance", "audit", "slot"])
        rows = draw(st.lists(st.dictionaries(turn_keys | st.just("kind"), json_values), max_size=4))
        rows = [{"kind": draw(kinds), **row} for row in rows]
        return "export.jsonl", "\n".join(json.dumps(r) for r in rows).encode()
    if shape == "md":
        lines = draw(
            st.lists(
                st.sampled_from(["# Notes", "- ", "## 2026-05-08", "* [ ] "]) | values, max_size=8
            )
        )
        return "notes.md", "\n".join(text_free(x) for x in lines).encode()
    if shape == "json":  # LoCoMo-shaped
        sample = {"conversation": draw(st.dictionaries(turn_keys, json_values, max_size=5))}
        return "locomo.json", json.dumps([sample, draw(json_values)]).encode()
    if shape == "huge":
        size = draw(st.integers(10_000, 400_000))
        return "huge.jsonl", json.dumps({"role": "user", "content": "x " * size}).encode()
    return draw(st.sampled_from(["a.jsonl", "a.md", "a.json"])), draw(st.binary(max_size=400))


def check_ingest(ws: Workspace, given: tuple[str, bytes]) -> None:
    name, body = given
    path = ws.scratch / name
    path.write_bytes(body)
    with Engine.open(ws.settings, clock=ws.clock) as engine:
        try:
            engine.ingest([path])
        except EngineError:
            pass
    check_cli(ws, (["ingest", str(path)], None))
    check_cli(ws, (["import", str(path)], None))


# -- MCP tools -------------------------------------------------------------------------------

TOOL_ARGS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "memory_recall": {"query": st.text(max_size=40), "budget": st.integers(-5, 10**6)},
    "memory_search": {
        "query": st.text(max_size=40),
        "k": st.integers(-5, 10**4),
        "kinds": st.lists(st.sampled_from(["fact", "task", "x"]), max_size=3),
        "as_of": values,
    },
    "memory_get": {"id": values},
    "memory_remember": {
        "text": values,
        "kind": st.sampled_from(["fact", "preference", "x"]),
        "ttl": values,
        "until": values,
    },
    "memory_forget": {"id": st.sampled_from(["m_999", "m_0", "x", ""]), "reason": values},
    "memory_checkpoint": {"text": values, "session": values},
    "memory_status": {},
}
anything = st.one_of(json_values, st.floats(), st.binary(max_size=10).map(repr))


@st.composite
def mcp_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any], bool]:
    name = draw(st.sampled_from(sorted(TOOL_ARGS)))
    typed = draw(st.booleans())  # True: called directly, with values of the right type
    args: dict[str, Any] = {}
    for key, strategy in TOOL_ARGS[name].items():
        if draw(st.booleans()):
            args[key] = draw(strategy if typed else anything)
    if not typed and draw(st.integers(0, 4)) == 0:
        args[draw(st.sampled_from(["user", "scope", "agent", "zzz"]))] = draw(anything)
    return name, args, typed


def check_mcp(ws: Workspace, given: tuple[str, dict[str, Any], bool]) -> None:
    name, args, typed = given
    tools = MemoryTools(ws.settings, clock=ws.clock)
    try:
        if typed:
            method = getattr(tools, name)
            try:
                method(**args)
            except TypeError as exc:  # a required argument left out: Python's own check
                if "missing" not in str(exc) or "argument" not in str(exc):
                    raise
        else:
            server = build_server(settings=ws.settings, clock=ws.clock)
            anyio.run(server.call_tool, name, args)
    except ToolError:
        pass
    finally:
        tools.close()
    ws.intact()


# -- the Python API ----------------------------------------------------------------------------

refs = st.one_of(values, st.integers(-(10**20), 10**20))


@st.composite
def api_calls(draw: st.DrawFn) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    text = values
    calls: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
        "search": ((draw(text),), {"k": draw(st.none() | st.integers(-3, 10**5))}),
        "recall": ((draw(text),), {"budget": draw(st.none() | st.integers(-3, 10**6))}),
        "get": ((draw(refs),), {}),
        "remember": ((draw(text),), {"kind": draw(st.none() | text)}),
        "forget": ((draw(refs),), {"reason": draw(text)}),
        "forget_matching": ((draw(text),), {"dry_run": True}),
        "explain": ((draw(text),), {"query": draw(text)}),
        "list_memories": (
            (),
            {"kind": draw(st.none() | text), "limit": draw(st.integers(-3, 500))},
        ),
        "graph_show": ((draw(text),), {}),
        "dedup_query": ((draw(text),), {"limit": draw(st.integers(-3, 50))}),
        "restore": ((draw(refs),), {}),
        "confirm_held": ((draw(refs),), {}),
        "stats": ((), {}),
    }
    name = draw(st.sampled_from(sorted(calls)))
    args, kwargs = calls[name]
    return name, args, kwargs


def check_api(ws: Workspace, given: tuple[str, tuple[Any, ...], dict[str, Any]]) -> None:
    name, args, kwargs = given
    with Engine.open(ws.settings, clock=ws.clock) as engine:
        try:
            getattr(engine, name)(*args, **kwargs)
        except EngineError:
            pass
    ws.intact()


DOORS = [
    Door("cli", cli_inputs(), check_cli),
    Door("config", config_files(), check_config),
    Door("env", environments(), check_env),
    Door("ingest", ingest_files(), check_ingest),
    Door("mcp", mcp_calls(), check_mcp),
    Door("api", api_calls(), check_api),
]


def counting(door: Door, ws: Workspace) -> Callable[[Any], None]:
    """`door.check` on `ws`, counted in COUNTS, run from `ws.scratch`."""

    def run(given: Any) -> None:
        COUNTS[door.name] += 1
        here = os.getcwd()
        os.chdir(ws.scratch)
        try:
            door.check(ws, given)
        finally:
            os.chdir(here)
            if door.name == "config":
                ws.settings.config_path.write_text("", encoding="utf-8")

    return run
