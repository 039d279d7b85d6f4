#!/usr/bin/env node
/**
 * What one HTTP request pays for the sandbox's proxy hop (issue 32), A/B in one run: `curl` to a local HTTP server,
 * a new connection each time, 30 in a row directly and 30 inside the sandbox (the launcher, dist/sandbox/launcher.js,
 * with that server's address as the only allowed host: socat inside → the launcher's socat → the runtime's proxy),
 * twice each, interleaved. Prints the median of each. Needs bwrap, socat, rg, curl; npm run build first.
 *   node scripts/bench/sandbox-hop.mjs
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { sandboxDeps } = await import(join(ROOT, "dist", "sandbox", "deps.js"));
const deps = sandboxDeps();
if (!deps.ok) {
  console.log(`skipped: ${deps.missing.join("; ")}`);
  process.exit(0);
}
/** The server answers in this process: the runs are spawned asynchronously. */
function run(cmd, args, env) {
  return new Promise((resolve) => {
    const c = spawn(cmd, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    c.stdout.on("data", (d) => (out += d));
    c.stderr.on("data", (d) => (err += d));
    c.on("close", () => resolve({ out, err }));
  });
}
const srv = createServer((_q, r) => r.end("ok")).listen(0, "127.0.0.1");
await new Promise((r) => srv.once("listening", r));
const port = srv.address().port;
const loop = `for i in $(seq 30); do curl -s -o /dev/null -w "%{time_total}\\n" http://127.0.0.1:${port}/; done`;
const ms = (s) =>
  s
    .trim()
    .split("\n")
    .filter((l) => /^\d/.test(l))
    .map((x) => Number(x) * 1000);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const root = mkdtempSync(join(tmpdir(), "cs-hop-bench-"));
const out = { direct: [], sandboxed: [] };
for (let round = 0; round < 2; round++) {
  out.direct.push(...ms((await run("/bin/sh", ["-c", loop], process.env)).out));
  const dir = join(root, "state", `s${round}`);
  const cwd = join(root, "work");
  mkdirSync(dir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  writeFileSync(
    join(dir, "sandbox.json"),
    JSON.stringify({
      v: 1,
      argv: ["/bin/sh", "-c", loop],
      cwd,
      sessionDir: dir,
      realConfigDir: join(root, "claude"),
      realConfigFile: join(root, ".claude.json"),
      copyCredentials: false,
      allowHosts: [`127.0.0.1:${port}`],
      allowWrite: [],
      denyRead: [],
      allowRead: [],
      tools: deps.tools,
    }),
    { mode: 0o600 },
  );
  const r = await run(process.execPath, [join(ROOT, "dist", "sandbox", "launcher.js"), join(dir, "sandbox.json")], process.env);
  if (!r.out.trim()) throw new Error(`sandboxed run printed nothing: ${r.err}`);
  out.sandboxed.push(...ms(r.out));
}
srv.close();
rmSync(root, { recursive: true, force: true });
console.log(
  JSON.stringify({
    requests: out.direct.length,
    direct_p50_ms: +median(out.direct).toFixed(2),
    sandboxed_p50_ms: +median(out.sandboxed).toFixed(2),
    load: readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" "),
  }),
);
