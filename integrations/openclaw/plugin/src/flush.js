// @ts-check
/**
 * The memory flush plan: what OpenClaw's silent pre-compaction turn asks of the agent.
 *
 * From OpenClaw 2026.9.6 on, `agents.defaults.compaction.memoryFlush` takes only
 * `enabled`, `model`, `softThresholdTokens` and `forceFlushTranscriptBytes`; the prompt
 * belongs to the plugin that owns the memory slot (`api.registerMemoryFlushPlan`). The
 * plan here asks the agent to hand what must outlive compaction to `memoracle checkpoint`
 * instead of writing memory files, in the very words `memoracle openclaw snippets` prints
 * (src/memoracle/openclaw/workspace.py; tests/test_openclaw_snippets.py holds them
 * equal), so memoracle's capture knows the prompt and never stores it.
 */

/** OpenClaw's own defaults for the flush thresholds. */
export const FLUSH_DEFAULTS = Object.freeze({
  softThresholdTokens: 4000,
  forceFlushTranscriptBytes: 2 * 1024 * 1024,
  reserveTokensFloor: 20000,
});

const SYSTEM_PROMPT =
  "Pre-compaction memory flush. Save durable memories with the memoracle checkpoint command" +
  " in the user message; do not write or edit memory files, MEMORY.md, SOUL.md or AGENTS.md" +
  " yourself. Usually NO_REPLY is the right answer.";

/**
 * A word for a POSIX shell, quoted as Python's shlex.quote quotes it.
 * @param {string} word
 */
export function shellQuote(word) {
  if (word === "") return "''";
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'"'"'`)}'`;
}

/**
 * The flush turn's message for a checkpoint command (its words, unquoted).
 * @param {string[]} checkpoint e.g. ["memoracle", "--home", "/h", "checkpoint"]
 */
export function flushPrompt(checkpoint) {
  return (
    "Pre-compaction memory flush: the session is near compaction. Save what must" +
    " outlive it with memoracle instead of writing memory files. Run:\n" +
    `${checkpoint.map(shellQuote).join(" ")} --text - <<'EOF'\n` +
    "- one durable point per line: decisions, facts, preferences, open tasks" +
    " (start your own words with assistant:)\n" +
    "EOF\n" +
    "memoracle appends them to memory/YYYY-MM-DD.md itself. If there is nothing to" +
    " store, reply NO_REPLY; after the command, reply NO_REPLY."
  );
}

/**
 * The resolver `api.registerMemoryFlushPlan` takes: no plan when the person turned the
 * flush off (`memoryFlush.enabled: false`), else the thresholds and model from their
 * config (OpenClaw's defaults otherwise) and memoracle's prompt with today's date in.
 * @param {string[]} checkpoint
 * @returns {(params?: { cfg?: any, nowMs?: number }) => Record<string, unknown> | null}
 */
export function flushPlanResolver(checkpoint) {
  const prompt = flushPrompt(checkpoint);
  return (params = {}) => {
    const settings = params.cfg?.agents?.defaults?.compaction?.memoryFlush ?? {};
    if (settings.enabled === false) return null;
    const nowMs = typeof params.nowMs === "number" ? params.nowMs : Date.now();
    const today = new Date(nowMs).toISOString().slice(0, 10);
    /** @type {Record<string, unknown>} */
    const plan = {
      softThresholdTokens: nonNegative(settings.softThresholdTokens) ?? FLUSH_DEFAULTS.softThresholdTokens,
      forceFlushTranscriptBytes:
        byteSize(settings.forceFlushTranscriptBytes) ?? FLUSH_DEFAULTS.forceFlushTranscriptBytes,
      reserveTokensFloor: FLUSH_DEFAULTS.reserveTokensFloor,
      prompt: prompt.split("YYYY-MM-DD").join(today),
      systemPrompt: SYSTEM_PROMPT,
      relativePath: `memory/${today}.md`,
    };
    if (typeof settings.model === "string" && settings.model.trim()) plan.model = settings.model;
    return plan;
  };
}

/** @param {unknown} value */
function nonNegative(value) {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * A byte count: a number, or a string such as "2mb" / "512kb".
 * @param {unknown} value
 */
function byteSize(value) {
  if (typeof value === "number") return nonNegative(value);
  if (typeof value !== "string") return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(value);
  if (!m) return undefined;
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? "b").toLowerCase()] ?? 1;
  return Math.floor(Number(m[1]) * unit);
}
