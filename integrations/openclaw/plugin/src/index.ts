/**
 * The OpenClaw entry of the memoracle memory plugin: identity and registration only.
 * Everything it does lives in ./core.js (and ./slot.js, ./provenance.js, ./heartbeat.js),
 * which import nothing from OpenClaw so their tests run on plain Node (see test/).
 *
 * Which registration API the host has is detected in core.js, not assumed from a
 * version string: a gateway with `api.registerMemoryCapability` (2026.9.x) gets the
 * whole memory capability (search runtime, hit authorization, the workspace memory
 * files' provenance, prompt section, public artifacts, flush plan) and the
 * `memory_search`/`memory_get` tools; an older host its own `registerMemoryFlushPlan`
 * (or none) and the hooks alone, as before.
 */
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { pluginConfigSchema, registerMemoracle } from "./core.js";

/**
 * Where OpenClaw 2026.9.x keeps the origins it recorded when its own tools wrote a
 * workspace memory file (`readMemoryArtifactProvenance`, what memory-core's classifier
 * reads). Loaded at the first classification; a host without it fails that
 * classification, and OpenClaw then leaves MEMORY.md out of the context as before.
 */
const PROVENANCE_SDK = "openclaw/plugin-sdk/memory-core-host-runtime-core";

async function readRecorded(params: { workspaceDir: string; relativePath: string }) {
  const sdk = (await import(PROVENANCE_SDK)) as {
    readMemoryArtifactProvenance?: (p: typeof params) => Promise<{ originClass: "owner" | "agent" | "untrusted" | "system" } | undefined>;
  };
  if (typeof sdk.readMemoryArtifactProvenance !== "function") {
    throw new Error(`${PROVENANCE_SDK} has no readMemoryArtifactProvenance`);
  }
  return sdk.readMemoryArtifactProvenance(params);
}

export default definePluginEntry({
  id: "memoracle",
  name: "memoracle",
  description:
    "Local long-term memory: the gateway's memory slot (memory_search, memory_get), recall before each turn, capture after it, heartbeat checkpoints (memoracle's warm server, its CLI, or MCP over loopback HTTP).",
  kind: "memory",
  configSchema: pluginConfigSchema,
  register(api) {
    registerMemoracle(api as any, { readRecorded });
  },
});
