"""is_noise: silent tokens, heartbeat acks and polls, flush prompts, tool noise, empty.

Prompts here are paraphrases with the structure of OpenClaw's, not its exact wording:
detection must not depend on exact text.
"""

from __future__ import annotations

import json

import pytest

from memoracle.capture.noise import is_noise


@pytest.mark.parametrize(
    "text",
    ["NO_REPLY", "no_reply", "  NO_REPLY  \n", "NO_REPLY.", "`NO_REPLY`", "[NO_REPLY]", "No reply"],
)
def test_no_reply_token(text: str) -> None:
    assert is_noise(text) == "no_reply"


def test_no_reply_leading_a_short_reply() -> None:
    assert is_noise("NO_REPLY (nothing worth saving this time)") == "no_reply"
    assert is_noise("Saved two notes to today's file. NO_REPLY") == "no_reply"


@pytest.mark.parametrize(
    "text", ["HEARTBEAT_OK", "heartbeat_ok", " HEARTBEAT_OK!\n", "**HEARTBEAT_OK**", "Heartbeat OK"]
)
def test_heartbeat_ok_token(text: str) -> None:
    assert is_noise(text) == "heartbeat_ok"


def test_heartbeat_ok_wrapping_a_short_ack() -> None:
    assert is_noise("HEARTBEAT_OK - all quiet, nothing due.") == "heartbeat_ok"
    assert is_noise("Checked the inbox and calendar. HEARTBEAT_OK") == "heartbeat_ok"


def test_long_reply_with_heartbeat_ok_is_kept() -> None:
    alert = "The disk on the backup host is 97% full and the nightly job failed twice. " * 6
    assert is_noise("HEARTBEAT_OK " + alert) is None


@pytest.mark.parametrize(
    "text",
    [
        "Heartbeat check. Read the HEARTBEAT.md file if it exists and follow it strictly; do "
        "not repeat old tasks from prior chats. When nothing needs your attention, answer "
        "HEARTBEAT_OK.",
        "read heartbeat.md (workspace context) if present. follow it strictly. "
        "if nothing needs attention reply heartbeat_ok",
        "Heartbeat poll: read HEARTBEAT.md and reply HEARTBEAT_OK when all is well.\n"
        "Current time: 2026-03-01 09:00 UTC",
        "READ HEARTBEAT.MD IF IT EXISTS. IF NOTHING NEEDS ATTENTION, REPLY HEARTBEAT_OK.",
    ],
)
def test_heartbeat_poll(text: str) -> None:
    assert is_noise(text) == "heartbeat_poll"


@pytest.mark.parametrize(
    "text",
    [
        "Pre-compaction memory flush. The session is close to its context limit: store "
        "durable memories now in memory/YYYY-MM-DD.md (create the folder if needed). "
        "If there is nothing to store, reply with NO_REPLY.",
        "Pre-compaction memory flush. Store durable memories only in memory/2026-05-01.md; "
        "treat MEMORY.md and AGENTS.md as read-only. Append, do not overwrite. If nothing to "
        "store, reply NO_REPLY.",
        "Session nearing compaction. Save durable memories now.",
        "pre compaction MEMORY FLUSH -- write lasting notes to memory/2026-01-02.md now; "
        "answer no_reply if nothing",
    ],
)
def test_flush_prompt(text: str) -> None:
    assert is_noise(text) == "flush_prompt"


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"type": "toolCall", "name": "exec", "arguments": {"cmd": "ls"}}),
        json.dumps([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        json.dumps({"role": "toolResult", "toolCallId": "c1", "content": []}),
        '<tool_call>{"name": "read"}</tool_call>',
        "<function_results>done</function_results>",
        "[Tool call: exec ls -la]",
        "[toolResult] exit 0",
        'Tool result: {"ok": true}',
    ],
)
def test_tool_noise(text: str) -> None:
    assert is_noise(text) == "tool_noise"


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n", "\u200b", "\ufeff "])
def test_empty(text: str) -> None:
    assert is_noise(text) == "empty"


@pytest.mark.parametrize(
    "text",
    [
        "Let's use Postgres 16 for the billing service.",
        "👍",
        "ok",
        "What does NO_REPLY mean in OpenClaw?",
        "I keep getting HEARTBEAT_OK replies even when the disk is full, why is that? "
        "Can you dig into the gateway logs and tell me what the heartbeat runner is doing?",
        "Can you read HEARTBEAT.md and tell me why it keeps replying HEARTBEAT_OK?",
        "Please update HEARTBEAT.md so you reply HEARTBEAT_OK when the queue is empty.",
        "How does the memory flush work before compaction?",
        "Remember that the nightly compaction job runs at 3am.",
        json.dumps({"theme": "dark", "fontSize": 14}),
        "[1, 2, 3]",
        "{not json at all}",
    ],
)
def test_real_turns_are_not_noise(text: str) -> None:
    assert is_noise(text) is None


def test_long_text_mentioning_the_prompts_is_not_noise() -> None:
    essay = (
        "Notes on our setup: the pre-compaction memory flush asks the agent to store durable "
        "memories in memory/YYYY-MM-DD.md and to reply NO_REPLY. "
    ) + "We discussed the tradeoffs at length. " * 120
    assert is_noise(essay) is None
