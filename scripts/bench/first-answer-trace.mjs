#!/usr/bin/env node
/**
 * Where a first answer's time goes (issue #23): one server on the real CLI + the mock API, and per run a timeline
 * of (a) `run_task` cold on headless and (b) tmux `start_session` + `send_message`, against a bare `claude -p`.
 *
 *   npm run build && node scripts/bench/first-answer-trace.mjs [--runs=5]
 *     [--only=task,tmux,tmuxp,follow,warm,wake,bare,cli,floor,floorhooks,floorfull]   (TRACE_PAUSE_MS=N: a wait before
 *     each tmuxp and floor row, so that the CLIs killed after the row before have ended; FLOORFULL_NOSID=1: no --session-id)
 *   (CS_BENCH_SUT=<checkout>: trace that checkout's dist/ instead)
 *
 * Marks, in ms from the call (all on Date.now(), so the server's log lines align with the bench's clock):
 *  - every line of the session's events.jsonl as it appears (polled every 2 ms), by hook_event_name;
 *  - the mock API's main request (the prompt reached the API);
 *  - the assistant reply line in the transcript;
 *  - the server's own debug lines that start with `trace ` (CLAUDE_SESSIONS_TRACE=1 turns them on);
 *  - the call's return.
 * `cli` times the CLI alone (no server): spawn → SessionStart hook, for `-p`, for the SDK's stream-json mode and for
 * the interactive screen in a tmux pane, with a hook that only appends a timestamp.
 * `floor` and `floorhooks` (issue 38) are the interactive floor beside `tmuxp`: the CLI alone in a private tmux pane,
 * the prompt on its command line, from `tmux new-session` (the CLI's start) to its Stop line; `floor` with the Stop
 * hook only, `floorhooks` with the hook set the server installs (dist's hooksSettings, no server), `floorfull` with
 * the settings file of the server's last session (its hooks, permission hook and deny rules) and a `--session-id`,
 * as the server starts the CLI, still without the server (run after `tmuxp`). Their events log
 * sits in the state directory, so the same watcher marks their lines, the transcript's and the mock's request.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeWorld, SUT, sutPath } from "./world.mjs";
import { realSetup } from "./phases/real.mjs";

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, "").split("=")));
const RUNS = Number(args.runs ?? 5);
if (process.env.CS_BENCH_SUT) SUT.root = resolve(process.env.CS_BENCH_SUT);
/** Per row, per mark: the times of every run, for the medians printed at the end. */
const byMark = new Map();
const keep = (row, lines) => {
  const firsts = new Map();
  for (const l of lines) {
    const m = /^\s*(\d+) ms {2}(.*)$/.exec(l);
    const key = m && `${row}: ${m[2].replace(/"[^"]*"/g, '"…"').replace(/ \(MOCK REPLY[^)]*\)/, "")}`;
    if (key && !firsts.has(key)) firsts.set(key, Number(m[1]));
  }
  for (const [k, t] of firsts) byMark.set(k, [...(byMark.get(k) ?? []), t]);
};
const ONLY = (args.only ?? "bare,task,tmux,cli").split(",");
const { hookCommand, hooksSettings } = await import(sutPath("dist", "claude", "hooks.js"));
const { shQuote } = await import(sutPath("dist", "util", "proc", "shell.js"));

