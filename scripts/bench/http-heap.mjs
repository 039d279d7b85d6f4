#!/usr/bin/env node
/**
 * The HTTP server's live heap under MCP session churn: `node scripts/bench/http-heap.mjs [N,N,…]` (default
 * 1000,1000,1000). Starts the built server (`serve --http 127.0.0.1:0`, with --heapsnapshot-signal), then for each
 * N: N SDK clients one after another connect and close the way `client.close()` does (no DELETE); then a heap
 * snapshot (SIGUSR2; V8 collects garbage first) and its size, which follows the live heap, and the RSS. Flat
 * snapshot sizes once the cap is reached mean the ended MCP sessions leave nothing behind.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { memMiB } from "./stats.mjs";
import { makeWorld, sutPath } from "./world.mjs";

const steps = (process.argv[2] ?? "1000,1000,1000").split(",").map(Number);
const w = makeWorld("http-heap");
const snaps = w.dir("snapshots");
const proc = spawn(
  process.execPath,
  ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${snaps}`, sutPath("dist", "bin.js"), "serve", "--http", "127.0.0.1:0"],
  {
    env: { ...w.env, CLAUDE_SESSIONS_NO_REEXEC: "1" },
    cwd: w.work,
    stdio: ["ignore", "ignore", "pipe"],
  },
);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  let err = "";
  proc.stderr.on("data", (b) => (err += b));
  let url;
  for (const t0 = Date.now(); !(url = /serving MCP at (http:\/\/\S+)\/mcp/.exec(err)?.[1]); await sleep(50)) {
    if (proc.exitCode !== null || Date.now() - t0 > 30_000) throw new Error(`the HTTP server did not start: ${err.slice(-500)}`);
  }
  const token = readFileSync(join(w.stateDir, "token"), "utf8").trim();
  const churn = async (n) => {
    let failed = 0;
    for (let i = 0; i < n; i++) {
      const client = new Client({ name: `heap-${i}`, version: "1.0.0" });
      await client
        .connect(
          new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        )
        .catch(() => failed++);
      await client.close();
    }
    return failed;
  };
  const snapshot = async () => {
    const before = new Set(readdirSync(snaps));
    proc.kill("SIGUSR2");
    for (;;) {
      await sleep(500);
      const f = readdirSync(snaps).find((x) => !before.has(x));
      if (!f) continue;
      const size = statSync(join(snaps, f)).size;
      await sleep(2000);
      if (size > 0 && statSync(join(snaps, f)).size === size) return size / 2 ** 20;
    }
  };
  console.log(`start: heap snapshot ${(await snapshot()).toFixed(1)} MiB, RSS ${memMiB(proc.pid).rss.toFixed(1)} MiB`);
  let total = 0;
  for (const n of steps) {
    const failed = await churn(n);
    total += n;
    console.log(
      `after ${total} clients (${failed} refused): heap snapshot ${(await snapshot()).toFixed(1)} MiB, RSS ${memMiB(proc.pid).rss.toFixed(1)} MiB`,
    );
  }
} finally {
  if (proc.exitCode === null) {
    proc.kill("SIGTERM");
    await new Promise((r) => proc.once("exit", r));
  }
  w.cleanup();
}
