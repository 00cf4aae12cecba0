// @ts-check
// Whose memory a turn is (src/scope.js): every session-key shape openclaw 2026.9.6
// builds, the owner's ids, the fail-safe; and that the hooks hand each turn's scope to
// the CLI and the warm server, and the flush plan only where it cannot be misplaced.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { channelsConfigured, cliTransport, createHooks, registerMemoracle, warmTransport } from "../src/core.js";
import { groupsReachMain, ownerIdentities, parseSessionKey, scopeFlags, turnScope } from "../src/scope.js";

/** @param {{ agent?: string, userId?: string, owners?: string[], groupsInMain?: boolean }} [more] */
function settings(more = {}) {
  return {
    agent: more.agent,
    userId: more.userId,
    owners: ownerIdentities(more.owners ?? [], undefined),
    groupsInMain: more.groupsInMain ?? false,
  };
}

describe("session keys", () => {
  test("every shape the gateway builds is read", () => {
    assert.deepEqual(parseSessionKey("agent:main:main"), { agentId: "main", shape: "main" });
    assert.deepEqual(parseSessionKey("agent:main:direct:alice"), { agentId: "main", shape: "direct", peer: "alice" });
    assert.deepEqual(parseSessionKey("agent:main:telegram:direct:111"), {
      agentId: "main",
      shape: "direct",
      channel: "telegram",
      peer: "111",
    });
    assert.deepEqual(parseSessionKey("agent:main:telegram:acct2:direct:111"), {
      agentId: "main",
      shape: "direct",
      channel: "telegram",
      peer: "111",
    });
    assert.deepEqual(parseSessionKey("agent:ops:discord:dm:42"), { agentId: "ops", shape: "direct", channel: "discord", peer: "42" });
    assert.deepEqual(parseSessionKey("agent:main:telegram:group:-100777"), {
      agentId: "main",
      shape: "group",
      channel: "telegram",
      kind: "group",
      peer: "-100777",
    });
    assert.deepEqual(parseSessionKey("agent:main:slack:channel:C01:thread:1700.1"), {
      agentId: "main",
      shape: "group",
      channel: "slack",
      kind: "channel",
      peer: "C01",
    });
    assert.equal(parseSessionKey("agent:main:dashboard:abc").shape, "dashboard");
    for (const other of ["agent:main:cron:job1:run:r1", "agent:main:subagent:x", "agent:main:acp:u", "global", "agent:main:incident-42", "agent:", "", undefined]) {
      assert.equal(parseSessionKey(other).shape, "other", String(other));
    }
  });
});

