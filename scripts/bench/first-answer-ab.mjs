#!/usr/bin/env node
/**
 * Before/after of the first answer on one loaded machine (issue #23): two builds side by side in one run, repetition by
 * repetition interleaved with a bare `claude -p`, so that both meet the same load. The real CLI + the mock API.
 *
 *   node scripts/bench/first-answer-ab.mjs <checkout with the old dist/> [--runs=10] [--only=task,tmux,tmuxp,par,parp]
 *
 * Rows per build: run_task cold (headless); tmux start_session + send_message; tmux start_session {prompt} +
 * wait_for_completion; 4 tmux start + send at once; `parp` (not by default): 4 tmux start_session {prompt} +
 * wait_for_completion at once. Beside them: bare `claude -p` and 4 of them at once.
 */
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { round, summary } from "./stats.mjs";
import { makeWorld, ROOT, SUT } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";
import { claudeP, okCall as ok, timed, tmuxWithPrompt } from "./calls.mjs";

const args = process.argv.slice(2);
const before = args.find((a) => !a.startsWith("--"));
if (!before) throw new Error("usage: first-answer-ab.mjs <old checkout> [--runs=N]");
const RUNS = Number(args.find((a) => a.startsWith("--runs="))?.slice(7) ?? 10);
/** --only=task,…: only these rows (default all but parp); bare `claude -p` always, 4 at once with `par` or `parp`. */
const ONLY = new Set((args.find((a) => a.startsWith("--only="))?.slice(7) ?? "task,tmux,tmuxp,par").split(","));

const w = makeWorld("fa-ab", { MAX_CONCURRENT_SESSIONS: "30" });
const dirs = {};
for (const b of ["A", "B"])
  for (const k of ["task", "tmux", "tmuxp", "par0", "par1", "par2", "par3"]) dirs[`${b}${k}`] = w.dir(`${b}${k}`);
