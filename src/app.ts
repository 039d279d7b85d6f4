/**
 * Composition root: config → logger → store → backends → orchestrator. The MCP server and the CLI
 * both stand on this.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Host } from "./runners/host.js";
import { makeRunners } from "./runners/registry.js";
import { HOOK_SH, PERMISSION_SH, type ScriptPaths } from "./claude/scripts.js";
import { CAPTURE_SH } from "./runners/terminal/capture.js";
import { LAUNCH_SH } from "./runners/terminal/tmux/launcher.js";
import { loadConfig, type Config } from "./config.js";
import { operatorPrices } from "./price-file.js";
import type { SessionError } from "./core/errors.js";
import type { BackendKind } from "./core/events.js";
import { HistoryService } from "./history/service.js";
import { SessionService } from "./sessions/service.js";
import type { Runner } from "./sessions/deps.js";
import { removeStaleHandoffs } from "./store/handoff.js";
import { Store } from "./store/store.js";
import { createLogger, type Logger } from "./util/log.js";
import { assertOwnedDir, installScript, resolveStateDir } from "./util/fs/owned.js";
import { isSafePath } from "./util/proc/shell.js";
import { loadNodes } from "./nodes/config.js";
import { Coordinator } from "./nodes/coordinator.js";
import { forgetMemberEnv } from "./sessions/teams/members.js";
import { packageVersion } from "./util/version.js";

export interface App {
  cfg: Config;
  log: Logger;
  store: Store;
  sessions: SessionService;
  history: HistoryService;
  /** Where each available kind's sessions live (attach, the CLI's checks). */
  hosts: Partial<Record<BackendKind, Host>>;
  version: string;
  /** The other machines of nodes.json (none configured: every call stays here). Links start with start(). */
  nodes: Coordinator;
  close(): Promise<void>;
}

export { packageVersion };

/** Where installScripts puts the scripts (known before they are written: the runners are made meanwhile). */
export function scriptPaths(stateDir: string): ScriptPaths {
  const binDir = join(stateDir, "bin");
  return {
    hook: join(binDir, "hook.sh"),
    launch: join(binDir, "launch.sh"),
    capture: join(binDir, "capture.sh"),
    permission: join(binDir, "permission.sh"),
  };
}

/**
 * Writes the scripts sessions run into `<state>/bin/` (hook.sh: the locked event append; launch.sh: the tmux
 * launcher). They live in the state directory, not the package, so a live session keeps working when the
 * package moves or is upgraded.
 */
export async function installScripts(stateDir: string): Promise<ScriptPaths> {
  const binDir = join(stateDir, "bin");
  await mkdir(binDir, { recursive: true, mode: 0o700 });
  await assertOwnedDir(binDir, "the scripts directory");
  return {
    hook: await installScript(binDir, "hook.sh", HOOK_SH),
    launch: await installScript(binDir, "launch.sh", LAUNCH_SH),
    capture: await installScript(binDir, "capture.sh", CAPTURE_SH),
    permission: await installScript(binDir, "permission.sh", PERMISSION_SH),
  };
}

