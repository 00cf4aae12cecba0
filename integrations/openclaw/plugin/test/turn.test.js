// @ts-check
// The plugin's side of the turn identity (src/turn.js) on plain Node; the Python side
// (tests/test_openclaw_turn_identity.py) holds it equal to what ingest stores.
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { captureTurns, lastTurn } from "../src/core.js";
import {
  findEntryId,
  messageTime,
  readStoreTranscript,
  readTranscript,
  senderOf,
  storePath,
  TranscriptMarks,
  transcriptPath,
} from "../src/turn.js";

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
      // The person's words, without the channel's wrappers, as ingest stores them.
      { user: "I moved to Lyon.", session: "sess-uuid", turn: "u1", at: "2026-05-14T08:02:09.187Z", speaker: "Lena" },
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

/** @param {unknown[]} records */
const jsonl = (records) => records.map((v) => `${JSON.stringify(v)}\n`).join("");
/** @param {string} role @param {string} text @param {number} timestamp */
const said = (role, text, timestamp) => ({ role, content: [{ type: "text", text }], timestamp });

test("after a captured turn, the next one reads only what follows it in the file", () => {
  const dir = mkdtempSync(join(tmpdir(), "memoracle-mark-"));
  try {
    const [u1, a1] = [said("user", "I moved to Lyon.", 1000), said("assistant", "Noted.", 2000)];
    const [u2, a2] = [said("user", "Лена — моя сестра.", 3000), said("assistant", "Понял.", 4000)];
    const path = join(dir, "s.jsonl");
    writeFileSync(
      path,
      jsonl([
        { type: "session", id: "sess-uuid" },
        { type: "message", id: "u1", message: u1 },
        { type: "message", id: "a1", message: a1 },
      ]),
    );
    const marks = new TranscriptMarks();
    const ctx = { sessionFile: path };
    const first = captureTurns(lastTurn([u1, a1]) ?? assert.fail(), ctx, new Date(0), {}, marks);
    assert.deepEqual(first.map((t) => [t.session, t.turn]), [["sess-uuid", "u1"], ["sess-uuid", "a1"]]);
    const mark = marks.get(`file:${path}`);
    assert.equal(mark?.end, readFileSync(path).length);
    assert.equal(mark?.sessionId, "sess-uuid");

    appendFileSync(path, jsonl([{ type: "message", id: "u2", message: u2 }, { type: "message", id: "a2", message: a2 }]));
    // The header rewritten in place, same length: a whole read would see "sess-XXXX".
    writeFileSync(path, readFileSync(path, "utf8").replace("sess-uuid", "sess-XXXX"));
    const tail = readTranscript(path, mark);
    assert.deepEqual(tail?.entries.map((e) => e.id), ["u2", "a2"]);
    const second = captureTurns(lastTurn([u1, a1, u2, a2]) ?? assert.fail(), ctx, new Date(0), {}, marks);
    assert.deepEqual(second.map((t) => [t.session, t.turn]), [["sess-uuid", "u2"], ["sess-uuid", "a2"]]);
    assert.equal(marks.get(`file:${path}`)?.end, readFileSync(path).length);

    // A retried hook for the first turn: not after the mark, so the file is read whole
    // and the turn gets the same ids again (capture is idempotent).
    const again = captureTurns(lastTurn([u1, a1]) ?? assert.fail(), ctx, new Date(0), {}, marks);
    assert.deepEqual(again.map((t) => t.turn), ["u1", "a1"]);
    // No mark (a new gateway), or another file in its place: the file is read whole.
    const fresh = captureTurns(lastTurn([u1, a1, u2, a2]) ?? assert.fail(), ctx, new Date(0), {});
    assert.deepEqual(fresh.map((t) => [t.session, t.turn]), [["sess-XXXX", "u2"], ["sess-XXXX", "a2"]]);
    const other = join(dir, "other.jsonl");
    writeFileSync(other, jsonl([{ type: "session", id: "sess-new" }, { type: "message", id: "u9", message: u2 }]));
    renameSync(other, path);
    const replaced = captureTurns(lastTurn([u2]) ?? assert.fail(), ctx, new Date(0), {}, marks);
    assert.deepEqual(replaced.map((t) => [t.session, t.turn]), [["sess-new", "u9"]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the marks forget the session captured least recently first", () => {
  const marks = new TranscriptMarks(2);
  const transcript = { sessionId: "s", entries: [{ id: "u1", role: "user", timestamp: 1, text: "x", end: 10 }] };
  for (const key of ["a", "b", "a", "c"]) marks.note(key, transcript, ["u1"]);
  assert.deepEqual([marks.get("a")?.end, marks.get("b"), marks.get("c")?.end, marks.size], [10, undefined, 10, 2]);
  marks.note("d", transcript, ["not-there"]);
  assert.equal(marks.get("d"), undefined);
});

const sqlite = process.getBuiltinModule?.("node:sqlite");

test(
  "on a gateway that keeps transcripts in its SQLite store, the ids come from there",
  { skip: sqlite ? false : `this Node (${process.version}) has no node:sqlite; OpenClaw 2026.9 runs on Node 24` },
  () => {
    const state = mkdtempSync(join(tmpdir(), "memoracle-store-"));
    try {
      const dir = join(state, "agents", "main", "agent");
      mkdirSync(dir, { recursive: true });
      const db = new sqlite.DatabaseSync(join(dir, "openclaw-agent.sqlite"));
      db.exec(
        "PRAGMA journal_mode=WAL; CREATE TABLE transcript_events (session_id TEXT NOT NULL," +
          " seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB," +
          " event_utf8_bytes INTEGER, PRIMARY KEY (session_id, seq))",
      );
      const user = { role: "user", content: [{ type: "text", text: "I moved to Lyon." }], timestamp: 1778745729187 };
      const answer = { role: "assistant", content: [{ type: "text", text: "Noted." }], timestamp: 1778745741343 };
      const insert = db.prepare("INSERT INTO transcript_events VALUES (?, ?, ?, 0, ?, ?)");
      insert.run("s1", 1, JSON.stringify({ type: "session", version: 3, id: "s1" }), null, null);
      insert.run("other", 1, JSON.stringify({ type: "message", id: "x9", message: user }), null, null);
      // 2026.9 stores the user's words alone, under a timestamp of its own; the message
      // agent_end hands over has the gateway's time stamp and the recall block in front.
      const stored = { ...user, timestamp: user.timestamp - 4566 };
      insert.run("s1", 2, JSON.stringify({ type: "message", id: "u1", message: stored }), null, null);
      const zlib = process.getBuiltinModule("node:zlib");
      const big = JSON.stringify({ type: "message", id: "a1", parentId: "u1", message: answer });
      if (zlib.zstdCompressSync) {
        insert.run("s1", 3, null, zlib.zstdCompressSync(Buffer.from(big)), Buffer.byteLength(big));
      } else {
        insert.run("s1", 3, big, null, null);
      }
      // The gateway keeps its handle open: what it wrote is still in the WAL.
      const env = { OPENCLAW_STATE_DIR: state };
      const ctx = { agentId: "main", sessionId: "s1" };
      const asked = {
        ...user,
        content: [
          {
            type: "text",
            text: "[Fri 2026-12-04 09:22 UTC] <memoracle-recall>\n- [m_1] Lives in Paris.\n</memoracle-recall>\nI moved to Lyon.",
          },
        ],
      };
      const last = lastTurn([asked, answer]);
      assert.ok(last);
      const turns = captureTurns(last, ctx, new Date(0), env);
      assert.deepEqual(
        turns.map((t) => [t.session, t.turn]),
        [
          ["s1", "u1"],
          ["s1", "a1"],
        ],
      );
      // With a mark, only the rows after it: the next turn reads two rows, not the session.
      const marks = new TranscriptMarks();
      captureTurns(last, ctx, new Date(0), env, marks);
      const mark = marks.get(`store:${storePath(ctx, env)}\ns1`);
      assert.deepEqual([mark?.sessionId, mark?.end], ["s1", 3]);
      const u2 = said("user", "Léa est ma sœur.", 1778745800000);
      const a2 = said("assistant", "Noté.", 1778745801000);
      insert.run("s1", 4, JSON.stringify({ type: "message", id: "u2", message: u2 }), null, null);
      insert.run("s1", 5, JSON.stringify({ type: "message", id: "a2", message: a2 }), null, null);
      db.prepare("UPDATE transcript_events SET event_json = ? WHERE seq = 1").run(
        JSON.stringify({ type: "session", id: "renamed" }),
      );
      const tail = readStoreTranscript(storePath(ctx, env), "s1", mark);
      assert.deepEqual(tail?.entries.map((e) => [e.id, e.end]), [["u2", 4], ["a2", 5]]);
      const next = captureTurns(lastTurn([asked, answer, u2, a2]) ?? assert.fail(), ctx, new Date(0), env, marks);
      assert.deepEqual(next.map((t) => [t.session, t.turn]), [["s1", "u2"], ["s1", "a2"]]);
      assert.equal(marks.get(`store:${storePath(ctx, env)}\ns1`)?.end, 5);
      assert.equal(readStoreTranscript(storePath({ agentId: "main" }, env), "nobody"), undefined);
      assert.equal(readStoreTranscript(join(state, "missing.sqlite"), "s1"), undefined);
      writeFileSync(join(state, "corrupt.sqlite"), "not a database");
      assert.equal(readStoreTranscript(join(state, "corrupt.sqlite"), "s1"), undefined);
      db.close();
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  },
);
