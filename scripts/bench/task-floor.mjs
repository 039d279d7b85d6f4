#!/usr/bin/env node
/**
 * Where `run_task`'s gap to a bare `claude -p` lies (issue 38 item 4), with no server at all: the same CLI and mock,
 * repetition by repetition interleaved, each timed from its spawn to the answer:
 *   - bare: `claude -p <prompt>` (no hooks), until the reply is on stdout — the bench's yardstick;
 *   - p + hooks: the same with the server's hook set (dist's hooksSettings, appending to an events log);
 *   - SDK: the Agent SDK's query() with the prompt, as the server drives the CLI (stream-json both ways), no hooks,
 *     until the reply's assistant message;
 *   - SDK + hooks: the same with the server's hook set (what a headless session runs, less the server);
 *   - stream-json: the CLI spawned in the SDK's mode by hand (no SDK), the prompt written at the spawn, no hooks.
 *
 *   npm run build && node scripts/bench/task-floor.mjs [--runs=10]
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
/** --rows=bare,engine,…: only these rows (default all). */
const ROWS = args.rows ? new Set(args.rows.split(",")) : undefined;
const on = (k) => !ROWS || ROWS.has(k);
const { hooksSettings } = await import(sutPath("dist", "claude", "hooks.js"));
const { HOOK_EVENTS } = await import(sutPath("dist", "core", "events.js"));
const { query } = await import("@anthropic-ai/claude-agent-sdk");

const { buildSdkOptions } = await import(sutPath("dist", "runners", "headless", "options.js"));
const { HeadlessSession } = await import(sutPath("dist", "runners", "headless", "session.js"));
const { LiveSession } = await import(sutPath("dist", "events", "live.js"));
const { CALLBACK_EVENTS } = await import(sutPath("dist", "claude", "hooks.js"));
const { randomUUID } = await import("node:crypto");
const { mkdirSync } = await import("node:fs");

const w = makeWorld("task-floor");
const dirs = Object.fromEntries(
  ["bare", "phooks", "sdk", "sdkhooks", "sdkcb", "sdkcbstart", "sdkopts", "engine", "stream"].map((n) => [n, w.dir(n)]),
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
    const all = hooksSettings(log);
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

const rows = { bare: [], phooks: [], sdk: [], sdkhooks: [], sdkcb: [], sdkcbstart: [], sdkopts: [], engine: [], stream: [] };

/** The SDK with the options a headless session gets (dist's buildSdkOptions): its settings file, --session-id, canUseTool. */
async function sdkOpts(cwd, prompt) {
  const k = n++;
  const log = join(w.root, `events-${k}.jsonl`);
  const settings = join(w.root, `hooks-${k}.json`);
  writeFileSync(settings, JSON.stringify(hooksSettings(log, undefined, { callbacks: CALLBACK_EVENTS })));
  const { options } = buildSdkOptions({
    cwd,
    claude_path: cli,
    events_path: log,
    settings_path: settings,
    base_env: env,
    permission_mode: "default",
  });
  const cb = async (input) => {
    void appendFile(log, "\n" + JSON.stringify(input) + "\n");
    return {};
  };
  const t0 = performance.now();
  const q = query({
    prompt,
    options: {
      ...options,
      hooks: Object.fromEntries(CALLBACK_EVENTS.map((e) => [e, [{ hooks: [cb] }]])),
      canUseTool: async (_t, input) => ({ behavior: "allow", updatedInput: input }),
    },
  });
  let at;
  for await (const m of q) {
    if (at === undefined && m.type === "assistant" && JSON.stringify(m.message.content).includes(`MOCK REPLY: ${prompt}`))
      at = performance.now() - t0;
    if (m.type === "result") break;
  }
  return at;
}

/**
 * The headless engine itself (HeadlessSession as the session layer runs it: `managed`, its settings written first, the
 * prompt given at once, as run_task's launch carries it), no server: spawn → the turn's result.
 */
async function engine(cwd, prompt) {
  const k = n++;
  const dir = join(w.root, `engine-${k}`);
  mkdirSync(dir, { recursive: true });
  const events = join(dir, "events.jsonl");
  writeFileSync(events, "");
  const live = new LiveSession(
    `e${k}`,
    events,
    () => {},
    () => {},
  );
  await live.start();
  const t0 = performance.now();
  const settings = join(dir, "settings.json");
  writeFileSync(settings, JSON.stringify(hooksSettings(events, undefined, { callbacks: CALLBACK_EVENTS })));
  const hs = await HeadlessSession.start({
    live,
    cwd,
    claude_path: cli,
    events_path: events,
    settings_path: settings,
    base_env: env,
    permission_mode: "default",
    claude_session_id: randomUUID(),
    managed: true,
  });
  const r = await hs.send(prompt);
  const at = performance.now() - t0;
  if (!r.result.includes(`MOCK REPLY: ${prompt}`)) throw new Error(`engine: ${r.result}`);
  await hs.close(2000);
  live.close();
  return at;
}
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
  if (on("sdkopts")) rows.sdkopts.push(await sdkOpts(dirs.sdkopts, `sdkopts ${i}`));
  if (on("engine")) rows.engine.push(await engine(dirs.engine, `engine ${i}`));
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
  ["sdkopts", "the same with a headless session's options (buildSdkOptions: settings with deny rules, --session-id; canUseTool)"],
  ["engine", "the headless engine (HeadlessSession: its files, cs:spawn, ready, the turn's result), no server"],
]) {
  if (!rows[k].length) continue;
  const s = summary(rows[k]);
  console.log(`| ${label} | ${round(s.p50, 0)} ms | ${(s.p50 / base).toFixed(2)}× |`);
}
w.cleanup();
process.exit(0);
