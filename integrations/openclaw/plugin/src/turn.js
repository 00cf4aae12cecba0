// @ts-check
/**
 * One turn identity for the plugin, `memoracle ingest` and `memoracle checkpoint`.
 *
 * memoracle stores a turn once per (agent, user, chat, session, role, speaker, turn id).
 * `ingest` and `checkpoint --openclaw-agent` read the transcript: the session is the
 * header's `id` (else the file name), the turn id is each entry's `id`, the time the
 * envelope's or the entry's, and the speaker the `Sender (untrusted metadata)` block's
 * `name` (else `username`), carried to later user messages that name no sender. This
 * module gives the plugin the same values for the messages `agent_end` hands it:
 *
 * 1. a message that carries its entry id (`id` or `entryId`) uses it;
 * 2. otherwise the plugin reads the session's transcript (`ctx.sessionFile`, else
 *    `<state>/agents/<agentId>/sessions/<sessionId>.jsonl`, the state folder found as
 *    OpenClaw finds it; OpenClaw 2026.9 and later keep it in the agent's SQLite store,
 *    `<state>/agents/<agentId>/agent/openclaw-agent.sqlite`, table `transcript_events`,
 *    read with `node:sqlite` where the host's Node has it) and takes the id of the entry
 *    holding the same message (same role and `timestamp`, else same role and text), and
 *    the session from its header;
 * 3. with neither, `openclaw-<ordinal>-<sha12 of the user text>`: stable for a retried
 *    hook, but not the id ingest gives, so a later ingest stores the turn again.
 *
 * A transcript grows by a turn at a time, so reading it whole at every `agent_end` is
 * O(session) per turn. `TranscriptMarks` remembers, per session, where the last turn the
 * plugin identified ended (a byte offset in the JSONL file, a `seq` in the store) and
 * the session's id from the header; the next turn reads only what comes after it. When
 * the mark is unknown (the first turn since the gateway started), the file was replaced
 * or shrank, or the messages are not in the new part, the transcript is read whole.
 *
 * The rule is held by tests on both sides: test/turn.test.js here, and
 * tests/test_openclaw_turn_identity.py against the real CLI and ingest.
 */

import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

import { jsonEnd } from "./inbound.js";

/** Transcripts above this are not read for ids (the fallback id is used). */
const MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024;
const SENDER_HEADER = /Sender\s*\(untrusted[^)\n]*\):[ \t]*/gi;
/** The recall block the plugin puts before the user's words (core.js BLOCK_OPEN/CLOSE). */
const RECALL_BLOCK = /<memoracle-recall>[\s\S]*?<\/memoracle-recall>\s*/g;

/**
 * @typedef {object} TranscriptEntry
 * @property {string} id
 * @property {unknown} role
 * @property {unknown} timestamp the message's own timestamp
 * @property {string} text
 * @property {number} end where the entry ends: the byte offset after its line in a JSONL
 *   file, its `seq` (else rowid) in the SQLite store
 */

/**
 * @typedef {object} TranscriptMark where the last turn identified in a transcript ended
 * @property {string} sessionId the header's id (the part read next has no header)
 * @property {number} end an entry's `end` (see TranscriptEntry)
 * @property {number} [file] the JSONL file's inode, so a replaced file is read whole
 */

/**
 * @typedef {object} Transcript
 * @property {string} sessionId the header's id, else the file name
 * @property {TranscriptEntry[]} entries message entries, in file order
 * @property {number} [file] the JSONL file's inode
 */

/**
 * The fallback turn id: the same every time this turn is captured (a retried hook, a
 * replayed run) and different for the next message, even one with the same words.
 * @param {number} ordinal
 * @param {string} user
 */
export function turnId(ordinal, user) {
  const digest = createHash("sha256").update(user, "utf8").digest("hex").slice(0, 12);
  return `openclaw-${ordinal}-${digest}`;
}

/**
 * The entry id a message carries, when the host put it there.
 * @param {unknown} message
 * @returns {string | undefined}
 */
export function entryIdOf(message) {
  if (!message || typeof message !== "object") return undefined;
  const m = /** @type {Record<string, unknown>} */ (message);
  for (const value of [m.entryId, m.id]) {
    if (typeof value === "string" && value.trim()) return value;
  }
  return undefined;
}

/**
 * The message's own time as ISO-8601 (`timestamp` in ms or a date string), if it has one.
 * @param {unknown} message
 * @returns {string | undefined}
 */
