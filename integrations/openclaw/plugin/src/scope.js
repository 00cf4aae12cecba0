// @ts-check
/**
 * Whose memory a turn is: the memoracle scope (agent, user, chat, private or shared) of
 * one OpenClaw turn, read from what the gateway says about it in the hook context.
 *
 * memoracle's rule (docs/scopes.md): a private request (agent A, user U) sees that
 * person's items; a shared request (agent A, chat C) sees only that chat's shared items.
 * OpenClaw names each conversation by its session key (src/routing/session-key.ts of
 * openclaw 2026.9.6, `buildAgentPeerSessionKey`):
 *
 * | session key                                   | what it is                          | scope                                   |
 * | --------------------------------------------- | ----------------------------------- | --------------------------------------- |
 * | `agent:<id>:main`                              | the main session (`dmScope: main`)  | the owner's private scope               |
 * | `agent:<id>:dashboard:<…>`                     | a Control UI thread of the operator | the owner's private scope               |
 * | `agent:<id>:direct:<peer>`                     | a DM, `dmScope: per-peer`           | that person's: user `<peer>`            |
 * | `agent:<id>:<ch>:direct:<peer>`                | a DM, `per-channel-peer`            | that person's: user `<ch>:<peer>`       |
 * | `agent:<id>:<ch>:<account>:direct:<peer>`      | a DM, `per-account-channel-peer`    | that person's: user `<ch>:<peer>`       |
 * | `agent:<id>:<ch>:group:<gid>` (`channel`)      | a group, room or channel            | shared, chat `<ch>:group:<gid>`         |
 * | anything else (cron, hook, subagent, acp, `global`, custom keys, none) | cannot tell | fail-safe: shared, chat `openclaw-session:<key>` |
 *
 * The legacy `dm` kind reads as `direct`; a `:thread:<id>` suffix belongs to its base
 * conversation. A DM with a peer listed as the owner (`ownerPeers` in the plugin's
 * config, or OpenClaw's `commands.ownerAllowFrom`) is the owner's. In the main session,
 * a sender known not to be the owner (an owner list is set and the sender is not on it)
 * gets their own private scope; and where the gateway routes groups into the main
 * session (`session.groupScope: "main"`, globally or in a binding), a turn there that
 * came from a channel may be a group's, so it gets the fail-safe scope.
 *
 * The fail-safe scope is shared and names a chat no one else uses: such a turn recalls
 * only what was said in that same session, and is captured there; never the owner's.
 */

/** @typedef {"owner" | "direct" | "group" | "failsafe"} ScopeKind */

/**
 * The scope fields as `memoracle serve` and `capture --json` read them; an absent
 * agent or user means the workspace's own (the owner's).
 * @typedef {object} WireScope
 * @property {string} [agent]
 * @property {string} [user_id]
 * @property {string} [chat]
 * @property {"private" | "shared"} visibility
 */

/**
 * @typedef {object} TurnScope
 * @property {ScopeKind} kind
 * @property {WireScope} scope
 * @property {string} reason why, for the debug log
 * @property {string | undefined} sender the sender's id as the gateway gave it
 */

/**
 * @typedef {object} ParsedKey
 * @property {string | undefined} agentId
 * @property {"main" | "dashboard" | "direct" | "group" | "other"} shape
 * @property {string} [channel]
 * @property {string} [peer] the direct peer, or the group's id
 * @property {string} [kind] group | channel
 */

/** Segments OpenClaw starts its own non-conversation keys with. */
const GROUP_KINDS = new Set(["group", "channel"]);
const DIRECT_KINDS = new Set(["direct", "dm"]);
/** Message providers that are the operator's own surfaces, not a channel. */
const LOCAL_PROVIDERS = new Set(["", "cli", "webchat", "control-ui", "dashboard", "internal", "gateway", "tui"]);

/**
 * The parts of a session key memoracle's mapping needs.
 * @param {unknown} sessionKey
 * @returns {ParsedKey}
 */