for (const k of ["bare", "pb0", "pb1", "pb2", "pb3"]) dirs[k] = w.dir(k);
const setup = await realSetup(w, Object.values(dirs));
const pEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
};
const cli = setup.cli.path;
// Each build on its own state directory and tmux socket (two servers on one directory would follow each other's sessions).
const own = (b) => ({ CLAUDE_SESSIONS_DIR: join(w.root, `state-${b}`), CLAUDE_SESSIONS_TMUX_SOCKET: `${w.socket}-${b}` });
const servers = {};
SUT.root = resolve(before);
servers.A = await w.connect(own("A"));
SUT.root = ROOT;
servers.B = await w.connect(own("B"));
const t = {};
const push = (k, v) => (t[k] ??= []).push(v);
try {
  await claudeP(cli, dirs.bare, pEnv, "warm-up");
  for (const b of ["A", "B"]) {
    const r = await ok(servers[b], "run_task", {
      cwd: dirs[`${b}task`],
      prompt: "warm-up",
      keep_session: false,
      permission_mode: "default",
    });
    void r;
  }
  for (let i = 0; i < RUNS; i++) {
    push("bare", await claudeP(cli, dirs.bare, pEnv, `bare ${i}`));
    // The order of the two builds alternates per repetition.
    for (const b of i % 2 ? ["B", "A"] : ["A", "B"]) {
      const m = servers[b];
      const ids = [];
      if (ONLY.has("task")) {
        const [task, tr] = await timed(() =>
          ok(
            m,
            "run_task",
            { cwd: dirs[`${b}task`], prompt: `task ${i}`, permission_mode: "default", keep_session: true, timeout_ms: 60_000 },
            (d) => d.response === `MOCK REPLY: task ${i}`,
          ),
        );
        push(`${b} run_task`, task);
        ids.push(tr.session_id);
      }
      if (ONLY.has("tmux")) {
        const [tmux, ts] = await timed(async () => {
          const s = await ok(m, "start_session", { cwd: dirs[`${b}tmux`], backend: "tmux", permission_mode: "default" });
          await ok(
            m,
            "send_message",
            { session_id: s.session_id, message: `tmux ${i}`, timeout_ms: 60_000 },
            (d) => d.response === `MOCK REPLY: tmux ${i}`,
          );
          return s;
        });
        push(`${b} tmux start + send`, tmux);
        ids.push(ts.session_id);
      }
      if (ONLY.has("tmuxp")) {
        const [tp, tps] = await timed(async () => {
          const s = await ok(m, "start_session", {
            cwd: dirs[`${b}tmuxp`],
            backend: "tmux",
            permission_mode: "default",
            prompt: `tmuxp ${i}`,
          });
          await ok(
            m,
            "wait_for_completion",
            { session_id: s.session_id, timeout_ms: 60_000 },
            (d) => d.last_response === `MOCK REPLY: tmuxp ${i}`,
          );
          return s;
        });
        push(`${b} tmux start {prompt} + wait`, tp);
        ids.push(tps.session_id);
      }
      await Promise.all(ids.map((id) => ok(m, "kill_session", { session_id: id, force: true })));
    }
    for (const b of ONLY.has("par") ? (i % 2 ? ["B", "A"] : ["A", "B"]) : []) {
      const m = servers[b];
      const [par, ids] = await timed(() =>
        Promise.all(
          [0, 1, 2, 3].map(async (k) => {
            const s = await ok(m, "start_session", { cwd: dirs[`${b}par${k}`], backend: "tmux", permission_mode: "default" });
            await ok(
              m,
              "send_message",
              { session_id: s.session_id, message: `par ${i}.${k}`, timeout_ms: 60_000 },
              (d) => d.response === `MOCK REPLY: par ${i}.${k}`,
            );
            return s.session_id;
          }),
        ),
      );
      push(`${b} 4 tmux start + send at once`, par);
      await Promise.all(ids.map((id) => ok(m, "kill_session", { session_id: id, force: true })));
    }
    for (const b of ONLY.has("parp") ? (i % 2 ? ["B", "A"] : ["A", "B"]) : []) {
      const m = servers[b];
      const [parp, ids] = await timed(() =>
        Promise.all([0, 1, 2, 3].map((k) => tmuxWithPrompt(m, dirs[`${b}par${k}`], `parp ${i}.${k}`))),
      );
      push(`${b} 4 tmux start {prompt} at once`, parp);
      await Promise.all(ids.map((id) => ok(m, "kill_session", { session_id: id, force: true })));
    }
    if (ONLY.has("par") || ONLY.has("parp")) {
      const [pb] = await timed(() => Promise.all([0, 1, 2, 3].map((k) => claudeP(cli, dirs[`pb${k}`], pEnv, `pb ${i}.${k}`))));
      push("4 bare claude -p at once", pb);
    }
    process.stderr.write(
      `run ${i + 1}/${RUNS} ${new Date().toISOString().slice(11, 19)} load ${(await import("node:os"))
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}\n`,
    );
  }
} finally {
  for (const m of Object.values(servers)) await m.close();
  for (const b of ["A", "B"])
    spawnSync("tmux", ["-L", own(b).CLAUDE_SESSIONS_TMUX_SOCKET, "kill-server"], {
      stdio: "ignore",
      env: { PATH: process.env.PATH ?? "", HOME: w.home },
    });
  w.cleanup();
  await setup.close();
}
const s = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, summary(v)]));
console.log(`A = ${before}, B = ${ROOT}; ${RUNS} runs; p50 / p95 ms; ratio = p50 / bare claude -p's p50`);
for (const [k, v] of Object.entries(s)) {
  const base = k.includes("4 ") ? s["4 bare claude -p at once"] : s.bare;
  console.log(
    `${k.padEnd(36)} ${String(round(v.p50, 0)).padStart(6)} / ${String(round(v.p95, 0)).padStart(6)}   ${(v.p50 / s.bare.p50).toFixed(2)}× bare${k.includes("4 ") ? `, ${(v.p50 / base.p50).toFixed(2)}× 4 bare` : ""}`,
  );
}
