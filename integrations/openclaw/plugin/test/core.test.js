// @ts-check
// The plugin core on plain Node: a fake `api`, a fake `memoracle` (a Node script that
// records its arguments and stdin and prints canned JSON) and a fake MCP server. No network,
// no npm install, no OpenClaw.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";

import {
  BLOCK_CLOSE,
  BLOCK_OPEN,
  CONFIG_JSON_SCHEMA,
  DEFAULTS,
  loopbackUrl,
  parseConfig,
  pluginConfigSchema,
  recallBlock,
  registerMemoracle,
  turnId,
} from "../src/core.js";

const FAKE = `
const fs = require("node:fs");
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const argv = process.argv.slice(2);
  fs.appendFileSync(process.env.FAKE_MEMORACLE_LOG,
    JSON.stringify({ argv, stdin: Buffer.concat(chunks).toString("utf8") }) + "\\n");
  const mode = process.env.FAKE_MEMORACLE_MODE || "ok";
  if (mode === "hang") { setTimeout(() => {}, 60000); return; }
  if (mode === "fail") {
    process.stderr.write("Error: No workspace at /nowhere. Try: memoracle init\\n");
    process.exit(1);
  }
  if (mode === "badjson") { process.stdout.write("Traceback (most recent call last):\\n"); return; }
  if (argv.includes("recall")) {
    const text = mode === "empty" ? "" : "- [m_1 2026-01-05] I moved to Lyon last month.";
    const degraded = mode === "degraded" ? "lexical only: no vectors yet" : null;
    process.stdout.write(JSON.stringify({ version: 1, text, degraded, lines: [] }));
  } else {
    process.stdout.write(JSON.stringify({ version: 1, added: [{ id: "m_1" }], duplicate_turn: false }));
  }
});
`;

const NOW = new Date("2026-05-14T09:30:00.000Z");
/** The owner's main session, as the gateway names it. */
const MAIN = { sessionKey: "agent:main:main" };
let dir = "";
let script = "";
let logPath = "";

before(() => {
  dir = mkdtempSync(join(tmpdir(), "memoracle-plugin-"));
  script = join(dir, "fake-memoracle.cjs");
  writeFileSync(script, FAKE);
  logPath = join(dir, "calls.jsonl");
  process.env.FAKE_MEMORACLE_LOG = logPath;
});

after(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(() => {
  writeFileSync(logPath, "");
  process.env.FAKE_MEMORACLE_MODE = "ok";
});

/** @returns {{ argv: string[], stdin: string }[]} */
function calls() {
  return readFileSync(logPath, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/**
 * A fake OpenClaw api: records hooks and log lines.
 * @param {Record<string, unknown> | undefined} config
 * @param {{ resolvePath?: (p: string) => string, fetch?: typeof fetch }} [extra]
 */
function fakeApi(config, extra = {}) {
  /** @type {Record<string, Function>} */
  const hooks = {};
  /** @type {Record<string, unknown>} */
  const hookOptions = {};
  /** @type {{ level: string, message: string }[]} */
  const logs = [];
  const api = {
    pluginConfig: config,
    logger: Object.fromEntries(
      ["debug", "info", "warn", "error"].map((level) => [
        level,
        (/** @type {string} */ message) => logs.push({ level, message }),
      ]),
    ),
    resolvePath: extra.resolvePath,
    on(/** @type {string} */ name, /** @type {Function} */ handler, /** @type {unknown} */ opts) {
      hooks[name] = handler;
      hookOptions[name] = opts;
    },
  };
  registerMemoracle(api, { fetch: extra.fetch });
  const warnings = () => logs.filter((l) => l.level === "warn").map((l) => l.message);
  return { api, hooks, hookOptions, logs, warnings };
}

/** The fake CLI, as a command and the arguments before memoracle's own. */
function cli(/** @type {Record<string, unknown>} */ more = {}) {
  return { command: process.execPath, commandArgs: [script], home: "/h", warm: false, ...more };
}

const SESSION = [
  { role: "user", content: "hi" },
  { role: "assistant", content: [{ type: "text", text: "Hello!" }] },
  {
    role: "user",
    content: [
      {
        type: "text",
        text: `${recallBlock("- [m_9 2026-01-01] old memory")}\n\nI moved to Lyon last month. Never deploy on Fridays.`,
      },
    ],
  },
  { role: "assistant", content: [{ type: "toolCall", name: "x" }] },
  { role: "toolResult", content: [{ type: "text", text: "tool output" }] },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "..." },
      { type: "text", text: "Noted: Lyon, and no deploys on Fridays." },
    ],
  },
];

