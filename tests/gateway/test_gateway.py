"""memoracle inside a real OpenClaw gateway (2026.9.6, Node 24), end to end: the
commands docs/openclaw.md gives a new user, then turns through `openclaw agent` against
the fake model, whose requests show what the gateway sent it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from fake_model import CONTEXT_WINDOW, answer_for, content_text, prompt_tokens
from harness import first_json
from toolchain import NODE_VERSION, OPENCLAW_VERSION, Toolchain

import nodetests
from conftest import RESULTS, World, new_openclaw, plugin_entry
from memoracle.ingest.openclaw_sqlite import read_openclaw_sqlite
from memoracle.types import Turn

BLOCK = "<memoracle-recall>"


def _user_text(request: dict[str, Any], needle: str) -> str:
    """The user message holding `needle` in what the model was sent ('' if none)."""
    for message in request.get("messages", []):
        text = content_text(message.get("content"))
        if message.get("role") == "user" and needle in text:
            return text
    return ""


def _requests_with(world: World, needle: str) -> list[dict[str, Any]]:
    return [r for r in world.model.chats() if _user_text(r, needle)]


def _episodes(world: World) -> list[dict[str, Any]]:
    out = world.mhome / "export.jsonl"
    world.oc.memoracle("--home", str(world.mhome), "export", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    out.unlink()
    return [r for r in rows if r.get("type") == "episode"]


def _wait_for_episodes(world: World, needle: str, count: int = 2) -> list[dict[str, Any]]:
    """The episodes holding `needle`'s turn, once the plugin's capture has stored them."""
    deadline = time.monotonic() + 60
    while True:
        found = [e for e in _episodes(world) if needle in e["text"]]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(1)


def _gateway_store(world: World) -> Path:
    return world.oc.state / "agents" / "main" / "agent" / "openclaw-agent.sqlite"


def _gateway_turns(world: World) -> list[Turn]:
    return list(
        read_openclaw_sqlite(
            _gateway_store(world),
            on_warning=lambda w: None,
            on_progress=lambda a, b: None,
            max_text_bytes=1 << 20,
        )
    )


def test_the_pinned_toolchain_runs(world: World) -> None:
    node = world.oc.chain.node
    assert node.is_file() and f"node-v{NODE_VERSION}" in str(node)
    assert OPENCLAW_VERSION in world.oc.run("--version").stdout


def test_install_binds_a_workspace_openclaw_created(world: World) -> None:
    record = json.loads((world.mhome / "install.json").read_text())
    assert Path(record["workspace"]).resolve() == world.oc.workspace.resolve()
    assert (world.mhome / "memoracle.db").is_file()
    assert "config.toml" in {p.name for p in world.mhome.iterdir()}
    assert "openclaw snippets" in world.install_output or "mcp.servers" in world.install_output


def test_snippets_pass_the_gateways_config_validation(world: World) -> None:
    cfg = world.oc.config()
    assert cfg["agents"]["defaults"]["compaction"]["memoryFlush"] == {"enabled": True}
    assert cfg["mcp"]["servers"]["memoracle"] == world.snippets["mcp"]["server"]
    world.oc.run("config", "validate")
    agents = (world.oc.workspace / "AGENTS.md").read_text()
    assert "<!-- memoracle-agents:begin -->" in agents


def test_plugin_loads_with_its_hooks_and_tools_not_hook_only(world: World) -> None:
    report = first_json(
        world.oc.run("plugins", "inspect", "memoracle", "--runtime", "--json").stdout
    )
    assert report["plugin"]["status"] == "loaded", report["plugin"]
    # gateway_start starts the warm server before the first turn needs it.
    assert {h["name"] for h in report["typedHooks"]} == {
        "before_prompt_build",
        "agent_end",
        "gateway_start",
    }
    assert report["policy"]["allowConversationAccess"] is True
    # The memory slot whole: the gateway's memory tools are memoracle's, and inspect no
    # longer calls it hook-only (it printed "has not migrated to explicit capability
    # registration yet" while the plugin registered a flush plan alone).
    tools = json.dumps(report["tools"])
    assert "memory_search" in tools and "memory_get" in tools, report["tools"]
    assert report["shape"] != "hook-only"
    assert not [c for c in report["compatibility"] if c.get("code") == "hook-only"]
    assert "memoracle: recall, capture" in world.oc.tail(400)
    # Nothing to deny by hand: no tool policy was set for memoracle to work.
    assert "deny" not in world.oc.config().get("tools", {})


def test_recall_is_in_what_the_model_receives(world: World) -> None:
    world.oc.memoracle(
        "--home", str(world.mhome), "remember", "The user's bicycle is a blue Brompton folding bike"
    )
    world.oc.turn("Which bicycle do I ride to work? (recall check)")
    seen = _requests_with(world, "(recall check)")
    assert seen, "the fake model never saw the turn"
    text = _user_text(seen[0], "(recall check)")
    # The gateway puts its time envelope first ("[Fri 2026-12-04 08:15 UTC] "); the
    # plugin's block opens the message right after it, before the user's words.
    assert re.fullmatch(r"(\[[^\]]*\] )?", text[: text.find(BLOCK)]), text[:300]
    block = text[text.index(BLOCK) : text.index("</memoracle-recall>")]
    assert "blue Brompton" in block
    assert text.index("</memoracle-recall>") < text.index("Which bicycle")


def test_capture_stores_the_turn_at_the_messages_own_time(world: World) -> None:
    world.oc.turn("I decided to move the team offsite to Lisbon in May (capture check)")
    found = _wait_for_episodes(world, "(capture check)", count=1)
    assert len(found) == 1, found
    user = found[0]
    assert user["role"] == "user" and user["origin"] != "import"
    assert BLOCK not in user["text"]
    answers = [
        e
        for e in _episodes(world)
        if e["session_id"] == user["session_id"] and e["role"] == "assistant"
    ]
    assert answers, "the answer was not captured"
    # The gateway's own record of the turn (its SQLite store): same session; the time
    # is the message's, before the answer existed, so not the time of capture.
    said = [t for t in _gateway_turns(world) if t.session_id == user["session_id"]]
    asked = [t for t in said if t.role == "user" and "(capture check)" in t.text]
    answered = [
        t for t in said if t.role == "assistant" and t.at and asked[0].at and t.at > asked[0].at
    ]
    assert asked and asked[0].at is not None and answered and answered[0].at is not None
    assert abs(_at(user["at"]) - asked[0].at.timestamp()) < 1.0
    assert _at(user["at"]) < answered[0].at.timestamp() <= _at(user["created_at"])


def _at(text: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(text).timestamp()


MCP_TOOLS = {
    "memory_recall",
    "memory_search",
    "memory_get",
    "memory_remember",
    "memory_forget",
    "memory_checkpoint",
    "memory_status",
}


def test_heartbeat_turns_get_no_recall_and_are_not_captured(world: World) -> None:
    before = len(world.model.chats())
    world.oc.run("system", "event", "--text", "Heartbeat probe 7731", "--mode", "now")
    deadline = time.monotonic() + 90
    beat: list[dict[str, Any]] = []
    while not beat and time.monotonic() < deadline:
        beat = [
            r
            for r in world.model.chats()[before:]
            if "Heartbeat probe 7731" in json.dumps(r.get("messages", []))
        ]
        time.sleep(1)
    assert beat, "the heartbeat turn never reached the model"
    last_user = [m for m in beat[0]["messages"] if m.get("role") == "user"][-2:]
    assert all(BLOCK not in content_text(m.get("content")) for m in last_user)
    time.sleep(5)  # the capture of a turn would have landed by now (see the capture test)
    assert not [
        e
        for e in _episodes(world)
        if "Heartbeat probe 7731" in e["text"] or "heartbeat monitor" in e["text"]
    ]


def test_memory_flush_turn_runs_the_plugins_checkpoint_plan(world: World) -> None:
    # The smallest transcript size that forces a flush: the next turn is followed by
    # OpenClaw's silent pre-compaction turn, whose prompt comes from the plugin that owns
    # the memory slot (registerMemoryCapability's flushPlanResolver on 2026.9.x).
    world.oc.set_config(
        "agents.defaults.compaction.memoryFlush", {"enabled": True, "forceFlushTranscriptBytes": 1}
    )
    try:
        world.oc.turn("Remember that the staging database is read-only (flush check)")
        deadline = time.monotonic() + 90
        flush: list[str] = []
        while not flush and time.monotonic() < deadline:
            flush = [_user_text(r, "Pre-compaction memory flush") for r in world.model.chats()]
            flush = [t for t in flush if t]
            time.sleep(1)
    finally:
        world.oc.set_config("agents.defaults.compaction.memoryFlush", {"enabled": True})
    assert flush, "no flush turn reached the model"
    prompt = flush[0]
    assert f"--home {world.mhome} checkpoint --text -" in prompt
    assert BLOCK not in prompt
    assert not [e for e in _episodes(world) if "Pre-compaction memory flush" in e["text"]]


def test_mcp_server_is_registered_and_probed_through_the_gateway(world: World) -> None:
    done = world.oc.run("mcp", "probe", "--json", timeout=120)
    text = done.stdout
    found = {name for name in MCP_TOOLS if name in text}
    assert found == MCP_TOOLS, text[-2000:]


def test_skill_is_installed_and_offered_to_the_model(world: World) -> None:
    listed = world.oc.run("skills", "list", "--json").stdout
    assert '"memoracle"' in listed
    systems = [
        content_text(m.get("content"))
        for r in world.model.chats()
        for m in r.get("messages", [])
        if m.get("role") == "system"
    ]
    offered = [s for s in systems if "<available_skills>" in s]
    assert offered and "memoracle" in offered[-1].split("<available_skills>", 1)[1]


def test_the_plugins_node_tests_pass_on_the_gateways_node(toolchain: Toolchain) -> None:
    """The plugin's own tests on the Node the gateway runs on (24): the SQLite store's
    turn ids (node:sqlite) are skipped on the system's Node 20, and run here, as is the
    comparison of the workspace files' provenance with memory-core's own classifier."""
    package = toolchain.openclaw_entry.parent
    env = dict(nodetests.base_env(), MEMORACLE_OPENCLAW_PACKAGE=str(package))
    run = nodetests.run(toolchain.node, nodetests.plugin_test_files(), env)
    assert run.returncode == 0, nodetests.failure(run)
    assert nodetests.count(run, "skipped") == 0, run.stdout[-2000:]


def test_ingest_of_the_gateways_store_adds_no_duplicate_episode(world: World) -> None:
    """The plugin found each message's entry id in the gateway's SQLite store (no
    fallback `openclaw-<n>-<hash>` id), so ingesting that store stores no turn again."""
    captured = _wait_for_episodes(world, "(capture check)", count=1)
    assert len(captured) == 1
    by_plugin = [e for e in _episodes(world) if e["origin"] != "import"]
    fallback = [e["turn_id"] for e in by_plugin if str(e["turn_id"]).startswith("openclaw-")]
    assert by_plugin and not fallback, fallback
    store = _gateway_store(world)
    assert store.is_file()
    world.oc.memoracle(
        "--home", str(world.mhome), "ingest", "--format", "openclaw-sqlite", str(store)
    )
    episodes = _episodes(world)
    keys = [(e["session_id"], e["turn_id"], e["role"]) for e in episodes if e["turn_id"]]
    assert len(keys) == len(set(keys))
    again = [e for e in episodes if "(capture check)" in e["text"]]
    assert len(again) == 1, [(e["origin"], e["turn_id"]) for e in again]
    said = [(e["session_id"], e["role"], e["at"]) for e in episodes]
    assert len(said) == len(set(said)), "a message stored twice under two ids"


# The session keys openclaw 2026.9.6 builds for a Telegram bot with
# `session.dmScope: "per-channel-peer"`: two people's direct chats and one group.
ALICE_DM = "agent:main:telegram:direct:111"
BOB_DM = "agent:main:telegram:direct:222"
GROUP = "agent:main:telegram:group:-100777"


def _from(name: str, sender_id: str, text: str) -> str:
    """A message as a channel hands it to the agent: the Sender block, then the words."""
    sender = {"label": name, "id": sender_id, "name": name}
    return f"Sender (untrusted metadata):\n```json\n{json.dumps(sender)}\n```\n\n{text}"


def _prompt_of(world: World, needle: str) -> str:
    """Everything the model was sent for the turn holding `needle`."""
    seen = _requests_with(world, needle)
    assert seen, f"the model never saw {needle!r}"
    return json.dumps(seen[-1].get("messages", []))


def _block_of(world: World, needle: str) -> str:
    text = _user_text(_requests_with(world, needle)[-1], needle)
    return text[text.index(BLOCK) : text.index("</memoracle-recall>")] if BLOCK in text else ""


def test_private_words_never_reach_another_persons_session_or_a_group(world: World) -> None:
    """Two people in their own direct chats and one group, in one gateway: what one
    said privately, and the owner's memory, reach no one else's prompt; the group's
    words are stored shared in that chat with the sender as speaker."""
    home = ("--home", str(world.mhome))
    world.oc.memoracle(*home, "remember", "The spare house key is with the neighbour Ines")
    alice_said = "I keep my spare house key under the blue flowerpot (alice private)"
    world.oc.turn(_from("Alice", "111", alice_said), session_key=ALICE_DM)
    (alice_episode,) = _wait_for_episodes(world, "(alice private)", count=1)
    assert (alice_episode["user_id"], alice_episode["visibility"]) == ("telegram:111", "private")

    question = "Where is the spare house key kept?"
    world.oc.turn(_from("Bob", "222", f"{question} (bob asks)"), session_key=BOB_DM)
    world.oc.turn(_from("Alice", "111", f"{question} (alice asks)"), session_key=ALICE_DM)
    world.oc.turn(f"{question} (owner asks)")
    group_said = f"{question} We meet at the pier on Sunday (group check)"
    world.oc.turn(_from("Carol", "333", group_said), session_key=GROUP)
    (group_episode,) = _wait_for_episodes(world, "(group check)", count=1)
    dave_asks = "Where do we meet on Sunday? (group asks)"
    world.oc.turn(_from("Dave", "444", dave_asks), session_key=GROUP)

    # Each recall found what its own scope holds: the checks below are not vacuous.
    assert "flowerpot" in _block_of(world, "(alice asks)")
    assert "Ines" in _block_of(world, "(owner asks)")
    assert "pier" in _block_of(world, "(group asks)")
    # Alice's words and the owner's memory reach neither Bob's prompt nor the group's.
    for needle in ("(bob asks)", "(group check)", "(group asks)"):
        prompt = _prompt_of(world, needle)
        assert "flowerpot" not in prompt and "Ines" not in prompt, needle
    assert "flowerpot" not in _prompt_of(world, "(owner asks)")
    # The group's turn is the group's: shared, in its chat, spoken by its sender.
    assert group_episode["visibility"] == "shared"
    assert group_episode["chat_id"] == "telegram:group:-100777"
    assert group_episode["speaker"] == "Carol"
    assert group_episode["user_id"] != alice_episode["user_id"]
    answers = [
        e
        for e in _episodes(world)
        if e["session_id"] == group_episode["session_id"] and e["role"] == "assistant"
    ]
    assert answers and all(e["visibility"] == "shared" for e in answers)


def _tool_results(world: World, needle: str) -> str:
    """What the gateway's tools answered in the turn holding `needle`: the `tool`
    messages of the model's request after the tool call ('' if there were none)."""
    found = []
    for request in _requests_with(world, needle):
        found += [
            content_text(m.get("content"))
            for m in request.get("messages", [])
            if m.get("role") == "tool"
        ]
    return "\n".join(found)


