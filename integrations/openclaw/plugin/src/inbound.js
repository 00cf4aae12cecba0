// @ts-check
/**
 * The person's own words in an OpenClaw user message: the gateway's wrappers cut off,
 * as `memoracle ingest` cuts them (src/memoracle/ingest/envelope.py, `strip_inbound`),
 * so what the plugin captures is what they said, not the `Sender (untrusted metadata)`
 * block of a channel message or its time envelope.
 *
 * Cut from the start, in any order: untrusted-metadata blocks (a header line such as
 * `Sender (untrusted metadata):` or `Replied message (untrusted, for context):` and the
 * fenced or bare JSON after it, or a one-line value), `System: [date …] …` event lines,
 * `[message_id: …]` hints and envelopes (`[Mon 2026-12-07 08:15 UTC]`,
 * `[Telegram Ana +2m …]`); from anywhere, `[message_id: …]` lines and the
 * `Untrusted context (metadata, …):` block OpenClaw appends.
 */

const META_HEADER = /^([A-Z][A-Za-z ]{0,60})\(untrusted[^)\n]*\):[ \t]*([^\n]*)(?:\n|$)/i;
const SYSTEM_LINE = /^System(?: \([^)\n]*\))?: \[[^\]\n]*\d{4}-\d{2}-\d{2}[^\]\n]*\][^\n]*(?:\n|$)/;
const MESSAGE_ID_LINE = /^[ \t]*\[message_id:[^\]\n]*\][ \t]*(?:\n|$)/;
const MESSAGE_ID_LINES = /^[ \t]*\[message_id:[^\]\n]*\][ \t]*(?:\n|$)/gm;
const ENVELOPE = /^\[([^[\]\n]{1,200})\][ \t]*\n?/;
const DATE_TIME = /\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}/;
const CLOSING_FENCE = /^[ \t]*```[ \t]*$/m;
const UNTRUSTED_CONTEXT = /^[ \t]*Untrusted context \(metadata[^\n]*\):[ \t]*$/im;
const CHANNELS = [
  "WebChat", "WhatsApp", "Telegram", "Signal", "Slack", "Discord", "Google Chat",
  "iMessage", "Teams", "Matrix", "Zalo", "BlueBubbles",
];

/**
 * The words of a user message without the gateway's wrappers.
 * @param {string} text
 */
export function inboundWords(text) {
  let rest = text;
  for (;;) {
    rest = rest.replace(/^[ \t\r\n]+/, "");
    if (!rest) break;
    const meta = META_HEADER.exec(rest);
    if (meta) {
      const after = rest.slice(meta[0].length);
      rest = meta[2].trim() ? after : skipBlock(after);
      continue;
    }
    const line = SYSTEM_LINE.exec(rest) ?? MESSAGE_ID_LINE.exec(rest);
    if (line) {
      rest = rest.slice(line[0].length);
      continue;
    }
    const envelope = ENVELOPE.exec(rest);
    if (envelope && looksLikeEnvelope(envelope[1])) {
      rest = rest.slice(envelope[0].length);
      continue;
    }
    break;
  }
  const context = UNTRUSTED_CONTEXT.exec(rest);
  if (context) rest = rest.slice(0, context.index);
  return rest.replace(MESSAGE_ID_LINES, "").trim();
}

/** @param {string} head */
function looksLikeEnvelope(head) {
  return DATE_TIME.test(head) || CHANNELS.some((channel) => head.startsWith(`${channel} `));
}

/**
 * What follows a metadata block's value: a fenced block, a bare JSON value, or a line.
 * @param {string} text
 */
function skipBlock(text) {
  const start = text.length - text.replace(/^[ \t\r\n]+/, "").length;
  const body = text.slice(start);
  if (body.startsWith("```")) {
    const lineEnd = body.indexOf("\n");
    if (lineEnd < 0) return "";
    const close = CLOSING_FENCE.exec(body.slice(lineEnd + 1));
    return close ? body.slice(lineEnd + 1 + close.index + close[0].length) : "";
  }
  if (body.startsWith("{") || body.startsWith("[")) {
    const end = jsonEnd(body);
    if (end > 0) return body.slice(end);
  }
  const lineEnd = body.indexOf("\n");
  return lineEnd < 0 ? "" : body.slice(lineEnd + 1);
}

/**
 * Where the JSON value that opens `text` ends, or 0 when it is not one.
 * @param {string} text
 * @returns {number}
 */
export function jsonEnd(text) {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i += 1;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") depth += 1;
    else if (ch === "}" || ch === "]") {
      depth -= 1;
      if (depth === 0) {
        try {
          JSON.parse(text.slice(0, i + 1));
          return i + 1;
        } catch {
          return 0;
        }
      }
    }
  }
  return 0;
}
