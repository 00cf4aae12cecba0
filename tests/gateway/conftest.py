"""The gateway suite's session: the pinned toolchain, one OpenClaw set up the way
docs/openclaw.md tells a new user to, the fake model, and one running gateway.

Every test here is marked `slow` (so `make test` leaves them out) and `gateway` (so
`pytest -m gateway` runs only them); `make check`, which CI runs, includes them. They
skip only when the npm registry cannot be reached; any other problem fails them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fake_model import CONTEXT_WINDOW, MODEL_ID, FakeModel
from harness import TOKEN, OpenClaw, first_json, memoracle_shim, stop_servers
from toolchain import RegistryUnreachable, Toolchain, ToolchainError, ensure

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = ROOT / "integrations" / "openclaw" / "plugin"
SKILL = ROOT / "integrations" / "openclaw" / "skill"
RESULTS: dict[str, Any] = {}  # what the session measured, printed at its end


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "gateway: against a real OpenClaw gateway (tests/gateway)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.gateway)


def pytest_sessionstart(session: pytest.Session) -> None:
    RESULTS["started"] = time.monotonic()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if "gateway_ready" not in RESULTS:
        return
    write = terminalreporter.write_line
    write("")
    write("OpenClaw gateway suite")
    for line in RESULTS.get("lines", []):
        write(f"  {line}")
    write(f"  whole gateway suite: {time.monotonic() - RESULTS['gateway_ready'][0]:.0f} s")


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    try:
        return ensure()
    except RegistryUnreachable as exc:
        pytest.skip(f"the npm registry cannot be reached, so no OpenClaw to test: {exc}")
    except ToolchainError as exc:
        pytest.fail(f"the OpenClaw toolchain could not be installed: {exc}")


def provider_config(model: FakeModel) -> dict[str, Any]:
    """A custom provider over the fake model: OpenAI chat completions on loopback."""
    return {
        "baseUrl": model.base_url,
        "apiKey": "sk-fake",
        "api": "openai-completions",
        "models": [
            {
                "id": MODEL_ID,
                "name": "Fake model",
                "reasoning": False,
                "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": CONTEXT_WINDOW,
                "maxTokens": 1024,
            }
        ],
    }


def new_openclaw(chain: Toolchain, root: Path, model: FakeModel | None) -> OpenClaw:
    """`openclaw setup --baseline` in a fresh state folder: config, workspace, sessions;
    with a model, the fake one as the default and the gateway on a free port."""
    oc = OpenClaw(chain, root, memoracle_shim(root / "bin"))
    oc.run("setup", "--baseline")
    if model is not None:
        cfg = oc.config()
        cfg["models"] = {"mode": "merge", "providers": {"fake": provider_config(model)}}
        cfg["agents"]["defaults"]["model"] = {"primary": f"fake/{MODEL_ID}"}
        cfg["gateway"] = {
            **cfg.get("gateway", {}),
            "port": oc.port,
            "auth": {"mode": "token", "token": TOKEN},
        }
        oc.write_config(cfg)
    return oc


@dataclass
class World:
    """The session's gateway with memoracle installed as docs/openclaw.md says."""

    oc: OpenClaw
    model: FakeModel
    mhome: Path
    install_output: str
    snippets: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def plugin_entry(oc: OpenClaw, mhome: Path, **extra: Any) -> dict[str, Any]:
    return {"command": str(oc.root / "bin" / "memoracle"), "home": str(mhome), **extra}


@pytest.fixture(scope="session")
def world(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    started = time.monotonic()
    model = FakeModel().start()
    root = tmp_path_factory.mktemp("openclaw")
    oc = new_openclaw(toolchain, root, model)
    try:
        mhome = root / "memoracle-home"
        install = oc.memoracle(
            "--home", str(mhome), "install", "--openclaw-workspace", str(oc.workspace), stdin=""
        )
        snippets = first_json(
            oc.memoracle("--home", str(mhome), "openclaw", "snippets", "--json").stdout
        )
        # The three snippets, applied with OpenClaw's own CLI (its validation runs).
        agents_md = oc.workspace / "AGENTS.md"
        agents_md.write_text(agents_md.read_text() + "\n" + snippets["agents_md"])
        oc.set_config(snippets["memory_flush"]["key"], snippets["memory_flush"]["value"])
        oc.run("mcp", "set", "memoracle", __import__("json").dumps(snippets["mcp"]["server"]))
        # The plugin and the skill, as the docs say.
        oc.run("plugins", "install", "-l", "--force", "--accept-capabilities", str(PLUGIN))
        oc.set_config("plugins.slots.memory", "memoracle")
        oc.run("plugins", "disable", "memory-core")  # else it loads as the dreaming sidecar
        oc.set_config("plugins.entries.memoracle.hooks.allowConversationAccess", True)
        oc.set_config("plugins.entries.memoracle.config", plugin_entry(oc, mhome))
        oc.run("skills", "install", str(SKILL), "--as", "memoracle")
        oc.start()
        RESULTS["gateway_ready"] = (started, time.monotonic())
        RESULTS.setdefault("lines", []).append(
            f"set up (OpenClaw setup, memoracle install, plugin, skill, gateway start): "
            f"{time.monotonic() - started:.0f} s"
        )
        yield World(oc, model, mhome, install.stdout, snippets)
    finally:
        oc.stop()
        model.stop()
        stop_servers(root / "memoracle-home")