export async function createApp(env: NodeJS.ProcessEnv = process.env, opts: { adopt?: boolean } = {}): Promise<App> {
  const cfg = loadConfig(env);
  forgetMemberEnv(env);
  // A bad operator price file stops the server here, naming the entry: a budget must never rest on a price ignored.
  operatorPrices(cfg.pricesFile);
  const log = createLogger({ level: cfg.logLevel, ...(cfg.logFile ? { file: cfg.logFile } : {}) });
  if (!isSafePath(cfg.stateDir)) {
    throw new Error(
      `CLAUDE_SESSIONS_DIR must be an absolute path without quotes, '#', '$', ';', '\`', backslashes or control characters ` +
        `(got ${JSON.stringify(cfg.stateDir)})`,
    );
  }
  // Ours or refused (and the way to it): a directory another user can write could swap the scripts sessions run.
  // Resolved once: from here on only its real path is used.
  cfg.stateDir = await resolveStateDir(cfg.stateDir);
  if (!isSafePath(cfg.stateDir))
    throw new Error(
      `the state directory's real path ${JSON.stringify(cfg.stateDir)} has characters a path the server writes into scripts must not have`,
    );
  // Every runner kind of the registry; whether each can run here (tmux -V: a process, ~10 ms quiet, far more under
  // load) is asked while the state and the scripts are prepared.
  const made = makeRunners({ cfg, log, scripts: scriptPaths(cfg.stateDir) });
  const probes = Promise.all(made.map((r) => r.available()));
  const store = new Store(cfg.stateDir, log);
  const state = await store.read(); // creates the file with its mode
  // Environment hand-offs (secrets) left by a server that died before its launcher read them.
  const removed = await removeStaleHandoffs(
    cfg.stateDir,
    (id) => Object.hasOwn(state.sessions, id) && state.sessions[id]!.status === "starting",
  );
  if (removed.length) log.warn(`removed ${removed.length} leftover environment hand-off file(s): ${removed.join(", ")}`);
  const scripts = await installScripts(cfg.stateDir);
  const runners: Partial<Record<BackendKind, Runner>> = {};
  const unavailable: Partial<Record<BackendKind, SessionError>> = {};
  const why = await probes;
  made.forEach((r, i) => {
    const no = why[i];
    if (!no) runners[r.kind] = r;
    else {
      log.warn(`${r.kind} sessions are unavailable: ${no.message}`);
      unavailable[r.kind] = no;
    }
  });
  // The transcript index syncs in a worker thread when a history query first needs it (and again when it is
  // stale); nothing else waits for it.
  const history = new HistoryService({
    stateDir: cfg.stateDir,
    retention: { keep: cfg.historyKeep, maxAgeMs: cfg.historyMaxAgeDays * 86_400_000 },
    configDir: cfg.claudeConfigDir,
    managed: async () => new Map(Object.values((await store.read()).sessions).map((r) => [r.claude_session_id, r.session_id])),
  });
  const sessions = new SessionService({ cfg, store, log, scripts, runners, unavailable, history });
  if (opts.adopt !== false) await sessions.adopt();
  const version = packageVersion();
  const nodes = new Coordinator(await loadNodes(cfg.nodesFile, cfg.stateDir), log, version);
  nodes.useService(sessions);
  return {
    cfg,
    log,
    store,
    sessions,
    history,
    hosts: Object.fromEntries(Object.values(runners).map((r) => [r.kind, r.host])),
    version,
    nodes,
    async close() {
      await nodes.close();
      // PTY sessions end with this process: end them first so their SessionEnd and exit land in the logs,
      // then let the orchestrator fold and save those last events. Each is the server's own end in the audit log.
      const t0 = Date.now();
      const ending: string[] = [];
      const all = Object.values(runners);
      for (const b of all.map((r) => r.host)) {
        if (b.survivesRestart) continue;
        for (const [id, l] of await b.list().catch(() => new Map<string, { alive: boolean }>())) if (l.alive) ending.push(id);
      }
      // Issue #23: those with a conversation are hibernated, not dead: the next server wakes them on the next prompt.
      await sessions.hibernateAtShutdown(ending).catch((e: unknown) => log.warn(`hibernating at shutdown: ${String(e)}`));
      // Sessions that end with this process end here (a pty's, a headless one's); the others' hosts are released last.
      await Promise.all(
        all
          .filter((r) => !r.caps.survivesRestart)
          .map((r) => r.close().catch((e: unknown) => log.warn(`closing ${r.kind} sessions: ${String(e)}`))),
      );
      for (const id of ending)
        void sessions.audit.record({ tool: "kill_session", session_id: id, actor: "server:shutdown", since: t0 });
      await sessions.close(); // after the audit lines: it waits for them to be written
      await history.close().catch((e: unknown) => log.warn(`closing the history index: ${String(e)}`));
      for (const r of all.filter((r) => r.caps.survivesRestart))
        await r.close().catch((e: unknown) => log.warn(`closing ${r.kind}: ${String(e)}`));
    },
  };
}
