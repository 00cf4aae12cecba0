"""The OpenClaw plugin's default path end to end (integrations/openclaw/plugin/test/
warm.test.js): it starts `memoracle serve` from this checkout, captures and recalls
through it, starts it again after a SIGKILL, and falls back to the CLI with one warning
when the socket cannot be used; the gateway's memory tools answer in each session's scope,
and heartbeat checkpoints save the live session once per share of the context. No server
it started outlives the suite."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

import nodetests

pytestmark = pytest.mark.slow  # Node, and memoracle processes started by the plugin

NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_the_plugin_through_the_warm_server(tmp_path: Path) -> None:
    assert NODE is not None
    warm = nodetests.PLUGIN / "test" / "warm.test.js"
    run = nodetests.run(NODE, [warm], nodetests.e2e_env(tmp_path))
    assert run.returncode == 0, nodetests.failure(run)
    assert (nodetests.count(run, "pass"), nodetests.count(run, "fail")) == (7, 0)
    assert _left_running(tmp_path) == []


def _left_running(folder: Path) -> list[str]:
    """The command lines of processes still running from `folder` (a stopped server is
    given two seconds to go)."""
    left: list[str] = []
    for _ in range(20):
        left = []
        for proc in Path("/proc").glob("[0-9]*"):
            try:
                line = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(folder) in line:
                left.append(line)
        if not left:
            break
        time.sleep(0.1)
    return left
