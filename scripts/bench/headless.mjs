#!/usr/bin/env node
/**
 * The headless engine's bench (standalone; run `npm run build` first):
 *   node scripts/bench/headless.mjs [--turns=20] [--idle=20] [--json-out=FILE]
 * (`npm run bench -- --real` runs it as its `headless` phase, with --json-out.)
 *
 * The real CLI ($CLAUDE_PATH, else the pinned node_modules/.bin/claude) offline against
 * tests/fixtures/mock-anthropic.ts with a prepared HOME (tests/fixtures/claude-home.ts), as in the tests.
 *
 * 1. headless: one long-lived HeadlessSession (dist/headless), `--turns` one-line prompts, each timed from
 *    send() to its result in this process. Beside it the CLI's own time for the turn (the result's
 *    duration_ms) and the difference (what the SDK, stdio and the engine add). Target: ≤ +50 ms p50.
 * 2. claude -p: a fresh `claude -p --output-format json` per prompt (same binary, mock, HOME and hooks
 *    settings), timed from spawn to exit; beside it the CLI's own duration_ms.
 * 3. idle: `--idle` headless sessions started and left idle; the RSS of this process (the engine's host,
 *    i.e. the server) before and after, and the CLIs' RSS summed, from /proc/<pid>/status (MB = 10^6 B).
 *
 * Prints a markdown table; writes every sample to bench-results/headless-<time>.json.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { summary } from "./stats.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const args = Object.fromEntries(
  process.argv
    .slice(2)
    .map((a) => a.replace(/^--/, "").split("="))
    .map(([k, v]) => [k, v ?? "1"]),
);
const TURNS = Number(args.turns ?? 20);
const IDLE = Number(args.idle ?? 20);
const CLAUDE = process.env.CLAUDE_PATH || join(ROOT, "node_modules", ".bin", "claude");
const API_KEY = `sk-ant-api03-bench-${"k".repeat(60)}-APPROVEDKEY0123456789`;
const log = (m) => process.stderr.write(`[headless-bench] ${m}\n`);

function rssMB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? (Number(m[1]) * 1024) / 1e6 : 0;
  } catch {
    return 0;
  }
}

const version = /^(\d+\.\d+\.\d+)/.exec(spawnSync(CLAUDE, ["--version"], { encoding: "utf8" }).stdout ?? "")?.[1];
if (!version) {
  log(`the claude CLI at ${CLAUDE} does not run`);
  process.exit(1);
}
const sdkVersion = JSON.parse(
  readFileSync(join(ROOT, "node_modules", "@anthropic-ai", "claude-agent-sdk", "package.json"), "utf8"),
).version;

const { HeadlessSession } = await import(join(ROOT, "dist", "drivers", "headless", "session.js"));
const { installScripts } = await import(join(ROOT, "dist", "app.js"));
const { hooksSettings } = await import(join(ROOT, "dist", "claude", "hooks.js"));
const { startMockApi } = await import(join(ROOT, "tests", "fixtures", "mock-anthropic.ts"));
const { prepareClaudeHome } = await import(join(ROOT, "tests", "fixtures", "claude-home.ts"));

const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-bench-headless-")));
const mock = await startMockApi({});
const sessions = [];
const cleanup = async () => {
  await Promise.all(sessions.map((s) => s.close(3000).catch(() => {})));
  await mock.close();
  rmSync(root, { recursive: true, force: true });
};
process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));

try {
  const dirs = ["turns", "print", ...Array.from({ length: IDLE }, (_, i) => `idle${i}`)].map((n) => {
    const d = join(root, "work", n);
    mkdirSync(d, { recursive: true });
    return d;
  });
  const stateDir = join(root, "state");
  const prepared = await prepareClaudeHome({
    home: join(root, "home"),
    apiKey: API_KEY,
    trustedDirs: dirs,
    mockUrl: mock.url,
    cliVersion: version,
  });
  const scripts = await installScripts(stateDir);
  const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" };
  const start = async (id, cwd) => {
    mkdirSync(join(stateDir, id), { recursive: true });
    const s = await HeadlessSession.start({
      cwd,
      claude_path: CLAUDE,
      events_path: join(stateDir, id, "events.jsonl"),
      settings_path: join(stateDir, id, "settings.json"),
      hook_script: scripts.hook,
      base_env: baseEnv,
      env: prepared.env,
      permission_mode: "default",
    });
    sessions.push(s);
    return s;
  };

  // 1. long-lived headless session
  log(`headless: ${TURNS} turns on one session`);
  const s = await start("turns", dirs[0]);
  await s.send("warm-up");
  const wall = [];
  const own = [];
  for (let i = 0; i < TURNS; i++) {
    const p = `bench turn ${i}`;
    const t0 = performance.now();
    const r = await s.send(p);
    const t1 = performance.now();
    if (r.result !== `MOCK REPLY: ${p}`) throw new Error(`turn ${i}: unexpected reply ${JSON.stringify(r.result)}`);
    wall.push(t1 - t0);
    own.push(r.duration_ms);
  }
  const overhead = wall.map((w, i) => w - own[i]);

  // 2. a fresh claude -p per prompt
  log(`claude -p: ${TURNS} runs`);
  mkdirSync(join(stateDir, "print"), { recursive: true });
  const printEvents = join(stateDir, "print", "events.jsonl");
  const printSettings = join(stateDir, "print", "settings.json");
  writeFileSync(printSettings, JSON.stringify(hooksSettings(printEvents)));
  const pWall = [];
  const pOwn = [];
  for (let i = 0; i < TURNS; i++) {
    const p = `print turn ${i}`;
    const t0 = performance.now();
    const out = await new Promise((resolveRun, reject) => {
      const c = spawn(CLAUDE, ["-p", p, "--output-format", "json", "--permission-mode", "default", "--settings", printSettings], {
        cwd: dirs[1],
        env: { ...baseEnv, ...prepared.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let so = "";
      let se = "";
      c.stdout.on("data", (d) => (so += d));
      c.stderr.on("data", (d) => (se += d));
      c.on("error", reject);
      c.on("exit", (code) => (code === 0 ? resolveRun(so) : reject(new Error(`claude -p exited ${code}: ${se.slice(-500)}`))));
    });
    const t1 = performance.now();
    const j = JSON.parse(out);
    if (j.result !== `MOCK REPLY: ${p}`) throw new Error(`print ${i}: unexpected reply ${JSON.stringify(j.result)}`);
    pWall.push(t1 - t0);
    pOwn.push(j.duration_ms);
  }

  // 3. idle sessions
  log(`idle: starting ${IDLE} sessions`);
  global.gc?.();
  const rssBefore = rssMB(process.pid);
  const idle = [];
  for (let i = 0; i < IDLE; i += 4) {
    idle.push(...(await Promise.all(dirs.slice(2 + i, 2 + Math.min(i + 4, IDLE)).map((d, k) => start(`idle${i + k}`, d)))));
  }
  await new Promise((r) => setTimeout(r, 3000));
  global.gc?.();
  const rssAfter = rssMB(process.pid);
  const cliRss = idle.reduce((n, x) => n + rssMB(x.pid), 0);
  const allReady = idle.every((x) => x.fold.status === "ready");

  const W = summary(wall);
  const O = summary(own);
  const D = summary(overhead);
  const PW = summary(pWall);
  const PO = summary(pOwn);
  const f = (x) => `${Math.round(x)} ms`;
  const table = [
    `CLI ${version} (native), SDK ${sdkVersion}, Node ${process.version}, ${TURNS} turns each, mock API on loopback, load ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
    "",
    "| what | p50 | p95 | notes |",
    "| --- | --- | --- | --- |",
    `| headless send → result (long-lived session) | ${f(W.p50)} | ${f(W.p95)} | wall time in the engine's process |`,
    `| … the CLI's own time for those turns (duration_ms) | ${f(O.p50)} | ${f(O.p95)} | |`,
    `| … engine + SDK + stdio overhead (wall − duration_ms) | ${f(D.p50)} | ${f(D.p95)} | target ≤ +50 ms p50: ${D.p50 <= 50 ? "met" : "MISSED"} |`,
    `| fresh \`claude -p\` per prompt, spawn → exit | ${f(PW.p50)} | ${f(PW.p95)} | start-up included |`,
    `| … its own duration_ms | ${f(PO.p50)} | ${f(PO.p95)} | |`,
    `| server RSS, ${IDLE} idle headless sessions | ${(rssAfter - rssBefore).toFixed(1)} MB added | | ${rssBefore.toFixed(1)} → ${rssAfter.toFixed(1)} MB; all ready: ${allReady} |`,
    `| the ${IDLE} idle CLI processes' RSS, summed | ${cliRss.toFixed(0)} MB | | ${(cliRss / IDLE).toFixed(0)} MB each (not the server's) |`,
  ].join("\n");
  console.log(table);
  mkdirSync(join(ROOT, "bench-results"), { recursive: true });
  const file = join(ROOT, "bench-results", `headless-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      { version, sdkVersion, node: process.version, wall, own, overhead, pWall, pOwn, rssBefore, rssAfter, cliRss, idle: IDLE },
      null,
      2,
    ),
  );
  log(`samples in ${file}`);
  if (args["json-out"])
    writeFileSync(
      args["json-out"],
      JSON.stringify({
        version,
        sdkVersion,
        node: process.version,
        wall,
        own,
        overhead,
        pWall,
        pOwn,
        rssBefore,
        rssAfter,
        cliRss,
        idle: IDLE,
        allReady,
      }),
    );
} finally {
  await cleanup();
}
