// @ts-check
// What the end-to-end tests share (e2e.test.js, warm.test.js): the memoracle to run
// (MEMORACLE_E2E_COMMAND, with MEMORACLE_E2E_ARGS a JSON list before memoracle's own;
// the Python suite sets both), a scratch folder removed after the file's tests, the
// turn they capture, the plugin registered on a recording API, and a home made by
// `memoracle init`. Not a test file itself (no `.test.js`).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";

import { registerMemoracle, runCommand } from "../src/core.js";

export const command = process.env.MEMORACLE_E2E_COMMAND;
/** @type {string[]} */
export const commandArgs = JSON.parse(process.env.MEMORACLE_E2E_ARGS ?? "[]");
/** The `skip` option of a suite that needs a memoracle to run. */
export const skip = command ? false : "set MEMORACLE_E2E_COMMAND to run memoracle end to end";

export const TURN = {
  success: true,
  messages: [
    { role: "user", content: "I moved to Lyon last month. Never deploy on Fridays." },
    { role: "assistant", content: [{ type: "text", text: "Noted." }] },
  ],
};

/**
 * A scratch folder (under MEMORACLE_E2E_TMP when set), removed after the file's tests.
 * @param {string} prefix
 */
export function scratch(prefix) {
  const root = mkdtempSync(join(process.env.MEMORACLE_E2E_TMP ?? tmpdir(), prefix));
  after(() => rmSync(root, { recursive: true, force: true }));
  return root;
}

/**
 * The plugin registered with `config` on an API that records its hooks and logs; with
 * `slot`, the API is a 2026.9.x one (registerMemoryCapability, registerTool) and the
 * capability and tool factories are recorded too.
 * @param {Record<string, unknown>} config
 * @param {{ slot?: boolean }} [options]
 */
export function plugin(config, options = {}) {
  /** @type {Record<string, Function>} */
  const hooks = {};
  /** @type {Record<string, any>} */
  const capability = {};
  /** @type {Record<string, Function>} */
  const tools = {};
  const slot = options.slot
    ? {
        registerMemoryCapability: (/** @type {any} */ given) => Object.assign(capability, given),
        registerTool: (/** @type {Function} */ factory, /** @type {any} */ opts) => {
          tools[opts.names[0]] = factory;
        },
      }
    : {};
  /** @type {{ level: string, message: string }[]} */
  const logs = [];
  registerMemoracle({
    pluginConfig: config,
    logger: Object.fromEntries(
      ["debug", "info", "warn", "error"].map((level) => [
        level,
        (/** @type {string} */ message) => logs.push({ level, message }),
      ]),
    ),
    on: (/** @type {string} */ name, /** @type {Function} */ handler) => {
      hooks[name] = handler;
    },
    ...slot,
  });
  const warnings = () => logs.filter((l) => l.level === "warn" || l.level === "error").map((l) => l.message);
  return { hooks, logs, warnings, capability, tools };
}

/**
 * A memoracle home at `path`, made by `memoracle init`.
 * @param {string} path
 */
export async function initHome(path) {
  await runCommand(/** @type {string} */ (command), [...commandArgs, "--home", path, "init"], "", 60000);
  return path;
}
