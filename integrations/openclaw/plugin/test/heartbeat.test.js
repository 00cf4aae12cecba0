// @ts-check
// Heartbeat checkpoints (src/heartbeat.js): how full the context is from what the
// gateway hands agent_end, and each share passed once per session.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { createHooks, parseConfig } from "../src/core.js";
import { CheckpointTracker, contextFill, parseShares } from "../src/heartbeat.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** @param {number} tokens */
const answer = (tokens) => ({ role: "assistant", content: "ok", usage: { input: tokens - 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: tokens } });

describe("context fill", () => {
  test("the last answer's tokens over the turn's budget", () => {
    const messages = [{ role: "user", content: "hi" }, answer(100), { role: "user", content: "and?" }, answer(640)];
    assert.equal(contextFill(messages, { contextTokenBudget: 1000 }), 0.64);
    const parts = [{ role: "assistant", content: "x", usage: { input: 300, output: 20, cacheRead: 180 } }];
    assert.equal(contextFill(parts, { contextTokenBudget: 1000 }), 0.5);
    // agent_end's own name for it on 2026.9.6
    assert.equal(contextFill(parts, { modelContextWindowTokens: 2000 }), 0.25);
  });

  test("a hook context without the window (2026.9.6's agent_end): the config's window for the run's model", () => {
    /** @type {any} */
    const config = { models: { providers: { fake: { models: [{ id: "m1", contextWindow: 64000 }] } } } };
    const ctx = { sessionKey: "agent:main:main", modelProviderId: "fake", modelId: "m1" };
    assert.equal(contextFill([answer(35200)], ctx, config), 0.55);
    // contextTokens before contextWindow; agents.defaults.contextTokens caps both.
    config.models.providers.fake.models[0] = { id: "m1", contextWindow: 64000, contextTokens: 32000 };
    assert.equal(contextFill([answer(16000)], ctx, config), 0.5);
    assert.equal(contextFill([answer(16000)], ctx, { ...config, agents: { defaults: { contextTokens: 20000 } } }), 0.8);
    // The hook's own window, when it gives one, comes first.
    assert.equal(contextFill([answer(16000)], { ...ctx, contextTokenBudget: 160000 }, config), 0.1);
    // A model the config does not list: unknown.
    assert.equal(contextFill([answer(16000)], { ...ctx, modelId: "other" }, config), undefined);
    assert.equal(contextFill([answer(16000)], ctx, undefined), undefined);
  });

  test("no budget or no usage: unknown, no checkpoint", () => {
    assert.equal(contextFill([answer(640)], {}), undefined);
    assert.equal(contextFill([{ role: "assistant", content: "x" }], { contextTokenBudget: 1000 }), undefined);
  });
});

describe("the tracker", () => {
  test("each share once per session; two passed at once give one checkpoint", () => {
    const tracker = new CheckpointTracker([0.5, 0.8]);
    assert.equal(tracker.due("a", 0.3), undefined);
    assert.equal(tracker.due("a", 0.55), 0.5);
    assert.equal(tracker.due("a", 0.6), undefined);
    assert.equal(tracker.due("a", 0.85), 0.8);
    assert.equal(tracker.due("a", 0.95), undefined);
    assert.equal(tracker.due("b", 0.9), 0.8);
    assert.equal(tracker.due("b", 0.6), undefined);
  });

  test("checkpointAt: shares above 0 and below 1, default 50 % and 80 %", () => {
    assert.deepEqual(parseConfig({}).checkpointAt, [0.5, 0.8]);
    assert.deepEqual(parseConfig({ checkpointAt: [0.9, 0.3, 0.3] }).checkpointAt, [0.3, 0.9]);
    assert.deepEqual(parseConfig({ checkpointAt: [] }).checkpointAt, []);
    for (const bad of [[0], [1], [50], ["0.5"], 0.5]) {
      assert.throws(() => parseConfig({ checkpointAt: bad }), /checkpointAt/);
    }
    assert.deepEqual(parseShares([0.8, 0.5]), [0.5, 0.8]);
  });
});

describe("the hook", () => {
  test("past a share, agent_end checkpoints the whole session instead of capturing one turn", async () => {
    /** @type {{ op: string, turns: any[] }[]} */
    const calls = [];
    const transport = {
      describe: "recording",
      recall: async () => ({ text: "", degraded: null }),
      capture: async (/** @type {any[]} */ turns) => (calls.push({ op: "capture", turns }), { duplicate: false, added: 0, problems: [] }),
      checkpoint: async (/** @type {any[]} */ turns) => (calls.push({ op: "checkpoint", turns }), { items: turns.length, stored: 0, section: null }),
    };
    const hooks = createHooks(transport, { budget: 100, checkpointAt: [0.5] }, quiet);
    const ctx = { sessionId: "s", sessionKey: "agent:main:main", trigger: "user", contextTokenBudget: 1000 };
    const messages = [{ role: "user", content: "one" }, answer(200)];
    await hooks.agentEnd({ success: true, messages }, ctx);
    messages.push({ role: "user", content: "two" }, answer(600));
    await hooks.agentEnd({ success: true, messages }, ctx);
    messages.push({ role: "user", content: "three" }, answer(700));
    await hooks.agentEnd({ success: true, messages }, ctx);
    assert.deepEqual(calls.map((c) => `${c.op} ${c.turns.length}`), ["capture 2", "checkpoint 4", "capture 2"]);
    assert.deepEqual(calls[1].turns.map((t) => t.user ?? t.assistant), ["one", "ok", "two", "ok"]);
  });
});
