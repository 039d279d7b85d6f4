#!/usr/bin/env node
/**
 * What a headless turn's hooks cost, as commands and as the Agent SDK's in-process callbacks (issue 38 item 1), no
 * server: the Agent SDK's query() on the real CLI (CLAUDE_PATH, default the pinned one) against the mock API, which
 * answers the prompt with READS Read calls one after another, then text: a turn of 2·READS + 2 events beyond
 * SessionStart (UserPromptSubmit, READS × PreToolUse + PostToolUse, Stop). Variants, interleaved run by run:
 *   none   no hook at all: the turn's own cost
 *   cmd    every event a command (dist's hooksSettings: sh → flock → paste), as headless sessions ran until session 10
 *   cb     what a headless session runs now: SessionStart and SessionEnd commands, every other event a callback whose
 *          line dist's EventAppender writes under the log's flock (flock + cat, a batch per hold)
 * Per run: wall time from query() to the result, CPU (user + system) of the CLI's process tree at that moment (reaped
 * hook processes included); the events log must hold every hooked event once, in the turn's order.
 *   npm run build && node scripts/bench/hook-callbacks.mjs [runs=8] [reads=8]
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { treeCpuMs } from "./stats.mjs";
import { makeWorld, sutPath } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";

const runs = Number(process.argv[2] ?? 8);
const READS = Number(process.argv[3] ?? 8);
const { hooksSettings, CALLBACK_EVENTS } = await import(sutPath("dist", "claude", "hooks.js"));
const { EventAppender } = await import(sutPath("dist", "events", "appender.js"));
const { query } = await import("@anthropic-ai/claude-agent-sdk");
const w = makeWorld("hook-callbacks");
const dir = w.dir("cwd");
writeFileSync(join(dir, "f.txt"), "hello\n");
const setup = await realSetup(w, [dir]);
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
};
setup.mock.setHandler((req) => {
  const msgs = req.body?.messages ?? [];
  const m = /HOOKBENCH reads=(\d+)/.exec(JSON.stringify(msgs.filter((x) => x.role === "user").map((x) => x.content)));
  if (!m) return undefined;
  let done = 0;
  for (const msg of msgs) if (Array.isArray(msg.content)) for (const b of msg.content) if (b.type === "tool_result") done++;
  if (done < Number(m[1])) return { blocks: [{ type: "tool_use", name: "Read", input: { file_path: join(dir, "f.txt") } }] };
  return { text: `MOCK REPLY: done after ${done} reads` };
});

async function once(variant, i) {
  const events = join(w.root, `${variant}-${i}.jsonl`);
  writeFileSync(events, "");
  const options = { cwd: dir, env, pathToClaudeCodeExecutable: setup.cli.path, permissionMode: "default" };
  let appender;
  if (variant === "cmd") {
    options.settings = join(w.root, `${variant}-${i}.settings.json`);
    writeFileSync(options.settings, JSON.stringify(hooksSettings(events)));
  } else if (variant === "cb") {
    options.settings = join(w.root, `${variant}-${i}.settings.json`);
    writeFileSync(options.settings, JSON.stringify(hooksSettings(events, undefined, { callbacks: CALLBACK_EVENTS })));
    appender = new EventAppender(events);
    const cb = (input) => {
      appender.push({ ...input, ts: new Date().toISOString() });
      return Promise.resolve({});
    };
    options.hooks = Object.fromEntries(CALLBACK_EVENTS.map((e) => [e, [{ hooks: [cb] }]]));
  }
  let pid;
  options.spawnClaudeCodeProcess = (so) => {
    const c = spawn(so.command, so.args, { cwd: so.cwd, env: so.env, stdio: ["pipe", "pipe", "ignore"], signal: so.signal });
    pid = c.pid;
    return c;
  };
  const prompt = `HOOKBENCH reads=${READS} ${variant} ${i}`;
  const t0 = performance.now();
  const q = query({ prompt, options });
  let wall;
  let cpu;
  for await (const m of q) {
    if (m.type === "result") {
      wall = performance.now() - t0;
      cpu = treeCpuMs(pid);
      if (!String(m.result).includes(`done after ${READS} reads`)) throw new Error(`${variant} ${i}: ${m.result}`);
      break;
    }
  }
  await appender?.flush();
  const names = readFileSync(events, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => /"hook_event_name":"(\w+)"/.exec(l)?.[1] ?? "?");
  return { wall, cpu, names };
}

const variants = (process.env.HC_VARIANTS ?? "none,cmd,cb").split(",");
const res = Object.fromEntries(variants.map((v) => [v, []]));
try {
  await once("none", -1); // the CLI's first start after install: not counted
  for (let i = 0; i < runs; i++)
    for (const v of variants) {
      res[v].push(await once(v, i));
      process.stderr.write(".");
    }
  process.stderr.write("\n");
} finally {
  await setup.close();
  w.cleanup();
}
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const hooked = 2 * READS + 2;
const want = ["UserPromptSubmit", ...Array(READS).fill(["PreToolUse", "PostToolUse"]).flat(), "Stop"];
console.log(
  `CLI ${setup.cli.version}, ${runs} runs each, interleaved, ${READS} reads a turn (${hooked} events beyond SessionStart)`,
);
console.log("| variant | wall p50 | CLI tree CPU p50 | per event: wall | per event: CLI CPU | every event once, in order |");
console.log("| --- | --- | --- | --- | --- | --- |");
for (const v of variants) {
  const r = res[v];
  const base = res.none;
  const dWall = base ? p50(r.map((x, k) => (x.wall - base[k].wall) / hooked)) : NaN;
  const dCpu = base ? p50(r.map((x, k) => (x.cpu - base[k].cpu) / hooked)) : NaN;
  const inOrder = r.filter(
    (x) => x.names.filter((n) => n !== "SessionStart" && n !== "SessionEnd").join() === want.join(),
  ).length;
  console.log(
    `| ${v} | ${p50(r.map((x) => x.wall)).toFixed(0)} ms | ${p50(r.map((x) => x.cpu))} ms | ${v === "none" ? "" : `${dWall.toFixed(1)} ms`} | ${
      v === "none" ? "" : `${dCpu.toFixed(1)} ms`
    } | ${v === "none" ? "" : `${inOrder} of ${r.length}`} |`,
  );
}
process.exit(0);
