#!/usr/bin/env node
/**
 * Server start, A/B (issue 38 item 3): `node scripts/bench/server-start.mjs [--runs N] <bin.js>...` spawns each
 * server (and the one-tool SDK peer, scripts/bench/peer-server.mjs) on stdio, initializes and lists its tools,
 * interleaved run by run; prints p50 of spawn → tools/list (wall) and of the server's CPU time until then (user +
 * system from /proc, which the machine's load does not stretch). Each server keeps one private state directory
 * over its runs, as a user's does (so node's compile cache is warm after the first). Not counted: each one's first.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const args = process.argv.slice(2);
const at = args.indexOf("--runs");
const runs = at >= 0 ? Number(args.splice(at, 2)[1]) : 10;
const peer = resolve(import.meta.dirname, "peer-server.mjs");
const bins = [peer, ...args.map((a) => resolve(a))];
const root = mkdtempSync(join(tmpdir(), "cs-start-"));
const states = new Map(bins.map((b, i) => [b, join(root, `state-${i}`)]));

function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * (1000 / 100);
}

async function once(bin) {
  const t0 = performance.now();
  const tr = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: { ...process.env, CLAUDE_SESSIONS_DIR: states.get(bin), CLAUDE_SESSIONS_TMUX_SOCKET: `cs-start-${process.pid}` },
    stderr: "ignore",
  });
  const c = new Client({ name: "bench", version: "1.0.0" });
  await c.connect(tr);
  const n = (await c.listTools()).tools.length;
  const wall = performance.now() - t0;
  const cpu = cpuMs(tr.pid);
  await c.close();
  return { wall, cpu, n };
}

const res = new Map(bins.map((b) => [b, []]));
try {
  for (const b of bins) await once(b); // first start of each: the state directory and caches made
  for (let i = 0; i < runs; i++) for (const b of bins) res.get(b).push(await once(b));
} finally {
  rmSync(root, { recursive: true, force: true });
}
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const b of bins) {
  const r = res.get(b);
  console.log(
    `${b === peer ? "one-tool SDK peer" : b}: spawn → tools/list p50 ${p50(r.map((x) => x.wall)).toFixed(0)} ms, CPU p50 ${p50(r.map((x) => x.cpu)).toFixed(0)} ms (${r[0].n} tools, ${runs} runs)`,
  );
}
