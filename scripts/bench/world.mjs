/**
 * A private world for one bench phase: temp HOME, temp state dir, a private tmux socket, and the
 * built server (dist/bin.js) started as a real process, driven by the MCP SDK's own Client over
 * stdio (the same shape as tests/helpers/harness.ts, in plain ESM so the bench needs no TS loader).
 *
 * Everything a world creates is registered for cleanup, also on Ctrl-C: the tmux server on the
 * private socket is killed by its socket name, the server process by its pid, the temp dir removed.
 * The user's default tmux server and real HOME are never touched.
 */
import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync, createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export const ROOT = resolve(import.meta.dirname, "../..");
/** Where the code under test (dist/, tests/fixtures/, the store worker) is taken from. */
export const SUT = { root: ROOT, snapshot: false };
export const sutPath = (...parts) => join(SUT.root, ...parts);

const cleanups = new Set();

/**
 * Others may rebuild dist/ or edit the fixtures while a bench runs: the run works on a private
 * copy taken at its start, inside the repo (bench-results/, gitignored) so that node_modules
 * still resolves. Removed at exit.
 */
export function snapshot() {
  trapSignals();
  // CS_BENCH_SUT=<checkout>: measure another build (e.g. an older commit, for before/after figures).
  const from = process.env.CS_BENCH_SUT ? resolve(process.env.CS_BENCH_SUT) : ROOT;
  const dir = join(ROOT, "bench-results", `.snapshot-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "tests", "helpers"), { recursive: true });
  cpSync(join(from, "dist"), join(dir, "dist"), { recursive: true });
  cpSync(join(from, "package.json"), join(dir, "package.json"));
  cpSync(join(ROOT, "web"), join(dir, "web"), { recursive: true }); // the web view's page (serve --http)
  cpSync(join(from, "tests", "fixtures"), join(dir, "tests", "fixtures"), { recursive: true });
  cpSync(join(from, "tests", "helpers", "store-worker.mjs"), join(dir, "tests", "helpers", "store-worker.mjs"));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  cleanups.add(remove);
  SUT.root = dir;
  SUT.snapshot = true;
  return dir;
}

/** Runs every registered cleanup (synchronously: also usable from a signal handler). */
export function cleanupAll() {
  for (const fn of [...cleanups].reverse()) {
    try {
      fn();
    } catch {
      /* best effort */
    }
    cleanups.delete(fn);
  }
}

let trapped = false;
function trapSignals() {
  if (trapped) return;
  trapped = true;
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      process.stderr.write(`\nbench: ${sig}: cleaning up\n`);
      cleanupAll();
      process.exit(130);
    });
  }
  process.on("exit", () => cleanupAll());
}

/** Environment of the tmux client commands the bench itself runs (never the user's $TMUX). */
function tmuxEnv(home) {
  return { PATH: process.env.PATH ?? "", HOME: home, LANG: "C.UTF-8" };
}

/**
 * @param {string} name    a label used in the temp dir name
 * @param {Record<string,string>} extraEnv  server environment additions
 */
export function makeWorld(name, extraEnv = {}) {
  trapSignals();
  const root = realpathSync(mkdtempSync(join(tmpdir(), `cs-bench-${name}-`)));
  const home = join(root, "home");
  const stateDir = join(root, "state");
  const work = join(root, "work");
  for (const d of [home, work]) mkdirSync(d, { recursive: true });
  const socket = `cs-bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const env = {
    PATH: [sutPath("tests", "fixtures", "bin"), process.env.PATH ?? ""].join(delimiter),
    HOME: home,
    LANG: "C.UTF-8",
    CLAUDE_SESSIONS_DIR: stateDir,
    CLAUDE_SESSIONS_TMUX_SOCKET: socket,
    CLAUDE_PATH: sutPath("tests", "fixtures", "bin", "claude"),
    CLAUDE_SESSIONS_START_TIMEOUT_MS: "60000",
    CLAUDE_SESSIONS_KILL_GRACE_MS: "2000",
    CLAUDE_SESSIONS_LOG_LEVEL: "info",
    ...extraEnv,
  };
  const servers = new Set();
  const killTmux = () => {
    spawnSync("tmux", ["-L", socket, "kill-server"], { env: tmuxEnv(home), stdio: "ignore" });
    // tmux 3.3 can leave the socket file behind; it is ours (private name), so remove it.
    rmSync(join("/tmp", `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
  };
  const cleanup = () => {
    for (const pid of servers) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    killTmux();
    rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  cleanups.add(cleanup);
  let dirs = 0;
  const w = {
    root,
    home,
    stateDir,
    socket,
    work,
    env,
    /** A fresh directory under the world's work dir. */
    dir(label = "d") {
      const d = join(work, `${label}-${++dirs}`);
      mkdirSync(d, { recursive: true });
      return d;
    },
    eventsPath(id) {
      return join(stateDir, id, "events.jsonl");
    },
    get hookScript() {
      return join(stateDir, "bin", "hook.sh");
    },
    /** A tmux command on the private socket (async, argv only). */
    tmux(args) {
      return new Promise((res, rej) => {
        execFile(
          "tmux",
          ["-L", socket, ...args],
          { encoding: "utf8", env: tmuxEnv(home), maxBuffer: 64 * 1024 * 1024 },
          (err, stdout) => (err ? rej(err) : res(stdout)),
        );
      });
    },
    tmuxServerPid() {
      const r = spawnSync("tmux", ["-L", socket, "display-message", "-p", "#{pid}"], { encoding: "utf8", env: tmuxEnv(home) });
      const n = Number(r.stdout?.trim());
      return Number.isInteger(n) && n > 0 ? n : undefined;
    },
    /** Starts the built server and connects an MCP client to it. */
    async connect(serverEnv = {}) {
      const m = await connect(w, serverEnv);
      if (m.pid) servers.add(m.pid);
      const close = m.close;
      m.close = async () => {
        await close();
        if (m.pid) servers.delete(m.pid);
      };
      return m;
    },
    /** Closes nothing by itself: call after the servers are closed. */
    cleanup() {
      cleanup();
      cleanups.delete(cleanup);
    },
  };
  return w;
}

/** Writes a file in the state dir before the server starts (for pre-filled state). */
export function writeState(w, state) {
  mkdirSync(w.stateDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(w.stateDir, "state.json"), JSON.stringify(state, null, 2) + "\n", { mode: 0o600 });
}

async function connect(w, extraEnv) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    // CS_BENCH_NODE_FLAGS: V8/Node flags for the server process only (e.g. --max-semi-space-size=2).
    // dist/bin.js (dist/cli.js before the entry point was renamed: a CS_BENCH_SUT of an older commit).
    args: [
      ...(process.env.CS_BENCH_NODE_FLAGS ? process.env.CS_BENCH_NODE_FLAGS.split(" ") : []),
      existsSync(sutPath("dist", "bin.js")) ? sutPath("dist", "bin.js") : sutPath("dist", "cli.js"),
    ],
    env: { ...w.env, ...extraEnv },
    stderr: "pipe",
    cwd: w.work,
  });
  const logPath = join(w.root, `server-${Date.now()}.log`);
  const log = createWriteStream(logPath);
  let tail = "";
  let partial = "";
  const lineListeners = new Set();
  transport.stderr?.on("data", (b) => {
    log.write(b);
    const s = b.toString();
    tail = (tail + s).slice(-8000);
    if (!lineListeners.size) return;
    const all = partial + s;
    const cut = all.lastIndexOf("\n");
    partial = cut < 0 ? all : all.slice(cut + 1);
    if (cut >= 0) for (const line of all.slice(0, cut).split("\n")) for (const fn of lineListeners) fn(line);
  });
  const client = new Client({ name: "cs-bench", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    pid: transport.pid ?? undefined,
    logPath,
    stderrTail: () => tail,
    /** Calls fn with every complete line the server writes to stderr from now on. */
    onStderrLine(fn) {
      lineListeners.add(fn);
      return () => lineListeners.delete(fn);
    },
    /** Calls a tool; resolves with {ok, data, error}. Never throws for a tool error (isError). */
    async call(name, args = {}, opts = {}) {
      const res = await client.callTool({ name, arguments: args }, undefined, {
        timeout: opts.timeout ?? 120_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      const text = res.content?.[0]?.text ?? "";
      if (res.isError) {
        let error;
        try {
          error = JSON.parse(text).error;
        } catch {
          error = { code: "UNPARSEABLE", message: text };
        }
        return { ok: false, data: {}, error };
      }
      return { ok: true, data: res.structuredContent ?? {} };
    },
    /** Like call, but a tool error throws (with the server's message). */
    async must(name, args = {}, opts = {}) {
      const r = await this.call(name, args, opts);
      if (!r.ok) throw new Error(`${name} failed: ${r.error?.code}: ${r.error?.message}`);
      return r.data;
    },
    async close() {
      await client.close().catch(() => {});
      log.end();
    },
  };
}