describe("config", () => {
  test("defaults", () => {
    assert.deepEqual(parseConfig(undefined), { ...DEFAULTS, commandArgs: [] });
    assert.equal(parseConfig({ budget: 500 }).budget, 500);
  });

  test("an unknown key or a wrong type is refused, naming it", () => {
    assert.throws(() => parseConfig({ bugdet: 5 }), /unknown config key "bugdet"/);
    assert.throws(() => parseConfig({ budget: 1.5 }), /budget must be an integer/);
    assert.throws(() => parseConfig({ budget: 0 }), /budget/);
    assert.throws(() => parseConfig({ autoRecall: "yes" }), /autoRecall/);
    assert.throws(() => parseConfig({ commandArgs: "-m" }), /commandArgs/);
    assert.throws(() => parseConfig({ home: "" }), /home/);
    assert.throws(() => parseConfig([]), /object/);
  });

  test("every schema property is a key parseConfig knows", () => {
    for (const key of Object.keys(CONFIG_JSON_SCHEMA.properties)) assert.ok(key in DEFAULTS, key);
    assert.deepEqual(Object.keys(DEFAULTS).sort(), Object.keys(CONFIG_JSON_SCHEMA.properties).sort());
    assert.equal(pluginConfigSchema.safeParse({ budget: 10 }).success, true);
    const refused = pluginConfigSchema.safeParse({ nope: true });
    assert.equal(refused.success, false);
    assert.match(refused.error?.issues[0].message ?? "", /nope/);
  });

  test("openclaw.plugin.json carries the same schema as the code", () => {
    const manifest = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8"));
    assert.deepEqual(manifest.configSchema, CONFIG_JSON_SCHEMA);
  });

  test("a bad config registers nothing and says why", () => {
    const { hooks, logs } = fakeApi({ budget: "lots" });
    assert.deepEqual(Object.keys(hooks), []);
    assert.match(logs.find((l) => l.level === "error")?.message ?? "", /budget/);
  });

  test("hooks are registered with timeouts, each one optional", () => {
    const both = fakeApi(cli());
    assert.deepEqual(Object.keys(both.hooks).sort(), ["agent_end", "before_prompt_build"]);
    assert.deepEqual(both.hookOptions.before_prompt_build, { timeoutMs: 16000 });
    assert.deepEqual(both.hookOptions.agent_end, { timeoutMs: 26000 });
    // before_prompt_build also gives the session-start snapshot, agent_end the heartbeat
    // checkpoints: each hook goes only when every part that needs it is off.
    const noPrompt = fakeApi(cli({ autoRecall: false, sessionStart: false }));
    assert.deepEqual(Object.keys(noPrompt.hooks), ["agent_end"]);
    const noEnd = fakeApi(cli({ autoCapture: false, checkpointAt: [] }));
    assert.deepEqual(Object.keys(noEnd.hooks), ["before_prompt_build"]);
    assert.deepEqual(Object.keys(fakeApi(cli({ autoRecall: false })).hooks).sort(), [
      "agent_end",
      "before_prompt_build",
    ]);
  });

  test("only loopback endpoints are accepted", () => {
    for (const ok of [
      "http://127.0.0.1:8765/mcp",
      "http://localhost:8765/mcp",
      "http://[::1]:8765/mcp",
      "https://127.0.0.2/mcp",
    ]) {
      assert.equal(loopbackUrl(ok).href, new URL(ok).href);
    }
    for (const bad of [
      "http://10.0.0.5:8765/mcp",
      "http://example.com/mcp",
      "http://127.0.0.1.nip.io/mcp",
      "ftp://127.0.0.1/mcp",
      "not a url",
    ]) {
      assert.throws(() => loopbackUrl(bad), Error, bad);
    }
    const { hooks, logs } = fakeApi({ endpoint: "http://192.168.1.2:8765/mcp" });
    assert.deepEqual(Object.keys(hooks), []);
    assert.match(logs.find((l) => l.level === "error")?.message ?? "", /refusing endpoint/);
  });
});

