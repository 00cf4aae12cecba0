// @ts-check
/**
 * Heartbeat checkpoints: how full a session's context is, and which share of it has been
 * passed for the first time.
 *
 * OpenClaw 2026.9.x hands `agent_end` the session's messages, each assistant message
 * with the `usage` of the model call that wrote it (`input`, `output`, `cacheRead`,
 * `cacheWrite`, `totalTokens`). The run's context window is read from the hook's context
 * when the host puts it there (`contextTokenBudget`, else `modelContextWindowTokens`);
 * 2026.9.6 does not: its embedded runner builds `modelContextWindowTokens`, but the
 * harness's hook context (`buildAgentHookContext`) copies a fixed list of fields that
 * leaves it out. The window is then the one the gateway's config gives the run's model
 * (`models.providers.<provider>.models[]`: `contextTokens`, else `contextWindow`),
 * capped by `agents.defaults.contextTokens`. The last call's tokens over that budget is
 * how full the context is now. When it passes a
 * share in `checkpointAt` (default 50 % and 80 %) for the first time in a session, the
 * plugin checkpoints the live session (./core.js): once per share per session, however
 * many turns stay above it. A run whose window neither the hook nor the config gives
 * (a built-in model the config does not list), or with no usage, gets no heartbeat
 * checkpoint (its pre-compaction flush still runs).
 */

/** The shares of the context window that trigger a checkpoint, by default. */
export const DEFAULT_CHECKPOINT_AT = Object.freeze([0.5, 0.8]);

/**
 * How full the context is after the turn in `messages` (0.52 = 52 %), or undefined when
 * no budget or no usage is known.
 * @param {unknown} messages agent_end's `messages`
 * @param {any} ctx agent_end's context (`contextTokenBudget`, else `modelContextWindowTokens`,
 *   else the window `hostConfig` gives its `modelProviderId`/`modelId`)
 * @param {any} [hostConfig] the gateway's config (`api.config`)
 * @returns {number | undefined}
 */
export function contextFill(messages, ctx, hostConfig) {
  const budget = [ctx?.contextTokenBudget, ctx?.modelContextWindowTokens].find(positive) ??
    configuredWindow(hostConfig, ctx?.modelProviderId, ctx?.modelId);
  if (!positive(budget)) return undefined;
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (!message || typeof message !== "object" || message.role !== "assistant") continue;
    const tokens = usedTokens(message.usage);
    if (tokens !== undefined) return tokens / budget;
  }
  return undefined;
}

/**
 * The context window the gateway's config gives a model: its entry under
 * `models.providers.<provider>.models` (`contextTokens`, else `contextWindow`), capped
 * by `agents.defaults.contextTokens`; undefined when the config does not list the model.
 * @param {any} hostConfig
 * @param {unknown} provider
 * @param {unknown} modelId
 * @returns {number | undefined}
 */
export function configuredWindow(hostConfig, provider, modelId) {
  if (typeof provider !== "string" || typeof modelId !== "string") return undefined;
  const models = hostConfig?.models?.providers?.[provider]?.models;
  const entry = Array.isArray(models) ? models.find((m) => m?.id === modelId) : undefined;
  const window = [entry?.contextTokens, entry?.contextWindow].find(positive);
  if (window === undefined) return undefined;
  const cap = hostConfig?.agents?.defaults?.contextTokens;
  return positive(cap) ? Math.min(window, cap) : window;
}

/**
 * @param {unknown} value
 * @returns {value is number}
 */
function positive(value) {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}

/**
 * The tokens a model call's usage says the context held: `totalTokens`, else the sum of
 * its parts.
 * @param {any} usage
 */
export function usedTokens(usage) {
  if (!usage || typeof usage !== "object") return undefined;
  const count = (/** @type {unknown} */ v) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
  if (typeof usage.totalTokens === "number" && usage.totalTokens > 0) return usage.totalTokens;
  const sum = count(usage.input) + count(usage.output) + count(usage.cacheRead) + count(usage.cacheWrite);
  return sum > 0 ? sum : undefined;
}

/**
 * Per session, the shares already checkpointed. Bounded: the sessions least recently
 * seen are forgotten first (a forgotten session may be checkpointed again, which stores
 * nothing twice).
 */
export class CheckpointTracker {
  /** @type {Map<string, number>} the highest share passed, per session */
  #passed = new Map();
  #shares;
  #limit;

  /**
   * @param {readonly number[]} shares each in (0, 1)
   * @param {number} [limit] how many sessions are remembered
   */
  constructor(shares, limit = 1024) {
    this.#shares = [...shares].sort((a, b) => a - b);
    this.#limit = limit;
  }

  /**
   * The highest share `fill` passes that this session had not passed yet (and note it
   * and every lower one as passed), else undefined.
   * @param {string} session
   * @param {number | undefined} fill
   * @returns {number | undefined}
   */
  due(session, fill) {
    if (fill === undefined || this.#shares.length === 0) return undefined;
    const before = this.#passed.get(session) ?? 0;
    const reached = this.#shares.filter((share) => fill >= share).at(-1);
    if (reached === undefined || reached <= before) return undefined;
    this.#passed.delete(session);
    this.#passed.set(session, reached);
    if (this.#passed.size > this.#limit) this.#passed.delete(this.#passed.keys().next().value ?? session);
    return reached;
  }
}

/**
 * `checkpointAt` from the plugin's config: a list of shares, each above 0 and below 1.
 * @param {unknown} value
 * @returns {number[]}
 */
export function parseShares(value) {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "number" && v > 0 && v < 1)) {
    throw new Error("config checkpointAt must be a list of shares of the context window, each above 0 and below 1 (e.g. [0.5, 0.8])");
  }
  return [...new Set(value)].sort((a, b) => a - b);
}

/**
 * A share as a person reads it: 0.5 → "50 %".
 * @param {number} share
 */
export function percent(share) {
  return `${Math.round(share * 100)} %`;
}
