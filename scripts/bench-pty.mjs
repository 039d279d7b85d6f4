#!/usr/bin/env node
// What an idle pty session costs the server: memory (RSS of this process) per session for 10 and 50
// sessions of the fake claude, and this process's CPU time while 20 sessions sit idle for 30 s.
// Runs the built backend: `npm run build && node --expose-gc scripts/bench-pty.mjs`
// (options: --counts 10,50 --idle 20 --idle-seconds 30). Temp HOME and dirs only.
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";

const ROOT = resolve(import.meta.dirname, "..");
const { PtyHost } = await import(join(ROOT, "dist/runners/terminal/pty/pty.js"));
const { installScripts } = await import(join(ROOT, "dist/claude/scripts.js"));
const { hooksSettings } = await import(join(ROOT, "dist/claude/hooks.js"));
const FAKE_CLAUDE = join(ROOT, "tests/fixtures/bin/claude");

const { values: opt } = parseArgs({
  options: {
    counts: { type: "string", default: "10,50" },
    idle: { type: "string", default: "20" },
    "idle-seconds": { type: "string", default: "30" },
  },
});

const root = realpathSync(mkdtempSync(join(tmpdir(), "cs-bench-pty-")));
const home = join(root, "home");
mkdirSync(home, { recursive: true });
const { hook } = await installScripts(join(root, "state"));
let seq = 0;

const gc = () => {
  if (globalThis.gc) for (let i = 0; i < 3; i++) globalThis.gc();
};
const rssMiB = () => process.memoryUsage().rss / 2 ** 20;
const fmt = (n, d = 1) => n.toFixed(d);

function spec() {
  const id = `b${++seq}`;
  const dir = join(root, "s", id);
  mkdirSync(dir, { recursive: true });
  const eventsPath = join(dir, "events.jsonl");
  const settingsPath = join(dir, "settings.json");
  writeFileSync(eventsPath, "");
  writeFileSync(settingsPath, JSON.stringify(hooksSettings(eventsPath)));
  return {
    id,
    argv: [FAKE_CLAUDE, "--session-id", randomUUID(), "--settings", settingsPath],
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" },
    cols: 200,
    rows: 50,
    rawLogPath: join(dir, "output.log"),
    eventsPath,
  };
}

const started = (s) => readFileSync(s.eventsPath, "utf8").includes('"SessionStart"');

/** Starts n fake claudes and waits until each has reported SessionStart and drawn its prompt. */
async function startMany(backend, n) {
  const specs = [];
  for (let i = 0; i < n; i++) {
    const s = spec();
    await backend.spawn(s);
    specs.push(s);
  }
  const t0 = Date.now();
  for (const s of specs) {
    while (!started(s) || !(await backend.screen(s.id)).includes("❯")) {
      if (Date.now() - t0 > 120_000) throw new Error(`session ${s.id} did not start`);
      await sleep(100);
    }
  }
  return specs;
}

/** RSS of the session processes themselves (the fake claudes), from /proc. */
async function childrenRssMiB(backend) {
  let kb = 0;
  for (const l of (await backend.list()).values()) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${l.pid}/status`, "utf8"));
      if (m) kb += Number(m[1]);
    } catch {}
  }
  return kb / 1024;
}

const results = {
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  gcExposed: Boolean(globalThis.gc),
  memory: [],
  idleCpu: undefined,
};

try {
  for (const n of opt.counts.split(",").map(Number)) {
    const backend = new PtyHost({ hookScript: hook });
    // Warm up code paths (xterm, node-pty, write streams) so the first session does not pay for them.
    const warm = await startMany(backend, 1);
    await backend.remove(warm[0].id);
    await sleep(500);
    gc();
    const before = rssMiB();
    await startMany(backend, n);
    await sleep(2000); // let start-up output settle
    gc();
    const after = rssMiB();
    const children = await childrenRssMiB(backend);
    const row = {
      sessions: n,
      rssBeforeMiB: +fmt(before),
      rssAfterMiB: +fmt(after),
      perSessionMiB: +fmt((after - before) / n, 2),
      childRssPerSessionMiB: +fmt(children / n, 1),
    };
    results.memory.push(row);
    console.error(
      `memory: ${n} idle sessions: server RSS ${fmt(before)} -> ${fmt(after)} MiB, +${row.perSessionMiB} MiB per session (each fake claude itself: ${row.childRssPerSessionMiB} MiB)`,
    );
    await backend.close();
    await sleep(500);
  }

  const n = Number(opt.idle);
  const secs = Number(opt["idle-seconds"]);
  const backend = new PtyHost({ hookScript: hook });
  await startMany(backend, n);
  await sleep(2000);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await sleep(secs * 1000);
  const c = process.cpuUsage(c0);
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  results.idleCpu = {
    sessions: n,
    wallMs: Math.round(wallMs),
    userMs: +fmt(c.user / 1000),
    systemMs: +fmt(c.system / 1000),
    cpuPercent: +fmt(((c.user + c.system) / 1000 / wallMs) * 100, 3),
  };
  console.error(
    `idle CPU: ${n} sessions for ${fmt(wallMs / 1000)} s: user ${fmt(c.user / 1000)} ms, system ${fmt(c.system / 1000)} ms (${results.idleCpu.cpuPercent}% of one core)`,
  );
  await backend.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(JSON.stringify(results, null, 2));