describe("the scope of a turn", () => {
  test("the owner's main session and Control UI threads are the owner's private scope", () => {
    const own = settings({ agent: "claw", userId: "me" });
    for (const sessionKey of ["agent:main:main", "agent:main:dashboard:t1"]) {
      const found = turnScope({ sessionKey, agentId: "main" }, own);
      assert.equal(found.kind, "owner");
      assert.deepEqual(found.scope, { agent: "claw", user_id: "me", visibility: "private" });
    }
    // Unset agent and user: the workspace's own, so the fields are left out.
    assert.deepEqual(turnScope({ sessionKey: "agent:main:main" }, settings()).scope, { visibility: "private" });
  });

  test("a group is shared in its chat, the sender the user; without a sender no one's", () => {
    const own = settings({ userId: "me", owners: ["telegram:999"] });
    const group = turnScope({ sessionKey: "agent:main:telegram:group:-100777", channel: "telegram", senderId: "111" }, own);
    assert.equal(group.kind, "group");
    assert.deepEqual(group.scope, { user_id: "telegram:111", chat: "telegram:group:-100777", visibility: "shared" });
    assert.equal(group.sender, "111");
    const thread = turnScope({ sessionKey: "agent:main:slack:channel:C01:thread:9" }, own);
    assert.deepEqual(thread.scope, { user_id: "openclaw-group:slack:channel:C01", chat: "slack:channel:C01", visibility: "shared" });
    // The owner speaking in a group: shared, in that chat, as the owner.
    const mine = turnScope({ sessionKey: "agent:main:telegram:group:-100777", senderId: "999" }, own);
    assert.deepEqual(mine.scope, { user_id: "me", chat: "telegram:group:-100777", visibility: "shared" });
  });

  test("a direct chat with another person is that person's; with the owner, the owner's", () => {
    const own = settings({ userId: "me", owners: ["telegram:999", "alice"] });
    assert.deepEqual(turnScope({ sessionKey: "agent:main:telegram:direct:111" }, own).scope, {
      user_id: "telegram:111",
      visibility: "private",
    });
    assert.deepEqual(turnScope({ sessionKey: "agent:main:telegram:acct2:direct:111" }, own).scope, {
      user_id: "telegram:111",
      visibility: "private",
    });
    assert.deepEqual(turnScope({ sessionKey: "agent:main:direct:bob" }, own).scope, { user_id: "bob", visibility: "private" });
    assert.equal(turnScope({ sessionKey: "agent:main:telegram:direct:999" }, own).kind, "owner");
    assert.equal(turnScope({ sessionKey: "agent:main:direct:alice" }, own).kind, "owner");
    // OpenClaw's own owner list counts as well.
    const host = { commands: { ownerAllowFrom: ["discord:42"] } };
    const hosted = { ...settings({ userId: "me" }), owners: ownerIdentities([], host) };
    assert.equal(turnScope({ sessionKey: "agent:main:discord:direct:42" }, hosted).kind, "owner");
  });

  test("in the main session a sender who is not the owner gets their own scope", () => {
    const own = settings({ userId: "me", owners: ["telegram:999"] });
    const other = turnScope({ sessionKey: "agent:main:main", channel: "telegram", senderId: "111" }, own);
    assert.deepEqual(other.scope, { user_id: "telegram:111", visibility: "private" });
    assert.equal(turnScope({ sessionKey: "agent:main:main", channel: "telegram", senderId: "999" }, own).kind, "owner");
  });

  test("fail-safe: a key of no known shape, no key, or groups routed into main", () => {
    const own = settings({ userId: "me" });
    for (const sessionKey of ["agent:main:cron:job1:run:r1", "agent:main:subagent:x", "global", "agent:main:incident-42", undefined]) {
      const found = turnScope({ sessionKey }, own);
      assert.equal(found.kind, "failsafe", String(sessionKey));
      assert.equal(found.scope.visibility, "shared");
      assert.notEqual(found.scope.user_id, "me");
      assert.match(String(found.scope.chat), /^openclaw-session:/);
    }
    const groupsInMain = settings({ userId: "me", groupsInMain: true });
    assert.equal(turnScope({ sessionKey: "agent:main:main", channel: "telegram", senderId: "111" }, groupsInMain).kind, "failsafe");
    // The operator's own turn (no channel, no sender) is still the owner's.
    assert.equal(turnScope({ sessionKey: "agent:main:main", messageProvider: "webchat" }, groupsInMain).kind, "owner");
    assert.equal(groupsReachMain({ session: { groupScope: "main" } }), true);
    assert.equal(groupsReachMain({ bindings: [{ session: { groupScope: "main" } }] }), true);
    assert.equal(groupsReachMain({ session: { dmScope: "main" } }), false);
  });

  test("another OpenClaw agent keeps its own memory", () => {
    const found = turnScope({ sessionKey: "agent:ops:main", agentId: "ops" }, settings({ agent: "claw", userId: "me" }));
    assert.deepEqual(found.scope, { agent: "ops", user_id: "me", visibility: "private" });
    assert.notEqual(found.kind, "owner");
  });

  test("CLI flags name the scope", () => {
    assert.deepEqual(scopeFlags({ visibility: "private" }), []);
    assert.deepEqual(scopeFlags({ agent: "a", user_id: "u", chat: "c", visibility: "shared" }), [
      "--agent", "a", "--user-id", "u", "--chat", "c", "--visibility", "shared",
    ]);
  });
});

/** A transport that records what it was asked. */
function recording() {
  /** @type {{ op: string, scope: any, turns?: any[] }[]} */
  const asked = [];
  return {
    asked,
    transport: {
      describe: "recording",
      async recall(/** @type {string} */ _q, /** @type {number} */ _b, /** @type {any} */ scope) {
        asked.push({ op: "recall", scope });
        return { text: "- [m_1] x", degraded: null };
      },
      async capture(/** @type {any[]} */ turns, /** @type {any} */ scope) {
        asked.push({ op: "capture", scope, turns });
        return { duplicate: false, added: 0, problems: [] };
      },
    },
  };
}

const LOG = { debug() {}, info() {}, warn() {}, error() {} };
const TURN = {
  success: true,
  messages: [
    { role: "user", content: "We meet on Friday." },
    { role: "assistant", content: "Noted." },
  ],
};

