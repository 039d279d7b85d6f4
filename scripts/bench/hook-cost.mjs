// The cost of the hook command Claude Code runs on every event: spawn → exit of `/bin/sh -c <command>`
// with a 1 KB payload on stdin, run one at a time (hooks are synchronous), as built in dist/.
//   node scripts/bench/hook-cost.mjs [runs=300]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hookCommand } from "../../dist/claude/hooks.js";

const runs = Number(process.argv[2] ?? 300);
const dir = mkdtempSync(join(tmpdir(), "cs-hookcost-"));
const events = join(dir, "events.jsonl");
const command = hookCommand(events);
const payload = JSON.stringify({ session_id: "x", hook_event_name: "PreToolUse", tool_input: { command: "y".repeat(1000) } });
const times = [];
for (let i = 0; i < runs + 20; i++) {
  const t0 = performance.now();
  await new Promise((resolve, reject) => {
    const c = spawn("/bin/sh", ["-c", command], { stdio: ["pipe", "ignore", "ignore"] });
    c.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
    c.stdin.end(payload);
  });
  if (i >= 20) times.push(performance.now() - t0); // the first runs warm the page cache
}
rmSync(dir, { recursive: true, force: true });
times.sort((a, b) => a - b);
const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(2);
console.log(JSON.stringify({ command, runs, p50_ms: q(0.5), p95_ms: q(0.95), p99_ms: q(0.99) }));