export function parseSessionKey(sessionKey) {
  const raw = typeof sessionKey === "string" ? sessionKey.trim() : "";
  if (!raw) return { agentId: undefined, shape: "other" };
  let parts = raw.split(":");
  /** @type {string | undefined} */
  let agentId;
  if (parts[0].toLowerCase() === "agent" && parts.length >= 3 && parts[1]) {
    agentId = parts[1].toLowerCase();
    parts = parts.slice(2);
  } else if (parts[0].toLowerCase() === "agent") {
    return { agentId: undefined, shape: "other" };
  }
  const thread = parts.findIndex((p, i) => i > 0 && p.toLowerCase() === "thread");
  if (thread > 0) parts = parts.slice(0, thread);
  const lower = parts.map((p) => p.toLowerCase());
  if (lower.length === 1 && lower[0] === "main") return { agentId, shape: "main" };
  if (lower[0] === "dashboard" && lower.length >= 2) return { agentId, shape: "dashboard" };
  if (DIRECT_KINDS.has(lower[0]) && parts.length >= 2) {
    return { agentId, shape: "direct", peer: nonEmpty(parts.slice(1).join(":")) };
  }
  if (lower.length >= 3 && DIRECT_KINDS.has(lower[1])) {
    return { agentId, shape: "direct", channel: lower[0], peer: nonEmpty(parts.slice(2).join(":")) };
  }
  if (lower.length >= 4 && DIRECT_KINDS.has(lower[2])) {
    return { agentId, shape: "direct", channel: lower[0], peer: nonEmpty(parts.slice(3).join(":")) };
  }
  if (lower.length >= 3 && GROUP_KINDS.has(lower[1])) {
    return { agentId, shape: "group", channel: lower[0], kind: lower[1], peer: nonEmpty(parts.slice(2).join(":")) };
  }
  return { agentId, shape: "other" };
}

/**
 * Who the owner is on the channels: the plugin's `ownerPeers` and OpenClaw's
 * `commands.ownerAllowFrom`, lower-cased (`telegram:123`, or a bare canonical id such as
 * an identity link's name).
 * @param {string[] | undefined} ownerPeers
 * @param {any} hostConfig OpenClaw's config (`api.config`), if the host gives it
 * @returns {Set<string>}
 */
export function ownerIdentities(ownerPeers, hostConfig) {
  const out = new Set();
  const listed = hostConfig?.commands?.ownerAllowFrom;
  for (const value of [...(ownerPeers ?? []), ...(Array.isArray(listed) ? listed : [])]) {
    if ((typeof value === "string" || typeof value === "number") && String(value).trim() && String(value).trim() !== "*") {
      out.add(String(value).trim().toLowerCase());
    }
  }
  return out;
}

/**
 * Whether OpenClaw may route a group into the main session: `session.groupScope` or a
 * binding's `session.groupScope` is "main".
 * @param {any} hostConfig
 */
export function groupsReachMain(hostConfig) {
  if (hostConfig?.session?.groupScope === "main") return true;
  const bindings = hostConfig?.bindings;
  return Array.isArray(bindings) && bindings.some((b) => b?.session?.groupScope === "main");
}

/**
 * @typedef {object} ScopeSettings
 * @property {string | undefined} agent the plugin's `agent`: the owner's memoracle agent
 * @property {string | undefined} userId the plugin's `userId`: the owner's memoracle user
 * @property {Set<string>} owners see ownerIdentities
 * @property {boolean} groupsInMain see groupsReachMain
 */

/**
 * The scope of the turn the hook context describes (see the table above).
 * @param {any} ctx the hook's context: sessionKey, agentId, channel/messageProvider, senderId
 * @param {ScopeSettings} settings
 * @returns {TurnScope}
 */