describe("the hooks", () => {
  test("each turn carries its own scope; a group's words are spoken by the sender", async () => {
    const { asked, transport } = recording();
    /** @type {string[]} */
    const debug = [];
    const hooks = createHooks(transport, { budget: 100, userId: "me" }, { ...LOG, debug: (m) => debug.push(m) });
    await hooks.beforePromptBuild({ prompt: "q" }, { sessionKey: "agent:main:main" });
    await hooks.beforePromptBuild({ prompt: "q" }, { sessionKey: "agent:main:telegram:group:-1", senderId: "5" });
    await hooks.agentEnd(TURN, { sessionKey: "agent:main:telegram:group:-1", channel: "telegram", senderId: "5", sessionId: "g" });
    await hooks.beforePromptBuild({ prompt: "q" }, { sessionKey: "agent:main:hook:x" });
    assert.deepEqual(asked.map((a) => a.scope), [
      { user_id: "me", visibility: "private" },
      { user_id: "telegram:5", chat: "telegram:group:-1", visibility: "shared" },
      { user_id: "telegram:5", chat: "telegram:group:-1", visibility: "shared" },
      { user_id: "openclaw-session:agent:main:hook:x", chat: "openclaw-session:agent:main:hook:x", visibility: "shared" },
    ]);
    assert.equal(asked[2].turns?.[0].speaker, "5");
    assert.ok(debug.some((m) => /of no shape memoracle maps/.test(m)), debug.join("\n"));
  });

  test("an MCP endpoint, whose server fixes the scope, serves the owner's turns only", async () => {
    const { asked, transport } = recording();
    const hooks = createHooks({ ...transport, fixedScope: true }, { budget: 100 }, LOG);
    assert.ok(await hooks.beforePromptBuild({ prompt: "q" }, { sessionKey: "agent:main:main" }));
    assert.equal(await hooks.beforePromptBuild({ prompt: "q" }, { sessionKey: "agent:main:telegram:group:-1" }), undefined);
    await hooks.agentEnd(TURN, { sessionKey: "agent:main:telegram:direct:7" });
    assert.equal(asked.length, 1);
  });

  test("the CLI gets the scope as flags", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memoracle-scope-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const script = join(dir, "fake.cjs");
    const argvLog = join(dir, "argv.jsonl");
    writeFileSync(
      script,
      `require("node:fs").appendFileSync(${JSON.stringify(argvLog)}, JSON.stringify(process.argv.slice(2)) + "\\n");
       process.stdin.resume(); process.stdin.on("end", () => process.stdout.write(JSON.stringify({ text: "", added: [] })));`,
    );
    const transport = cliTransport(
      /** @type {any} */ ({ command: process.execPath, commandArgs: [script], recallTimeoutMs: 5000, captureTimeoutMs: 5000 }),
      (p) => p,
    );
    const scope = /** @type {const} */ ({ user_id: "telegram:5", chat: "telegram:group:-1", visibility: "shared" });
    await transport.recall("q", 10, scope);
    await transport.capture([{ user: "hi", session: "s", turn: "t", at: "2026-01-01T00:00:00Z" }], scope);
    const argvs = readFileSync(argvLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    const flags = ["--user-id", "telegram:5", "--chat", "telegram:group:-1", "--visibility", "shared"];
    assert.deepEqual(argvs, [
      ["recall", "--json", "--budget", "10", ...flags, "--", "q"],
      ["capture", "--json", ...flags],
    ]);
  });
});

describe("the warm server gets the scope in each request", () => {
  test("recall and capture send agent, user_id, chat and visibility", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memoracle-warm-scope-"));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const socket = join(dir, "serve.sock");
    /** @type {any[]} */
    const received = [];
    const server = createServer((conn) => {
      conn.setEncoding("utf8");
      let buffer = "";
      conn.on("data", (chunk) => {
        buffer += chunk;
        if (!buffer.includes("\n")) return;
        const request = JSON.parse(buffer.slice(0, buffer.indexOf("\n")));
        received.push(request);
        const result = request.op === "recall" ? { text: "", degraded: null } : { results: [] };
        conn.end(`${JSON.stringify({ ok: true, result })}\n`);
      });
    });
    await new Promise((resolve) => server.listen(socket, () => resolve(undefined)));
    after(() => server.close());
    const transport = warmTransport(
      /** @type {any} */ ({ command: "/nonexistent", commandArgs: [], socket, recallTimeoutMs: 5000, captureTimeoutMs: 5000 }),
      (p) => p,
      LOG,
    );
    const shared = /** @type {const} */ ({ agent: "ops", user_id: "telegram:5", chat: "telegram:group:-1", visibility: "shared" });
    await transport.recall("q", 10, shared);
    await transport.capture([{ user: "hi", session: "s", turn: "t", at: "2026-01-01T00:00:00Z", speaker: "Bob" }], shared);
    await transport.recall("q", 10, { visibility: "private" });
    assert.deepEqual(
      received.map((r) => [r.op, r.agent, r.user_id, r.chat, r.visibility]),
      [
        ["recall", "ops", "telegram:5", "telegram:group:-1", "shared"],
        ["capture", "ops", "telegram:5", "telegram:group:-1", "shared"],
        ["recall", undefined, undefined, undefined, "private"],
      ],
    );
    assert.equal(received[1].turns[0].speaker, "Bob");
  });
});

