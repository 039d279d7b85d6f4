#!/usr/bin/env node
/**
 * The issue-38 rows for two builds in one run: each repetition times the yardsticks once (bare `claude -p`, the
 * interactive floor and its follow-ups, 4 floors at once, the one-tool peer's start: those the picked rows need) and then each
 * build's rows, the builds' order alternating per repetition, so that both meet the same load. The real CLI + the
 * mock API.
 *
 *   npm run build && node scripts/bench/issue38-ab.mjs <checkout with the old dist/> [--runs=12] [--follow=2]
 *     [--rows=task,tmuxp,follow,par,spawn]
 *
 * Per build: `run_task` cold; tmux `start_session {prompt}` + `wait_for_completion`; a tmux start + `send_message`,
 * then `--follow` follow-ups, each sent the moment the call before returns (the floor's follow-ups are sent the
 * moment its Stop before lands); 4 tmux `start_session {prompt}` + `wait_for_completion` at once; spawn → initialize →
 * `tools/list` on the build's own state directory (holding that build's sessions, as a user's). Prints, per build,
 * the issue's five figures (p50 ÷ p50) and each row's p50 / p95.
 */
import { join, resolve } from "node:path";
import { round, summary } from "./stats.mjs";
import { makeWorld, ROOT, SUT } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";
import { makeFloor } from "./floor.mjs";
import { claudeP, okCall as ok, peerList, timed, tmuxWithPrompt } from "./calls.mjs";

const args = process.argv.slice(2);
const before = args.find((a) => !a.startsWith("--"));
if (!before) throw new Error("usage: issue38-ab.mjs <old checkout> [--runs=N] [--follow=N] [--rows=…]");
const opt = (name, d) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d);
const RUNS = opt("runs", 12);
const FOLLOW = opt("follow", 2);
const B = ["A", "B"];

const replied = (prompt) => (d) => d.response === `MOCK REPLY: ${prompt}`;

const w = makeWorld("issue38-ab", { MAX_CONCURRENT_SESSIONS: "30" });
const names = ["bare", "floor", ...[0, 1, 2, 3].flatMap((k) => [`pb${k}`, `pf${k}`])];
for (const b of B) names.push(...["task", "tmuxp", "follow", "par0", "par1", "par2", "par3"].map((k) => `${b}${k}`));
const dirs = Object.fromEntries(names.map((n) => [n, w.dir(n)]));
const setup = await realSetup(w, Object.values(dirs));
const pEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
};
const cli = setup.cli.path;
// Each build on its own state directory and tmux socket (two servers on one directory would follow each other's sessions).
const own = (b) => ({ CLAUDE_SESSIONS_DIR: join(w.root, `state-${b}`), CLAUDE_SESSIONS_TMUX_SOCKET: `${w.socket}-${b}` });
const roots = { A: resolve(before), B: ROOT };
const connect = async (b) => {
  SUT.root = roots[b];
  try {
    return await w.connect(own(b));
  } finally {
    SUT.root = ROOT;
  }
};
const servers = { A: await connect("A"), B: await connect("B") };
const floor = await makeFloor({
  root: w.root,
  home: w.home,
  env: Object.fromEntries(Object.entries(pEnv).filter(([k]) => k !== "PATH")),
  cli,
  socket: `${w.socket}-floor`,
});
const t = {};
const push = (k, v) => (t[k] ??= []).push(v);

