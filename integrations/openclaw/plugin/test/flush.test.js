// @ts-check
// The memory flush plan the plugin gives OpenClaw 2026.9+ (src/flush.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { registerMemoracle } from "../src/core.js";
import { FLUSH_DEFAULTS, flushPlanResolver, flushPrompt, shellQuote } from "../src/flush.js";

const NOW = Date.parse("2026-12-01T09:04:00Z");

test("words are quoted as shlex.quote quotes them", () => {
  assert.equal(shellQuote("/usr/bin/memoracle"), "/usr/bin/memoracle");
  assert.equal(shellQuote("/opt/my env/memoracle"), "'/opt/my env/memoracle'");
  assert.equal(shellQuote("it's"), `'it'"'"'s'`);
  assert.equal(shellQuote(""), "''");
});

test("the plan runs memoracle checkpoint, with today's date, OpenClaw's thresholds by default", () => {
  const plan = flushPlanResolver(["memoracle", "--home", "/h", "checkpoint"])({ nowMs: NOW });
  assert.ok(plan);
  assert.equal(plan.softThresholdTokens, FLUSH_DEFAULTS.softThresholdTokens);
  assert.equal(plan.forceFlushTranscriptBytes, FLUSH_DEFAULTS.forceFlushTranscriptBytes);
  assert.equal(plan.relativePath, "memory/2026-12-01.md");
  assert.match(String(plan.prompt), /\nmemoracle --home \/h checkpoint --text - <<'EOF'\n/);
  assert.match(String(plan.prompt), /memory\/2026-12-01\.md itself/);
  assert.ok(!("model" in plan));
});

test("the person's memoryFlush settings are kept, and enabled: false means no flush", () => {
  const resolve = flushPlanResolver(["memoracle", "checkpoint"]);
  const flush = { softThresholdTokens: 9000, forceFlushTranscriptBytes: "1mb", model: "ollama/qwen3:8b" };
  const plan = resolve({ cfg: { agents: { defaults: { compaction: { memoryFlush: flush } } } }, nowMs: NOW });
  assert.ok(plan);
  assert.equal(plan.softThresholdTokens, 9000);
  assert.equal(plan.forceFlushTranscriptBytes, 1024 * 1024);
  assert.equal(plan.model, "ollama/qwen3:8b");
  const off = { agents: { defaults: { compaction: { memoryFlush: { enabled: false } } } } };
  assert.equal(resolve({ cfg: off, nowMs: NOW }), null);
});

test("the plugin registers the plan where the host takes one, with its command and home", () => {
  /** @type {any[]} */
  const plans = [];
  const api = {
    pluginConfig: { command: "/opt/my env/memoracle", home: "/srv/mem" },
    on() {},
    registerMemoryFlushPlan(/** @type {any} */ resolver) {
      plans.push(resolver);
    },
  };
  registerMemoracle(api);
  assert.equal(plans.length, 1);
  const plan = plans[0]({ nowMs: NOW });
  assert.equal(
    plan.prompt.split("\n")[1],
    "'/opt/my env/memoracle' --home /srv/mem checkpoint --text - <<'EOF'",
  );
  // An older host without the call: the hooks still register.
  registerMemoracle({ pluginConfig: {}, on() {} });
  assert.equal(flushPrompt(["m"]).includes("NO_REPLY"), true);
});
