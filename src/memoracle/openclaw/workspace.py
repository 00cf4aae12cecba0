"""OpenClaw's side of the door: what a person pastes into OpenClaw, what makes a folder
an OpenClaw workspace, and where OpenClaw keeps an agent's live session.

Owns the snippets (`snippets`, `render_text`, `as_json`): the block for the workspace's
AGENTS.md, the `agents.defaults.compaction.memoryFlush` object (only keys every gateway
takes: OpenClaw 2026.9.6 refuses `prompt` there, the flush plan being the memory
plugin's), the flush prompt (the user message of the silent pre-compaction turn, which
makes the agent run `memoracle checkpoint`; the plugin's flush plan sends the same text)
and the `mcp.servers` entry that starts `memoracle mcp`. memoracle never
writes them anywhere: AGENTS.md and openclaw.json stay the person's. Also owns
recognising a workspace (`check_workspace`: OpenClaw's bootstrap files) and finding
OpenClaw's state folder and an agent's live transcript (`state_dir`, `session_file`).

Installing into a workspace is `install`'s; reading transcripts is `ingest`'s; that
capture drops the flush prompt itself as noise is `capture.noise`'s.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoracle.config import Settings
from memoracle.errors import InvalidInput, NotFound
from memoracle.ingest.openclaw_cron import state_dir  # found in one place, for cron too
from memoracle.workspace import MEMORY_FILE, NOTES_DIR

__all__ = [
    "BOOTSTRAP_FILES",
    "FLUSH_KEY",
    "FLUSH_PROMPT_KEY",
    "MCP_TOOLS",
    "MCP_SERVER_NAME",
    "Snippets",
    "WorkspaceCheck",
    "as_json",
    "check_workspace",
    "config_path",
    "render_text",
    "session_file",
    "snippets",
    "state_dir",
]

# The files OpenClaw seeds a workspace with and injects into the agent's context; one of
# them is what makes a folder a workspace (MEMORY.md and memory/ alone are any notes).
BOOTSTRAP_FILES = (
    "AGENTS.md",
    "SOUL.md",
    "USER.md",
    "IDENTITY.md",
    "TOOLS.md",
    "HEARTBEAT.md",
    "BOOTSTRAP.md",
)
MEMORY_FILES = ("MEMORY.md", "memory")
FLUSH_KEY = "agents.defaults.compaction.memoryFlush"
# Older gateways only: 2026.9.6 refuses it ("Unrecognized key"); never printed as config.
FLUSH_PROMPT_KEY = f"{FLUSH_KEY}.prompt"
# The flush settings every gateway takes (2026.9.6: enabled, model, softThresholdTokens,
# forceFlushTranscriptBytes); the prompt comes from the memory plugin's flush plan.
FLUSH_SETTINGS: dict[str, Any] = {"enabled": True}
MCP_SERVER_NAME = "memoracle"
# How OpenClaw names an MCP server's tools to the model: `<server>__<tool>`. A bare
# `memory_search` is OpenClaw's own memory-core tool (it searches the Markdown files).
MCP_TOOLS = tuple(
    f"{MCP_SERVER_NAME}__{tool}"
    for tool in ("memory_search", "memory_remember", "memory_forget", "memory_checkpoint")
)
# Where memory-core (when it keeps OpenClaw's memory slot) finds more Markdown to index:
# `memory.search.extraPaths` on 2026.9.6, `agents.defaults.memorySearch.extraPaths` before
# (layered-memstack's name; `openclaw doctor --fix` moves it). Absolute paths are taken.
EXTRA_PATHS_KEY = "memory.search.extraPaths"
LEGACY_EXTRA_PATHS_KEY = "agents.defaults.memorySearch.extraPaths"
RENDERED = (MEMORY_FILE, NOTES_DIR, "reference")  # what nightly renders in workspace.files_dir
AGENTS_BEGIN = "<!-- memoracle-agents:begin -->"
AGENTS_END = "<!-- memoracle-agents:end -->"
AGENT_STORE = Path("agent") / "openclaw-agent.sqlite"  # newer OpenClaw: one store per agent


@dataclass(frozen=True)
class Snippets:
    """What to paste into OpenClaw for one memoracle home."""

    home: Path
    command: str  # `memoracle --home HOME`, shell-quoted, as the agent runs it
    agents_md: str  # the block for the end of AGENTS.md, between its markers
    flush_prompt: str  # the flush turn's message (the plugin's flush plan sends it)
    mcp_command: str  # mcp.servers.memoracle.command
    mcp_args: tuple[str, ...]  # mcp.servers.memoracle.args
    openclaw_config: Path  # where OpenClaw reads its config (openclaw.json)
    extra_paths: tuple[str, ...] = ()  # memoracle's rendered files, for memory-core's search

    def mcp_entry(self) -> dict[str, Any]:
        """The value of `mcp.servers.memoracle`."""
        return {"command": self.mcp_command, "args": list(self.mcp_args)}


def snippets(
    settings: Settings,
    *,
    executable: str = "memoracle",
    openclaw_agent: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Snippets:
    """The snippets for `settings.home`. `executable` is the memoracle program OpenClaw
    runs (give its full path: OpenClaw may not start it from your shell); with
    `openclaw_agent`, the flush also captures that agent's live transcript."""
    home = settings.home.expanduser()
    command = shlex.join([executable, "--home", str(home)])
    checkpoint = f"{command} checkpoint"
    if openclaw_agent:
        checkpoint += f" --openclaw-agent {shlex.quote(openclaw_agent)}"
    return Snippets(
        home=home,
        command=command,
        agents_md=_agents_md(command),
        flush_prompt=_flush_prompt(checkpoint),
        mcp_command=executable,
        mcp_args=("--home", str(home), "mcp"),
        openclaw_config=config_path(env),
        extra_paths=tuple(str(settings.files_dir.expanduser() / name) for name in RENDERED),
    )