export function turnScope(ctx, settings) {
  const key = typeof ctx?.sessionKey === "string" ? ctx.sessionKey.trim() : "";
  const parsed = parseSessionKey(key);
  const agentId = (nonEmpty(ctx?.agentId) ?? parsed.agentId)?.toLowerCase();
  const channel = (nonEmpty(ctx?.channel) ?? nonEmpty(ctx?.messageProvider) ?? "").toLowerCase();
  const sender = nonEmpty(ctx?.senderId ?? ctx?.channelContext?.sender?.id);
  // The owner's agent is the gateway's default one, or the one the config names; any
  // other OpenClaw agent keeps its own memory under its own id.
  const ownAgent = !agentId || agentId === "main" || agentId === settings.agent?.toLowerCase();
  const agent = ownAgent ? settings.agent : agentId;
  /** @type {(reason: string) => TurnScope} */
  const owner = (reason) => ({
    kind: ownAgent ? "owner" : "direct",
    scope: strip({ agent, user_id: settings.userId, visibility: "private" }),
    reason,
    sender,
  });
  /** @type {(user: string, reason: string) => TurnScope} */
  const person = (user, reason) => ({
    kind: "direct",
    scope: strip({ agent, user_id: user, visibility: "private" }),
    reason,
    sender,
  });
  /** @type {(reason: string) => TurnScope} */
  const failsafe = (reason) => ({
    kind: "failsafe",
    scope: strip({ agent, user_id: `openclaw-session:${key || "none"}`, chat: `openclaw-session:${key || "none"}`, visibility: "shared" }),
    reason,
    sender,
  });
  const isOwner = (/** @type {string | undefined} */ id, /** @type {string} */ on) =>
    id !== undefined && (settings.owners.has(`${on}:${id}`.toLowerCase()) || settings.owners.has(id.toLowerCase()));

  switch (parsed.shape) {
    case "main": {
      const fromChannel = sender !== undefined || !LOCAL_PROVIDERS.has(channel);
      if (settings.groupsInMain && fromChannel) {
        return failsafe(`session ${key}: groups are routed into the main session (session.groupScope "main") and this turn came from ${channel || "a channel"}`);
      }
      if (sender !== undefined && settings.owners.size > 0 && !isOwner(sender, channel)) {
        return person(qualified(channel, sender), `session ${key}: sender ${sender} on ${channel || "a channel"} is not among the owner's ids`);
      }
      return owner(`session ${key}: the main session`);
    }
    case "dashboard":
      return owner(`session ${key}: a Control UI thread`);
    case "direct": {
      if (!parsed.peer) return failsafe(`session ${key}: a direct session without a peer`);
      const on = parsed.channel ?? channel;
      if (isOwner(parsed.peer, on)) return owner(`session ${key}: a direct chat with the owner`);
      const user = parsed.channel ? `${parsed.channel}:${parsed.peer}` : parsed.peer;
      return person(user.toLowerCase(), `session ${key}: a direct chat with ${user}`);
    }
    case "group": {
      if (!parsed.peer || !parsed.channel) return failsafe(`session ${key}: a group session without an id`);
      const chat = `${parsed.channel}:${parsed.kind}:${parsed.peer}`;
      // The person who spoke, when the gateway says who: their own words then reach
      // their private context too; otherwise no one's private context sees them.
      const user = sender === undefined ? `openclaw-group:${chat}` : isOwner(sender, parsed.channel) ? settings.userId : qualified(parsed.channel, sender);
      return {
        kind: "group",
        scope: strip({ agent, user_id: user, chat, visibility: "shared" }),
        reason: `session ${key}: the ${parsed.kind} ${parsed.peer} on ${parsed.channel}${sender === undefined ? " (no sender id)" : ""}`,
        sender,
      };
    }
    default:
      return failsafe(key ? `session key ${key} is of no shape memoracle maps` : "the gateway gave no session key");
  }
}

/**
 * The CLI flags of a scope: `--agent --user-id --chat --visibility`.
 * @param {WireScope} scope
 * @returns {string[]}
 */
export function scopeFlags(scope) {
  const flags = [];
  if (scope.agent) flags.push("--agent", scope.agent);
  if (scope.user_id) flags.push("--user-id", scope.user_id);
  if (scope.chat) flags.push("--chat", scope.chat);
  if (scope.visibility && scope.visibility !== "private") flags.push("--visibility", scope.visibility);
  return flags;
}

/**
 * A stable id for a sender: `<channel>:<id>`, lower-cased as OpenClaw's keys are.
 * @param {string} channel
 * @param {string} id
 */
function qualified(channel, id) {
  return (channel ? `${channel}:${id}` : id).toLowerCase();
}

/** @param {unknown} value */
function nonEmpty(value) {
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/**
 * The scope without absent fields.
 * @param {{ agent?: string, user_id?: string, chat?: string, visibility: "private" | "shared" }} scope
 * @returns {WireScope}
 */
function strip(scope) {
  /** @type {WireScope} */
  const out = { visibility: scope.visibility };
  if (scope.agent) out.agent = scope.agent;
  if (scope.user_id) out.user_id = scope.user_id;
  if (scope.chat) out.chat = scope.chat;
  return out;
}
