// @ts-check
// Where a workspace memory file comes from (src/provenance.js): the runtime's
// `classifyWorkspaceMemoryPaths`, which OpenClaw 2026.9.x asks before it puts MEMORY.md
// and USER.md into a run's context. With MEMORACLE_OPENCLAW_PACKAGE naming an installed
// `openclaw` package (the gateway suite sets it, on the gateway's Node 24), memoracle's
// answers are compared with memory-core's own classifier over the same workspace and
// OpenClaw's own recorded origins; without it that comparison skips.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { registerMemoracle } from "../src/core.js";
import { workspaceClassifier } from "../src/provenance.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const root = mkdtempSync(join(tmpdir(), "memoracle-provenance-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** The files of a workspace the cases ask about (and one file outside it). */
const FILES = [
  "MEMORY.md",
  "USER.md",
  "memory/2026-12-06.md",
  "memory/2026-12-07.md",
  "memory/topics/kayak.md",
  "memory/topics/kayak_full.md",
  "memory/dreaming/deep/2026-12-07.md",
  "memory/.dreams/events.md",
  "memory/notes.txt",
  "DREAMS.md",
  "users/alice/USER.md",
  "users/-alice/USER.md",
  "reference/entities.md",
  "SESSION-START.md",
  "AGENTS.md",
];
/** Every path asked about: the files, links, a folder, a missing file, escapes. */
const ASKED = [
  ...FILES,
  "memory",
  "memory/2026-12-08.md",
  "../outside.md",
  "/etc/hostname",
  "memory/escape.md",
  "memory/alias.md",
  "./MEMORY.md",
  "memory/../MEMORY.md",
];

/** A workspace holding FILES, `memory/escape.md` → a file outside, `memory/alias.md` → MEMORY.md. */
function workspace() {
  const base = mkdtempSync(join(root, "ws-"));
  const ws = join(base, "workspace");
  for (const rel of FILES) {
    mkdirSync(dirname(join(ws, rel)), { recursive: true });
    writeFileSync(join(ws, rel), `${rel}\n`);
  }
  writeFileSync(join(base, "outside.md"), "outside\n");
  symlinkSync(join(base, "outside.md"), join(ws, "memory", "escape.md"));
  symlinkSync(join(ws, "MEMORY.md"), join(ws, "memory", "alias.md"));
  return ws;
}

/** Read sources as the gateway gives them for a sandboxed workspace: some canonical, some not. */
const READ_SOURCES = [
  { relativePath: "MEMORY.md", canonicalRelativePath: "MEMORY.md" },
  { relativePath: "USER.md", canonicalRelativePath: "users/alice/USER.md" },
  { relativePath: "memory/2026-12-07.md", canonicalRelativePath: "memory/2026-12-07.md" },
  { relativePath: "memory/2026-12-06.md", canonicalRelativePath: "memory/2026-12-06.md" },
  { relativePath: "DREAMS.md", canonicalRelativePath: "DREAMS.md" },
  { relativePath: "memory/escape.md" },
  { relativePath: "memory/alias.md", canonicalRelativePath: "../MEMORY.md" },
  { relativePath: "./MEMORY.md", canonicalRelativePath: "./MEMORY.md" },
  { relativePath: "memory/../MEMORY.md", canonicalRelativePath: "/abs/MEMORY.md" },
  { relativePath: "reference/entities.md", canonicalRelativePath: "reference\\entities.md" },
];

/** A recorded origin per path, as a test's own record (OpenClaw's is compared below). */
const noRecord = async () => undefined;

