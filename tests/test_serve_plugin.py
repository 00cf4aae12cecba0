"""The OpenClaw plugin's default path end to end (integrations/openclaw/plugin/test/
warm.test.js): it starts `memoracle serve` from this checkout, captures and recalls
through it, starts it again after a SIGKILL, and falls back to the CLI with one warning
when the socket cannot be used."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Node, and memoracle processes started by the plugin

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "integrations" / "openclaw" / "plugin"
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_the_plugin_through_the_warm_server(tmp_path: Path) -> None:
    assert NODE is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORACLE_")}
    path = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    env.update(
        PYTHONPATH=path,
        MEMORACLE_E2E_COMMAND=sys.executable,
        MEMORACLE_E2E_ARGS=json.dumps(["-m", "memoracle.cli"]),
        MEMORACLE_E2E_TMP=str(tmp_path),
        MEMORACLE_EMBEDDING_MODEL="hash",  # no model to load: the test stays fast
    )
    run = subprocess.run(
        [NODE, "--test", "test/warm.test.js"],
        cwd=PLUGIN,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "# pass 4" in run.stdout and "# fail 0" in run.stdout
