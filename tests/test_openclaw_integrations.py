"""The OpenClaw integrations in integrations/openclaw/: the skill says only what the CLI
does, the plugin's manifest is what OpenClaw reads, and the plugin works, on its own
(Node tests with fakes) and end to end with the real memoracle (CLI and MCP over HTTP)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

import nodetests
from memoracle.cli import main

pytestmark = pytest.mark.slow  # subprocesses and real servers: `make check` runs it

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "integrations" / "openclaw" / "skill" / "SKILL.md"
PLUGIN = ROOT / "integrations" / "openclaw" / "plugin"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

# What the skill must teach: the loop of a turn, lookups, requests, compaction, upkeep.
TAUGHT = {"recall", "search", "get", "remember", "forget", "checkpoint", "health"}


def _skill() -> tuple[dict[str, Any], str]:
    text = SKILL.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    front = yaml.safe_load(head)
    assert isinstance(front, dict)
    return front, body


def _command_lines(body: str) -> list[list[str]]:
    """Every `memoracle …` the skill shows, in fenced blocks or inline code, as words."""
    fenced = re.findall(r"```[a-z]*\n(.*?)```", body, flags=re.S)
    lines = [line for block in fenced for line in block.splitlines()]
    lines += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", body, flags=re.S))
    return [line.split() for line in lines if line.strip().startswith("memoracle ")]


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def test_skill_frontmatter_is_what_openclaw_reads() -> None:
    front, body = _skill()
    assert front["name"] == "memoracle"
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{0,63}", front["name"])
    description = front["description"]
    assert isinstance(description, str) and 0 < len(description) <= 1024
    # OpenClaw flattens `metadata` to JSON and gates the skill on the binaries it requires.
    metadata = json.loads(json.dumps(front["metadata"]))
    assert metadata["openclaw"]["requires"]["bins"] == ["memoracle"]
    assert body.strip()


def test_skill_names_only_commands_and_flags_the_cli_has() -> None:
    _, body = _skill()
    shown = _command_lines(body)
    assert TAUGHT <= {words[1] for words in shown}
    global_options = _options(main)
    for words in shown:
        name = words[1]
        command = main.commands.get(name)
        assert command is not None, f"SKILL.md names `memoracle {name}`, which the CLI lacks"
        flags = {w.split("=", 1)[0] for w in words[2:] if w.startswith("--")}
        unknown = flags - _options(command) - global_options
        assert not unknown, f"`memoracle {name}` has no {sorted(unknown)}"


def test_plugin_manifest_and_package_declare_a_memory_plugin() -> None:
    manifest = json.loads((PLUGIN / "openclaw.plugin.json").read_text(encoding="utf-8"))
    assert manifest["id"] == "memoracle"
    assert manifest["kind"] == "memory"
    assert manifest["activation"]["onStartup"] is True
    schema = manifest["configSchema"]
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert set(manifest["uiHints"]) <= set(schema["properties"])

    package = json.loads((PLUGIN / "package.json").read_text(encoding="utf-8"))
    assert package["type"] == "module"
    entries = package["openclaw"]["extensions"]
    assert entries and all((PLUGIN / entry).is_file() for entry in entries)
    entry = (PLUGIN / entries[0]).read_text(encoding="utf-8")
    assert 'id: "memoracle"' in entry and 'kind: "memory"' in entry

    readme = (PLUGIN / "README.md").read_text(encoding="utf-8")
    undocumented = [key for key in schema["properties"] if f"`{key}`" not in readme]
    assert not undocumented


@needs_node
def test_plugin_node_tests_pass() -> None:
    assert NODE is not None
    files = nodetests.plugin_test_files()
    assert files
    run = nodetests.run(NODE, files, nodetests.base_env(), timeout=180)
    assert run.returncode == 0, nodetests.failure(run)
    assert nodetests.count(run, "fail") == 0


@needs_node
def test_plugin_end_to_end_with_the_real_cli_and_mcp_server(tmp_path: Path) -> None:
    """agent_end captures "I moved to Lyon last month. Never deploy on Fridays.", a retry
    changes nothing, and before_prompt_build for "Where do I live?" brings Lyon back:
    through `memoracle capture`/`recall` and through `memoracle mcp --transport http`."""
    assert NODE is not None
    e2e = nodetests.PLUGIN / "test" / "e2e.test.js"
    run = nodetests.run(NODE, [e2e], nodetests.e2e_env(tmp_path), timeout=180)
    assert run.returncode == 0, nodetests.failure(run)
    assert (nodetests.count(run, "pass"), nodetests.count(run, "fail")) == (2, 0)
