#!/usr/bin/env node
/**
 * What the hooks cost an interactive first answer (issue 38 item 1). The real CLI (CLAUDE_PATH, default the pinned
 * one) alone in a private tmux pane, the prompt on its command line, against the mock API; no server. Variants of
 * the hook settings, interleaved run by run, each timed from `tmux new-session` to the Stop event's line in its
 * events log (the Stop hook's own line: every variant has one):
 *   floor     the Stop hook only (our command): the interactive floor of issue 38
 *   sync      today's set: every event through our command (sh → flock → paste), synchronous
 *   async     the same, `async: true` on every event but Stop and PermissionRequest
 *   ssasync   the same as sync but SessionStart (startup, resume) with `async: true`: the first prompt does not wait
 *   built     what dist/ installs today (hooksSettings)
 *   noop      every event, but the command is `exit 0` (what any synchronous hook costs the CLI)
 * Also the per-event cost seen by the hook itself: each line's arrival is stamped by the reader (poll 2 ms).
 *   CLAUDE_PATH=… node scripts/bench/hook-modes.mjs [runs=8]
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hookCommand, hooksSettings } from "../../dist/claude/hooks.js";
import { HOOK_EVENTS } from "../../dist/core/events.js";
import { shQuote } from "../../dist/util/proc/shell.js";
import { resolve } from "node:path";
import { treeCpuMs } from "./stats.mjs";
import { makeWorld } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";

const runs = Number(process.argv[2] ?? 8);
if (process.env.CLAUDE_PATH) process.env.CLAUDE_PATH = resolve(process.env.CLAUDE_PATH); // the pane runs in another folder
const w = makeWorld("hook-modes");
const dir = w.dir("cwd");
const setup = await realSetup(w, [dir]);
const env = Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH"));
const tmux = (args) =>
  spawnSync("tmux", ["-L", w.socket, ...args], { encoding: "utf8", env: { PATH: process.env.PATH, HOME: w.home } });

function settings(variant, events) {
  if (variant === "built") return hooksSettings(events);
  const cmd = variant === "noop" ? "exit 0" : hookCommand(events);
  const hooks = {};
  for (const ev of HOOK_EVENTS) {
    if (variant === "floor" && ev !== "Stop") continue;
    const entry = { type: "command", command: ev === "Stop" && variant === "noop" ? hookCommand(events) : cmd };
    if (variant === "async" && ev !== "Stop" && ev !== "PermissionRequest") entry.async = true;
    if (variant === "ssasync" && ev === "SessionStart") entry.async = true;
    hooks[ev] = [{ matcher: "*", hooks: [entry] }];
  }
  return { hooks };
}

async function once(variant, i) {
  const events = join(w.root, `${variant}-${i}.jsonl`);
  const file = join(w.root, `${variant}-${i}.settings.json`);
  writeFileSync(file, JSON.stringify(settings(variant, events)));
  const prompt = `${variant} ${i}`;
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
  const name = `hm-${variant}-${i}`;
  const t0 = performance.now();
  tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", dir, cmd]);
  const seen = new Map();
  for (;;) {
    if (performance.now() - t0 > 60_000)
      throw new Error(`${variant} ${i}: no Stop in 60 s; the pane:\n${tmux(["capture-pane", "-p", "-t", name]).stdout}`);
    if (existsSync(events)) {
      for (const l of readFileSync(events, "utf8").split("\n")) {
        const m = l.match(/"hook_event_name":"(\w+)"/);
        if (m && !seen.has(m[1])) seen.set(m[1], performance.now() - t0);
      }
      if (seen.has("Stop")) break;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const cpu = treeCpuMs(Number(tmux(["display-message", "-p", "-t", name, "#{pane_pid}"]).stdout.trim()));
  tmux(["kill-session", "-t", name]);
  return { stop: seen.get("Stop"), cpu, events: Object.fromEntries(seen) };
}

// One tmux server for every run (a session that sleeps keeps it), panes kept after their process ends so a failed
// start shows why.
tmux(["new-session", "-d", "-s", "keep", "sleep 100000"]);
tmux(["set-option", "-g", "remain-on-exit", "on"]);
const variants = (process.env.HM_VARIANTS ?? "floor,sync,ssasync,async,noop").split(",");
const res = Object.fromEntries(variants.map((v) => [v, []]));
try {
  await once("floor", -1); // the CLI's first start after install: not counted
  for (let i = 0; i < runs; i++) for (const v of variants) res[v].push(await once(v, i));
} finally {
  tmux(["kill-server"]);
  await setup.close();
  w.cleanup();
}
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const floor = p50(res.floor.map((r) => r.stop));
const floorCpu = p50(res.floor.map((r) => r.cpu));
for (const v of variants) {
  const s = p50(res[v].map((r) => r.stop));
  const ev = {};
  for (const r of res[v]) for (const [k, t] of Object.entries(r.events)) (ev[k] ??= []).push(t);
  const c = p50(res[v].map((r) => r.cpu));
  console.log(
    `${v.padEnd(6)} Stop p50 ${s.toFixed(0)} ms (${(s / floor).toFixed(2)}× floor), CPU to Stop p50 ${c} ms (${(c / floorCpu).toFixed(2)}×); lines p50: ${Object.entries(
      ev,
    )
      .map(([k, t]) => `${k} ${p50(t).toFixed(0)}`)
      .join(", ")}`,
  );
}
console.log(`CLI ${setup.cli.version}, ${runs} runs each, interleaved`);
