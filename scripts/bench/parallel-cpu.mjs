#!/usr/bin/env node
/**
 * Where four first answers at once go (issue 38): rounds alternate between 4 interactive floors (../floor.mjs: the
 * CLI alone in a tmux pane, prompt on argv, Stop hook only) and 4 tmux `start_session {prompt}` +
 * `wait_for_completion` through one server, on the real CLI and the mock. Per round: the wall time, the machine's busy
 * CPU time (`/proc/stat`: user, nice, system, irq, softirq, steal) and the server's own CPU (`/proc/<pid>/stat`). When
 * CPU ≈ cores × wall the machine is saturated, and every millisecond of CPU spent beside the CLIs costs wall time.
 * The server's sessions are killed between rounds, outside the measured window.
 *
 *   npm run build && node scripts/bench/parallel-cpu.mjs [--runs=8] [--phases=FILE] [--hooks]
 *
 * --hooks adds, between the two, 4 floors with the server's hook set and deny rules (no server): the CLI's part.
 *
 * --phases=FILE writes each round's windows (`floor|ours <start ns> <end ns>`, CLOCK_MONOTONIC) for perf-phases.mjs,
 * which splits a system-wide `perf record -a -k CLOCK_MONOTONIC` of the run into the CPU each program took per window.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { cpuMs } from "./stats.mjs";
import { makeWorld } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";
import { makeFloor } from "./floor.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const RUNS = Number(args.runs ?? 8);
const PAR = 4;
/** --phases: the measured windows, in CLOCK_MONOTONIC ns (process.hrtime's clock, and perf's with -k CLOCK_MONOTONIC). */
const phases = args.phases;
if (phases) writeFileSync(phases, "");
const mark = (what, from) => phases && appendFileSync(phases, `${what} ${from} ${process.hrtime.bigint()}\n`);

/** The machine's busy CPU time so far, in ms. */
function busyMs() {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * 10;
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

const w = makeWorld("parallel-cpu");
const ours = Array.from({ length: PAR }, (_, k) => w.dir(`ours${k}`));
const floors = Array.from({ length: PAR }, (_, k) => w.dir(`floor${k}`));
const setup = await realSetup(w, [...ours, ...floors]);
const m = await w.connect();
const serverPid = m.pid;
const env = Object.fromEntries(
  Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH" && k !== "PATH"),
);
const floor = await makeFloor({
  root: w.root,
  home: w.home,
  env: { LANG: "C.UTF-8", ...env },
  cli: setup.cli.path,
  socket: `${w.socket}-floor`,
});
/** --hooks: also 4 floors with the server's hook set (no server), between the two. */
const hooked =
  "hooks" in args
    ? await makeFloor({
        root: w.root,
        home: w.home,
        env: { LANG: "C.UTF-8", ...env },
        cli: setup.cli.path,
        socket: `${w.socket}-hooked`,
        hookSet: true,
      })
    : undefined;

async function call(name, a) {
  const r = await m.client.callTool({ name, arguments: a });
  if (r.isError || !r.structuredContent) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r.structuredContent;
}

const rows = { floor: { wall: [], cpu: [] }, hooked: { wall: [], cpu: [] }, ours: { wall: [], cpu: [], server: [] } };
await floor.run(floors[0], "warm-up");
for (let i = 0; i < RUNS; i++) {
  let c0 = busyMs();
  let t0 = performance.now();
  let h0 = process.hrtime.bigint();
  await Promise.all(floors.map((d, k) => floor.run(d, `floor ${i}.${k}`)));
  mark("floor", h0);
  rows.floor.wall.push(performance.now() - t0);
  rows.floor.cpu.push(busyMs() - c0);
  await wait(1000);
  if (hooked) {
    c0 = busyMs();
    t0 = performance.now();
    h0 = process.hrtime.bigint();
    await Promise.all(floors.map((d, k) => hooked.run(d, `hooked ${i}.${k}`)));
    mark("hooked", h0);
    rows.hooked.wall.push(performance.now() - t0);
    rows.hooked.cpu.push(busyMs() - c0);
    await wait(1000);
  }
  c0 = busyMs();
  const s0 = cpuMs(serverPid);
  t0 = performance.now();
  h0 = process.hrtime.bigint();
  const ids = await Promise.all(
    ours.map(async (cwd, k) => {
      const s = await call("start_session", { cwd, backend: "tmux", permission_mode: "default", prompt: `ours ${i}.${k}` });
      await call("wait_for_completion", { session_id: s.session_id, timeout_ms: 60_000 });
      return s.session_id;
    }),
  );
  mark("ours", h0);
  rows.ours.wall.push(performance.now() - t0);
  rows.ours.cpu.push(busyMs() - c0);
  rows.ours.server.push(cpuMs(serverPid) - s0);
  process.stderr.write(
    `run ${i + 1}/${RUNS}: floors ${Math.round(rows.floor.wall.at(-1))} ms wall / ${rows.floor.cpu.at(-1)} ms CPU; ` +
      `server ${Math.round(rows.ours.wall.at(-1))} ms / ${rows.ours.cpu.at(-1)} ms (its own ${rows.ours.server.at(-1)} ms)\n`,
  );
  await Promise.all(ids.map((id) => call("kill_session", { session_id: id, force: true })));
  await wait(1000);
}
const f = { wall: median(rows.floor.wall), cpu: median(rows.floor.cpu) };
const o = { wall: median(rows.ours.wall), cpu: median(rows.ours.cpu), server: median(rows.ours.server) };
console.log(`| ${PAR} at once (CLI ${setup.cli.version} + mock, ${RUNS} rounds, p50) | wall | machine CPU | the server's CPU |`);
console.log("| --- | --- | --- | --- |");
console.log(`| interactive floors | ${Math.round(f.wall)} ms | ${f.cpu} ms | — |`);
if (hooked)
  console.log(
    `| floors with the server's hook set | ${Math.round(median(rows.hooked.wall))} ms | ${median(rows.hooked.cpu)} ms | — |`,
  );
console.log(`| tmux start_session {prompt} + wait_for_completion | ${Math.round(o.wall)} ms | ${o.cpu} ms | ${o.server} ms |`);
floor.close();
hooked?.close();
await m.close();
process.exit(0);
