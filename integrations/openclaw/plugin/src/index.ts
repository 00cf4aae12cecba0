/**
 * The OpenClaw entry of the memoracle memory plugin: identity and registration only.
 * Everything it does lives in ./core.js, which imports nothing from OpenClaw so its
 * tests run on plain Node (see test/).
 */
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { pluginConfigSchema, registerMemoracle } from "./core.js";

export default definePluginEntry({
  id: "memoracle",
  name: "memoracle",
  description:
    "Local long-term memory: recalls what matters before each turn and captures each finished turn (memoracle CLI or MCP over loopback HTTP).",
  kind: "memory",
  configSchema: pluginConfigSchema,
  register(api) {
    registerMemoracle(api);
  },
});