def test_the_gateways_memory_search_answers_from_memoracle_in_the_sessions_scope(
    world: World,
) -> None:
    """A turn whose model calls the gateway's own `memory_search` gets memoracle's hits,
    each a memoracle id; a group's call never returns a private item, the owner's
    finds it."""
    world.oc.memoracle(
        "--home",
        str(world.mhome),
        "remember",
        "My kayak is kept in the red boathouse (slot private)",
    )
    group_said = "The kayak race starts at the red boathouse on Saturday (slot group)"
    world.oc.turn(_from("Carol", "333", group_said), session_key=GROUP)
    _wait_for_episodes(world, "(slot group)", count=1)
    call = "[call memory_search: kayak red boathouse]"
    world.oc.turn(
        _from("Dave", "444", f"Where is the kayak? {call} (slot group asks)"), session_key=GROUP
    )
    world.oc.turn(f"Where is my kayak? {call} (slot owner asks)")
    in_group = _tool_results(world, "(slot group asks)")
    of_owner = _tool_results(world, "(slot owner asks)")
    assert '"path": "memoracle/' in in_group and "race starts" in in_group, in_group[-2000:]
    assert "slot private" not in in_group
    assert "slot private" in of_owner and "race starts" not in of_owner, of_owner[-2000:]


def test_the_fake_model_calls_a_tool_once_and_reads_the_persons_own_markers() -> None:
    """OpenClaw 2026.9.6 moves its runtime context (a user message) to the end of the
    request, after a tool's result: the tool was called, so the model answers; and a
    recall block before the person's words may hold markers said before."""
    internal = {"role": "user", "content": "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT\nRuntime: …"}
    recalled = "<memoracle-recall>- I said [context 30%] [call memory_get: x]</memoracle-recall>"
    asked = {"role": "user", "content": f"{recalled}\n\nHow full? [context 85%] [call t: y]"}
    call = {"role": "assistant", "tool_calls": [{"id": "c1"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "{}"}
    assert answer_for([asked, internal]) == {"name": "t", "arguments": {"query": "y"}}
    assert isinstance(answer_for([asked, call, result, internal]), str)
    assert prompt_tokens([asked, internal]) == 85 * CONTEXT_WINDOW // 100


def test_heartbeat_checkpoints_and_the_session_start_snapshot(world: World) -> None:
    """One owner's session (a Control UI thread) whose model reports its prompt at 30,
    55, 60 and 85 % of the window: the plugin checkpoints the live session at 50 % and at
    80 %, once each, into today's daily note. Its first turn, and only that one, opens
    with SESSION-START.md."""
    snapshot = world.oc.workspace / "SESSION-START.md"
    snapshot.write_text("# Session start\n\n- The harbour office opens at seven (start check)\n")
    key = "agent:main:dashboard:heartbeat-check"
    said_in_turns = (
        "I live near the old harbour",
        "I decided to take the night ferry to Bergen",
        "My brother Tom will bring the tent",
        "I decided to rent a car in Tromso",
    )
    offset = world.oc.log.stat().st_size
    try:
        for words, share in zip(said_in_turns, (30, 55, 60, 85), strict=True):
            world.oc.turn(f"{words} [context {share}%] (heartbeat check)", session_key=key)
    finally:
        snapshot.unlink()
    deadline = time.monotonic() + 30
    said: list[str] = []
    while len(said) < 2 and time.monotonic() < deadline:
        log = world.oc.log.read_bytes()[offset:].decode(errors="replace")
        said = [line for line in log.splitlines() if "memoracle: checkpoint at" in line]
        time.sleep(0.5)
    assert len(said) == 2, said
    assert "checkpoint at 50 % of the context window" in said[0]
    assert "checkpoint at 80 % of the context window" in said[1]
    notes = "\n".join(p.read_text() for p in (world.oc.workspace / "memory").glob("*.md"))
    assert "## Checkpoint [" in notes and "night ferry to Bergen" in notes
    # Each turn's own message (the last user message of its request; the history holds
    # the person's words alone): the first opens with the snapshot, no later one does.
    asked = [
        _last_user_text(r, "(heartbeat check)") for r in _requests_with(world, "(heartbeat check)")
    ]
    asked = [t for t in asked if t]
    # Which turn a message is: the person's words after the blocks (a later turn's recall
    # block may hold the first turn's words).
    first = [t for t in asked if said_in_turns[0] in t.rsplit("</memoracle-recall>", 1)[-1]]
    later = [t for t in asked if t not in first]
    assert first and all("<memoracle-session-start>" in t and "(start check)" in t for t in first)
    assert len(later) >= 3 and not [t for t in later if "(start check)" in t]


def _last_user_text(request: dict[str, Any], needle: str) -> str:
    """The last user message of a request, if it holds `needle` ('' otherwise)."""
    users = [
        content_text(m.get("content"))
        for m in request.get("messages", [])
        if m.get("role") == "user"
    ]
    users = [t for t in users if not t.startswith("<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT")]
    return users[-1] if users and needle in users[-1] else ""


def _plugin_config(world: World, **extra: Any) -> None:
    """Give the plugin this config and wait until the gateway has loaded it (a hot
    reload when the gateway does one within 30 s, else a restart)."""
    offset = world.oc.log.stat().st_size
    world.oc.set_config(
        "plugins.entries.memoracle.config", plugin_entry(world.oc, world.mhome, **extra)
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if b"memoracle: " in world.oc.log.read_bytes()[offset:]:
            return
        time.sleep(0.5)
    world.oc.restart()


def test_a_bad_memoracle_path_does_not_stop_the_turn(world: World) -> None:
    """A memoracle that cannot be started (bad command, no warm server on the socket it
    is given): one warning, the turn answered, nothing stored."""
    socket = world.mhome / "no-server" / "serve.sock"
    try:
        _plugin_config(world, command="/nonexistent/bin/memoracle", socket=str(socket))
        reply = world.oc.turn("Is the turn still answered? (bad path check)")
    finally:
        _plugin_config(world)
    assert reply["status"] == "ok"
    texts = [p["text"] for p in reply["result"]["payloads"]]
    assert any(t.startswith("Noted (") for t in texts), texts
    assert _requests_with(world, "(bad path check)")
    assert not [e for e in _episodes(world) if "(bad path check)" in e["text"]]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _timed_turns(world: World, label: str, n: int) -> tuple[list[float], list[float]]:
    """n turns in one fresh session: wall time of `openclaw agent` and the gateway's
    own run time (meta.durationMs), in ms."""
    walls: list[float] = []
    runs: list[float] = []
    for i in range(n):
        start = time.perf_counter()
        reply = world.oc.turn(
            f"Bench turn {i}: we ship on Friday ({label})", session_key=f"bench-{label}"
        )
        walls.append((time.perf_counter() - start) * 1000)
        runs.append(float(reply["result"]["meta"]["durationMs"]))
    return walls, runs


def test_per_turn_overhead_plugin_on_vs_off(world: World) -> None:
    n = int(os.environ.get("GATEWAY_E2E_TURNS", "20"))
    try:
        _plugin_config(world, autoRecall=False, autoCapture=False)
        off = _timed_turns(world, "off", n)
    finally:
        _plugin_config(world)
    on = _timed_turns(world, "on", n)
    lines = RESULTS.setdefault("lines", [])
    for name, index in (("openclaw agent wall", 0), ("gateway run (durationMs)", 1)):
        p50 = _quantile(on[index], 0.5) - _quantile(off[index], 0.5)
        p95 = _quantile(on[index], 0.95) - _quantile(off[index], 0.95)
        lines.append(
            f"{name}, {n} turns each: plugin off p50 {_quantile(off[index], 0.5):.0f} ms "
            f"p95 {_quantile(off[index], 0.95):.0f} ms; on p50 {_quantile(on[index], 0.5):.0f}"
            f" ms p95 {_quantile(on[index], 0.95):.0f} ms; memoracle adds p50 {p50:+.0f} ms,"
            f" p95 {p95:+.0f} ms"
        )
    assert len(off[0]) == len(on[0]) == n


def _tree(*paths: Path) -> dict[str, str]:
    """SHA-256 of every file under the given files/folders."""
    out: dict[str, str] = {}
    for path in paths:
        for f in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
            out[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def test_uninstall_gives_back_the_workspace_and_openclaw_json(
    toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory
) -> None:
    oc = new_openclaw(toolchain, tmp_path_factory.mktemp("roundtrip"), None)
    (oc.workspace / "MEMORY.md").write_text("# Memory\n\n## Preferences\n- I drink green tea\n")
    before = _tree(oc.workspace, oc.config_path)
    mhome = oc.root / "memoracle-home"
    oc.memoracle(
        "--home", str(mhome), "install", "--openclaw-workspace", str(oc.workspace), stdin=""
    )
    oc.memoracle("--home", str(mhome), "capture", "--user", "I moved to Porto last spring")
    oc.memoracle("--home", str(mhome), "nightly")
    assert _tree(oc.workspace, oc.config_path) != before  # the nightly run wrote its block
    oc.memoracle("--home", str(mhome), "uninstall", "--force")
    assert _tree(oc.workspace, oc.config_path) == before
    oc.run("config", "validate")


def test_no_turn_of_the_suite_is_held_as_injection(world: World) -> None:
    """Every turn the suite made (recall, capture, heartbeat, flush, bad path, the timed
    turns), the gateway's own wrappers and time stamps included: no held write."""
    assert _episodes(world), "the suite stored no turn"
    audit = first_json(
        world.oc.memoracle("--home", str(world.mhome), "audit", "--held", "--json").stdout
    )
    assert audit["held"] == [], audit["held"]
