// @ts-check
// Runs the plugin's agent_end once, for tests on the Python side
// (tests/test_openclaw_turn_identity.py): stdin is {config, messages, ctx}; the plugin
// captures through the configured CLI; stdout is what it logged, as JSON lines.
import { registerMemoracle } from "../src/core.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { config, messages, ctx } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
/** @type {Record<string, Function>} */
const hooks = {};
/** @type {{ level: string, message: string }[]} */
const logs = [];
registerMemoracle({
  pluginConfig: config,
  logger: Object.fromEntries(
    ["debug", "info", "warn", "error"].map((level) => [level, (/** @type {string} */ message) => logs.push({ level, message })]),
  ),
  on(/** @type {string} */ name, /** @type {Function} */ handler) {
    hooks[name] = handler;
  },
});
await hooks.agent_end({ messages, success: true }, ctx);
for (const entry of logs) process.stdout.write(`${JSON.stringify(entry)}\n`);