describe("the workspace memory files' origin, as memory-core gives it", () => {
  test("MEMORY.md, USER.md and the daily notes are the agent's; dreams are system; the rest untrusted", async () => {
    const ws = workspace();
    const classify = workspaceClassifier(noRecord);
    const got = Object.fromEntries(
      (await classify({ workspaceDir: ws, relativePaths: ASKED })).map((c) => [c.relativePath, c.originClass]),
    );
    for (const agent of ["MEMORY.md", "USER.md", "memory/2026-12-07.md", "memory/topics/kayak.md", "memory/topics/kayak_full.md", "users/alice/USER.md", "memory/alias.md", "./MEMORY.md", "memory/../MEMORY.md"]) {
      assert.equal(got[agent], "agent", agent);
    }
    for (const system of ["DREAMS.md", "memory/dreaming/deep/2026-12-07.md", "memory/.dreams/events.md"]) {
      assert.equal(got[system], "system", system);
    }
    for (const untrusted of ["memory/notes.txt", "users/-alice/USER.md", "reference/entities.md", "SESSION-START.md", "AGENTS.md", "memory", "memory/2026-12-08.md", "../outside.md", "/etc/hostname", "memory/escape.md"]) {
      assert.equal(got[untrusted], "untrusted", untrusted);
    }
  });

  test("a recorded origin wins for a memory file, and is not asked for any other", async () => {
    const ws = workspace();
    /** @type {string[]} */
    const asked = [];
    const classify = workspaceClassifier(async ({ workspaceDir, relativePath }) => {
      assert.equal(workspaceDir, ws);
      asked.push(relativePath);
      return relativePath === "memory/2026-12-06.md" ? { originClass: "untrusted" } : undefined;
    });
    const got = await classify({ workspaceDir: ws, relativePaths: ["memory/2026-12-06.md", "MEMORY.md", "memory/alias.md", "AGENTS.md", "DREAMS.md"] });
    assert.deepEqual(got.map((c) => c.originClass), ["untrusted", "agent", "agent", "untrusted", "system"]);
    // A link is asked for by the file it resolves to.
    assert.deepEqual(asked.sort(), ["MEMORY.md", "MEMORY.md", "memory/2026-12-06.md"]);
  });

  test("read sources: judged by their canonical path, never probing the workspace", async () => {
    const classify = workspaceClassifier(noRecord);
    const got = await classify({
      workspaceDir: join(root, "no-such-workspace"),
      relativePaths: READ_SOURCES.map((s) => s.relativePath),
      readSources: READ_SOURCES,
    });
    assert.deepEqual(got.map((c) => c.originClass), ["agent", "agent", "agent", "agent", "system", "untrusted", "untrusted", "untrusted", "untrusted", "untrusted"]);
  });

  test("a failing record reader fails the classification (OpenClaw then leaves the files out)", async () => {
    const classify = workspaceClassifier(async () => {
      throw new Error("no provenance store");
    });
    await assert.rejects(classify({ workspaceDir: workspace(), relativePaths: ["MEMORY.md"] }), /no provenance store/);
  });

  test("the runtime offers the classifier, read sources included, only with a record reader", () => {
    /** @param {object} options */
    const runtimeWith = (options) => {
      /** @type {Record<string, any>} */
      const capability = {};
      registerMemoracle(/** @type {any} */ ({
        pluginConfig: { command: "memoracle" },
        logger: quiet,
        on() {},
        registerMemoryCapability: (/** @type {any} */ c) => Object.assign(capability, c),
        registerTool() {},
      }), options);
      return capability.runtime;
    };
    const runtime = runtimeWith({ readRecorded: noRecord });
    assert.equal(typeof runtime.classifyWorkspaceMemoryPaths, "function");
    assert.equal(runtime.supportsWorkspaceMemoryReadSources, true);
    const without = runtimeWith({});
    assert.equal("classifyWorkspaceMemoryPaths" in without, false);
    assert.equal("supportsWorkspaceMemoryReadSources" in without, false);
  });
});

const OPENCLAW = process.env.MEMORACLE_OPENCLAW_PACKAGE;

/**
 * The exported function named `name` of the first module in OpenClaw's dist whose file
 * name starts with `prefix` that exports it (the chunks' names carry a hash).
 * @param {string} prefix
 * @param {string} name
 * @returns {Promise<Function>}
 */
async function openclawFunction(prefix, name) {
  const dist = join(/** @type {string} */ (OPENCLAW), "dist");
  for (const file of readdirSync(dist).filter((f) => f.startsWith(prefix) && f.endsWith(".mjs")).sort()) {
    const mod = await import(pathToFileURL(join(dist, file)).href);
    const found = Object.values(mod).find((v) => typeof v === "function" && v.name === name);
    if (found) return found;
  }
  throw new Error(`no ${name} in ${dist}/${prefix}*.mjs`);
}

describe("the same answers as memory-core's classifier, in OpenClaw itself", { skip: OPENCLAW ? false : "set MEMORACLE_OPENCLAW_PACKAGE to an installed openclaw package" }, () => {
  test("every path, with and without read sources, with OpenClaw's recorded origins", async () => {
    process.env.OPENCLAW_STATE_DIR = mkdtempSync(join(root, "state-"));
    const ws = workspace();
    const theirs = await openclawFunction("workspace-path-classifier-", "classifyWorkspaceMemoryPaths");
    const record = await openclawFunction("memory-artifact-provenance-", "recordMemoryArtifactWriteProvenance");
    const sdk = await import(pathToFileURL(join(/** @type {string} */ (OPENCLAW), "dist", "plugin-sdk", "memory-core-host-runtime-core.js")).href);
    // An untrusted session wrote one daily note through OpenClaw's tools: OpenClaw recorded it.
    await record({ workspaceDir: ws, relativePath: "memory/2026-12-06.md", originClass: "untrusted", contentBefore: "", contentAfter: "x", observedAt: Date.now() });
    const ours = workspaceClassifier(sdk.readMemoryArtifactProvenance);
    const plain = { cfg: {}, agentId: "main", workspaceDir: ws, relativePaths: ASKED };
    const expected = await theirs(plain);
    assert.equal(expected.find((/** @type {any} */ c) => c.relativePath === "memory/2026-12-06.md").originClass, "untrusted");
    assert.deepEqual(await ours(plain), expected);
    const read = { ...plain, relativePaths: READ_SOURCES.map((s) => s.relativePath), readSources: READ_SOURCES };
    assert.deepEqual(await ours(read), await theirs(read));
  });
});
