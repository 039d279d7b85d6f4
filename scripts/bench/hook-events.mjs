#!/usr/bin/env node
/**
 * What one hook event costs the CLI's turn, per kind of hook (issue 38 item 1). The real CLI (CLAUDE_PATH, default
 * the pinned one) alone in a private tmux pane, the prompt on its command line, against the mock API, no server.
 * The mock answers the prompt with READS Read tool calls one after another (a file in the cwd, no permission asked),
 * then text: a turn of 2·READS + 3 events (SessionStart, UserPromptSubmit, READS × PreToolUse + PostToolUse, Stop).
 * Variants, interleaved run by run, each with a hook on every event of HOOK_EVENTS unless said:
 *   floor     the Stop hook only (our command): what the turn costs with no hook
 *   cmd       what dist/ installs today (hooksSettings: our command, sh → flock → paste; SessionStart async)
 *   noop      the command `exit 0` (Stop ours): the cost of any command hook
 *   async     our command, `async: true` on every event but Stop and PermissionRequest
 *   http      `type: "http"` to a local listener (hook-sink.mjs, its own process) that appends the line and answers
 *   down      `type: "http"` to a port nobody listens on (Stop ours): what the CLI does when the listener is absent
 * Per run: wall time from `tmux new-session` to the Stop line, and CPU (user + system) of the CLI's process tree
 * (reaped hook processes included) at that moment; for http also the listener's CPU over the run. Per event:
 * (variant − floor) ÷ the events the variant hooks beyond the floor's Stop (2·READS + 2), p50 over the runs.
 *   CLAUDE_PATH=… node scripts/bench/hook-events.mjs [runs=5] [reads=10]   (HE_VARIANTS=floor,http,… to choose)
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { basename, join, resolve } from "node:path";
import { hookCommand, hooksSettings } from "../../dist/claude/hooks.js";
import { HOOK_EVENTS } from "../../dist/core/events.js";
import { shQuote } from "../../dist/util/proc/shell.js";
import { treeCpuMs } from "./stats.mjs";
import { makeWorld } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";

const runs = Number(process.argv[2] ?? 5);
const READS = Number(process.argv[3] ?? 10);
if (process.env.CLAUDE_PATH) process.env.CLAUDE_PATH = resolve(process.env.CLAUDE_PATH); // the pane runs in another folder
const w = makeWorld("hook-events");
const dir = w.dir("cwd");
writeFileSync(join(dir, "f.txt"), "hello\n");
const setup = await realSetup(w, [dir]);
const env = Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH"));
const tmux = (args) =>
  spawnSync("tmux", ["-L", w.socket, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: w.home } });

// The mock: READS Read calls, one per request, then the answer.
setup.mock.setHandler((req) => {
  const msgs = req.body?.messages ?? [];
  const m = /HOOKBENCH reads=(\d+)/.exec(JSON.stringify(msgs.filter((x) => x.role === "user").map((x) => x.content)));
  if (!m) return undefined;
  let done = 0;
  for (const msg of msgs) if (Array.isArray(msg.content)) for (const b of msg.content) if (b.type === "tool_result") done++;
  if (done < Number(m[1])) return { blocks: [{ type: "tool_use", name: "Read", input: { file_path: join(dir, "f.txt") } }] };
  return { text: `MOCK REPLY: done after ${done} reads` };
});

// The listener of the http variant, and a port nobody listens on for the down variant.
const sink = spawn(process.execPath, [join(import.meta.dirname, "hook-sink.mjs"), w.root], {
  stdio: ["ignore", "pipe", "inherit"],
});
const sinkPort = await new Promise((res) => sink.stdout.once("data", (b) => res(Number(String(b).trim()))));
const deadPort = await new Promise((res) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => res(p));
  });
});

function settings(variant, events) {
  if (variant === "cmd") return hooksSettings(events, undefined, { backgroundStart: true });
  const ours = { type: "command", command: hookCommand(events) };
  const hooks = {};
  for (const ev of HOOK_EVENTS) {
    if (variant === "floor" && ev !== "Stop") continue;
    let entry = ours;
    if (variant === "noop" && ev !== "Stop") entry = { type: "command", command: "exit 0" };
    if (variant === "async" && ev !== "Stop" && ev !== "PermissionRequest") entry = { ...ours, async: true };
    if (variant === "http") entry = { type: "http", url: `http://127.0.0.1:${sinkPort}/${basename(events)}`, timeout: 10 };
    if (variant === "down" && ev !== "Stop") entry = { type: "http", url: `http://127.0.0.1:${deadPort}/x`, timeout: 10 };
    hooks[ev] = [{ matcher: "*", hooks: [entry] }];
  }
  return { hooks };
}

async function once(variant, i) {
  const events = join(w.root, `${variant}-${i}.jsonl`);
  const file = join(w.root, `${variant}-${i}.settings.json`);
  writeFileSync(file, JSON.stringify(settings(variant, events)));
  const prompt = `HOOKBENCH reads=${READS} ${variant} ${i}`;
  const cmd = [
    "env",
    ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
    setup.cli.path,
    "--settings",
    file,
    "--permission-mode",
    "default",
    "--",
    prompt,
  ]
    .map(shQuote)
    .join(" ");
  const name = `he-${variant}-${i}`;
  const sink0 = treeCpuMs(sink.pid);
  const t0 = performance.now();
  tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", dir, cmd]);
  let stop;
  for (;;) {
    if (performance.now() - t0 > 120_000)
      throw new Error(`${variant} ${i}: no Stop in 120 s; the pane:\n${tmux(["capture-pane", "-p", "-t", name]).stdout}`);
    if (existsSync(events) && readFileSync(events, "utf8").includes('"hook_event_name":"Stop"')) {
      stop = performance.now() - t0;
      break;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const cpu = treeCpuMs(Number(tmux(["display-message", "-p", "-t", name, "#{pane_pid}"]).stdout.trim()));
  const sinkCpu = treeCpuMs(sink.pid) - sink0;
  const pane = tmux(["capture-pane", "-p", "-t", name]).stdout;
  tmux(["kill-session", "-t", name]);
  // What landed, in order (the events log of each variant but floor and down holds every hooked event).
  const names = readFileSync(events, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => /"hook_event_name":"(\w+)"/.exec(l)?.[1] ?? "?");
  return { stop, cpu, sinkCpu, names, pane };
}

tmux(["new-session", "-d", "-s", "keep", "sleep 100000"]);
tmux(["set-option", "-g", "remain-on-exit", "on"]);
const variants = (process.env.HE_VARIANTS ?? "floor,cmd,noop,async,http,down").split(",");
const res = Object.fromEntries(variants.map((v) => [v, []]));
try {
  await once("floor", -1); // the CLI's first start after install: not counted
  for (let i = 0; i < runs; i++)
    for (const v of variants) {
      res[v].push(await once(v, i));
      process.stderr.write(".");
    }
  process.stderr.write("\n");
} finally {
  tmux(["kill-server"]);
  sink.kill();
  await setup.close();
  w.cleanup();
}
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floor = res.floor;
const hooked = 2 * READS + 2; // events beyond Stop
console.log(`CLI ${setup.cli.version}, ${runs} runs each, interleaved, ${READS} reads a turn (${hooked + 1} events)`);
console.log("| variant | Stop p50 | CPU p50 | per event: wall | per event: CPU | listener CPU p50 | lines landed (last run) |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const v of variants) {
  const r = res[v];
  // Paired with the floor run of the same repetition, so a load swing between repetitions cancels.
  const dWall = p50(r.map((x, k) => (x.stop - floor[k].stop) / hooked));
  const dCpu = p50(r.map((x, k) => (x.cpu - floor[k].cpu) / hooked));
  const counts = {};
  for (const n of r.at(-1).names) counts[n] = (counts[n] ?? 0) + 1;
  console.log(
    `| ${v} | ${p50(r.map((x) => x.stop)).toFixed(0)} ms | ${p50(r.map((x) => x.cpu))} ms | ${v === "floor" ? "" : `${dWall.toFixed(1)} ms`} | ${
      v === "floor" ? "" : `${dCpu.toFixed(1)} ms`
    } | ${v === "http" ? `${p50(r.map((x) => x.sinkCpu))} ms` : ""} | ${Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")} |`,
  );
}
if (res.down) console.log(`\nthe down variant's last pane:\n${res.down.at(-1).pane.trimEnd()}`);
if (res.http) {
  const want = ["SessionStart", "UserPromptSubmit", ...Array(READS).fill(["PreToolUse", "PostToolUse"]).flat(), "Stop"];
  const bad = res.http.filter((x) => x.names.join() !== want.join()).length;
  console.log(`http: ${res.http.length - bad} of ${res.http.length} runs landed every event in order`);
}