/** Watches a state dir and Claude's projects dir; returns marks relative to t0. */
function watcher(stateDir, projectsDir) {
  const offsets = new Map();
  const marks = [];
  let t0 = Date.now();
  const readNew = (file, onLine) => {
    let size;
    try {
      size = statSync(file).size;
    } catch {
      return;
    }
    const off = offsets.get(file) ?? 0;
    if (size <= off) return;
    const buf = readFileSync(file).subarray(off, size);
    const text = buf.toString("utf8");
    const cut = text.lastIndexOf("\n");
    if (cut < 0) return;
    offsets.set(file, off + Buffer.byteLength(text.slice(0, cut + 1)));
    for (const l of text.slice(0, cut).split("\n")) if (l.trim()) onLine(l);
  };
  const tick = () => {
    const now = Date.now();
    for (const d of existsSync(stateDir) ? readdirSync(stateDir) : []) {
      const f = join(stateDir, d, "events.jsonl");
      if (!existsSync(f)) continue;
      readNew(f, (l) => {
        try {
          const e = JSON.parse(l);
          marks.push([now - t0, `ev ${e.hook_event_name}${e.source ? `(${e.source})` : ""}`]);
        } catch {
          /* torn */
        }
      });
    }
    for (const p of existsSync(projectsDir) ? readdirSync(projectsDir) : []) {
      const dir = join(projectsDir, p);
      for (const f of readdirSync(dir)) {
        if (!f.endsWith(".jsonl")) continue;
        readNew(join(dir, f), (l) => {
          if (l.includes('"type":"assistant"')) marks.push([now - t0, "transcript assistant line"]);
          else if (l.includes('"type":"user"')) marks.push([now - t0, "transcript user line"]);
        });
      }
    }
  };
  // Skip what is already there.
  tick();
  marks.length = 0;
  const iv = setInterval(tick, 2);
  return {
    start() {
      tick();
      marks.length = 0;
      t0 = Date.now();
      return t0;
    },
    mark(what, at = Date.now()) {
      marks.push([at - t0, what]);
    },
    done() {
      tick();
      return marks.sort((a, b) => a[0] - b[0]).map(([t, w]) => `${String(t).padStart(6)} ms  ${w}`);
    },
    get t0() {
      return t0;
    },
    stop() {
      clearInterval(iv);
    },
  };
}

function claudeP(cli, cwd, env, prompt) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(cli, ["-p", prompt, "--permission-mode", "default"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let so = "";
    let at;
    c.stdout.on("data", (b) => {
      so += b;
      if (at === undefined && so.includes(`MOCK REPLY: ${prompt}`)) at = performance.now() - t0;
    });
    c.on("exit", () =>
      at !== undefined
        ? resolve({ answer: at, exit: performance.now() - t0 })
        : reject(new Error(`claude -p: ${so.slice(-300)}`)),
    );
  });
}

/** The CLI alone (no server): spawn → each hook, with a hook that only appends a timestamp and the event's name. */
async function cliOnly(w, cli, cwd, env, mode) {
  const log = join(w.root, `cli-${mode}-${Date.now()}.log`);
  writeFileSync(log, "");
  const hook = {
    type: "command",
    command: `echo "$(date +%s%3N) $(tr -d '\\n' | grep -o '"hook_event_name":"[A-Za-z]*"')" >> ${log}`,
  };
  const settings = JSON.stringify({
    hooks: Object.fromEntries(["SessionStart", "UserPromptSubmit", "Stop"].map((e) => [e, [{ matcher: "*", hooks: [hook] }]])),
  });
  const t0 = Date.now();
  let child;
  let tmuxName;
  const tenv = { PATH: process.env.PATH, HOME: w.home };
  if (mode === "p") child = spawn(cli, ["-p", "hello", "--settings", settings], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  else if (mode === "stream-json") {
    child = spawn(cli, ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--settings", settings], {
      cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
    });
  } else {
    tmuxName = `trace-${Date.now()}`;
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const argv = [cli, "--settings", settings, ...(mode === "interactive-argv" ? ["--", "hello"] : [])];
    spawnSync(
      "tmux",
      ["-L", w.socket, "new-session", "-d", "-s", tmuxName, "-x", "200", "-y", "50", "-c", cwd, ...envArgs, "--", ...argv],
      { env: tenv },
    );
  }
  const at = {};
  const seen = () => {
    for (const l of readFileSync(log, "utf8").split("\n")) {
      const m = /^(\d+) "hook_event_name":"(\w+)"/.exec(l);
      if (m && at[m[2]] === undefined) at[m[2]] = Number(m[1]) - t0;
    }
  };
  const until = Date.now() + 20_000;
  let sent = false;
  while (Date.now() < until) {
    seen();
    if (mode === "interactive" && at.SessionStart !== undefined && at.box === undefined) {
      const r = spawnSync("tmux", ["-L", w.socket, "capture-pane", "-p", "-t", `=${tmuxName}:`], { env: tenv, encoding: "utf8" });
      if (/^❯(\s|$)/m.test(r.stdout ?? "")) at.box = Date.now() - t0;
    }
    if (mode === "stream-json" && at.SessionStart !== undefined && !sent) {
      sent = true;
      at.sent = Date.now() - t0;
      child.stdin.write(
        JSON.stringify({ type: "user", message: { role: "user", content: "hello" }, parent_tool_use_id: null, session_id: "" }) +
          "\n",
      );
    }
    if (mode === "interactive" ? at.box !== undefined : at.Stop !== undefined) break;
    await new Promise((r) => setTimeout(r, 2));
  }
  if (child) child.kill("SIGKILL");
  if (tmuxName) spawnSync("tmux", ["-L", w.socket, "kill-session", "-t", `=${tmuxName}`], { env: tenv });
  return at;
}

