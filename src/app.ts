/**
 * Composition root: config → logger → store → backends → orchestrator. The MCP server and the CLI
 * both stand on this.
 */
import { readFileSync } from "node:fs";
import type { Backend, BackendKind } from "./backends/backend.js";
import { LazyBackend } from "./backends/lazy.js";
import { TmuxBackend } from "./backends/tmux.js";
import { installScripts } from "./claude/scripts.js";
import { loadConfig, type Config } from "./config.js";
import { Orchestrator } from "./sessions/orchestrator.js";
import { removeStaleHandoffs } from "./store/handoff.js";
import { Store } from "./store/store.js";
import { createLogger, type Logger } from "./util/log.js";
import { isSafePath } from "./util/shell.js";

export interface App {
  cfg: Config;
  log: Logger;
  store: Store;
  orch: Orchestrator;
  backends: Partial<Record<BackendKind, Backend>>;
  version: string;
  close(): Promise<void>;
}

export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
}

async function tmuxAvailable(b: TmuxBackend): Promise<boolean> {
  try {
    await b.version();
    return true;
  } catch {
    return false;
  }
}

export async function createApp(env: NodeJS.ProcessEnv = process.env, opts: { adopt?: boolean } = {}): Promise<App> {
  const cfg = loadConfig(env);
  const log = createLogger({ level: cfg.logLevel, ...(cfg.logFile ? { file: cfg.logFile } : {}) });
  if (!isSafePath(cfg.stateDir)) {
    throw new Error(`CLAUDE_SESSIONS_DIR must be an absolute path without quotes, '#', '$', '\`' or backslashes (got ${JSON.stringify(cfg.stateDir)})`);
  }
  const store = new Store(cfg.stateDir, log);
  const state = await store.read(); // creates the directory and file with their modes
  // Environment hand-offs (secrets) left by a server that died before its launcher read them.
  const removed = await removeStaleHandoffs(cfg.stateDir, (id) => Object.hasOwn(state.sessions, id) && state.sessions[id]!.status === "starting");
  if (removed.length) log.warn(`removed ${removed.length} leftover environment hand-off file(s): ${removed.join(", ")}`);
  const scripts = await installScripts(cfg.stateDir);
  const backends: Partial<Record<BackendKind, Backend>> = {};
  const tmux = new TmuxBackend({
    tmuxPath: cfg.tmuxPath,
    hookScript: scripts.hook,
    ...(cfg.tmuxSocketName ? { socketName: cfg.tmuxSocketName } : {}),
    ...(cfg.tmuxSocketPath ? { socketPath: cfg.tmuxSocketPath } : {}),
  });
  if (await tmuxAvailable(tmux)) backends.tmux = tmux;
  else log.warn("tmux was not found: tmux sessions are unavailable");
  // node-pty is an optional native addon, loaded on the first pty session: when it is missing or was
  // built for another Node, only pty goes, with the reason in the error.
  backends.pty = new LazyBackend("pty", false, async () => {
    const { PtyBackend } = await import("./backends/pty.js");
    return new PtyBackend({ hookScript: scripts.hook, log });
  });
  const orch = new Orchestrator(cfg, store, backends, scripts, log);
  if (opts.adopt !== false) await orch.adopt();
  const version = packageVersion();
  return {
    cfg,
    log,
    store,
    orch,
    backends,
    version,
    async close() {
      // PTY sessions end with this process: end them first so their SessionEnd and exit land in the logs,
      // then let the orchestrator fold and save those last events.
      await backends.pty?.close?.().catch((e: unknown) => log.warn(`closing pty sessions: ${String(e)}`));
      await orch.close();
      await backends.tmux?.close?.();
    },
  };
}
