// @ts-check
// The plugin's default path against the real memoracle: it starts `memoracle serve`,
// recalls and captures through it, starts it again after it was killed (its socket file
// left behind), and when the server cannot be reached the CLI answers, with one warning.
// Skipped unless MEMORACLE_E2E_COMMAND names a memoracle to run (MEMORACLE_E2E_ARGS: a
// JSON list before memoracle's own; tests/test_serve_plugin.py sets both).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
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
});