/** The interactive floor: the CLI alone in a tmux pane, prompt on argv; marks on the watcher's clock. */
/** TRACE_PAUSE_MS: a wait before each timed row, for the CLIs killed after the row before to finish ending. */
const pause = () => new Promise((res) => setTimeout(res, Number(process.env.TRACE_PAUSE_MS ?? 0)));

async function floorRun(w, watch, cli, cwd, env, row, i) {
  await pause();
  const d = join(w.stateDir, `${row}-${i}`);
  mkdirSync(d, { recursive: true });
  const events = join(d, "events.jsonl");
  const settings = join(d, "settings.json");
  if (row === "floorfull") {
    // The settings file the server wrote for its last session (hook set, permission hook, deny rules), pointed here.
    const last = readdirSync(w.stateDir)
      .map((x) => join(w.stateDir, x))
      .filter((x) => existsSync(join(x, "settings.json")) && !/floor/.test(x))
      .sort((a, b) => statSync(join(a, "settings.json")).mtimeMs - statSync(join(b, "settings.json")).mtimeMs)
      .at(-1);
    if (!last) throw new Error("floorfull: no session of the server's to copy the settings of (run tmuxp first)");
    writeFileSync(settings, readFileSync(join(last, "settings.json"), "utf8").split(last).join(d));
  } else {
    const hooks =
      row === "floor"
        ? { hooks: { Stop: [{ matcher: "*", hooks: [{ type: "command", command: hookCommand(events) }] }] } }
        : hooksSettings(events, undefined, { backgroundStart: true });
    writeFileSync(settings, JSON.stringify(hooks));
  }
  const argv = [
    "env",
    ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
    cli,
    ...(row === "floorfull" && !process.env.FLOORFULL_NOSID ? [`--session-id=${randomUUID()}`] : []),
    "--settings",
    settings,
  ];
  const cmd = [...argv, "--permission-mode", "default", "--", `${row} ${i}`].map(shQuote).join(" ");
  const tenv = { PATH: process.env.PATH, HOME: w.home };
  const name = `${row}-${i}`;
  const t0 = watch.start();
  spawnSync("tmux", ["-L", w.socket, "new-session", "-d", "-s", name, "-x", "200", "-y", "50", "-c", cwd, cmd], { env: tenv });
  watch.mark("tmux new-session returned (the CLI starts)");
  const until = Date.now() + 60_000;
  const stops = () => (existsSync(events) ? readFileSync(events, "utf8").split('"hook_event_name":"Stop"').length - 1 : 0);
  while (Date.now() < until && stops() < 1) await new Promise((r) => setTimeout(r, 2));
  if (process.env.TRACE_FLOOR_FOLLOW) {
    // TRACE_FLOOR_FOLLOW=1: the floor's follow-up, typed the moment its Stop lands, traced on its own clock (the
    // first answer's marks are dropped).
    const t1 = watch.start();
    const text = `${row} again ${i}`;
    spawnSync("tmux", ["-L", w.socket, "send-keys", "-t", name, "-l", text], { env: tenv });
    watch.mark("follow-up typed");
    while (
      !spawnSync("tmux", ["-L", w.socket, "capture-pane", "-p", "-t", name], { env: tenv, encoding: "utf8" }).stdout.includes(
        text,
      )
    )
      await new Promise((r) => setTimeout(r, 2));
    watch.mark("follow-up shown");
    spawnSync("tmux", ["-L", w.socket, "send-keys", "-t", name, "Enter"], { env: tenv });
    watch.mark("Enter sent");
    while (Date.now() < until && stops() < 2) await new Promise((r) => setTimeout(r, 2));
    await finish(`${row} follow-up`, `${row} follow-up #${i}`, t1);
    spawnSync("tmux", ["-L", w.socket, "kill-session", "-t", `=${name}`], { env: tenv });
    return;
  }
  const label = {
    floor: "floor (Stop hook only)",
    floorhooks: "floor + the server's hooks",
    floorfull: "floor + the server's settings",
  };
  await finish(label[row], `${row} #${i}`, t0);
  spawnSync("tmux", ["-L", w.socket, "kill-session", "-t", `=${name}`], { env: tenv });
}

