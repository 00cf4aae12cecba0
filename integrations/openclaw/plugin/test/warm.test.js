// @ts-check
// The plugin's default path against the real memoracle: it starts `memoracle serve`,
// recalls and captures through it, starts it again after it was killed (its socket file
// left behind), and when the server cannot be reached the CLI answers, with one warning.
// Skipped unless MEMORACLE_E2E_COMMAND names a memoracle to run (MEMORACLE_E2E_ARGS: a
// JSON list before memoracle's own; tests/test_serve_plugin.py sets both).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { request } from "../src/warm.js";
import { command, commandArgs, initHome, plugin, scratch, skip, TURN } from "./harness.js";

// A unix socket path must stay short (about 100 bytes): its own folder under /tmp.
const sockets = mkdtempSync(join(tmpdir(), "mw-"));
/** @type {Set<number>} */
const started = new Set();
after(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  rmSync(sockets, { recursive: true, force: true });
});
const root = scratch("memoracle-warm-"); // removed after the servers are stopped

const CTX = { sessionId: "warm-session", sessionKey: "agent:main:main", trigger: "user" };
const QUESTION = { prompt: "Where do I live?", messages: [] };

/** @param {string} name */
const home = (name) => initHome(join(root, name));

/** The pid of the server answering at `socket`. @param {string} socket */
async function serverPid(socket) {
  const reply = await request(socket, { op: "ping" }, 5000);
  assert.equal(typeof reply.pid, "number");
  started.add(reply.pid);
  return /** @type {number} */ (reply.pid);
}

/** @param {number} pid */
async function waitGone(pid) {
  for (let i = 0; i < 200; i += 1) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`process ${pid} is still alive`);
}

