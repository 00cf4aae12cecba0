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
 *    OpenClaw finds it) and takes the id of the entry holding the same message (same
 *    role and `timestamp`, else same role and text), and the session from its header;
 * 3. with neither, `openclaw-<ordinal>-<sha12 of the user text>`: stable for a retried
 *    hook, but not the id ingest gives, so a later ingest stores the turn again.
 *
 * The rule is held by tests on both sides: test/turn.test.js here, and
 * tests/test_openclaw_turn_identity.py against the real CLI and ingest.
 */

import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Transcripts above this are not read for ids (the fallback id is used). */
const MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024;
const SENDER_HEADER = /Sender\s*\(untrusted[^)\n]*\):[ \t]*/gi;

/**
 * @typedef {object} TranscriptEntry
 * @property {string} id
 * @property {unknown} role
 * @property {unknown} timestamp the message's own timestamp
 * @property {string} text
 */

/**
 * @typedef {object} Transcript
 * @property {string} sessionId the header's id, else the file name
 * @property {TranscriptEntry[]} entries message entries, in file order
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
  const state =
    env.OPENCLAW_STATE_DIR?.trim() || join(env.OPENCLAW_HOME?.trim() || homedir(), ".openclaw");
  return join(state, "agents", agent, "sessions", `${session}.jsonl`);
}

/**
 * The session id and message entries of a JSONL transcript; undefined when it cannot be
 * read (missing, too big). Lines that are not JSON are skipped, as ingest skips them.
 * @param {string} path
 * @returns {Transcript | undefined}
 */
export function readTranscript(path) {
  let raw;
  try {
    if (statSync(path).size > MAX_TRANSCRIPT_BYTES) return undefined;
    raw = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  let sessionId;
  /** @type {TranscriptEntry[]} */
  const entries = [];
  for (const line of raw.split("\n")) {
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
    });
  }
  const name = path.split(/[\\/]/).pop() ?? path;
  return { sessionId: sessionId ?? name.replace(/\.jsonl$/, ""), entries };
}

/**
 * The id of the transcript entry holding `message`: the last with the same role and
 * timestamp, else (no timestamp on the message) the last with the same role and text.
 * @param {Transcript} transcript
 * @param {unknown} message
 * @returns {string | undefined}
 */
export function findEntryId(transcript, message) {
  if (!message || typeof message !== "object") return undefined;
  const m = /** @type {Record<string, unknown>} */ (message);
  const stamp = m.timestamp;
  const text = contentText(m.content);
  for (let i = transcript.entries.length - 1; i >= 0; i -= 1) {
    const entry = transcript.entries[i];
    if (entry.role !== m.role) continue;
    if (stamp !== undefined && stamp !== null ? entry.timestamp === stamp : entry.text === text) {
      return entry.id;
    }
  }
  return undefined;
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
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i += 1;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") depth += 1;
    else if (ch === "}") {
      depth -= 1;
      if (depth === 0) {
        try {
          const value = JSON.parse(text.slice(0, i + 1));
          return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
        } catch {
          return undefined;
        }
      }
    }
  }
  return undefined;
}
