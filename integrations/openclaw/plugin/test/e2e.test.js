// @ts-check
// The plugin core against the real memoracle: a turn captured at agent_end is recalled
// by before_prompt_build, through the CLI and through `memoracle mcp --transport http`.
// Skipped unless MEMORACLE_E2E_COMMAND names a memoracle to run (the Python test suite,
// tests/test_openclaw_integrations.py, sets it, with MEMORACLE_E2E_ARGS as a JSON list).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, test } from "node:test";

import { command, commandArgs, initHome, plugin, scratch, skip, TURN } from "./harness.js";

const root = scratch("memoracle-e2e-");

/**
 * Capture the turn twice (the second changes nothing), then recall for a question.
 * @param {Record<string, unknown>} config
 */
async function captureThenRecall(config) {
  const { hooks, logs, warnings } = plugin(config);
  const ctx = { sessionId: "e2e-session", sessionKey: "agent:main:main", trigger: "user" };
  await hooks.agent_end(TURN, ctx);
  await hooks.agent_end(TURN, ctx);
  const result = await hooks.before_prompt_build({ prompt: "Where do I live?", messages: [] }, ctx);
  assert.deepEqual(warnings(), []);
  const debug = logs.filter((l) => l.level === "debug").map((l) => l.message);
  assert.match(debug[0], /captured turn openclaw-1-\w+ of session e2e-session: [1-9]\d* new memories/);
  assert.match(debug[1], /was already captured/);
  assert.ok(result?.prependContext, "recall returned no block");
  assert.match(result.prependContext, /Lyon/);
  assert.match(result.prependContext, /Never deploy on Fridays/);
}

/** A free port on loopback. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  return address.port;
}

describe("memoracle end to end", { skip, concurrency: 2 }, () => {
  test("through the CLI", async () => {
    const home = await initHome(join(root, "cli-home"));
    await captureThenRecall({ command, commandArgs, home, warm: false });
  });

  test("through MCP streamable HTTP", async () => {
    const home = await initHome(join(root, "http-home"));
    const port = await freePort();
    const server = spawn(
      /** @type {string} */ (command),
      [...commandArgs, "--home", home, "mcp", "--transport", "http", "--port", String(port)],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    server.stderr?.on("data", (chunk) => (stderr += chunk));
    try {
      const endpoint = `http://127.0.0.1:${port}/mcp`;
      const deadline = Date.now() + 30000;
      for (;;) {
        try {
          await fetch(endpoint, { signal: AbortSignal.timeout(1000) });
          break;
        } catch {
          if (Date.now() > deadline || server.exitCode !== null) {
            throw new Error(`memoracle mcp did not start: ${stderr}`);
          }
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
      }
      await captureThenRecall({ endpoint });
    } finally {
      server.kill("SIGTERM");
      if (server.exitCode === null) await new Promise((resolve) => server.once("exit", resolve));
    }
  });
});
