#!/usr/bin/env node
/**
 * The sandbox launcher's own cost (issue 32), A/B interleaved in one run: `node dist/sandbox/launcher.js SPEC` with
 * `/bin/true` as the command (the launcher's import of the runtime, its proxies, the bubblewrap command, bubblewrap
 * and the bridges inside; no Claude Code), with V8's compile cache off (NODE_DISABLE_COMPILE_CACHE=1) and on.
 * Reports the median wall time and the median CPU time (user + system of the launcher and everything it ran,
 * from the waiting shell's cutime/cstime), so a shared machine's load shows as wall time, not as CPU time.
 *   node scripts/bench/sandbox-launcher.mjs [RUNS]   (default 15; needs bwrap, socat, rg; npm run build first)
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const LAUNCHER = join(ROOT, "dist", "sandbox", "launcher.js");
const { sandboxDeps } = await import(join(ROOT, "dist", "sandbox", "deps.js"));
const runs = Number(process.argv[2] ?? 15);
const deps = sandboxDeps();
if (!deps.ok) {
  console.log(`skipped: ${deps.missing.join("; ")}`);
  process.exit(0);
}
const root = mkdtempSync(join(tmpdir(), "cs-launcher-bench-"));
const state = join(root, "state");
const cfgDir = join(root, "claude");
mkdirSync(cfgDir, { recursive: true });
const TICK = 10; // ms per clock tick (USER_HZ 100)

function once(cache) {
  const id = `s${Math.random().toString(36).slice(2, 10)}`;
  const dir = join(state, id);
  const cwd = join(root, "work", id);
  mkdirSync(dir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  const spec = {
    v: 1,
    argv: ["/bin/true"],
    cwd,
    sessionDir: dir,
    realConfigDir: cfgDir,
    realConfigFile: join(root, ".claude.json"),
    copyCredentials: false,
    allowHosts: ["127.0.0.1:9"],
    allowWrite: [],
    denyRead: [state],
    allowRead: [cwd],
    tools: deps.tools,
  };
  const specPath = join(dir, "sandbox.json");
  writeFileSync(specPath, JSON.stringify(spec), { mode: 0o600 });
  const env = { ...process.env, ...(cache ? {} : { NODE_DISABLE_COMPILE_CACHE: "1" }) };
  const t0 = performance.now();
  const r = spawnSync(
    "/bin/sh",
    ["-c", `"$0" "$1" "$2" || echo "launcher failed: $?" >&2; cat /proc/$$/stat`, process.execPath, LAUNCHER, specPath],
    { env, encoding: "utf8" },
  );
  const ms = performance.now() - t0;
  if (r.status !== 0 || /failed/.test(r.stderr)) throw new Error(`launcher: ${r.stderr}`);
  const stat = r.stdout.trim().split("\n").at(-1);
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 (cutime, cstime) are the 14th and 15th after the command's name.
  const cpu = (Number(f[13]) + Number(f[14])) * TICK;
  return { ms, cpu };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const out = { off: [], on: [] };
const loadStart = load();
once(true); // fills the cache, as the first launch on a server does
for (let i = 0; i < runs; i++) {
  for (const k of i % 2 ? ["on", "off"] : ["off", "on"]) out[k].push(once(k === "on"));
}
rmSync(root, { recursive: true, force: true });
const row = (k) => ({
  runs: out[k].length,
  wall_p50_ms: Math.round(median(out[k].map((x) => x.ms))),
  cpu_p50_ms: median(out[k].map((x) => x.cpu)),
});
console.log(JSON.stringify({ load_start: loadStart, load_end: load(), cache_off: row("off"), cache_on: row("on") }, null, 1));
