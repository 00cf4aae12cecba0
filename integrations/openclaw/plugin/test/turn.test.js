// @ts-check
// The plugin's side of the turn identity (src/turn.js) on plain Node; the Python side
// (tests/test_openclaw_turn_identity.py) holds it equal to what ingest stores.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { captureTurns, lastTurn } from "../src/core.js";
import { findEntryId, messageTime, readTranscript, senderOf, transcriptPath } from "../src/turn.js";

const SENDER =
  'Conversation info (untrusted metadata):\n```json\n{"chat_type": "direct"}\n```\n\n' +
  'Sender (untrusted metadata):\n```json\n{"label": "Lena (218406633)", "name": "Lena", "note": "}"}\n```\n\n' +
  "[Thu 2026-05-14 10:02 GMT+2] I moved to Lyon.";

test("the Sender block's name, else its username; none without one", () => {
  assert.equal(senderOf(SENDER), "Lena");
  assert.equal(senderOf('Sender (untrusted metadata):\n{"username": "lena_k"}\nhi'), "lena_k");
  assert.equal(senderOf("Sender: Lena"), undefined);
});

test("a message's own time, in ms or as a string", () => {
  assert.equal(messageTime({ timestamp: 1778745729187 }), "2026-05-14T08:02:09.187Z");
  assert.equal(messageTime({ timestamp: "2026-05-14T10:02:00+02:00" }), "2026-05-14T08:02:00.000Z");
  assert.equal(messageTime({ timestamp: "soon" }), undefined);
  assert.equal(messageTime({}), undefined);
});

test("the transcript is the context's sessionFile, else the agent's sessions folder", () => {
  assert.equal(transcriptPath({ sessionFile: "/x/s.jsonl" }, {}), "/x/s.jsonl");
  assert.equal(
    transcriptPath({ agentId: "main", sessionId: "s1" }, { OPENCLAW_STATE_DIR: "/st" }),
    join("/st", "agents", "main", "sessions", "s1.jsonl"),
  );
  assert.equal(
    transcriptPath({ agentId: "main", sessionId: "s1" }, {}),
    join(homedir(), ".openclaw", "agents", "main", "sessions", "s1.jsonl"),
  );
  assert.equal(transcriptPath({ agentId: "../x", sessionId: "s1" }, {}), undefined);
  assert.equal(transcriptPath({ sessionId: "s1" }, {}), undefined);
});

test("the entry ids, session, speaker and times of a turn come from the transcript", () => {
  const dir = mkdtempSync(join(tmpdir(), "memoracle-turn-"));
  try {
    const user = { role: "user", content: [{ type: "text", text: SENDER }], timestamp: 1778745729187 };
    const answer = { role: "assistant", content: [{ type: "text", text: "Noted." }], timestamp: 1778745741343 };
    const path = join(dir, "file-name.jsonl");
    writeFileSync(
      path,
      [
        { type: "session", version: 3, id: "sess-uuid" },
        { type: "message", id: "u1", parentId: null, message: user },
        "not json",
        { type: "message", id: "a1", parentId: "u1", message: answer },
      ]
        .map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
        .join("\n"),
    );
    const transcript = readTranscript(path);
    assert.ok(transcript);
    assert.equal(transcript.sessionId, "sess-uuid");
    assert.equal(findEntryId(transcript, { ...answer }), "a1");
    assert.equal(findEntryId(transcript, { role: "assistant", content: "Noted." }), "a1");
    assert.equal(findEntryId(transcript, { role: "user", timestamp: 1 }), undefined);

    const last = lastTurn([user, answer]);
    assert.ok(last);
    const turns = captureTurns(last, { sessionFile: path, sessionId: "ctx-id" }, new Date(0));
    assert.deepEqual(turns, [
      { user: SENDER, session: "sess-uuid", turn: "u1", at: "2026-05-14T08:02:09.187Z", speaker: "Lena" },
      { assistant: "Noted.", session: "sess-uuid", turn: "a1", at: "2026-05-14T08:02:21.343Z" },
    ]);
    // A later user message without a Sender block is from the last sender named.
    const next = { role: "user", content: "And Paris?" };
    const carried = lastTurn([user, answer, next]);
    assert.equal(carried?.speaker, "Lena");
    // An id the host puts on the message wins; no transcript, no id: the fallback.
    const tagged = captureTurns(lastTurn([{ ...user, id: "host-id" }]) ?? last, {}, new Date(0));
    assert.equal(tagged[0].turn, "host-id");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