export function messageTime(message) {
  if (!message || typeof message !== "object") return undefined;
  const value = /** @type {Record<string, unknown>} */ (message).timestamp;
  let when;
  if (typeof value === "number" && Number.isFinite(value)) when = new Date(value);
  else if (typeof value === "string" && value.trim()) when = new Date(value);
  if (!when || Number.isNaN(when.getTime())) return undefined;
  return when.toISOString();
}

/**
 * The `name` (else `username`) of a `Sender (untrusted metadata):` block, as ingest reads it.
 * @param {string} text
 * @returns {string | undefined}
 */
export function senderOf(text) {
  let found;
  for (const match of text.matchAll(SENDER_HEADER)) {
    const start = text.indexOf("{", (match.index ?? 0) + match[0].length);
    if (start < 0) continue;
    const value = parseFirstObject(text.slice(start));
    if (!value) continue;
    for (const key of ["name", "username"]) {
      const name = value[key];
      if (typeof name === "string" && name.trim()) {
        found = name.trim().slice(0, 200);
        break;
      }
    }
  }
  return found;
}

/**
 * Where the session's transcript is: the context's `sessionFile`, else the agent's
 * sessions folder in OpenClaw's state folder (`OPENCLAW_STATE_DIR`, else
 * `$OPENCLAW_HOME/.openclaw`, else `~/.openclaw`).
 * @param {any} ctx
 * @param {Record<string, string | undefined>} [env]
 * @returns {string | undefined}
 */
export function transcriptPath(ctx, env = process.env) {
  if (typeof ctx?.sessionFile === "string" && ctx.sessionFile.trim()) return ctx.sessionFile;
  const agent = ctx?.agentId;
  const session = ctx?.sessionId;
  if (!safeName(agent) || !safeName(session)) return undefined;
  return join(stateDir(env), "agents", agent, "sessions", `${session}.jsonl`);
}

/**
 * OpenClaw's state folder: `OPENCLAW_STATE_DIR`, else `$OPENCLAW_HOME/.openclaw`, else
 * `~/.openclaw`.
 * @param {Record<string, string | undefined>} env
 */
function stateDir(env) {
  return env.OPENCLAW_STATE_DIR?.trim() || join(env.OPENCLAW_HOME?.trim() || homedir(), ".openclaw");
}

/**
 * A Node built-in module by name, or undefined where this Node has none (`node:sqlite`
 * arrived in Node 22): loading it never throws into the host.
 * @param {string} id
 * @returns {any}
 */
function builtin(id) {
  try {
    return process.getBuiltinModule?.(id);
  } catch {
    return undefined;
  }
}

/**
 * The session id and message entries of a JSONL transcript; undefined when it cannot be
 * read (missing, too big). Lines that are not JSON are skipped, as ingest skips them.
 * With `mark`, only the lines after it are read (the session id is the mark's), unless
 * the file is another one or shorter than the mark.
 * @param {string} path
 * @param {TranscriptMark} [mark]
 * @returns {Transcript | undefined}
 */
export function readTranscript(path, mark) {
  let raw;
  let start = 0;
  let file;
  try {
    const stat = statSync(path);
    file = stat.ino;
    if (mark && mark.file === stat.ino && mark.end <= stat.size) start = mark.end;
    if (stat.size - start > MAX_TRANSCRIPT_BYTES) return undefined;
    raw = start > 0 ? readTail(path, start, stat.size) : readFileSync(path);
  } catch {
    return undefined;
  }
  /** @type {[string, number][]} */
  const lines = [];
  for (let at = 0; at < raw.length; ) {
    const newline = raw.indexOf(10, at);
    const end = newline < 0 ? raw.length : newline + 1;
    lines.push([raw.toString("utf8", at, newline < 0 ? end : newline), start + end]);
    at = end;
  }
  const name = path.split(/[\\/]/).pop() ?? path;
  const transcript = parseTranscript(lines, start > 0 && mark ? mark.sessionId : name.replace(/\.jsonl$/, ""));
  return { ...transcript, file };
}

/**
 * Bytes `start` to `end` of a file.
 * @param {string} path
 * @param {number} start
 * @param {number} end
 */
