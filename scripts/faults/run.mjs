#!/usr/bin/env node
/**
 * The fault-injection suite: `npm run faults [-- --runs N] [-- --only name,name]`. Runs every scenario N
 * times (default 10; the server-level ones a third of that, at least 1) against the build in dist/ and
 * prints a table: fault, runs, failures, worst recovery time. Exit status 1 when any run failed.
 * `npm test` runs the same scenarios with few iterations (tests/faults/faults.test.ts).
 */
import { parseArgs } from "node:util";
import * as store from "./store-scenarios.mjs";
import * as server from "./server-scenarios.mjs";
import { cleanupAll } from "../bench/world.mjs";

export const SCENARIOS = [
  ["kill -9 of a process holding/awaiting the state lock", "kill9Store", store.kill9Store, 1],
  ["SIGSTOP/SIGCONT of the lock holder past the stale time", "sigstopLock", store.sigstopLock, 1],
  ["hook killed mid-write (torn line)", "hookKilled", store.hookKilled, 1],
  ["ENOSPC on the state directory (1 MiB tmpfs)", "enospc", store.enospc, 1],
  ["4 processes sending to one session (send lock)", "sendLock", store.sendLock, 1],
  ["kill -9 of the server under 10 sessions", "kill9Server", server.kill9Server, 3],
  ["tmux server killed under live sessions", "tmuxKilled", server.tmuxKilled, 3],
  ["claude killed mid-turn", "claudeKilled", server.claudeKilled, 3],
  ["2 servers sending to one session at once", "twoServersSend", (n) => server.serversSend(n, 2), 3],
  ["4 servers sending to one session at once", "fourServersSend", (n) => server.serversSend(n, 4), 3],
  ["wall clock jumps a day forward and back (waits, deadline)", "clockJump", server.clockJump, 3],
];

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" }, only: { type: "string" } } });
const runs = Number(values.runs);
const only = values.only ? new Set(values.only.split(",")) : undefined;
const rows = [];
let failed = false;
for (const [label, name, fn, divisor] of SCENARIOS) {
  if (only && !only.has(name)) continue;
  const n = Math.max(1, Math.round(runs / divisor));
  const t0 = performance.now();
  process.stderr.write(`${name}: ${n} run(s)… `);
  const r = await fn(n);
  process.stderr.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  for (const note of r.notes) process.stderr.write(`  ${note}\n`);
  if (r.failures) failed = true;
  rows.push([label, String(r.runs), String(r.failures), r.runs ? `${Math.round(r.worstRecoveryMs)} ms` : "not run"]);
}
cleanupAll();
const head = ["fault", "runs", "failures", "worst recovery"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
console.log([line(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n"));
process.exit(failed ? 1 : 0);
