"""The OpenClaw plugin's default path end to end (integrations/openclaw/plugin/test/
warm.test.js): it starts `memoracle serve` from this checkout, captures and recalls
through it, starts it again after a SIGKILL, and falls back to the CLI with one warning
when the socket cannot be used; the gateway's memory tools answer in each session's scope,
and heartbeat checkpoints save the live session once per share of the context."""

from __future__ import annotations

import shutil
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