function readTail(path, start, end) {
  const buffer = Buffer.alloc(end - start);
  const fd = openSync(path, "r");
  try {
    let done = 0;
    while (done < buffer.length) {
      const read = readSync(fd, buffer, done, buffer.length - done, start + done);
      if (read === 0) break;
      done += read;
    }
    return buffer.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

/**
 * A transcript from its JSONL records, each with where it ends: the header's id (else
 * `fallbackId`) and the message entries. Records that are not JSON are skipped, as
 * ingest skips them.
 * @param {Iterable<[string, number]>} lines
 * @param {string} fallbackId
 * @returns {Transcript}
 */
function parseTranscript(lines, fallbackId) {
  let sessionId;
  /** @type {TranscriptEntry[]} */
  const entries = [];
  for (const [line, end] of lines) {
    if (!line.trim()) continue;
    let value;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!value || typeof value !== "object") continue;
    if (value.type === "session") {
      if (sessionId === undefined && typeof value.id === "string" && value.id) sessionId = value.id;
      continue;
    }
    const message = value.message;
    if (value.type !== "message" || !message || typeof message !== "object") continue;
    if (typeof value.id !== "string" || !value.id) continue;
    entries.push({
      id: value.id,
      role: message.role,
      timestamp: message.timestamp,
      text: contentText(message.content),
      end,
    });
  }
  return { sessionId: sessionId ?? fallbackId, entries };
}

/**
 * Where the agent's SQLite store is (OpenClaw 2026.9 and later keep transcripts there).
 * @param {any} ctx
 * @param {Record<string, string | undefined>} [env]
 * @returns {string | undefined}
 */
export function storePath(ctx, env = process.env) {
  const agent = ctx?.agentId;
  if (!safeName(agent)) return undefined;
  return join(stateDir(env), "agents", agent, "agent", "openclaw-agent.sqlite");
}

/**
 * The session's header id and message entries from the agent's SQLite store, as
 * `memoracle ingest --format openclaw-sqlite` reads them (each row of
 * `transcript_events` is one JSONL record; a zstd-compressed row is inflated where
 * Node can, else skipped). Undefined when the host's Node has no `node:sqlite`, the
 * store is missing or unreadable, or holds no row of the session. Opened read-only;
 * the rows the gateway has just written (still in the WAL) are seen.
 * With `mark`, only the rows after it are read (the session id is the mark's).
 * @param {string | undefined} path
 * @param {unknown} sessionId the gateway's session id (`ctx.sessionId`)
 * @param {TranscriptMark} [mark]
 * @returns {Transcript | undefined}
 */
export function readStoreTranscript(path, sessionId, mark) {
  if (!path || typeof sessionId !== "string" || !sessionId) return undefined;
  const sqlite = builtin("node:sqlite");
  if (!sqlite?.DatabaseSync) return undefined;
  let db;
  try {
    if (!existsSync(path)) return undefined;
    db = new sqlite.DatabaseSync(path, { readOnly: true });
    const columns = new Set(
      db.prepare("PRAGMA table_info(transcript_events)").all().map((/** @type {any} */ row) => row.name),
    );
    if (!columns.has("event_json") || !columns.has("session_id")) return undefined;
    const blob = columns.has("event_zstd") ? "event_zstd" : "NULL AS event_zstd";
    const order = columns.has("seq") ? "seq" : "rowid";
    const after = mark ? mark.end : -Infinity;
    const rows = db
      .prepare(
        `SELECT event_json, ${blob}, ${order} AS position FROM transcript_events` +
          ` WHERE session_id = ? AND ${order} > ? ORDER BY ${order}`,
      )
      .all(sessionId, after);
    if (rows.length === 0) return undefined;
    const zlib = builtin("node:zlib");
    /** @type {[string, number][]} */
    const lines = [];
    for (const row of rows) {
      const position = Number(row.position);
      if (typeof row.event_json === "string") lines.push([row.event_json, position]);
      else if (row.event_zstd && zlib?.zstdDecompressSync) {
        try {
          lines.push([zlib.zstdDecompressSync(row.event_zstd).toString("utf8"), position]);
        } catch {
          // a damaged row: its message keeps the fallback id
        }
      }
    }
    return parseTranscript(lines, mark ? mark.sessionId : sessionId);
  } catch {
    return undefined;
  } finally {
    try {
      db?.close();
    } catch {
      // closing a read-only handle cannot lose anything
    }
  }
}

/**
 * Per session, where the last turn the plugin identified ended (see the module's
 * comment): the next `agent_end` reads only what follows. Bounded: the sessions least
 * recently captured are forgotten first, and a forgotten one is read whole again.
 */
export class TranscriptMarks {
  /** @type {Map<string, TranscriptMark>} */
  #marks = new Map();
  #limit;

  /** @param {number} [limit] how many sessions are remembered */
  constructor(limit = 512) {
    this.#limit = limit;
  }

  /**
   * @param {string} key the transcript: its file, or the store and session
   * @returns {TranscriptMark | undefined}
   */
  get(key) {
    return this.#marks.get(key);
  }

  /**
   * Remember where the entries of `ids` end in `transcript` (the last of them); nothing
   * when none of them is there.
   * @param {string} key
   * @param {Transcript} transcript
   * @param {Iterable<string>} ids
   */
  note(key, transcript, ids) {
    const wanted = new Set(ids);
    let end;
    for (const entry of transcript.entries) {
      if (wanted.has(entry.id) && (end === undefined || entry.end > end)) end = entry.end;
    }
    if (end === undefined) return;
    this.#marks.delete(key);
    /** @type {TranscriptMark} */
    const mark = { sessionId: transcript.sessionId, end };
    if (transcript.file !== undefined) mark.file = transcript.file;
    this.#marks.set(key, mark);
    if (this.#marks.size > this.#limit) this.#marks.delete(this.#marks.keys().next().value ?? key);
  }

  get size() {
    return this.#marks.size;
  }
}

/**
 * The session's transcript holding `messages`: after the session's mark when there is
 * one and it holds them all, else whole. The JSONL file (`transcriptPath`) first, else
 * the agent's SQLite store. Undefined when neither can be read.
 * @param {any} ctx
 * @param {Record<string, string | undefined> | undefined} env
 * @param {unknown[]} messages the messages whose entries are wanted
 * @param {TranscriptMarks} [marks]
 * @returns {{ key: string, transcript: Transcript } | undefined}
 */
export function sessionTranscript(ctx, env, messages, marks) {
  const path = transcriptPath(ctx, env);
  const store = storePath(ctx, env);
  /** @type {[string, (mark?: TranscriptMark) => Transcript | undefined][]} */
  const sources = [];
  if (path) sources.push([`file:${path}`, (mark) => readTranscript(path, mark)]);
  sources.push([
    `store:${store}\n${ctx?.sessionId}`,
    (mark) => readStoreTranscript(store, ctx?.sessionId, mark),
  ]);
  for (const [key, read] of sources) {
    const mark = marks?.get(key);
    const recent = mark ? read(mark) : undefined;
    if (recent && messages.every((message) => findEntryId(recent, message))) {
      return { key, transcript: recent };
    }
    const whole = read();
    if (whole) return { key, transcript: whole };
  }
  return undefined;
}

/**
 * The id of the transcript entry holding `message`: the last with the same role and
 * timestamp, else the last with the same role whose text the message ends with (the
 * message may carry the recall block and the gateway's time stamp in front: 2026.9
 * stores the user's words alone, under a timestamp of its own).
 * @param {Transcript} transcript
 * @param {unknown} message
 * @returns {string | undefined}
 */
export function findEntryId(transcript, message) {
  if (!message || typeof message !== "object") return undefined;
  const m = /** @type {Record<string, unknown>} */ (message);
  const stamp = m.timestamp;
  const entries = transcript.entries.filter((entry) => entry.role === m.role);
  if (stamp !== undefined && stamp !== null) {
    const same = entries.findLast((entry) => entry.timestamp === stamp);
    if (same) return same.id;
  }
  const said = contentText(m.content).replace(RECALL_BLOCK, "").trim();
  if (!said) return undefined;
  return entries.findLast((entry) => {
    const text = entry.text.trim();
    return text !== "" && (said === text || said.endsWith(`\n${text}`) || said.endsWith(` ${text}`));
  })?.id;
}

/**
 * The text blocks of a message's content, joined.
 * @param {unknown} content
 * @returns {string}
 */
export function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => {
      if (typeof block === "string") return block;
      if (block && typeof block === "object" && block.type === "text") {
        return typeof block.text === "string" ? block.text : "";
      }
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

/** @param {unknown} value */
function safeName(value) {
  return (
    typeof value === "string" &&
    value.trim() !== "" &&
    value !== "." &&
    value !== ".." &&
    !/[\\/]/.test(value)
  );
}

/**
 * The first JSON object at the start of `text` (the rest ignored), like Python's raw_decode.
 * @param {string} text
 * @returns {Record<string, unknown> | undefined}
 */
function parseFirstObject(text) {
  const end = text.startsWith("{") ? jsonEnd(text) : 0;
  if (end === 0) return undefined;
  const value = JSON.parse(text.slice(0, end));
  return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}