describe("recall through the CLI", () => {
  test("runs `recall --json --budget N -- MESSAGE` and prepends a fenced block", async () => {
    const { hooks } = fakeApi(cli({ budget: 1500 }));
    const result = await hooks.before_prompt_build(
      { prompt: "Where do I live?", messages: [] },
      { ...MAIN, sessionId: "s1", trigger: "user" },
    );
    assert.deepEqual(calls().map((c) => c.argv), [
      ["--home", "/h", "recall", "--json", "--budget", "1500", "--", "Where do I live?"],
    ]);
    assert.ok(result.prependContext.startsWith(`${BLOCK_OPEN}\n`));
    assert.ok(result.prependContext.endsWith(`\n${BLOCK_CLOSE}`));
    assert.match(result.prependContext, /\[m_1 2026-01-05\] I moved to Lyon last month\./);
  });

  test("the current request wins over the prompt; an empty one recalls nothing", async () => {
    const { hooks } = fakeApi(cli());
    await hooks.before_prompt_build(
      { prompt: "history...\nWhere do I live?", currentUserMessage: "Where do I live?", messages: [] },
      {},
    );
    assert.equal(calls()[0].argv.at(-1), "Where do I live?");
    writeFileSync(logPath, "");
    const none = await hooks.before_prompt_build(
      { prompt: "history", currentUserMessage: "  ", messages: [] },
      {},
    );
    assert.equal(none, undefined);
    assert.deepEqual(calls(), []);
  });

  test("a block injected earlier is not searched for; a dash is not an option", async () => {
    const { hooks } = fakeApi(cli());
    await hooks.before_prompt_build({ prompt: `${recallBlock("- [m_3] x")}\n-h`, messages: [] }, MAIN);
    assert.deepEqual(calls()[0].argv.slice(-2), ["--", "-h"]);
  });

  test("home, agent and user id reach the CLI; ~ is the home directory", async () => {
    const { hooks } = fakeApi(cli({ home: "~/mem", agent: "main", userId: "alice" }));
    await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN);
    assert.deepEqual(calls()[0].argv.slice(0, 2), ["--home", join(homedir(), "mem")]);
    assert.deepEqual(calls()[0].argv.slice(-6), [
      "--agent", "main", "--user-id", "alice", "--", "q",
    ]); // prettier-ignore
    writeFileSync(logPath, "");
    const resolved = fakeApi(cli({ home: "mem" }), { resolvePath: (p) => `/cfg/${p}` });
    await resolved.hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN);
    assert.equal(calls()[0].argv[1], "/cfg/mem");
  });

  test("background runs and empty answers add nothing", async () => {
    const { hooks } = fakeApi(cli());
    assert.equal(await hooks.before_prompt_build({ prompt: "q", messages: [] }, { trigger: "heartbeat" }), undefined);
    assert.deepEqual(calls(), []);
    process.env.FAKE_MEMORACLE_MODE = "empty";
    assert.equal(await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN), undefined);
  });

  test("a partial answer is still used, and said once", async () => {
    process.env.FAKE_MEMORACLE_MODE = "degraded";
    const { hooks, warnings } = fakeApi(cli());
    assert.ok((await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN)).prependContext);
    await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN);
    assert.deepEqual(warnings(), ["memoracle: recall is partial: lexical only: no vectors yet"]);
  });
});

describe("capture through the CLI", () => {
  const ctx = { sessionId: "sess-1", sessionKey: "agent:main:main", trigger: "user" };

  test("sends the last user message and the answer as two JSON items on stdin", async () => {
    const { hooks } = fakeApi(cli({ agent: "main" }));
    assert.equal(await hooks.agent_end({ messages: SESSION, success: true }, ctx), undefined);
    const [call] = calls();
    assert.deepEqual(call.argv, ["--home", "/h", "capture", "--json", "--agent", "main"]);
    const [user, answer] = JSON.parse(call.stdin);
    assert.deepEqual(Object.keys(user).sort(), ["at", "session", "turn", "user"]);
    assert.deepEqual(Object.keys(answer).sort(), ["assistant", "at", "session", "turn"]);
    assert.equal(user.user, "I moved to Lyon last month. Never deploy on Fridays.");
    assert.equal(answer.assistant, "Noted: Lyon, and no deploys on Fridays.");
    assert.equal(user.session, "sess-1");
    // No entry ids and no transcript to find them in: the fallback id, on both sides.
    assert.equal(user.turn, turnId(2, user.user));
    assert.equal(answer.turn, user.turn);
    assert.ok(!Number.isNaN(Date.parse(user.at)));
  });

  test("the turn id is stable for a retry and new for the next message", async () => {
    const { hooks } = fakeApi(cli());
    await hooks.agent_end({ messages: SESSION, success: true }, ctx);
    await hooks.agent_end({ messages: SESSION, success: true }, ctx);
    const next = [...SESSION, { role: "user", content: SESSION[2].content }];
    await hooks.agent_end({ messages: next, success: true }, ctx);
    const turns = calls().map((c) => JSON.parse(c.stdin)[0].turn);
    assert.equal(turns[0], turns[1]);
    assert.notEqual(turns[1], turns[2]);
  });

  test("failed runs, background runs and turns without words are not captured", async () => {
    const { hooks } = fakeApi(cli());
    await hooks.agent_end({ messages: SESSION, success: false }, ctx);
    await hooks.agent_end({ messages: SESSION, success: true }, { ...ctx, trigger: "cron" });
    await hooks.agent_end({ messages: [{ role: "assistant", content: "hi" }], success: true }, ctx);
    await hooks.agent_end({ messages: [{ role: "user", content: [{ type: "image" }] }], success: true }, ctx);
    await hooks.agent_end({ success: true }, ctx);
    assert.deepEqual(calls(), []);
  });

  test("without a session id the session key is the session", async () => {
    const { hooks } = fakeApi(cli());
    await hooks.agent_end({ messages: SESSION.slice(0, 2), success: true }, { sessionKey: "agent:main:x" });
    const [user, answer] = JSON.parse(calls()[0].stdin);
    assert.equal(user.session, "agent:main:x");
    assert.equal(user.user, "hi");
    assert.equal(answer.assistant, "Hello!");
  });
});

