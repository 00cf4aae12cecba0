// @ts-check
// The memory slot (src/slot.js) and the capability the plugin registers on a 2026.9.x
// host: whose scope a request is, the hits' paths, what memory_get may read, the
// artifacts listed, the prompt section, and that a hit whose visibility cannot be
// checked is never shown. The warm server's side runs for real in warm.test.js.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { registerMemoracle } from "../src/core.js";
import {
  agentWorkspace,
  createMemorySlot,
  listArtifacts,
  memoryCoreBeside,
  readablePath,
  refOfPath,
  requesterScope,
  slotHit,
} from "../src/slot.js";

const SETTINGS = { agent: undefined, userId: undefined, owners: new Set(), groupsInMain: false };
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const root = mkdtempSync(join(tmpdir(), "memoracle-slot-"));
after(() => rmSync(root, { recursive: true, force: true }));

describe("whose memory a request is", () => {
  test("the same mapping as every turn's: owner, another person, a group, fail-safe", () => {
    assert.deepEqual(requesterScope({ sessionKey: "agent:main:main" }, SETTINGS).scope, { visibility: "private" });
    assert.deepEqual(requesterScope({ sessionKey: "agent:main:telegram:direct:111" }, SETTINGS).scope, {
      visibility: "private",
      user_id: "telegram:111",
    });
    const group = requesterScope({ sessionKey: "agent:main:telegram:group:-100777", senderId: "333" }, SETTINGS);
    assert.equal(group.kind, "group");
    assert.equal(group.scope.visibility, "shared");
    assert.equal(group.scope.chat, "telegram:group:-100777");
    assert.equal(requesterScope({ sessionKey: "agent:main:cron:nightly" }, SETTINGS).kind, "failsafe");
  });

  test("no session: the operator's for the gateway's CLI and status, else fail-safe", () => {
    assert.equal(requesterScope({ purpose: "cli", agentId: "main" }, SETTINGS).kind, "owner");
    assert.equal(requesterScope({ purpose: "status" }, SETTINGS).kind, "owner");
    assert.equal(requesterScope({ purpose: "default" }, SETTINGS).kind, "failsafe");
    assert.equal(requesterScope({}, SETTINGS).kind, "failsafe");
  });
});

describe("hits and reads", () => {
  test("a hit's path is memoracle's id; nothing else is one", () => {
    const hit = slotHit({ id: "m_12", text: "I live in Lyon", scores: { final: 0.42 } });
    assert.deepEqual(hit, { path: "memoracle/m_12", startLine: 1, endLine: 1, score: 0.42, snippet: "I live in Lyon", source: "memory", citation: "m_12" });
    assert.equal(refOfPath(hit.path), "m_12");
    assert.equal(refOfPath("e_7"), "e_7");
    for (const other of ["MEMORY.md", "memoracle/x_1", "memory/m_12", "", undefined]) assert.equal(refOfPath(other), undefined);
  });

  test("memory_get reads only the files memoracle renders, never outside the workspace", () => {
    for (const ok of ["MEMORY.md", "SESSION-START.md", "memory/2026-12-07.md", "reference/entities.md"]) {
      assert.equal(readablePath(ok), ok);
    }
    for (const no of ["AGENTS.md", "../MEMORY.md", "/etc/passwd", "memory/../../x.md", "knowledge-graph/facts.jsonl"]) {
      assert.equal(readablePath(no), undefined, no);
    }
  });

  test("a file is the owner's only; another scope gets not_found", async () => {
    const ws = join(root, "ws-read");
    mkdirSync(ws, { recursive: true });
    writeFileSync(join(ws, "MEMORY.md"), "# Memory\n- my bank is ACME\n");
    const slot = createMemorySlot({ search: async () => ({}), get: async () => [] }, SETTINGS, quiet);
    const owner = requesterScope({ sessionKey: "agent:main:main" }, SETTINGS);
    const group = requesterScope({ sessionKey: "agent:main:telegram:group:-1" }, SETTINGS);
    assert.match(String((await slot.read("MEMORY.md", {}, owner, ws)).text), /ACME/);
    assert.equal((await slot.read("MEMORY.md", {}, group, ws)).status, "not_found");
  });

  test("hits whose visibility cannot be checked are not shown", async () => {
    const warned = [];
    const log = { ...quiet, warn: (/** @type {string} */ m) => warned.push(m) };
    const broken = { search: async () => ({}), get: async () => { throw new Error("server down"); } };
    const slot = createMemorySlot(broken, SETTINGS, log);
    const hits = [{ path: "memoracle/m_1" }, { path: "memoracle/m_2" }];
    assert.deepEqual(await slot.authorize(hits, { visibility: "private" }), []);
    assert.equal(warned.length, 1);
    // Only what memoracle says the scope sees is kept; a hit of another provider never is.
    const some = { search: async () => ({}), get: async () => [{ id: "m_2" }] };
    const kept = await createMemorySlot(some, SETTINGS, quiet).authorize([...hits, { path: "notes/x.md" }], { visibility: "private" });
    assert.deepEqual(kept, [{ path: "memoracle/m_2" }]);
  });
});