def _agents_md(command: str) -> str:
    return "\n".join(
        [
            AGENTS_BEGIN,
            "## Long-term memory (memoracle)",
            "",
            "memoracle keeps your long-term memory: facts, preferences, decisions, tasks and"
            " rules from past conversations, in one local store. It captures what is said by"
            " itself; you do not need to write memory files for it.",
            "",
            "- At a session's start, read SESSION-START.md in the workspace: memoracle"
            " rewrites it each night from MEMORY.md and the latest notes. With memoracle's"
            " memory plugin it is already in your context (`<memoracle-session-start>`).",
            "- Before a turn, what memoracle recalls for it may already be in your context."
            " Follow its guardrails; check anything old or surprising before relying on it.",
            f'- Look something up: `{command} search "what you need"` (`--json` adds ids and'
            f" scores); `{command} get m_12` shows one memory and where it came from.",
            "- Keep something the user asks you to remember, or a decision you made"
            f' together: `{command} remember "the text"`.',
            f"- Forget on request: `{command} forget m_12` (find the id with search;"
            f' `{command} forget --query "text" --dry-run` shows what would go).',
            "- Before your context runs out or a long task ends, save the points to keep:"
            f" `{command} checkpoint --text -` with one point per line on stdin (start your"
            " own words with `assistant:`). memoracle appends them to today's"
            " memory/YYYY-MM-DD.md; do not write them there yourself.",
            "- In MEMORY.md, memoracle rewrites its own block each night: a line a person"
            " adds there is remembered, a line deleted is forgotten. Do not edit its markers.",
            f"- If memoracle's MCP tools ({', '.join(MCP_TOOLS)}) are available, use them"
            " instead of these commands. `memory_search` and `memory_get` without the"
            " `memoracle__` prefix are the gateway's memory tools: memoracle's too when its"
            " plugin owns OpenClaw's memory slot (they see only what this conversation may"
            " see), else OpenClaw's own over the memory files.",
            AGENTS_END,
            "",
        ]
    )


def _flush_prompt(checkpoint: str) -> str:
    # OpenClaw replaces YYYY-MM-DD with today's date and appends a "Current time:" line;
    # memoracle's capture drops this prompt as noise (capture.noise: "pre-compaction",
    # "memory flush", memory/YYYY-MM-DD.md, "nothing to store", NO_REPLY).
    return (
        "Pre-compaction memory flush: the session is near compaction. Save what must"
        " outlive it with memoracle instead of writing memory files. Run:\n"
        f"{checkpoint} --text - <<'EOF'\n"
        "- one durable point per line: decisions, facts, preferences, open tasks"
        " (start your own words with assistant:)\n"
        "EOF\n"
        "memoracle appends them to memory/YYYY-MM-DD.md itself. If there is nothing to"
        " store, reply NO_REPLY; after the command, reply NO_REPLY."
    )


def render_text(s: Snippets) -> str:
    """The snippets for a person: each with where it goes."""
    flush = {"agents": {"defaults": {"compaction": {"memoryFlush": dict(FLUSH_SETTINGS)}}}}
    mcp = {"mcp": {"servers": {MCP_SERVER_NAME: s.mcp_entry()}}}
    set_command = shlex.join(
        ["openclaw", "mcp", "set", MCP_SERVER_NAME, json.dumps(s.mcp_entry(), ensure_ascii=False)]
    )
    return "\n".join(
        [
            "# 1. AGENTS.md in your OpenClaw workspace: append this block",
            "",
            s.agents_md,
            f"# 2. {s.openclaw_config}: {FLUSH_KEY}",
            "",
            json.dumps(flush, indent=2, ensure_ascii=False),
            "",
            "#    The flush turn's prompt is not set there (OpenClaw 2026.9.6 refuses",
            "#    memoryFlush.prompt): memoracle's memory plugin sends it, this text:",
            *(f"#    {line}" for line in s.flush_prompt.splitlines()),
            "",
            f"# 3. {s.openclaw_config}: mcp.servers.{MCP_SERVER_NAME}",
            f"#    (or run: {set_command})",
            "",
            json.dumps(mcp, indent=2, ensure_ascii=False),
            "",
            f"# 4. Only if memory-core keeps OpenClaw's memory slot: {s.openclaw_config}:",
            f"#    {EXTRA_PATHS_KEY} ({LEGACY_EXTRA_PATHS_KEY} before 2026.9.6), so its",
            "#    memory_search also reads the files memoracle renders each night",
            "",
            json.dumps(_extra_paths(s), indent=2, ensure_ascii=False),
            "",
            "memoracle does not edit these files; paste each where it says.",
        ]
    )