describe("failures never reach the host", () => {
  const event = { prompt: "Where do I live?", messages: [] };
  const end = { messages: SESSION, success: true };

  test("a missing binary", async () => {
    const { hooks, warnings } = fakeApi({ command: join(dir, "no-such-memoracle"), warm: false });
    assert.equal(await hooks.before_prompt_build(event, {}), undefined);
    assert.equal(await hooks.agent_end(end, {}), undefined);
    assert.equal(warnings().length, 2);
    assert.match(warnings()[0], /recall failed.*not found/);
    assert.match(warnings()[1], /capture failed.*not found/);
  });

  test("output that is not JSON", async () => {
    process.env.FAKE_MEMORACLE_MODE = "badjson";
    const { hooks, warnings } = fakeApi(cli());
    assert.equal(await hooks.before_prompt_build(event, {}), undefined);
    assert.equal(await hooks.agent_end(end, {}), undefined);
    assert.match(warnings()[0], /not JSON: Traceback/);
  });

  test("a non-zero exit, with memoracle's message", async () => {
    process.env.FAKE_MEMORACLE_MODE = "fail";
    const { hooks, warnings } = fakeApi(cli());
    assert.equal(await hooks.before_prompt_build(event, {}), undefined);
    assert.match(warnings()[0], /exited with status 1: Error: No workspace at \/nowhere/);
  });

  test("a timeout", async () => {
    process.env.FAKE_MEMORACLE_MODE = "hang";
    const { hooks, warnings } = fakeApi(cli({ recallTimeoutMs: 300, captureTimeoutMs: 300 }));
    const started = Date.now();
    assert.equal(await hooks.before_prompt_build(event, {}), undefined);
    assert.equal(await hooks.agent_end(end, {}), undefined);
    assert.ok(Date.now() - started < 10000);
    assert.match(warnings()[0], /no answer within 300 ms/);
    assert.match(warnings()[1], /no answer within 300 ms/);
  });

  test("a logger that throws", async () => {
    const api = {
      pluginConfig: { command: join(dir, "missing"), warm: false },
      logger: {
        warn() {
          throw new Error("logger down");
        },
      },
      /** @type {Record<string, Function>} */
      hooks: {},
      on(/** @type {string} */ name, /** @type {Function} */ handler) {
        this.hooks[name] = handler;
      },
    };
    registerMemoracle(api);
    assert.equal(await api.hooks.before_prompt_build(event, {}), undefined);
    assert.equal(await api.hooks.agent_end(end, {}), undefined);
  });
});

