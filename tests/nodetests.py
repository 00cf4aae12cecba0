"""The OpenClaw plugin's Node tests, run from pytest: one launcher for the suites that
run them (tests/test_openclaw_integrations.py and tests/test_serve_plugin.py on the
system's Node, tests/gateway on the gateway's Node 24).

`run` starts `node --test` in the plugin folder with the files given; `e2e_env` is the
environment the end-to-end files (test/e2e.test.js, test/warm.test.js) need to run this
checkout's memoracle instead of skipping; `count` reads a total from either reporter
(TAP's `# pass 2` on Node 20, the spec reporter's `ℹ pass 2` on Node 24)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "integrations" / "openclaw" / "plugin"


def plugin_test_files() -> list[Path]:
    """Every Node test file of the plugin."""
    return sorted((PLUGIN / "test").glob("*.test.js"))


def base_env() -> dict[str, str]:
    """This process's environment without the end-to-end switches: the end-to-end
    files skip (they run from their own test, with `e2e_env`)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMORACLE_E2E_")}


def e2e_env(tmp_path: Path) -> dict[str, str]:
    """The environment that makes the end-to-end files run this checkout's memoracle
    (`python -m memoracle.cli`, its src first on the path), scratch under `tmp_path`,
    with the hash embedding (no model to load: the tests stay fast). No other
    MEMORACLE_ setting of the caller leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORACLE_")}
    path = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    env.update(
        PYTHONPATH=path,
        MEMORACLE_E2E_COMMAND=sys.executable,
        MEMORACLE_E2E_ARGS=json.dumps(["-m", "memoracle.cli"]),
        MEMORACLE_E2E_TMP=str(tmp_path),
        MEMORACLE_EMBEDDING_MODEL="hash",
    )
    return env


def run(
    node: str | Path, files: Sequence[Path], env: dict[str, str], *, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`node --test FILES` in the plugin folder, its output captured."""
    return subprocess.run(
        [str(node), "--test", *map(str, files)],
        cwd=PLUGIN,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def count(result: subprocess.CompletedProcess[str], what: str) -> int:
    """The run's total of `what` (pass, fail, skipped, …), from either reporter; -1 when
    the output has none."""
    found = re.findall(rf"^(?:#|ℹ) {re.escape(what)} (\d+)$", result.stdout, re.MULTILINE)
    return int(found[-1]) if found else -1


def failure(result: subprocess.CompletedProcess[str]) -> str:
    """The end of what a failed run printed, for an assertion's message."""
    return result.stdout[-6000:] + result.stderr[-2000:]