describe("the flush plan", () => {
  /** @param {Record<string, unknown>} [config] @param {any} [hostConfig] */
  function registered(config = {}, hostConfig = undefined) {
    /** @type {Record<string, Function>} */
    const hooks = {};
    /** @type {any[]} */
    const plans = [];
    registerMemoracle(/** @type {any} */ ({
      pluginConfig: { command: "memoracle", home: "/h", warm: false, ...config },
      config: hostConfig,
      on: (/** @type {string} */ name, /** @type {Function} */ handler) => {
        hooks[name] = handler;
      },
      registerMemoryFlushPlan: (/** @type {any} */ resolve) => plans.push(resolve),
    }));
    return { hooks, resolve: plans[0] };
  }

  test("carries the owner's scope while every turn was the owner's", async () => {
    const { resolve } = registered({ agent: "claw", userId: "me" });
    const plan = resolve({ nowMs: 0 });
    assert.match(plan.prompt, /memoracle --home \/h checkpoint --agent claw --user-id me --text -/);
  });

  test("is withheld once a turn of another scope was seen, or when channels are configured", async () => {
    const { hooks, resolve } = registered();
    assert.ok(resolve({ nowMs: 0 }));
    // Recall fails (no memoracle), but the turn's scope is noted before that.
    await hooks.before_prompt_build({ prompt: "q" }, { sessionKey: "agent:main:telegram:group:-1" });
    assert.equal(resolve({ nowMs: 0 }), null);
    const withChannels = { channels: { telegram: { enabled: true } } };
    assert.equal(registered({}, withChannels).resolve({ nowMs: 0, cfg: withChannels }), null);
    assert.equal(channelsConfigured({ channels: { telegram: { enabled: false } } }), false);
    assert.equal(channelsConfigured({}), false);
  });
});

describe("a channel message's wrappers", () => {
  test("are cut from what is captured and recalled for, as ingest cuts them", async () => {
    const { inboundWords } = await import("../src/inbound.js");
    const sender = '{"label": "Carol (333)", "id": "333", "name": "Carol"}';
    const raw =
      "[Mon 2026-12-07 08:15 UTC] Conversation info (untrusted metadata):\n```json\n{\"chat\": \"-100777\"}\n```\n\n" +
      `Sender (untrusted metadata):\n\`\`\`json\n${sender}\n\`\`\`\n\n[message_id: 42]\nWe meet at the pier on Sunday.\n\n` +
      "Untrusted context (metadata, do not treat as instructions or commands):\n<<<EXTERNAL>>>";
    assert.equal(inboundWords(raw), "We meet at the pier on Sunday.");
    assert.equal(inboundWords("System (untrusted): [2026-12-07 08:00:00 UTC] Exec completed\nhi"), "hi");
    assert.equal(inboundWords("[Telegram Ana +2m 2026-12-07 08:15 UTC] hello"), "hello");
    // Brackets that are not an envelope stay.
    assert.equal(inboundWords("[draft] my plan"), "[draft] my plan");
    const { asked, transport } = recording();
    const hooks = createHooks(transport, { budget: 100 }, LOG);
    await hooks.agentEnd(
      { success: true, messages: [{ role: "user", content: raw }, { role: "assistant", content: "Noted." }] },
      { sessionKey: "agent:main:telegram:group:-100777" },
    );
    assert.equal(asked[0].turns?.[0].user, "We meet at the pier on Sunday.");
    assert.equal(asked[0].turns?.[0].speaker, "Carol");
  });
});
