#!/usr/bin/env node
/**
 * Where `run_task`'s gap to a bare `claude -p` lies (issue 38 item 4): the same CLI and mock, repetition by repetition
 * interleaved, each timed from its spawn to the answer (all but the last with no server):
 *   - bare: `claude -p <prompt>` (no hooks), until the reply is on stdout — the bench's yardstick;
 *   - p + hooks: the same with the server's hook set (dist's hooksSettings, appending to an events log);
 *   - SDK: the Agent SDK's query() with the prompt, as the server drives the CLI (stream-json both ways), no hooks,
 *     until the reply's assistant message;
 *   - SDK + hooks: the same with the server's hook set (what a headless session runs, less the server);
 *   - SDK + callbacks: the hook set as the SDK's in-process callbacks (each appends its line), no SessionStart (no
 *     callback receives it); and the same with SessionStart as our command (what a headless session ran in issue 38's
 *     sessions 10 and 11), in the foreground or in the background (`async: true`);
 *   - stream-json: the CLI spawned in the SDK's mode by hand (no SDK), the prompt written at the spawn, no hooks;
 *   - SDK, streaming input: the prompt as an open async iterable, as a headless session gives it; the same with
 *     everything a headless session adds (its settings file, callbacks, canUseTool, a session id); and that timed to the
 *     turn's end (the result, after the Stop callback), which is what `run_task` waits for — the CLI's part of it;
 *   - task: `run_task` cold through the server (headless), the call to its return — the server's part is the
 *     difference to the row before.
 *
 *   npm run build && node scripts/bench/task-floor.mjs [--runs=10] [--rows=bare,sdk,…]
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
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
const { hooksSettings, HEADLESS_HOOKS } = await import(sutPath("dist", "claude", "hooks.js"));
const { HOOK_EVENTS } = await import(sutPath("dist", "core", "events.js"));
const { query } = await import("@anthropic-ai/claude-agent-sdk");

const w = makeWorld("task-floor");
const dirs = Object.fromEntries(
  [
    "bare",
    "phooks",
    "sdk",
    "sdkhooks",
    "sdkcb",
    "sdkcbstart",
    "sdkcbasync",
    "sdkin",
    "sdkinfull",
    "sdkend",
    "task",
    "stream",
  ].map((n) => [n, w.dir(n)]),
);
const setup = await realSetup(w, Object.values(dirs));
const cli = setup.cli.path;
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
};
let n = 0;
/**
 * A settings file with the server's hook set, its events log beside it; `opts` as hooksSettings' (HEADLESS_HOOKS: what a
 * headless session's CLI gets, SessionEnd and /clear's, /compact's SessionStart).
 */
const hooked = (opts) => {
  const k = n++;
  const settings = join(w.root, `hooks-${k}.json`);
  writeFileSync(settings, JSON.stringify(hooksSettings(join(w.root, `events-${k}.jsonl`), undefined, opts)));
  return settings;
};

/** The server, for the `task` row: run_task cold, the call to its return. */
const server = on("task") ? await w.connect({ MAX_CONCURRENT_SESSIONS: "64" }) : undefined;
async function runTask(prompt) {
  const t0 = performance.now();
  const r = await server.call("run_task", { cwd: dirs.task, prompt, permission_mode: "default", timeout_ms: 60_000 });
  const at = performance.now() - t0;
  if (!r.ok || r.data.response !== `MOCK REPLY: ${prompt}`) throw new Error(`run_task: ${r.text?.slice(0, 300)}`);
  await server.call("kill_session", { session_id: r.data.session_id, force: true });
  return at;
}

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

/** The prompt as a streaming input (an async iterable that stays open), as a headless session gives it. */
async function* streamed(prompt, done) {
  yield { type: "user", message: { role: "user", content: prompt }, parent_tool_use_id: null, session_id: "" };
  await done;
}

async function sdk(cwd, prompt, settings, hooks, more = {}) {
  const t0 = performance.now();
  let end;
  const done = new Promise((r) => (end = r));
  const q = query({
    prompt: more.streaming ? streamed(prompt, done) : prompt,
    options: {
      cwd,
      env,
      pathToClaudeCodeExecutable: cli,
      permissionMode: "default",
      ...(settings ? { settings } : {}),
      ...(hooks ? { hooks } : {}),
      ...(more.canUseTool ? { canUseTool: async () => ({ behavior: "deny", message: "no" }) } : {}),
      ...(more.sessionId ? { sessionId: more.sessionId } : {}),
    },
  });
  let at;
  for await (const m of q) {
    if (at === undefined && m.type === "assistant" && JSON.stringify(m.message.content).includes(`MOCK REPLY: ${prompt}`))
      at = performance.now() - t0;
    if (m.type === "result") {
      // The turn's end (its result, after the Stop hook): what run_task waits for.
      if (more.toEnd && at !== undefined) at = performance.now() - t0;
      break;
    }
  }
  end();
  q.close?.();
  if (at === undefined) throw new Error("SDK: no reply");
  return at;
}

const rows = {
  bare: [],
  phooks: [],
  sdk: [],
  sdkhooks: [],
  sdkcb: [],
  sdkcbstart: [],
  sdkcbasync: [],
  sdkin: [],
  sdkinfull: [],
  sdkend: [],
  task: [],
  stream: [],
};

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
  if (on("sdkin")) rows.sdkin.push(await sdk(dirs.sdkin, `sdkin ${i}`, undefined, undefined, { streaming: true }));
  const full = callbacks(false);
  for (const [k, toEnd] of [
    ["sdkinfull", false],
    ["sdkend", true],
  ])
    if (on(k))
      rows[k].push(
        await sdk(dirs[k], `${k} ${i}`, hooked(HEADLESS_HOOKS), full.hooks, {
          streaming: true,
          canUseTool: true,
          sessionId: randomUUID(),
          toEnd,
        }),
      );
  if (on("task")) rows.task.push(await runTask(`task ${i}`));
  if (on("stream")) rows.stream.push(await timed([cli, ...streamArgv], dirs.stream, `stream ${i}`, streamLine(`stream ${i}`)));
  process.stderr.write(
    `run ${i + 1}/${RUNS}: ${Object.entries(rows)
      .filter(([, v]) => v.length)
      .map(([k, v]) => `${k} ${round(v.at(-1), 0)}`)
      .join(", ")}\n`,
  );
}
const base = summary(rows.bare).p50;
console.log(
  `| path (spawn → the reply, or the turn's end where the row says; CLI ${setup.cli.version} + mock, ${RUNS} runs interleaved) | p50 | ÷ bare |`,
);
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
  ["sdkin", "Agent SDK query(), the prompt as a streaming input (as a headless session gives it), no hooks"],
  ["sdkinfull", "the same + what a headless session adds (callbacks, canUseTool, a session id, its settings file)"],
  ["sdkend", "the same, to the turn's end (its result, after the Stop callback): what run_task waits for"],
  ["task", "`run_task` through the server (cold, headless): the call to its return at the turn's end"],
]) {
  if (!rows[k].length) continue;
  const s = summary(rows[k]);
  console.log(`| ${label} | ${round(s.p50, 0)} ms | ${(s.p50 / base).toFixed(2)}× |`);
}
await server?.close();
w.cleanup();
process.exit(0);
