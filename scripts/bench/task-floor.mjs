#!/usr/bin/env node
/**
 * Where `run_task`'s gap to a bare `claude -p` lies (issue 38 item 4), with no server at all: the same CLI and mock,
 * repetition by repetition interleaved, each timed from its spawn to the answer:
 *   - bare: `claude -p <prompt>` (no hooks), until the reply is on stdout — the bench's yardstick;
 *   - p + hooks: the same with the server's hook set (dist's hooksSettings, appending to an events log);
 *   - SDK: the Agent SDK's query() with the prompt, as the server drives the CLI (stream-json both ways), no hooks,
 *     until the reply's assistant message;
 *   - SDK + hooks: the same with the server's hook set (what a headless session runs, less the server);
 *   - SDK + callbacks: the hook set as the SDK's in-process callbacks (each appends its line), no SessionStart (no
 *     callback receives it); and the same with SessionStart as our command (what a headless session runs since issue 38,
 *     session 10);
 *   - stream-json: the CLI spawned in the SDK's mode by hand (no SDK), the prompt written at the spawn, no hooks.
 *
 *   npm run build && node scripts/bench/task-floor.mjs [--runs=10] [--rows=bare,sdk,…]
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { round, summary } from "./stats.mjs";
import { makeWorld, sutPath } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const RUNS = Number(args.runs ?? 10);
/** --rows=bare,sdkcb,…: only these rows (default all). */
const ROWS = args.rows ? new Set(args.rows.split(",")) : undefined;
const on = (k) => !ROWS || ROWS.has(k);
const { hooksSettings, CALLBACK_EVENTS } = await import(sutPath("dist", "claude", "hooks.js"));
const { HOOK_EVENTS } = await import(sutPath("dist", "core", "events.js"));
const { query } = await import("@anthropic-ai/claude-agent-sdk");

const w = makeWorld("task-floor");
const dirs = Object.fromEntries(
  ["bare", "phooks", "sdk", "sdkhooks", "sdkcb", "sdkcbstart", "sdkcbasync", "stream"].map((n) => [n, w.dir(n)]),
);
const setup = await realSetup(w, Object.values(dirs));
const cli = setup.cli.path;
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
};
let n = 0;
/** A settings file with the server's hook set, its events log beside it. */
const hooked = () => {
  const k = n++;
  const settings = join(w.root, `hooks-${k}.json`);
  writeFileSync(settings, JSON.stringify(hooksSettings(join(w.root, `events-${k}.jsonl`))));
  return settings;
};

/** Spawn → the reply in the process's stdout. */
function timed(argv, cwd, prompt, stdin) {
  return new Promise((res, rej) => {
    const t0 = performance.now();
    const c = spawn(argv[0], argv.slice(1), { cwd, env, stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "ignore"] });
    let out = "";
    let at;
    c.stdout.on("data", (b) => {
      out += b;
      if (at === undefined && out.includes(`MOCK REPLY: ${prompt}`)) {
        at = performance.now() - t0;
        c.kill("SIGTERM");
      }
    });
    if (stdin !== undefined) c.stdin.end(stdin);
    c.on("error", rej);
    c.on("close", () => (at === undefined ? rej(new Error(`${argv.join(" ")}: no reply\n${out.slice(-500)}`)) : res(at)));
  });
}

/** The hook set as the SDK's in-process callbacks (SessionStart, which no callback receives, as a command or not at all). */
function callbacks(startCommand) {
  const k = n++;
  const log = join(w.root, `events-${k}.jsonl`);
  const cb = async (input) => {
    void appendFile(log, "\n" + JSON.stringify(input) + "\n");
    return {};
  };
  const hooks = Object.fromEntries(HOOK_EVENTS.filter((e) => e !== "SessionStart").map((e) => [e, [{ hooks: [cb] }]]));
  let settings;
  if (startCommand) {
    settings = join(w.root, `hooks-${k}.json`);
    const all = hooksSettings(log, undefined, { backgroundStart: startCommand === "async" });
    writeFileSync(settings, JSON.stringify({ ...all, hooks: { SessionStart: all.hooks.SessionStart } }));
  }
  return { hooks, settings };
}

