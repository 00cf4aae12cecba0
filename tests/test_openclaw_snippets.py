"""The OpenClaw door: the snippets to paste, what counts as a workspace, and which
transcript is an agent's live session."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from memoracle.capture.noise import is_noise
from memoracle.config import Settings, load
from memoracle.errors import InvalidInput, NotFound
from memoracle.openclaw import workspace as openclaw

EXE = "/opt/memoracle env/bin/memoracle"  # a space: every command must quote it


@pytest.fixture
def spaced(tmp_path: Path) -> Settings:
    return load(tmp_path / "agent memory", env={})


def test_snippets_name_the_home_and_the_full_program(spaced: Settings) -> None:
    s = openclaw.snippets(spaced, executable=EXE, env={})
    home = str(spaced.home)
    assert shlex.split(s.command) == [EXE, "--home", home]
    assert s.mcp_entry() == {"command": EXE, "args": ["--home", home, "mcp"]}
    assert s.agents_md.startswith(openclaw.AGENTS_BEGIN)
    assert s.agents_md.rstrip().endswith(openclaw.AGENTS_END)
    for verb in ("search", "remember", "forget", "checkpoint --text -"):
        assert f"{s.command} {verb}" in s.agents_md
    assert f"{s.command} checkpoint --text - <<'EOF'" in s.flush_prompt
    assert "NO_REPLY" in s.flush_prompt


def test_the_flush_prompt_can_capture_the_agents_transcript(spaced: Settings) -> None:
    s = openclaw.snippets(spaced, executable=EXE, openclaw_agent="main", env={})
    command = s.flush_prompt.splitlines()[1]
    assert shlex.split(command)[3:6] == ["checkpoint", "--openclaw-agent", "main"]


def test_capture_drops_the_flush_prompt_as_noise_however_openclaw_sends_it(
    spaced: Settings,
) -> None:
    prompt = openclaw.snippets(spaced, executable=EXE, env={}).flush_prompt
    assert is_noise(prompt) == "flush_prompt"
    # OpenClaw puts today's date in and appends the time; newer releases add hints
    dated = prompt.replace("YYYY-MM-DD", "2026-12-01")
    sent = f"{dated}\nCurrent time: Tuesday, December 1st, 2026 — 10:04 (Europe/Paris)"
    assert is_noise(sent) == "flush_prompt"
    hints = (
        " Treat workspace bootstrap/reference files such as MEMORY.md, SOUL.md and AGENTS.md"
        " as read-only during this flush; never overwrite, replace, or edit them."
    )
    assert is_noise(sent + hints) == "flush_prompt"
    assert is_noise(openclaw.snippets(spaced, env={}).agents_md) is None


def test_json_shapes_are_valid_json(spaced: Settings, tmp_path: Path) -> None:
    env = {"OPENCLAW_STATE_DIR": str(tmp_path / "state")}
    s = openclaw.snippets(spaced, executable=EXE, env=env)
    data = json.loads(json.dumps(openclaw.as_json(s)))
    assert data["home"] == str(spaced.home)
    assert data["openclaw_config"] == str(tmp_path / "state" / "openclaw.json")
    assert data["memory_flush"] == {
        "key": "agents.defaults.compaction.memoryFlush",
        "value": {"enabled": True},
        "prompt": s.flush_prompt,
    }
    assert data["mcp_tools"][0] == "memoracle__memory_search"
    assert data["mcp"]["key"] == "mcp.servers.memoracle"
    assert data["mcp"]["server"]["args"] == ["--home", str(spaced.home), "mcp"]

    text = openclaw.render_text(s)
    blocks = [b for b in text.split("\n\n") if b.startswith("{")]
    parsed = [json.loads(b) for b in blocks]
    assert parsed[0]["agents"]["defaults"]["compaction"]["memoryFlush"] == {"enabled": True}
    # The prompt is shown as comment lines, the text the plugin's flush plan sends.
    shown = [line[5:] for line in text.splitlines() if line.startswith("#    ")]
    assert s.flush_prompt in "\n".join(shown)
    assert parsed[1] == {"mcp": {"servers": {"memoracle": s.mcp_entry()}}}
    set_line = next(line for line in text.splitlines() if "openclaw mcp set" in line)
    words = shlex.split(set_line.split("run: ", 1)[1].rstrip(")"))
    assert words[:4] == ["openclaw", "mcp", "set", "memoracle"]
    assert json.loads(words[4]) == s.mcp_entry()
    assert s.agents_md in text


# OpenClaw 2026.9.6's schema of agents.defaults.compaction.memoryFlush: any other key is
# refused at startup ("Unrecognized key").
MEMORY_FLUSH_KEYS_2026_9_6 = {
    "enabled",
    "model",
    "softThresholdTokens",
    "forceFlushTranscriptBytes",
}


def test_no_snippet_sets_a_memory_flush_key_the_gateway_refuses(spaced: Settings) -> None:
    s = openclaw.snippets(spaced, executable=EXE, env={})
    blocks = [b for b in openclaw.render_text(s).split("\n\n") if b.startswith("{")]
    flush = json.loads(blocks[0])["agents"]["defaults"]["compaction"]["memoryFlush"]
    assert set(flush) <= MEMORY_FLUSH_KEYS_2026_9_6
    assert set(openclaw.as_json(s)["memory_flush"]["value"]) <= MEMORY_FLUSH_KEYS_2026_9_6


def test_the_agents_block_names_the_tools_as_the_gateway_exposes_them(spaced: Settings) -> None:
    block = openclaw.snippets(spaced, env={}).agents_md
    for tool in ("memory_search", "memory_remember", "memory_forget", "memory_checkpoint"):
        assert f"memoracle__{tool}" in block
    # A bare memory_search is the gateway's tool: memoracle's only with its plugin in the slot.
    bare = block.replace("memoracle__memory_search", "")
    assert "`memory_search` and `memory_get` without the `memoracle__` prefix" in bare
    assert "memoracle's too when its plugin owns OpenClaw's memory slot" in bare


def test_the_agents_block_has_the_agent_read_the_session_start_snapshot(spaced: Settings) -> None:
    block = openclaw.snippets(spaced, env={}).agents_md
    assert "At a session's start, read SESSION-START.md" in block
    assert "<memoracle-session-start>" in block


def test_state_dir_and_config_follow_openclaws_environment(tmp_path: Path) -> None:
    assert openclaw.state_dir({"OPENCLAW_STATE_DIR": "/srv/oc"}) == Path("/srv/oc")
    assert openclaw.state_dir({"OPENCLAW_HOME": "/home/bot"}) == Path("/home/bot/.openclaw")
    assert openclaw.state_dir({}) == Path.home() / ".openclaw"
    assert openclaw.config_path({"OPENCLAW_CONFIG_PATH": "/etc/oc.json"}) == Path("/etc/oc.json")
    assert openclaw.config_path({"OPENCLAW_STATE_DIR": "/srv/oc"}) == Path("/srv/oc/openclaw.json")


def test_check_workspace_lists_openclaws_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "SOUL.md").write_text("x")
    (ws / "MEMORY.md").write_text("x")
    check = openclaw.check_workspace(ws)
    assert check.found == ("SOUL.md", "MEMORY.md", "memory")
    assert check.is_workspace and check.problem is None
    notes = tmp_path / "notes"
    (notes / "memory").mkdir(parents=True)
    (notes / "MEMORY.md").write_text("x")
    assert not openclaw.check_workspace(notes).is_workspace
    assert "AGENTS.md" in (openclaw.check_workspace(notes).problem or "")
    missing = openclaw.check_workspace(tmp_path / "nope")
    assert missing.found == () and "is not a folder" in (missing.problem or "")


def _transcript(path: Path, mtime: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"type": "session", "id": "x"}\n')
    os.utime(path, (mtime, mtime))
    return path


def test_session_file_is_the_newest_live_transcript(tmp_path: Path) -> None:
    sessions = tmp_path / "state" / "agents" / "main" / "sessions"
    _transcript(sessions / "old.jsonl", 1_000)
    live = _transcript(sessions / "live.jsonl", 2_000)
    _transcript(sessions / "live.jsonl.reset.2026-12-01T10-00-00Z", 3_000)
    _transcript(sessions / "gone.jsonl.deleted.1764583200000", 3_000)
    (sessions / "sessions.json").write_text("{}")
    assert openclaw.session_file("main", state=tmp_path / "state") == live
    env = {"OPENCLAW_STATE_DIR": str(tmp_path / "state")}
    assert openclaw.session_file(" main ", env=env) == live


def test_the_agent_store_counts_when_it_was_written_last(tmp_path: Path) -> None:
    root = tmp_path / "agents" / "main"
    _transcript(root / "sessions" / "old.jsonl", 1_000)
    store = _transcript(root / "agent" / "openclaw-agent.sqlite", 1_500)
    _transcript(root / "agent" / "openclaw-agent.sqlite-wal", 2_000)
    assert openclaw.session_file("main", state=tmp_path) == store


def test_no_session_names_the_folder(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match=rf"No OpenClaw agent 'work': {tmp_path}/agents/work"):
        openclaw.session_file("work", state=tmp_path)
    sessions = tmp_path / "agents" / "main" / "sessions"
    _transcript(sessions / "a.jsonl.reset.1", 1_000)
    with pytest.raises(NotFound, match=rf"no \*\.jsonl in {sessions}.*--session-file"):
        openclaw.session_file("main", state=tmp_path)
    with pytest.raises(InvalidInput, match="Not an OpenClaw agent id"):
        openclaw.session_file("../main", state=tmp_path)


PLUGIN_FLUSH = Path(__file__).resolve().parents[1] / "integrations/openclaw/plugin/src/flush.js"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_the_plugins_flush_plan_sends_the_snippets_prompt(spaced: Settings) -> None:
    """The plugin's flush plan (OpenClaw 2026.9+) and the printed prompt are one text,
    so capture recognises either as the flush prompt."""
    s = openclaw.snippets(spaced, executable=EXE, env={})
    script = (
        f"import {{ flushPrompt }} from {json.dumps(PLUGIN_FLUSH.as_uri())};"
        f"process.stdout.write(flushPrompt({json.dumps(shlex.split(s.command))}"
        ".concat(['checkpoint'])));"
    )
    node = shutil.which("node")
    assert node is not None
    run = subprocess.run(
        [node, "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert run.stdout == s.flush_prompt


def test_the_snippets_offer_memory_cores_extra_paths_for_the_rendered_files(
    tmp_path: Path,
) -> None:
    settings = load(
        tmp_path / "home", env={}, overrides={"workspace.files_dir": str(tmp_path / "ws")}
    )
    s = openclaw.snippets(settings, executable=EXE, env={})
    rendered = [str(tmp_path / "ws" / name) for name in ("MEMORY.md", "memory", "reference")]

    assert list(s.extra_paths) == rendered
    body = openclaw.as_json(s)["memory_search"]
    assert body == {
        "key": "memory.search.extraPaths",
        "legacy_key": "agents.defaults.memorySearch.extraPaths",
        "extra_paths": rendered,
    }
    text = openclaw.render_text(s)
    assert "memory.search.extraPaths" in text and "memorySearch.extraPaths" in text
    start = text.index('{\n  "memory"')
    end = text.index("\n}\n", start) + 2
    assert json.loads(text[start:end]) == {"memory": {"search": {"extraPaths": rendered}}}
