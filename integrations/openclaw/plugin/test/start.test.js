// @ts-check
// SESSION-START.md at a session's first turn: the owner's sessions get it before their
// first message, fenced; no later turn, no other person's or group's session does; and
// the fence never comes back as something the user said.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { createHooks, lastTurn, START_OPEN, stripRecallBlocks } from "../src/core.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const ws = mkdtempSync(join(tmpdir(), "memoracle-start-"));
after(() => rmSync(ws, { recursive: true, force: true }));
writeFileSync(join(ws, "SESSION-START.md"), "# Session start — 2026-12-07\n\n- The boat is at slip 14\n");

const transport = {
  describe: "recording",
  recall: async () => ({ text: "- [m_1 2026-12-01] I live in Lyon", degraded: null }),
  capture: async () => ({ duplicate: false, added: 0, problems: [] }),
  checkpoint: async () => ({ items: 0, stored: 0, section: null }),
};

describe("the session-start snapshot", () => {
  test("before the owner's first turn, then never again in that session", async () => {
    const hooks = createHooks(transport, { budget: 100 }, quiet);
    const ctx = { sessionKey: "agent:main:main", workspaceDir: ws, trigger: "user" };
    const first = await hooks.beforePromptBuild({ prompt: "hello", messages: [] }, ctx);
    const text = first?.prependContext ?? "";
    assert.ok(text.startsWith(START_OPEN), text);
    assert.match(text, /slip 14/);
    assert.ok(text.indexOf("slip 14") < text.indexOf("<memoracle-recall>"), "the snapshot comes first");
    const history = [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }];
    const second = await hooks.beforePromptBuild({ prompt: "and now?", messages: history }, ctx);
    assert.doesNotMatch(second?.prependContext ?? "", /slip 14/);
    assert.match(second?.prependContext ?? "", /Lyon/);
  });

  test("never in another person's or a group's session, nor when turned off", async () => {
    const hooks = createHooks(transport, { budget: 100 }, quiet);
    for (const sessionKey of ["agent:main:telegram:direct:222", "agent:main:telegram:group:-1", "hand-made"]) {
      const got = await hooks.beforePromptBuild({ prompt: "hello", messages: [] }, { sessionKey, workspaceDir: ws });
      assert.doesNotMatch(got?.prependContext ?? "", /slip 14/, sessionKey);
    }
    const off = createHooks(transport, { budget: 100, sessionStart: false }, quiet);
    const got = await off.beforePromptBuild({ prompt: "hello", messages: [] }, { sessionKey: "agent:main:main", workspaceDir: ws });
    assert.doesNotMatch(got?.prependContext ?? "", /slip 14/);
  });

  test("with recall off, the snapshot alone; with no file, nothing", async () => {
    const hooks = createHooks(transport, { budget: 100, autoRecall: false }, quiet);
    const ctx = { sessionKey: "agent:main:main", workspaceDir: ws };
    const got = await hooks.beforePromptBuild({ prompt: "hello", messages: [] }, ctx);
    assert.match(got?.prependContext ?? "", /slip 14/);
    assert.doesNotMatch(got?.prependContext ?? "", /Lyon/);
    const none = await hooks.beforePromptBuild({ prompt: "hello", messages: [] }, { ...ctx, workspaceDir: join(ws, "nope") });
    assert.equal(none, undefined);
  });

  test("capture never stores the snapshot as the user's words", async () => {
    const hooks = createHooks(transport, { budget: 100 }, quiet);
    const got = await hooks.beforePromptBuild({ prompt: "hello", messages: [] }, { sessionKey: "agent:main:main", workspaceDir: ws });
    const said = `${got?.prependContext}\n\nI moved to Porto.`;
    assert.equal(stripRecallBlocks(said), "I moved to Porto.");
    assert.equal(lastTurn([{ role: "user", content: said }])?.user, "I moved to Porto.");
  });
});
