// @ts-check
// What agent_end's transcript read costs per turn, with and without the per-session
// mark (src/turn.js TranscriptMarks): a JSONL session grows a turn at a time (a user
// message and an answer, without entry ids on the messages, as agent_end hands them
// over); at each turn the plugin finds the two entry ids. Prints median and p95 per
// turn, in ms, over the last turns of sessions of several lengths.
//   node tools/bench-transcript-read.js [turns=2000] [chars=600]
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

import { captureTurns, lastTurn } from "../src/core.js";
import { TranscriptMarks } from "../src/turn.js";

const turns = Number(process.argv[2] ?? 2000);
const chars = Number(process.argv[3] ?? 600);
const dir = mkdtempSync(join(tmpdir(), "memoracle-bench-"));
const path = join(dir, "session.jsonl");
writeFileSync(path, `${JSON.stringify({ type: "session", id: "bench" })}\n`);
const marks = new TranscriptMarks();
const ctx = { sessionFile: path };
/** @type {Record<string, number[]>} */
const timings = { marked: [], whole: [] };
const checkpoints = new Set([Math.floor(turns / 10), Math.floor(turns / 2), turns]);
const filler = "lorem ipsum dolor sit amet ".repeat(Math.ceil(chars / 27)).slice(0, chars);
/** @param {number[]} values @param {number} q */
const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];

try {
  for (let n = 1; n <= turns; n += 1) {
    const user = { role: "user", content: `turn ${n}: ${filler}`, timestamp: n * 2 };
    const answer = { role: "assistant", content: [{ type: "text", text: `ok ${n}` }], timestamp: n * 2 + 1 };
    appendFileSync(
      path,
      `${JSON.stringify({ type: "message", id: `u${n}`, message: user })}\n` +
        `${JSON.stringify({ type: "message", id: `a${n}`, message: answer })}\n`,
    );
    const last = lastTurn([user, answer]);
    if (!last) throw new Error("no turn");
    let start = performance.now();
    const got = captureTurns(last, ctx, new Date(0), {}, marks);
    timings.marked.push(performance.now() - start);
    if (got[0].turn !== `u${n}` || got[1].turn !== `a${n}`) throw new Error(`wrong ids at turn ${n}`);
    if (n > turns - 50 || checkpoints.has(n)) {
      start = performance.now();
      captureTurns(last, ctx, new Date(0), {});
      timings.whole.push(performance.now() - start);
    }
    if (checkpoints.has(n)) {
      const window = timings.marked.slice(-50);
      const whole = timings.whole.slice(-1);
      console.log(
        `turns=${n} file=${(statSync(path).size / 1e6).toFixed(2)}MB` +
          ` marked: median ${quantile(window, 0.5).toFixed(3)} ms p95 ${quantile(window, 0.95).toFixed(3)} ms` +
          ` | whole read: ${whole[0].toFixed(3)} ms`,
      );
    }
  }
  const whole = timings.whole.slice(-50);
  const marked = timings.marked.slice(-50);
  console.log(
    `last 50 turns of ${turns}: marked median ${quantile(marked, 0.5).toFixed(3)} ms p95 ${quantile(marked, 0.95).toFixed(3)} ms;` +
      ` whole median ${quantile(whole, 0.5).toFixed(3)} ms p95 ${quantile(whole, 0.95).toFixed(3)} ms`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