describe("the capability", () => {
  test("artifacts are the files memoracle renders that exist", () => {
    const ws = join(root, "ws-art");
    mkdirSync(join(ws, "memory", "topics"), { recursive: true });
    mkdirSync(join(ws, "knowledge-graph"), { recursive: true });
    for (const f of ["MEMORY.md", "SESSION-START.md", "memory/2026-12-07.md", "memory/topics/anna.md", "knowledge-graph/facts.jsonl", "AGENTS.md"]) {
      writeFileSync(join(ws, f), "x\n");
    }
    const found = listArtifacts(ws, ["main"]).map((a) => `${a.kind} ${a.relativePath} ${a.contentType}`);
    assert.deepEqual(found, [
      "memory-root MEMORY.md markdown",
      "session-start SESSION-START.md markdown",
      "daily-note memory/2026-12-07.md markdown",
      "topic memory/topics/anna.md markdown",
      "knowledge-graph knowledge-graph/facts.jsonl json",
    ]);
    assert.equal(agentWorkspace({ agents: { defaults: { workspace: ws } } }, "main"), ws);
    assert.equal(agentWorkspace({}, "main", { OPENCLAW_STATE_DIR: "/s" }), "/s/workspace");
  });

  test("on a 2026.9.x host the plugin registers the whole capability and both tools", async () => {
    /** @type {Record<string, any>} */
    const capability = {};
    /** @type {string[]} */
    const tools = [];
    registerMemoracle(/** @type {any} */ ({
      pluginConfig: { command: "memoracle" },
      logger: quiet,
      on() {},
      registerMemoryCapability: (/** @type {any} */ c) => Object.assign(capability, c),
      registerTool: (/** @type {any} */ factory, /** @type {any} */ opts) => {
        tools.push(...opts.names);
        assert.equal(factory({ sessionKey: "agent:main:main" }).name, opts.names[0]);
      },
    }));
    assert.deepEqual(Object.keys(capability).sort(), [
      "deterministicRecallToolName",
      "flushPlanResolver",
      "promptBuilder",
      "publicArtifacts",
      "runtime",
    ]);
    assert.equal(capability.deterministicRecallToolName, "memory_search");
    assert.equal(typeof capability.runtime.getMemorySearchManager, "function");
    assert.equal(typeof capability.runtime.authorizeSearchHits, "function");
    assert.deepEqual(tools, ["memory_search", "memory_get"]);
    const lines = capability.promptBuilder({ availableTools: new Set(["memory_search", "memory_get"]) });
    assert.match(lines.join("\n"), /memory_search/);
    assert.deepEqual(capability.promptBuilder({ availableTools: new Set(["exec"]) }), []);
  });

  test("both tools stay in the model's tool list: not hidden behind the gateway's tool search", () => {
    // OpenClaw 2026.9.x catalogues a run's tools behind tool_search unless a tool is
    // `direct-only`; a catalogued memory_search is "not found" when the model calls it.
    const slot = createMemorySlot({ search: async () => ({ hits: [] }), get: async () => [] }, SETTINGS, quiet);
    const made = slot.tools({ sessionKey: "agent:main:main" });
    assert.deepEqual(made.map((t) => [t.name, t.catalogMode]), [
      ["memory_search", "direct-only"],
      ["memory_get", "direct-only"],
    ]);
  });

  test("memory-core beside memoracle (OpenClaw's dreaming sidecar) is said once, with the fix", () => {
    const slot = { slots: { memory: "memoracle" } };
    assert.equal(memoryCoreBeside({ plugins: slot }), true);
    assert.equal(memoryCoreBeside({ plugins: { ...slot, entries: { "memory-core": { enabled: true } } } }), true);
    assert.equal(memoryCoreBeside({ plugins: { ...slot, entries: { "memory-core": { enabled: false } } } }), false);
    assert.equal(memoryCoreBeside({ plugins: { ...slot, deny: ["memory-core"] } }), false);
    assert.equal(memoryCoreBeside({ plugins: { ...slot, enabled: false } }), false);
    assert.equal(memoryCoreBeside({ plugins: { slots: { memory: "memory-core" } } }), false);
    assert.equal(memoryCoreBeside({}), false);
    /** @param {any} config */
    const warnings = (config) => {
      /** @type {string[]} */
      const said = [];
      registerMemoracle(/** @type {any} */ ({
        pluginConfig: { command: "memoracle" },
        config,
        logger: { ...quiet, warn: (/** @type {string} */ m) => said.push(m) },
        on() {},
        registerMemoryCapability() {},
        registerTool() {},
      }));
      return said;
    };
    const said = warnings({ plugins: slot });
    assert.equal(said.length, 1);
    assert.match(said[0], /openclaw plugins disable memory-core/);
    assert.deepEqual(warnings({ plugins: { ...slot, entries: { "memory-core": { enabled: false } } } }), []);
  });

  test("with an MCP endpoint (one fixed scope) only the flush plan: no shared tools", () => {
    /** @type {Record<string, any>} */
    const capability = {};
    let tools = 0;
    registerMemoracle(/** @type {any} */ ({
      pluginConfig: { endpoint: "http://127.0.0.1:8765/mcp" },
      logger: quiet,
      on() {},
      registerMemoryCapability: (/** @type {any} */ c) => Object.assign(capability, c),
      registerTool: () => (tools += 1),
    }));
    assert.deepEqual(Object.keys(capability), ["flushPlanResolver"]);
    assert.equal(tools, 0);
  });
});