describe("the warm server", { skip, concurrency: false }, () => {
  test("a turn captures and recalls through it; the plugin started it", async () => {
    const socket = join(sockets, "a.sock");
    const { hooks, logs, warnings } = plugin({ command, commandArgs, home: await home("a"), socket });
    assert.equal(existsSync(socket), false);
    await hooks.agent_end(TURN, CTX);
    const pid = await serverPid(socket); // the plugin started it
    await hooks.agent_end(TURN, CTX);
    const result = await hooks.before_prompt_build(QUESTION, CTX);
    assert.deepEqual(warnings(), []);
    const debug = logs.filter((l) => l.level === "debug").map((l) => l.message);
    assert.match(debug[0], /captured turn openclaw-1-\w+ of session warm-session: [1-9]\d* new memories/);
    assert.match(debug[1], /was already captured/);
    assert.match(result?.prependContext ?? "", /Lyon/);
    assert.equal(await serverPid(socket), pid, "every call went to the same server");
  });

  test("the gateway's start starts it, so the first turn's recall does not wait for it", async () => {
    const socket = join(sockets, "w.sock");
    const { hooks, warnings } = plugin({ command, commandArgs, home: await home("w"), socket });
    assert.equal(typeof hooks.gateway_start, "function");
    assert.equal(hooks.gateway_start({ port: 18789 }, {}), undefined, "the gateway's start is not held up");
    for (let i = 0; i < 600 && !existsSync(socket); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    const pid = await serverPid(socket);
    const result = await hooks.before_prompt_build(QUESTION, CTX);
    assert.equal(result, undefined, "nothing is stored yet: an empty recall");
    assert.equal(await serverPid(socket), pid, "the turn used the server the start had started");
    assert.deepEqual(warnings(), []);
    // Recall off: no warm-up (capture alone starts the server at the first turn's end).
    assert.equal(plugin({ command, commandArgs, home: await home("w2"), socket, autoRecall: false }).hooks.gateway_start, undefined);
  });

  test("killed, it is started again at the next call (its socket file left behind)", async () => {
    const socket = join(sockets, "b.sock");
    const { hooks, warnings } = plugin({ command, commandArgs, home: await home("b"), socket });
    await hooks.agent_end(TURN, CTX);
    const first = await serverPid(socket);
    process.kill(first, "SIGKILL");
    await waitGone(first);
    assert.equal(existsSync(socket), true, "SIGKILL leaves the socket file");
    const result = await hooks.before_prompt_build(QUESTION, CTX);
    assert.match(result?.prependContext ?? "", /Lyon/);
    const second = await serverPid(socket);
    assert.notEqual(second, first);
    assert.deepEqual(warnings(), []);
  });

  test("a socket it cannot use: the CLI answers, with one warning", async () => {
    const socket = join(sockets, "no-such-folder", "c.sock");
    const { hooks, warnings } = plugin({ command, commandArgs, home: await home("c"), socket });
    await hooks.agent_end(TURN, CTX);
    const result = await hooks.before_prompt_build(QUESTION, CTX);
    assert.match(result?.prependContext ?? "", /Lyon/);
    assert.equal(warnings().length, 1, warnings().join("\n"));
    assert.match(warnings()[0], /warm server is unreachable \(cannot start memoracle serve: no folder .*\); the CLI answered/);
  });

  test("a command that does not exist: the turn goes on, one warning per hook", async () => {
    const socket = join(sockets, "d.sock");
    const { hooks, warnings } = plugin({ command: join(root, "no-memoracle"), home: await home("d"), socket });
    assert.equal(await hooks.before_prompt_build(QUESTION, CTX), undefined);
    assert.equal(await hooks.agent_end(TURN, CTX), undefined);
    assert.equal(warnings().length, 2, warnings().join("\n"));
    assert.match(warnings()[0], /recall failed.*not found.*the warm server too: memoracle serve did not start/);
    assert.match(warnings()[1], /capture failed.*not found.*the warm server too: memoracle serve is not running/);
  });

  test("the gateway's memory_search and memory_get answer from memoracle, in the session's scope", async () => {
    const socket = join(sockets, "e.sock");
    const { hooks, tools, capability, warnings } = plugin(
      { command, commandArgs, home: await home("e"), socket },
      { slot: true },
    );
    const owner = { sessionId: "s-owner", sessionKey: "agent:main:main", trigger: "user" };
    const group = { sessionId: "s-group", sessionKey: "agent:main:telegram:group:-1007", senderId: "333", channel: "telegram", trigger: "user" };
    /** @param {string} text */
    const said = (text) => ({ success: true, messages: [{ role: "user", content: text }, { role: "assistant", content: "Noted." }] });
    await hooks.agent_end(said("I keep the spare house key under the blue flowerpot."), owner);
    await hooks.agent_end(said("We meet at the pier on Sunday, near the house."), group);
    await serverPid(socket);
    const query = { query: "house key flowerpot pier Sunday" };
    /** @param {any} ctx */
    const search = async (ctx) => JSON.parse((await tools.memory_search(ctx).execute("t1", query)).content[0].text);
    const asGroup = await search({ sessionKey: group.sessionKey, agentId: "main", messageChannel: "telegram", requesterSenderId: "333" });
    const asOwner = await search({ sessionKey: owner.sessionKey, agentId: "main" });
    const text = (/** @type {any} */ r) => r.results.map((/** @type {any} */ h) => h.snippet).join("\n");
    assert.match(text(asOwner), /flowerpot/);
    assert.match(text(asGroup), /pier/);
    assert.doesNotMatch(text(asGroup), /flowerpot/);
    // The host's own check of hits it holds: the group's session sees none of the owner's.
    const allowed = await capability.runtime.authorizeSearchHits({ agentId: "main", requesterSessionKey: group.sessionKey, hits: asOwner.results });
    assert.ok(asOwner.results.length > 0);
    assert.deepEqual(allowed, []);
    // memory_get opens a hit by its path, in the same scope.
    const hit = asOwner.results.find((/** @type {any} */ h) => /flowerpot/.test(h.snippet));
    const get = async (/** @type {any} */ ctx) => JSON.parse((await tools.memory_get(ctx).execute("t2", { path: hit.path })).content[0].text);
    assert.match((await get({ sessionKey: owner.sessionKey })).text, /flowerpot/);
    assert.equal((await get({ sessionKey: group.sessionKey })).status, "not_found");
    // The manager the gateway asks for: a lookup with no session is the operator's only for its CLI.
    const { manager } = await capability.runtime.getMemorySearchManager({ cfg: {}, agentId: "main", purpose: "cli" });
    assert.match((await manager.search("flowerpot")).map((/** @type {any} */ h) => h.snippet).join(" "), /flowerpot/);
    const { manager: bare } = await capability.runtime.getMemorySearchManager({ cfg: {}, agentId: "main" });
    assert.deepEqual(await bare.search("flowerpot"), []);
    assert.deepEqual(warnings(), []);
  });

  test("heartbeat checkpoints: the live session at 50 % and 80 % of the context, once each", async () => {
    const socket = join(sockets, "f.sock");
    const folder = await home("f");
    const { hooks, logs, warnings } = plugin({ command, commandArgs, home: folder, socket });
    const ctx = { sessionId: "s-long", sessionKey: "agent:main:main", trigger: "user", modelContextWindowTokens: 1000 };
    /** @type {any[]} */
    const messages = [];
    /** @param {string} text @param {number} tokens */
    const turn = async (text, tokens) => {
      messages.push({ role: "user", content: text, timestamp: Date.UTC(2026, 11, 7, 9, messages.length) });
      messages.push({ role: "assistant", content: "Noted.", usage: { input: tokens - 5, output: 5, totalTokens: tokens } });
      await hooks.agent_end({ success: true, messages: [...messages] }, ctx);
    };
    await turn("I live in Lyon.", 300);
    await turn("I decided to rent the cabin in Tromso for the winter.", 550);
    await turn("The ferry leaves at nine.", 600);
    await turn("I decided to sell the old bicycle.", 850);
    await serverPid(socket); // the server the first turn started: stopped after the suite
    const said = logs.map((l) => l.message).filter((m) => m.includes("checkpoint at"));
    assert.equal(said.length, 2, said.join("\n"));
    assert.match(said[0], /checkpoint at 50 % of the context window, session s-long: 4 messages, 2 stored now/);
    assert.match(said[1], /checkpoint at 80 % of the context window, session s-long: 8 messages, 2 stored now/);
    const notes = join(folder, "workspace", "memory");
    const note = readdirSync(notes).map((name) => readFileSync(join(notes, name), "utf8")).join("\n");
    assert.match(note, /## Checkpoint \[\d\d:\d\d\]/);
    assert.match(note, /cabin in Tromso/);
    assert.deepEqual(warnings(), []);
  });
});