describe("MCP over HTTP", () => {
  /** @type {import("node:http").Server} */
  let server;
  let endpoint = "";
  /** @type {{ method: string, session: string | undefined, params: any }[]} */
  let seen = [];
  let sessions = 0;
  let live = "";
  /** @type {string} */
  let mode = "ok";

  before(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const message = JSON.parse(body);
        const session = /** @type {string | undefined} */ (req.headers["mcp-session-id"]);
        seen.push({ method: message.method, session, params: message.params });
        if (message.method === "initialize") {
          sessions += 1;
          live = `s-${sessions}`;
          res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": live });
          const result = { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "fake" } };
          res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: message.id, result })}\n\n`);
          return;
        }
        if (session !== live || req.headers["mcp-protocol-version"] !== "2025-06-18") {
          res.writeHead(404).end();
          return;
        }
        if (message.method === "notifications/initialized") {
          res.writeHead(202).end();
          return;
        }
        const { name } = message.params;
        /** @type {Record<string, unknown>} */
        let reply;
        if (mode === "rpc-error") {
          reply = { jsonrpc: "2.0", id: message.id, error: { code: -32602, message: "Invalid params" } };
        } else if (mode === "tool-error") {
          reply = { jsonrpc: "2.0", id: message.id, result: { isError: true, content: [{ type: "text", text: "No memory store" }] } };
        } else if (name === "memory_recall") {
          const text = "- [m_1 2026-01-05] I moved to Lyon last month.";
          reply = { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text }], structuredContent: { version: 1, text, degraded: null } } };
        } else {
          reply = { jsonrpc: "2.0", id: message.id, result: { content: [], structuredContent: { ok: true, episodes: ["e_1", "e_2"], added: [{ id: "m_1" }], held: [], problems: [] } } };
        }
        if (name === "memory_recall") {
          // A stream with a notification before the answer, in two chunks.
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\nevent: message\nda`);
          setTimeout(() => res.end(`ta: ${JSON.stringify(reply)}\n\n`), 20);
        } else {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(reply));
        }
      });
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
    const address = server.address();
    assert.ok(address && typeof address === "object");
    endpoint = `http://127.0.0.1:${address.port}/mcp`;
  });

  after(() => new Promise((resolve) => server.close(() => resolve(undefined))));

  beforeEach(() => {
    seen = [];
    mode = "ok";
  });

  test("recall: initialize once, then tools/call memory_recall", async () => {
    const { hooks } = fakeApi({ endpoint, budget: 700 });
    const first = await hooks.before_prompt_build({ prompt: "Where do I live?", messages: [] }, MAIN);
    await hooks.before_prompt_build({ prompt: "And my rules?", messages: [] }, MAIN);
    assert.match(first.prependContext, /Lyon/);
    assert.deepEqual(seen.map((s) => s.method), [
      "initialize", "notifications/initialized", "tools/call", "tools/call",
    ]); // prettier-ignore
    assert.deepEqual(seen[2].params, {
      name: "memory_recall",
      arguments: { query: "Where do I live?", budget: 700 },
    });
  });

  test("capture: memory_checkpoint with one user line and one assistant line", async () => {
    const { hooks, logs } = fakeApi({ endpoint });
    await hooks.agent_end({ messages: SESSION, success: true }, { ...MAIN, sessionId: "sess-9" });
    const call = seen.find((s) => s.method === "tools/call");
    assert.deepEqual(call?.params, {
      name: "memory_checkpoint",
      arguments: {
        text: "user: I moved to Lyon last month. Never deploy on Fridays.\nassistant: Noted: Lyon, and no deploys on Fridays.",
        session: "sess-9",
      },
    });
    assert.ok(logs.some((l) => l.level === "debug" && /1 new memories/.test(l.message)));
  });

  test("a lost session is opened again, once", async () => {
    const { hooks } = fakeApi({ endpoint });
    await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN);
    const before = sessions;
    live = "restarted"; // the server forgot every session
    const result = await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN);
    assert.match(result.prependContext, /Lyon/);
    assert.equal(sessions, before + 1);
  });

  test("tool and protocol errors are warnings", async () => {
    const { hooks, warnings } = fakeApi({ endpoint });
    mode = "tool-error";
    assert.equal(await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN), undefined);
    mode = "rpc-error";
    assert.equal(await hooks.agent_end({ messages: SESSION, success: true }, MAIN), undefined);
    assert.match(warnings()[0], /memory_recall: No memory store/);
    assert.match(warnings()[1], /memory_checkpoint: Invalid params/);
  });

  test("a server that is not there", async () => {
    const closed = createServer();
    await new Promise((resolve) => closed.listen(0, "127.0.0.1", () => resolve(undefined)));
    const address = closed.address();
    assert.ok(address && typeof address === "object");
    await new Promise((resolve) => closed.close(() => resolve(undefined)));
    const { hooks, warnings } = fakeApi({ endpoint: `http://127.0.0.1:${address.port}/mcp` });
    assert.equal(await hooks.before_prompt_build({ prompt: "q", messages: [] }, MAIN), undefined);
    assert.match(warnings()[0], /recall failed/);
  });

  test("home, agent and userId are said not to reach the endpoint", () => {
    const { warnings } = fakeApi({ endpoint, agent: "main" });
    assert.match(warnings()[0], /apply to the warm server and the CLI only/);
  });
});
