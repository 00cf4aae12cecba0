/**
 * The OpenClaw entry of the memoracle memory plugin: identity and registration only.
 * Everything it does lives in ./core.js, which imports nothing from OpenClaw so its
 * tests run on plain Node (see test/).
 *
 * Which registration API the host has is detected here, not assumed from a version
 * string: a gateway with `api.registerMemoryCapability` (2026.9.x) takes the flush plan
 * as the memory capability's `flushPlanResolver`, so core's `registerMemoryFlushPlan`
 * call is routed there; an older host keeps its own `registerMemoryFlushPlan` (or none)
 * and the hooks alone, as before.
 */
import { definePluginEntry } from "openclaw/plugin-sdk/plugin-entry";

import { pluginConfigSchema, registerMemoracle } from "./core.js";

type FlushPlanResolver = (params?: any) => any;

/**
 * The api core.js registers on: the host's own, or, where the host has
 * `registerMemoryCapability` and no `registerMemoryFlushPlan`, a view of it whose
 * `registerMemoryFlushPlan` registers the capability with that resolver.
 */
export function withMemoryCapability<T extends object>(api: T): T {
  const host = api as Record<string, unknown>;
  const register = host.registerMemoryCapability;
  if (typeof register !== "function" || typeof host.registerMemoryFlushPlan === "function") {
    return api;
  }
  const registerMemoryFlushPlan = (resolver: FlushPlanResolver) =>
    register.call(api, { flushPlanResolver: resolver });
  return new Proxy(api, {
    get(target, key) {
      if (key === "registerMemoryFlushPlan") return registerMemoryFlushPlan;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
    has(target, key) {
      return key === "registerMemoryFlushPlan" || Reflect.has(target, key);
    },
  });
}

export default definePluginEntry({
  id: "memoracle",
  name: "memoracle",
  description:
    "Local long-term memory: recalls what matters before each turn and captures each finished turn (memoracle CLI or MCP over loopback HTTP).",
  kind: "memory",
  configSchema: pluginConfigSchema,
  register(api) {
    registerMemoracle(withMemoryCapability(api));
  },
});
