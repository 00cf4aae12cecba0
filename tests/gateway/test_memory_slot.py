"""memoracle in OpenClaw's memory slot, against the real gateway (2026.9.6): the
workspace memory files stay in a run's context, memory-core stays out of the gateway,
and `openclaw plugins inspect` has nothing to warn about."""

from __future__ import annotations

import re
from pathlib import Path

from fake_model import content_text

from conftest import World

MEMORY_MARK = "The spare key is under the blue flowerpot (memory md check)"
USER_MARK = "Prefer distances in kilometres (user md check)"


def _log_since(world: World, offset: int) -> str:
    return world.oc.log.read_bytes()[offset:].decode(errors="replace")


def _context_of(world: World, needle: str) -> str:
    """Everything the model was sent in the requests of the turn holding `needle`, but
    the person's own message."""
    seen = []
    for request in world.model.chats():
        texts = [content_text(m.get("content")) for m in request.get("messages", [])]
        if any(needle in t for t in texts):
            seen += [t for t in texts if needle not in t]
    return "\n".join(seen)


def _append(path: Path, line: str) -> str | None:
    """Append `line` to `path`; what it held before (None: it did not exist)."""
    before = path.read_text() if path.exists() else None
    path.write_text((before or "") + f"\n- {line}\n")
    return before


def test_memory_md_and_user_md_stay_in_the_runs_context(world: World) -> None:
    """With memoracle in the memory slot, OpenClaw asks the slot's runtime where MEMORY.md
    and USER.md come from before it puts them into a run's context; memoracle answers as
    memory-core does (the operator's workspace files: `agent`), so both are there. A
    runtime that cannot say gets them left out ("excluding automatic memory context")."""
    workspace = world.oc.workspace
    offset = world.oc.log.stat().st_size
    saved = {
        p: _append(p, mark)
        for p, mark in ((workspace / "MEMORY.md", MEMORY_MARK), (workspace / "USER.md", USER_MARK))
    }
    try:
        world.oc.turn(
            "Where did I leave the spare key? (context check)",
            session_key="agent:main:dashboard:context-check",
        )
    finally:
        for path, before in saved.items():
            if before is None:
                path.unlink()
            else:
                path.write_text(before)
    context = _context_of(world, "(context check)")
    assert context, "the fake model never saw the turn"
    assert MEMORY_MARK in context and USER_MARK in context, context[-3000:]
    assert "excluding automatic memory context" not in _log_since(world, offset)


def test_memory_core_is_not_loaded_beside_memoracle(world: World) -> None:
    """OpenClaw 2026.9.6 loads memory-core beside another memory slot as its "dreaming
    sidecar" unless memory-core is disabled; then both offered memory_search and
    memory_get ("plugin tool name conflict"), and memory-core made its nightly dreaming
    cron job. The install disables it (`openclaw plugins disable memory-core`): the
    gateway loads no memory-core, a turn resolves the tools without a conflict, and the
    tools are memoracle's."""
    log = world.oc.log.read_text(errors="replace")
    listening = re.findall(r"http server listening \(\d+ plugins: ([^;)]*)", log)
    assert listening and all("memoracle" in line for line in listening), listening
    assert not [line for line in listening if "memory-core" in line], listening
    offset = world.oc.log.stat().st_size
    world.oc.turn("Where is my kayak? [call memory_search: kayak] (sidecar check)")
    answered = _context_of(world, "(sidecar check)")
    assert '"provider": "memoracle"' in answered, answered[-2000:]
    whole = world.oc.log.read_text(errors="replace")
    assert "plugin tool name conflict" not in whole
    assert "memory-core:" not in whole and "(plugin=memory-core" not in whole
    assert "memory-core is loaded beside memoracle" not in whole  # the plugin's own warning
    assert "memory-core" not in _log_since(world, offset)


def test_plugins_inspect_has_no_warning(world: World) -> None:
    """`openclaw plugins inspect memoracle --runtime`, as a person reads it: loaded, its
    hooks and tools, and no compatibility warning, diagnostic or global warning."""
    done = world.oc.run("plugins", "inspect", "memoracle", "--runtime")
    out = done.stdout
    assert "Status: loaded" in out, out
    assert "memory_search" in out and "memory_get" in out, out
    for section in ("Compatibility warnings", "Diagnostics", "Error:", "Reason:"):
        assert section not in out, out
    warned = [
        line
        for line in (out + "\n" + done.stderr).splitlines()
        if re.search(r"\bwarn(ing)?\b|\bWARN\b|\berror\b", line, re.IGNORECASE)
    ]
    assert warned == [], warned
    # The plugin's own lines: only its start-up line (not "memory-core is loaded beside").
    plugin_lines = [
        line
        for line in (out + "\n" + done.stderr).splitlines()
        if line.startswith("[plugins]") and "memoracle: recall" not in line
    ]
    assert plugin_lines == [], plugin_lines