const w = makeWorld("trace", {
  CLAUDE_SESSIONS_LOG_LEVEL: "debug",
  CLAUDE_SESSIONS_TRACE: "1",
  ...(process.env.TRACE_ENV ? Object.fromEntries(process.env.TRACE_ENV.split(",").map((kv) => kv.split("="))) : {}),
});
const dirs = Object.fromEntries(["bare", "task", "tmux", "cli"].map((n) => [n, w.dir(n)]));
const setup = await realSetup(w, Object.values(dirs));
const pEnv = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  LANG: "C.UTF-8",
  ...Object.fromEntries(Object.entries(w.env).filter(([k]) => !k.startsWith("CLAUDE_SESSIONS") && k !== "CLAUDE_PATH")),
};
const cli = setup.cli.path;
const m = await w.connect();
let mw;
const watch = watcher(w.stateDir, join(w.home, ".claude", "projects"));
m.onStderrLine((line) => {
  const x = /^\[claude-sessions\] (\S+) debug trace (.*)$/.exec(line);
  if (x) watch.mark(`server: ${x[2]}`, Date.parse(x[1]));
});
setup.mock.setHandler((req) => {
  watch.mark(`mock: request "${req.lastUserText}"`);
  return undefined;
});
const out = [];
/** After a row's calls: the last log lines land (150 ms), then the row's marks are kept and printed. */
async function finish(row, label, t0) {
  await new Promise((res) => setTimeout(res, 150));
  const lines = watch.done();
  keep(row, lines);
  out.push(`${label}: ${Date.now() - t0 - 150} ms`, ...lines);
}
try {
  await claudeP(cli, dirs.bare, pEnv, "warm-up");
  for (let i = 0; i < RUNS; i++) {
    if (ONLY.includes("bare")) {
      watch.start();
      const r = await claudeP(cli, dirs.bare, pEnv, `bare ${i}`);
      out.push(`bare claude -p #${i}: answer on stdout ${Math.round(r.answer)} ms, exit ${Math.round(r.exit)} ms`);
    }
    if (ONLY.includes("task")) {
      const t0 = watch.start();
      const r = await m.call("run_task", {
        cwd: dirs.task,
        prompt: `task ${i}`,
        permission_mode: "default",
        keep_session: true,
        timeout_ms: 60_000,
      });
      watch.mark(`run_task returned (${r.ok ? r.data.response : r.error?.code})`);
      await finish("run_task", `run_task #${i}`, t0);
      if (r.ok) await m.call("kill_session", { session_id: r.data.session_id, force: true });
    }
    if (ONLY.includes("tmux")) {
      const t0 = watch.start();
      const s = await m.call("start_session", { cwd: dirs.tmux, backend: "tmux", permission_mode: "default" });
      watch.mark("start_session returned");
      const r = await m.call("send_message", { session_id: s.data.session_id, message: `tmux ${i}`, timeout_ms: 60_000 });
      watch.mark(`send_message returned (${r.ok ? r.data.response : r.error?.code})`);
      await finish("tmux start+send", `tmux start+send #${i}`, t0);
      await m.call("kill_session", { session_id: s.data.session_id, force: true });
    }
    if (ONLY.includes("warm")) {
      mw ??= await w.connect({ CLAUDE_SESSIONS_WARM_POOL: "1" });
      for (let k = 0; k < 600; k++) {
        const l = await mw.call("list_sessions", {});
        if (l.ok && l.data.sessions.some((x) => x.spare && x.status === "ready" && x.cwd === dirs.tmux)) break;
        if (k === 0 && !(l.ok && l.data.sessions.some((x) => x.spare)))
          await mw.call("kill_session", {
            session_id: (await mw.call("start_session", { cwd: dirs.tmux, backend: "tmux", permission_mode: "default" })).data
              .session_id,
            force: true,
          });
        await new Promise((res) => setTimeout(res, 100));
      }
      await new Promise((res) => setTimeout(res, 1000));
      const t0 = watch.start();
      const s = await mw.call("start_session", { cwd: dirs.tmux, backend: "tmux", permission_mode: "default" });
      watch.mark("start_session returned (spare)");
      const r = await mw.call("send_message", { session_id: s.data.session_id, message: `warm ${i}`, timeout_ms: 60_000 });
      watch.mark(`send_message returned (${r.ok ? r.data.response : r.error?.code})`);
      await finish("tmux warm spare", `tmux warm spare #${i}`, t0);
      await mw.call("kill_session", { session_id: s.data.session_id, force: true });
    }
    if (ONLY.includes("wake")) {
      const s = await m.call("start_session", {
        cwd: dirs.tmux,
        backend: process.env.TRACE_WAKE_BACKEND ?? "tmux",
        permission_mode: "default",
        prompt: `before ${i}`,
      });
      await m.call("wait_for_completion", { session_id: s.data.session_id, timeout_ms: 60_000 });
      await m.call("kill_session", { session_id: s.data.session_id, hibernate: true });
      await new Promise((res) => setTimeout(res, 300));
      const t0 = watch.start();
      const r = await m.call("send_message", { session_id: s.data.session_id, message: `wake ${i}`, timeout_ms: 60_000 });
      watch.mark(`send_message returned (${r.ok ? `${r.data.response}, wake_ms ${r.data.wake_ms}` : r.error?.code})`);
      await finish("tmux wake + turn", `tmux wake + turn #${i}`, t0);
      await m.call("kill_session", { session_id: s.data.session_id, force: true });
    }
    if (ONLY.includes("follow")) {
      const s = await m.call("start_session", {
        cwd: dirs.tmux,
        backend: "tmux",
        permission_mode: "default",
        prompt: `first ${i}`,
      });
      await m.call("wait_for_completion", { session_id: s.data.session_id, timeout_ms: 60_000 });
      // TRACE_FOLLOW_PAUSE_MS=0: the follow-up sent the moment the first answer returned (the bench's row).
      await new Promise((res) => setTimeout(res, Number(process.env.TRACE_FOLLOW_PAUSE_MS ?? 300)));
      const t0 = watch.start();
      const r = await m.call("send_message", { session_id: s.data.session_id, message: `follow ${i}`, timeout_ms: 60_000 });
      watch.mark(`send_message returned (${r.ok ? r.data.response : r.error?.code})`);
      await finish("tmux follow-up", `tmux follow-up #${i}`, t0);
      await m.call("kill_session", { session_id: s.data.session_id, force: true });
    }
    if (ONLY.includes("tmuxp")) {
      await pause();
      const t0 = watch.start();
      const s = await m.call("start_session", {
        cwd: dirs.tmux,
        backend: "tmux",
        permission_mode: "default",
        prompt: `tmuxp ${i}`,
      });
      watch.mark("start_session {prompt} returned");
      const r = await m.call("wait_for_completion", { session_id: s.data.session_id, timeout_ms: 60_000 });
      watch.mark(`wait_for_completion returned (${r.ok ? r.data.last_response : r.error?.code})`);
      await finish("tmux start {prompt}", `tmux start {prompt} + wait #${i}`, t0);
      await m.call("kill_session", { session_id: s.data.session_id, force: true });
    }
    for (const row of ["floor", "floorhooks", "floorfull"])
      if (ONLY.includes(row)) await floorRun(w, watch, cli, dirs.cli, pEnv, row, i);
    if (ONLY.includes("cli")) {
      for (const mode of ["p", "stream-json", "interactive", "interactive-argv"]) {
        const r = await cliOnly(w, cli, dirs.cli, pEnv, mode);
        out.push(
          `cli alone, ${mode}: ${Object.entries(r)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")} ms from spawn`,
        );
      }
    }
    process.stderr.write(`run ${i + 1}/${RUNS} done\n`);
  }
} finally {
  watch.stop();
  await m.close();
  await mw?.close();
  w.cleanup();
  await setup.close();
}
console.log(out.join("\n"));
console.log(`\nmedians over ${RUNS} runs (ms from the call; a mark seen more than once per run counts its first):`);
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const [k, v] of [...byMark]
  .filter(([k]) => !k.startsWith("#"))
  .sort((a, b) => a[0].split(":")[0].localeCompare(b[0].split(":")[0]) || med(a[1]) - med(b[1])))
  console.log(`${String(med(v)).padStart(6)}  ${k} (${v.length} runs)`);