async function sdk(cwd, prompt, settings, hooks) {
  const t0 = performance.now();
  const q = query({
    prompt,
    options: {
      cwd,
      env,
      pathToClaudeCodeExecutable: cli,
      permissionMode: "default",
      ...(settings ? { settings } : {}),
      ...(hooks ? { hooks } : {}),
    },
  });
  let at;
  for await (const m of q) {
    if (at === undefined && m.type === "assistant" && JSON.stringify(m.message.content).includes(`MOCK REPLY: ${prompt}`))
      at = performance.now() - t0;
    if (m.type === "result") break;
  }
  if (at === undefined) throw new Error("SDK: no reply");
  return at;
}

const rows = { bare: [], phooks: [], sdk: [], sdkhooks: [], sdkcb: [], sdkcbstart: [], sdkcbasync: [], stream: [] };

const streamLine = (prompt) =>
  JSON.stringify({ type: "user", message: { role: "user", content: prompt }, parent_tool_use_id: null, session_id: "" }) + "\n";
const streamArgv = [
  "--output-format",
  "stream-json",
  "--verbose",
  "--input-format",
  "stream-json",
  "--permission-mode",
  "default",
];
await timed([cli, "-p", "warm-up", "--permission-mode", "default"], dirs.bare, "warm-up");
for (let i = 0; i < RUNS; i++) {
  if (on("bare")) rows.bare.push(await timed([cli, "-p", `bare ${i}`, "--permission-mode", "default"], dirs.bare, `bare ${i}`));
  if (on("phooks"))
    rows.phooks.push(
      await timed([cli, "-p", `phooks ${i}`, "--permission-mode", "default", "--settings", hooked()], dirs.phooks, `phooks ${i}`),
    );
  if (on("sdk")) rows.sdk.push(await sdk(dirs.sdk, `sdk ${i}`));
  if (on("sdkhooks")) rows.sdkhooks.push(await sdk(dirs.sdkhooks, `sdkhooks ${i}`, hooked()));
  const cb = callbacks(false);
  if (on("sdkcb")) rows.sdkcb.push(await sdk(dirs.sdkcb, `sdkcb ${i}`, undefined, cb.hooks));
  const cbs = callbacks(true);
  if (on("sdkcbstart")) rows.sdkcbstart.push(await sdk(dirs.sdkcbstart, `sdkcbstart ${i}`, cbs.settings, cbs.hooks));
  const cba = callbacks("async");
  if (on("sdkcbasync")) rows.sdkcbasync.push(await sdk(dirs.sdkcbasync, `sdkcbasync ${i}`, cba.settings, cba.hooks));
  if (on("stream")) rows.stream.push(await timed([cli, ...streamArgv], dirs.stream, `stream ${i}`, streamLine(`stream ${i}`)));
  process.stderr.write(
    `run ${i + 1}/${RUNS}: ${Object.entries(rows)
      .filter(([, v]) => v.length)
      .map(([k, v]) => `${k} ${round(v.at(-1), 0)}`)
      .join(", ")}\n`,
  );
}
const base = summary(rows.bare).p50;
console.log(`| path (spawn → the reply; CLI ${setup.cli.version} + mock, ${RUNS} runs interleaved) | p50 | ÷ bare |`);
console.log("| --- | --- | --- |");
for (const [k, label] of [
  ["bare", "bare `claude -p` (no hooks)"],
  ["phooks", "`claude -p` + the server's hook set"],
  ["stream", "the CLI in stream-json mode by hand (no SDK, no hooks)"],
  ["sdk", "Agent SDK query() (no hooks)"],
  ["sdkhooks", "Agent SDK query() + the server's hook set"],
  ["sdkcb", "Agent SDK query() + the hook set as in-process callbacks (no SessionStart)"],
  ["sdkcbstart", "the same + SessionStart as a command"],
  ["sdkcbasync", "the same, the command in the background (`async: true`) for a new process"],
]) {
  if (!rows[k].length) continue;
  const s = summary(rows[k]);
  console.log(`| ${label} | ${round(s.p50, 0)} ms | ${(s.p50 / base).toFixed(2)}× |`);
}
w.cleanup();
process.exit(0);
