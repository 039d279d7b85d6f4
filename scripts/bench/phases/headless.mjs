/**
 * headless (only with --real): the headless backend on the real CLI, offline against the mock API.
 *  1. scripts/bench/headless.mjs in a child process: a long-lived headless session's send → result against the
 *     CLI's own duration_ms (target ≤ +50 ms p50), a fresh `claude -p` per prompt, and the RSS of 20 idle sessions.
 *  2. First answer, from nothing to the reply in hand: `run_task` over MCP (the built server; keep_session
 *     false) against a bare `claude -p --output-format json` per call (what a one-shot `claude -p` MCP server
 *     does), same CLI, mock and HOME, interleaved run by run; and run_task on a server with
 *     CLAUDE_SESSIONS_WARM_POOL=1 in one directory (each task finds the spare the previous one left).
 *     Target: run_task p50 ≤ claude -p p50 (met with the warm pool).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { round, summary } from "../stats.mjs";
import { makeWorld, ROOT, sutPath } from "../world.mjs";

const API_KEY = `sk-ant-api03-bench-${"k".repeat(60)}-APPROVEDKEY0123456789`;

function cliVersion(path) {
  if (!existsSync(path)) return undefined;
  const r = spawnSync(path, ["--version"], {
    encoding: "utf8",
    timeout: 20_000,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/" },
  });
  return r.status === 0 ? /^(\d+\.\d+\.\d+)/.exec(r.stdout ?? "")?.[1] : undefined;
}

function skipped(why) {
  return [
    {
      key: "headless",
      figure: "headless backend: turn overhead, run_task first answer, idle RSS",
      notes: why,
      target: "reported",
      result: "SKIP",
    },
  ];
}

function engineBench(turns, idle, log) {
  const out = join(tmpdir(), `cs-bench-headless-${process.pid}.json`);
  return new Promise((resolve, reject) => {
    const c = spawn(
      process.execPath,
      ["--expose-gc", join(ROOT, "scripts", "bench", "headless.mjs"), `--turns=${turns}`, `--idle=${idle}`, `--json-out=${out}`],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    c.stderr.on("data", (b) => {
      err += b;
      for (const l of String(b).split("\n").filter(Boolean)) log?.(`headless: ${l.replace(/^\[headless-bench\] /, "")}`);
    });
    c.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`scripts/bench/headless.mjs exited ${code}: ${err.slice(-300)}`));
      const j = JSON.parse(readFileSync(out, "utf8"));
      rmSync(out, { force: true });
      resolve(j);
    });
  });
}

function claudeP(cli, cwd, env, prompt) {
  return new Promise((resolve, reject) => {
    const c = spawn(cli, ["-p", prompt, "--output-format", "json", "--permission-mode", "default"], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let so = "";
    let se = "";
    c.stdout.on("data", (b) => (so += b));
    c.stderr.on("data", (b) => (se += b));
    c.on("exit", (code) =>
      code === 0 ? resolve(JSON.parse(so)) : reject(new Error(`claude -p exited ${code}: ${se.slice(-300)}`)),
    );
  });
}

export async function headless(cfg, log) {
  if (!cfg.real) return skipped("skipped: needs --real");
  const cli = process.env.CLAUDE_PATH || join(ROOT, "node_modules", ".bin", "claude");
  const version = cliVersion(cli);
  if (!version) return skipped(`skipped: the real claude CLI at ${cli} does not run`);
  const turns = cfg.mode === "quick" ? 5 : 20;
  const idle = cfg.mode === "quick" ? 3 : 20;
  const runs = cfg.mode === "quick" ? 3 : 10;
  const e = await engineBench(turns, idle, log);
  const ov = summary(e.overhead);
  const own = summary(e.own);
  const pw = summary(e.pWall);
  const rows = [
    {
      key: "headless_turn",
      figure: `headless send → result (SDK ${e.sdkVersion}, CLI ${e.version}), over the CLI's own duration_ms`,
      runs: e.overhead.length,
      ...ov,
      notes: `CLI's own p50 ${round(own.p50)} ms; wall p50 ${round(summary(e.wall).p50)} ms`,
      target: "≤ +50 ms p50",
      result: ov.p50 <= 50 ? "ok" : "MISS",
      data: e,
    },
    {
      key: "headless_print",
      figure: "  fresh `claude -p` per prompt (hooks settings), spawn → exit",
      runs: e.pWall.length,
      ...pw,
      notes: "start-up included",
      target: "reported",
      result: "info",
    },
    {
      key: "headless_idle",
      figure: `  server RSS added by ${e.idle} idle headless sessions`,
      value: `${(e.rssAfter - e.rssBefore).toFixed(1)} MB`,
      notes: `the CLIs' own RSS summed: ${Math.round(e.cliRss)} MB; all ready: ${e.allReady}`,
      target: "reported",
      result: "info",
    },
  ];

  // run_task vs bare claude -p, first answer.
  const { startMockApi } = await import(sutPath("tests", "fixtures", "mock-anthropic.ts"));
  const { prepareClaudeHome } = await import(sutPath("tests", "fixtures", "claude-home.ts"));
  const mock = await startMockApi({});
  const w = makeWorld("headless", { CLAUDE_PATH: cli, CLAUDE_SESSIONS_START_TIMEOUT_MS: "30000" });
  let m;
  let mw;
  try {
    const dirs = Array.from({ length: runs * 2 }, () => w.dir("task"));
    const poolDir = w.dir("pool");
    const prepared = await prepareClaudeHome({
      home: w.home,
      apiKey: API_KEY,
      trustedDirs: [...dirs, poolDir],
      mockUrl: mock.url,
      cliVersion: version,
    });
    Object.assign(w.env, prepared.env, { CLAUDE_PATH: cli });
    m = await w.connect();
    mw = await w.connect({ CLAUDE_SESSIONS_WARM_POOL: "1" });
    const pEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8", ...prepared.env };
    await claudeP(cli, dirs[0], pEnv, "warm-up");
    const task = [];
    const warm = [];
    const print = [];
    const problems = [];
    // The warm pool: a first task in the directory (cold, not counted) leaves a spare ready for the next.
    const poolTask = async (p) => {
      const r = await mw.call("run_task", {
        cwd: poolDir,
        prompt: p,
        permission_mode: "default",
        keep_session: false,
        timeout_ms: 60_000,
      });
      if (!r.ok || r.data.response !== `MOCK REPLY: ${p}`)
        throw new Error(`run_task (pool): ${r.ok ? JSON.stringify(r.data.response) : r.error?.message}`);
    };
    const spareReady = async () => {
      for (const t0 = Date.now(); Date.now() - t0 < 60_000; await new Promise((r) => setTimeout(r, 100))) {
        const l = await mw.call("list_sessions", {});
        if (l.ok && l.data.sessions.some((x) => x.status === "ready")) return;
      }
    };
    await poolTask("pool warm-up");
    for (let i = 0; i < runs; i++) {
      const p = `first answer ${i}`;
      const t0 = performance.now();
      const r = await m.call("run_task", {
        cwd: dirs[i],
        prompt: p,
        permission_mode: "default",
        keep_session: false,
        timeout_ms: 60_000,
      });
      const t1 = performance.now();
      if (!r.ok || r.data.response !== `MOCK REPLY: ${p}`)
        problems.push(`run_task ${i}: ${r.ok ? JSON.stringify(r.data.response) : r.error?.message}`);
      else task.push(t1 - t0);
      const t2 = performance.now();
      const j = await claudeP(cli, dirs[runs + i], pEnv, p).catch((err) => ({ error: String(err) }));
      const t3 = performance.now();
      if (j.result !== `MOCK REPLY: ${p}`) problems.push(`claude -p ${i}: ${JSON.stringify(j).slice(0, 200)}`);
      else print.push(t3 - t2);
      await spareReady();
      const t4 = performance.now();
      await poolTask(`pooled answer ${i}`).then(
        () => warm.push(performance.now() - t4),
        (err) => problems.push(String(err)),
      );
      log?.(
        `headless: first answer ${i + 1}/${runs}: run_task ${(t1 - t0).toFixed(0)} ms, warm ${(performance.now() - t4).toFixed(0)} ms, claude -p ${(t3 - t2).toFixed(0)} ms`,
      );
    }
    const st = summary(task);
    const sw = summary(warm);
    const sp = summary(print);
    rows.push(
      {
        key: "run_task_first",
        figure: "run_task → first answer, cold (start + turn; keep_session false)",
        runs: task.length,
        ...st,
        notes: `${problems.length} problem(s)`,
        target: "reported",
        result: problems.length ? "MISS" : "info",
        data: { task_ms: task.map((x) => round(x)), problems },
      },
      {
        key: "run_task_warm",
        figure: "run_task → first answer, warm pool (CLAUDE_SESSIONS_WARM_POOL=1, same cwd)",
        runs: warm.length,
        ...sw,
        notes: "a spare started after the previous task",
        target: "p50 ≤ claude -p p50",
        result: problems.length ? "MISS" : sw.p50 <= sp.p50 ? "ok" : "MISS",
        data: { warm_ms: warm.map((x) => round(x)) },
      },
      {
        key: "print_first",
        figure: "  bare `claude -p --output-format json` per call, spawn → exit",
        runs: print.length,
        ...sp,
        notes: "no hooks (what a one-shot claude -p server runs)",
        target: "reported",
        result: "info",
        data: { print_ms: print.map((x) => round(x)) },
      },
    );
    return rows;
  } finally {
    await m?.close();
    await mw?.close();
    w.cleanup();
    await mock.close();
  }
}