/** Each build's rows; `--rows=` picks some (default all). */
const ROWS = {
  async task(m, b, i) {
    const [task, tr] = await timed(() =>
      ok(
        m,
        "run_task",
        { cwd: dirs[`${b}task`], prompt: `task ${i}`, permission_mode: "default", keep_session: true, timeout_ms: 60_000 },
        (d) => d.response === `MOCK REPLY: task ${i}`,
      ),
    );
    push(`${b} task`, task);
    // Each row's sessions end before the next row, as the floor's pane does.
    await ok(m, "kill_session", { session_id: tr.session_id, force: true });
  },
  async tmuxp(m, b, i) {
    const [tmuxp, id] = await timed(() => tmuxWithPrompt(m, dirs[`${b}tmuxp`], `tmuxp ${i}`));
    push(`${b} tmuxp`, tmuxp);
    await ok(m, "kill_session", { session_id: id, force: true });
  },
  /** The follow-ups of a session whose first prompt was sent to its drawn input box (the floor's row beside it). */
  async follow(m, b, i) {
    const s = await ok(m, "start_session", { cwd: dirs[`${b}follow`], backend: "tmux", permission_mode: "default" });
    await ok(m, "send_message", { session_id: s.session_id, message: `first ${i}`, timeout_ms: 60_000 }, replied(`first ${i}`));
    for (let k = 0; k < FOLLOW; k++) {
      const text = `again ${i}.${k}`;
      const [ms] = await timed(() =>
        ok(m, "send_message", { session_id: s.session_id, message: text, timeout_ms: 60_000 }, replied(text)),
      );
      push(`${b} follow`, ms);
    }
    await ok(m, "kill_session", { session_id: s.session_id, force: true });
  },
  async par(m, b, i) {
    const [par, ids] = await timed(() =>
      Promise.all([0, 1, 2, 3].map((k) => tmuxWithPrompt(m, dirs[`${b}par${k}`], `parp ${i}.${k}`))),
    );
    push(`${b} par`, par);
    await Promise.all(ids.map((id) => ok(m, "kill_session", { session_id: id, force: true })));
  },
  async spawn(m, b) {
    SUT.root = roots[b];
    let c;
    const [ms] = await timed(async () => {
      c = await w.connect(own(b));
      await c.client.listTools();
    });
    SUT.root = ROOT;
    push(`${b} spawn`, ms);
    await c.close();
  },
};
const PICKED = (args.find((a) => a.startsWith("--rows="))?.slice(7) ?? Object.keys(ROWS).join(",")).split(",");
for (const r of PICKED) if (!ROWS[r]) throw new Error(`--rows: no row ${JSON.stringify(r)} (${Object.keys(ROWS).join(", ")})`);
const has = (r) => PICKED.includes(r);

try {
  await claudeP(cli, dirs.bare, pEnv, "warm-up");
  await floor.run(dirs.floor, "floor warm-up");
  for (const b of B) await ok(servers[b], "run_task", { cwd: dirs[`${b}task`], prompt: "warm-up", permission_mode: "default" });
  for (let i = 0; i < RUNS; i++) {
    // The yardsticks the picked rows are compared with.
    if (has("task")) push("bare", await claudeP(cli, dirs.bare, pEnv, `bare ${i}`));
    if (has("tmuxp") || has("follow")) {
      const follows = has("follow") ? Array.from({ length: FOLLOW }, (_, k) => `floor again ${i}.${k}`) : undefined;
      const [first, ...after] = [await floor.run(dirs.floor, `floor ${i}`, follows)].flat();
      push("floor", first);
      for (const f of after) push("floor follow", f);
    }
    if (has("par")) {
      const [pf] = await timed(() => Promise.all([0, 1, 2, 3].map((k) => floor.run(dirs[`pf${k}`], `pf ${i}.${k}`))));
      push("4 floors", pf);
    }
    if (has("spawn")) {
      const [ms, peer] = await timed(peerList);
      push("peer spawn", ms);
      await peer.close();
    }
    for (const b of i % 2 ? [...B].reverse() : B) for (const r of PICKED) await ROWS[r](servers[b], b, i);
    const load = (await import("node:os")).loadavg().map((x) => x.toFixed(1));
    process.stderr.write(`run ${i + 1}/${RUNS} ${new Date().toISOString().slice(11, 19)} load ${load.join(" ")}\n`);
  }
} finally {
  for (const m of Object.values(servers)) await m.close();
  floor.close();
  w.cleanup();
  await setup.close();
}
const s = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, summary(v)]));
const x = (a, b) => (s[a] && s[b] ? `${(s[a].p50 / s[b].p50).toFixed(2)}×` : "—");
console.log(`A = ${before}, B = ${ROOT}; ${RUNS} runs (${FOLLOW} follow-ups each); CLI ${setup.cli.version}`);
console.log("| figure | target | A | B |\n| --- | --- | --- | --- |");
const fig = (name, target, f) => console.log(`| ${name} | ${target} | ${f("A")} | ${f("B")} |`);
fig("cold tmux `{prompt}` ÷ floor", "≤ 1.10", (b) => x(`${b} tmuxp`, "floor"));
fig("follow-up ÷ the floor's follow-up", "≤ 1.10", (b) => x(`${b} follow`, "floor follow"));
fig("4 at once ÷ 4 floors", "≤ 1.10", (b) => x(`${b} par`, "4 floors"));
fig("spawn → `tools/list`", "≤ 250 ms", (b) => (s[`${b} spawn`] ? `${round(s[`${b} spawn`].p50, 0)} ms` : "—"));
fig("`run_task` ÷ bare", "≤ 1.0", (b) => x(`${b} task`, "bare"));
console.log("\nrow: p50 / p95 ms (n)");
for (const [k, v] of Object.entries(s)) console.log(`${k.padEnd(14)} ${round(v.p50, 0)} / ${round(v.p95, 0)} (${v.n})`);
if (process.env.AB_SAMPLES) for (const [k, v] of Object.entries(t)) console.log(k, v.map((x) => Math.round(x)).join(" "));
