/**
 * The OpenClaw entry of the memoracle memory plugin: identity and registration only.
 * Everything it does lives in ./core.js (and ./slot.js, ./heartbeat.js), which import
 * nothing from OpenClaw so their tests run on plain Node (see test/).
 *
 * Which registration API the host has is detected in core.js, not assumed from a
 * version string: a gateway with `api.registerMemoryCapability` (2026.9.x) gets the
 * whole memory capability (search runtime, hit authorization, prompt section, public
 * artifacts, flush plan) and the `memory_search`/`memory_get` tools; an older host its
 * own `registerMemoryFlushPlan` (or none) and the hooks alone, as before.
 */
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { pluginConfigSchema, registerMemoracle } from "./core.js";

export default definePluginEntry({
  id: "memoracle",
  name: "memoracle",
  description:
    "Local long-term memory: the gateway's memory slot (memory_search, memory_get), recall before each turn, capture after it, heartbeat checkpoints (memoracle's warm server, its CLI, or MCP over loopback HTTP).",
  kind: "memory",
  configSchema: pluginConfigSchema,
  register(api) {
    registerMemoracle(api as any);
  },
});