def _extra_paths(s: Snippets) -> dict[str, Any]:
    return {"memory": {"search": {"extraPaths": list(s.extra_paths)}}}


def as_json(s: Snippets) -> dict[str, Any]:
    """The snippets as one JSON object (`memoracle openclaw snippets --json`)."""
    return {
        "home": str(s.home),
        "command": s.command,
        "openclaw_config": str(s.openclaw_config),
        "agents_md": s.agents_md,
        "memory_flush": {"key": FLUSH_KEY, "value": dict(FLUSH_SETTINGS), "prompt": s.flush_prompt},
        "mcp_tools": list(MCP_TOOLS),
        "mcp": {"key": f"mcp.servers.{MCP_SERVER_NAME}", "server": s.mcp_entry()},
        "memory_search": {
            "key": EXTRA_PATHS_KEY,
            "legacy_key": LEGACY_EXTRA_PATHS_KEY,
            "extra_paths": list(s.extra_paths),
        },
    }


# -- the workspace ---------------------------------------------------------------------


@dataclass(frozen=True)
class WorkspaceCheck:
    """What `check_workspace` saw in a folder."""

    path: Path
    found: tuple[str, ...]  # OpenClaw's files and folders present, in BOOTSTRAP_FILES order

    @property
    def is_workspace(self) -> bool:
        return any(name in BOOTSTRAP_FILES for name in self.found)

    @property
    def problem(self) -> str | None:
        """Why the folder is not a workspace, or None when it is one."""
        if self.is_workspace:
            return None
        if not self.path.is_dir():
            return f"{self.path} is not a folder. Pass your OpenClaw workspace folder."
        return (
            f"{self.path} does not look like an OpenClaw workspace: none of"
            f" {', '.join(BOOTSTRAP_FILES)} is there. Pass the folder OpenClaw uses"
            " (agents.defaults.workspace, by default ~/.openclaw/workspace), or --force to"
            " use this one anyway."
        )


def check_workspace(path: Path) -> WorkspaceCheck:
    """Which of OpenClaw's workspace files `path` holds. A workspace has at least one of
    `BOOTSTRAP_FILES`; MEMORY.md and memory/ are listed when present. Reads nothing."""
    path = path.expanduser()
    if not path.is_dir():
        return WorkspaceCheck(path, ())
    found = [name for name in BOOTSTRAP_FILES if (path / name).is_file()]
    found += [name for name in MEMORY_FILES if (path / name).exists()]
    return WorkspaceCheck(path, tuple(found))


# -- OpenClaw's state folder -----------------------------------------------------------


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """OpenClaw's config file: `OPENCLAW_CONFIG_PATH`, else openclaw.json in `state_dir`."""
    env = os.environ if env is None else env
    override = env.get("OPENCLAW_CONFIG_PATH", "").strip()
    return Path(override).expanduser() if override else state_dir(env) / "openclaw.json"


def session_file(
    agent_id: str, *, state: Path | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The live session transcript of OpenClaw agent `agent_id`: the most recently
    written `agents/<id>/sessions/*.jsonl` under `state` (default `state_dir(env)`), or
    the agent's SQLite store (`agents/<id>/agent/openclaw-agent.sqlite`, newer OpenClaw)
    when that was written last. Archived transcripts (`*.jsonl.reset.*`,
    `*.jsonl.deleted.*`) and the `sessions.json` index are never picked. NotFound names
    the folder looked in."""
    agent = agent_id.strip()
    if not agent or agent in (".", "..") or "/" in agent or "\\" in agent:
        raise InvalidInput(
            f"Not an OpenClaw agent id: {agent_id!r}. Ids look like main; see: openclaw agents list"
        )
    root = (state if state is not None else state_dir(env)).expanduser() / "agents" / agent
    folder = root / "sessions"
    candidates = [p for p in folder.glob("*.jsonl") if p.is_file()] if folder.is_dir() else []
    store = root / AGENT_STORE
    written = {p: p.stat().st_mtime_ns for p in candidates}
    if store.is_file():
        wal = store.with_name(store.name + "-wal")  # where its writes land first
        written[store] = max(
            store.stat().st_mtime_ns, wal.stat().st_mtime_ns if wal.exists() else 0
        )
    if not written:
        if not root.is_dir():
            raise NotFound(
                f"No OpenClaw agent '{agent}': {root} does not exist. Check the id"
                " (openclaw agents list) or where OpenClaw keeps its state (OPENCLAW_STATE_DIR)."
            )
        raise NotFound(
            f"No live session transcript for OpenClaw agent '{agent}': no *.jsonl in {folder}"
            f" and no {store}. Archived transcripts (*.jsonl.reset.*, *.jsonl.deleted.*) are"
            " not live; pass one with --session-file."
        )
    return max(written, key=lambda p: (written[p], p.name))
