/**
 * claude-sessions: with no subcommand (or `serve`), an MCP server on stdio. A few human commands
 * share the same core: ls, start, run, resume, send, attach, tail, kill, doctor (the work commands in src/cli).
 */
import { spawnSync } from "node:child_process";
import { userInfo } from "node:os";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { resolveStateDir } from "../util/fs/owned.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { BoundedStdioServerTransport } from "../server/mcp/stdio.js";
import type { Held } from "../server/mcp/hold.js";
import * as api from "../api/index.js";
import { createApp, packageVersion } from "../app.js";
import { prefetchVersion } from "../sessions/launch/options.js";
import { loadConfig, takeOperatorToken } from "../config.js";
import { parseSince, readAudit } from "../store/audit.js";
import { healthChecks } from "../server/health.js";
import { actorPart, callTool } from "../server/call.js";
import { createServer } from "../server/server.js";
import { killSession } from "../server/tools/core/kill-session.js";
import { moveSession } from "../server/tools/move-session.js";
import { Store } from "../store/store.js";
import { createLogger } from "../util/log.js";
import { safeText } from "../util/terminal-text.js";
import { toSessionError } from "../core/errors.js";
import { formatNodeLine, nodeReport, remoteAttachArgv } from "./nodes.js";
import { accountLines } from "./accounts.js";
import { NODES_ADD_HELP, NODES_UPGRADE_HELP, runNodesAdd, runNodesUpgrade } from "./nodes-add.js";
import { loadNodes } from "../nodes/config.js";
import { listSessions } from "../server/tools/core/list-sessions.js";
import { lsLines } from "./ls.js";
import { isWorkCommand, runWorkCommand, WORK_HELP } from "./work.js";
import { ATTEMPT_HELP, isAttemptCommand, runAttemptCommand } from "./attempts.js";
import { startMemberSocket } from "../server/member/socket.js";
import { startServerAutomations } from "./automations.js";
import { automationChecks } from "../automations/health.js";
import { runWebhooksCommand, WEBHOOKS_HELP } from "./webhooks.js";
import { runScheduleCommand, SCHEDULE_HELP } from "./schedule.js";
import { runServiceCommand, SERVICE_HELP } from "./service.js";
import { HISTORY_COMMANDS, HISTORY_HELP, runHistoryCommand, type HistoryCommand } from "./history.js";

const HELP = `claude-sessions ${packageVersion()}: run many interactive Claude Code sessions side by side

Usage:
  claude-sessions                 serve MCP over stdio (what an MCP client runs)
  claude-sessions serve           the same
  claude-sessions serve --http [HOST:]PORT [--allow-remote]
                                  serve MCP over Streamable HTTP at /mcp and the web view at /
                                  (default 127.0.0.1:8914; token: CLAUDE_SESSIONS_TOKEN or <state>/token)
  claude-sessions ls [--all]      list sessions (live ones unless --all): node, id, status, backend, cost, cwd
${WORK_HELP}
${ATTEMPT_HELP}
  claude-sessions attach <id>     attach to a session's tmux pane (detach with C-b d)
  claude-sessions tail <id> [-f]  print the session's conversation (follow with -f)
  claude-sessions kill <id> [--force]
  claude-sessions move <id> <node>  carry an idle or hibernated session to another node (or "local"; see docs/nodes.md)
  claude-sessions accounts        each account of CLAUDE_SESSIONS_ACCOUNTS: its sessions, limited until when, its 5h/7d use
  claude-sessions nodes           reach every node of nodes.json once: link, version, health, sessions
${NODES_ADD_HELP}
${NODES_UPGRADE_HELP}
  claude-sessions doctor          check tmux, claude, flock, doppler, the sandbox, the state directory (as health_check)
  claude-sessions audit [--since <date|15m|2h|7d>]   print the audit log of state-changing tool calls
  claude-sessions member          a team session's own MCP server (its Claude Code starts it; see docs/teams.md)
${HISTORY_HELP}
${WEBHOOKS_HELP}
${SCHEDULE_HELP}
${SERVICE_HELP}
  claude-sessions --version | --help

Configuration (environment): CLAUDE_SESSIONS_DIR, CLAUDE_PATH, CLAUDE_SESSIONS_TMUX_SOCKET,
MAX_CONCURRENT_SESSIONS, MAX_SESSION_DURATION, CLAUDE_SESSIONS_START_TIMEOUT_MS, CLAUDE_SESSIONS_ALLOW_BYPASS,
DOPPLER_PATH, DOPPLER_PROJECT, DOPPLER_CONFIG, CLAUDE_SESSIONS_LOG_LEVEL, CLAUDE_SESSIONS_LOG_FILE,
CLAUDE_SESSIONS_IDLE_TTL_MS, CLAUDE_SESSIONS_BUSY_MAX_MS, CLAUDE_SESSIONS_RETAIN_DEAD_MS, CLAUDE_SESSIONS_ALLOW_CONFIGURE,
CLAUDE_SESSIONS_ALLOW_SENSITIVE, CLAUDE_SESSIONS_AUDIT_MAX_BYTES, CLAUDE_SESSIONS_NODES, CLAUDE_SESSIONS_WEB_ROOTS (see docs/configuration.md).`;

/** What cli/serve-early.ts made before the server: the shell, connected, and the calls it holds until served. */
export interface EarlyStdio {
  server: Server;
  transport: BoundedStdioServerTransport;
  held: Held;
}

export async function serve(early?: EarlyStdio): Promise<void> {
  const app = await createApp();
  const automations = await Promise.resolve()
    .then(() => startServerAutomations(app))
    .catch(async (e: unknown) => {
      await app.close();
      throw e;
    });
  const server = createServer(app.sessions, app.log, app.version, {
    transport: "stdio",
    router: app.nodes,
    ...(early ? { shell: early.server } : {}),
  });
  app.nodes.start();
  // Team members' own MCP servers reach this server here (issue 25).
  const members = await startMemberSocket(app.sessions, app.log).catch((e: unknown) =>
    app.log.warn(`member socket not started: ${String(e)}`),
  );
  const transport = early?.transport ?? new BoundedStdioServerTransport();
  // What the transport could not take (a line that is no JSON-RPC message, one over the size limit): logged, not fatal.
  server.onerror = (e) => app.log.warn(`stdio: ${e.message}`);
  let closing = false;
  const shutdown = async (why: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`shutting down (${why})`);
    const force = setTimeout(() => process.exit(0), 10_000);
    force.unref();
    await members?.close().catch(() => {});
    await automations.close().catch((e: unknown) => app.log.error(String(e)));
    await app.close().catch((e) => app.log.error(String(e)));
    await server.close().catch(() => {});
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.stdin.on("end", () => void shutdown("stdin closed"));
  process.stdin.on("close", () => void shutdown("stdin closed"));
  if (early) {
    // Connected already: the close handler the server set stays, ours is added; then the held calls reach it.
    const onclose = transport.onclose;
    transport.onclose = () => {
      onclose?.();
      void shutdown("transport closed");
    };
    early.held.release();
    if (early.held.closed) void shutdown("stdin closed");
  } else {
    transport.onclose = () => void shutdown("transport closed");
    await server.connect(transport);
  }
  prefetchVersion(app.cfg);
  app.log.info(`serving MCP on stdio (state ${app.cfg.stateDir}, backends: ${Object.keys(app.hosts).join(", ") || "none"})`);
}

async function serveHttp(args: string[]): Promise<void> {
  const i = args.indexOf("--http");
  const spec = args[i + 1] !== undefined && !args[i + 1]!.startsWith("--") ? args[i + 1] : undefined;
  const unknown = args.filter((a, k) => a !== "--http" && a !== "--allow-remote" && !(k === i + 1 && spec !== undefined));
  if (unknown.length) throw new Error(`serve: unknown argument ${JSON.stringify(unknown[0])}\n\n${HELP}`);
  // Loaded only here: the HTTP transport and the web view are memory a stdio server never needs.
  const { parseListen, startHttp } = await import("../server/http/index.js");
  const { loadToken } = await import("../server/http/token.js");
  const listen = parseListen(spec);
  const app = await createApp();
  const { webRoots, httpMaxClients: maxClients, httpIdleMs: idleMs } = app.cfg;
  const limits = { maxClients, idleMs };
  const automations = await Promise.resolve()
    .then(() => startServerAutomations(app))
    .catch(async (e: unknown) => {
      await app.close();
      throw e;
    });
  const token = await loadToken(app.cfg.stateDir, takeOperatorToken());
  const http = await startHttp(app.sessions, app.log, app.version, {
    ...listen,
    token: token.value,
    allowRemote: args.includes("--allow-remote"),
    limits,
    router: app.nodes,
    webRoots,
  }).catch(async (e: unknown) => {
    await app.close();
    throw e;
  });
  app.nodes.start();
  prefetchVersion(app.cfg);
  const members = await startMemberSocket(app.sessions, app.log).catch((e: unknown) =>
    app.log.warn(`member socket not started: ${String(e)}`),
  );
  process.stderr.write(`claude-sessions: serving MCP at ${http.url}/mcp and the web view at ${http.url}/\n`);
  process.stderr.write(`claude-sessions: the bearer token is ${token.path ? `in ${token.path}` : "CLAUDE_SESSIONS_TOKEN"}\n`);
  let closing = false;
  const shutdown = async (why: string) => {
    if (closing) return;
    closing = true;
    app.log.info(`shutting down (${why})`);
    setTimeout(() => process.exit(0), 10_000).unref();
    await members?.close().catch(() => {});
    await http.close().catch(() => {});
    await automations.close().catch((e: unknown) => app.log.error(String(e)));
    await app.close().catch((e) => app.log.error(String(e)));
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

/** Everything the human commands print: control and invisible characters escaped (util/terminal-text.ts). */
function print(v: unknown): void {
  process.stdout.write(safeText(typeof v === "string" ? v : JSON.stringify(v, null, 2)) + "\n");
}

const isHistoryCommand = (cmd: string): cmd is HistoryCommand => (HISTORY_COMMANDS as readonly string[]).includes(cmd);

async function human(cmd: string, args: string[]): Promise<number> {
  if (cmd === "doctor") return await doctor();
  if (cmd === "audit") return await audit(args);
  if (cmd === "service") return runServiceCommand(args, loadConfig().stateDir, print);
  if (cmd === "nodes" && args[0] === "add") {
    const cfg = loadConfig();
    return await runNodesAdd(args.slice(1), { nodesFile: cfg.nodesFile, stateDir: await resolveStateDir(cfg.stateDir) }, print);
  }
  if (cmd === "nodes" && args[0] === "upgrade") {
    const cfg = loadConfig();
    return await runNodesUpgrade(
      args.slice(1),
      { nodesFile: cfg.nodesFile, stateDir: await resolveStateDir(cfg.stateDir), version: packageVersion() },
      print,
    );
  }
  if (cmd === "webhooks") return await runWebhooksCommand(args, await resolveStateDir(loadConfig().stateDir), print);
  if (isHistoryCommand(cmd)) {
    const cfg = loadConfig();
    const stateDir = await resolveStateDir(cfg.stateDir);
    print(await runHistoryCommand(cmd, args, { stateDir, configDir: cfg.claudeConfigDir }));
    return 0;
  }
  if (isAttemptCommand(cmd)) {
    const cfg = loadConfig();
    cfg.stateDir = await resolveStateDir(cfg.stateDir);
    let app: Awaited<ReturnType<typeof createApp>> | undefined;
    try {
      return await runAttemptCommand(cmd, args, {
        actor: cliActor(),
        out: process.stdout,
        cfg,
        app: async () => (app ??= await createApp()),
      });
    } finally {
      await app?.close();
    }
  }
  const app = await createApp(process.env, { adopt: cmd === "ls" });
  try {
    if (isWorkCommand(cmd))
      return await runWorkCommand(cmd, args, { app, actor: cliActor(), out: process.stdout, err: process.stderr });
    if (cmd === "schedule") return await runScheduleCommand(args, app, cliActor(), print);
    switch (cmd) {
      case "ls": {
        const input = api.listInput.parse({ status_filter: args.includes("--all") ? "all" : "active" });
        // With nodes configured, every machine's sessions (a node column first).
        if (app.nodes.links.size) app.nodes.start();
        const listed = app.nodes.links.size ? await app.nodes.invoke(listSessions, app.sessions, input, {}) : undefined;
        const res = listed?.ok ? (listed.value as api.ListOutput) : await app.sessions.list(input);
        for (const l of lsLines(res, process.stdout.isTTY === true)) print(l);
        return 0;
      }
      case "accounts": {
        for (const l of await accountLines(app.cfg.accountsFile, app.cfg.stateDir, app.store)) print(l);
        return 0;
      }
      case "nodes": {
        if (!app.nodes.links.size) print("no nodes configured (CLAUDE_SESSIONS_NODES or <state>/nodes.json)");
        const lines = await nodeReport(app.nodes);
        for (const n of lines) print(formatNodeLine(n, packageVersion()));
        return lines.every((n) => n.status === "reachable") ? 0 : 1;
      }
      case "attach": {
        const id = args[0];
        if (!id) throw new Error("usage: claude-sessions attach <id>");
        const rec = await app.store.get(api.sessionId.parse(id));
        const remote = rec ? undefined : await remoteAttachArgv(app.nodes, app.sessions, id);
        const [file, ...rest] = (rec ? app.hosts[rec.backend]?.attachArgv?.(rec.session_id) : remote) ?? [];
        if (!file)
          throw new Error(
            rec
              ? `session ${id} runs on the ${rec.backend} backend, which cannot be attached to (use tail or stream_output)`
              : `no session with id ${JSON.stringify(id)}`,
          );
        const r = spawnSync(file, rest, { stdio: "inherit" });
        return r.status ?? 1;
      }
      case "tail": {
        const id = args[0];
        if (!id) throw new Error("usage: claude-sessions tail <id> [-f]");
        let cursor: string | undefined;
        const follow = args.includes("-f");
        do {
          const res = await app.sessions.stream(
            api.streamInput.parse({
              session_id: id,
              mode: "transcript",
              ...(cursor ? { cursor } : {}),
              follow: cursor !== undefined && follow,
              timeout_ms: 60_000,
            }),
          );
          for (const it of res.items ?? []) print(`${it.role === "user" ? "❯" : "●"} ${it.text}\n`);
          cursor = res.cursor;
        } while (follow);
        return 0;
      }
      case "kill": {
        const id = args[0];
        if (!id) throw new Error("usage: claude-sessions kill <id> [--force]");
        print(
          await callTool(app.sessions, killSession, { session_id: id, force: args.includes("--force") }, { actor: cliActor() }),
        );
        return 0;
      }
      case "move": {
        const [id, node] = args;
        if (!id || !node) throw new Error("usage: claude-sessions move <id> <node>");
        app.nodes.start();
        print(await callTool(app.sessions, moveSession, { session_id: id, node }, { actor: cliActor() }, { router: app.nodes }));
        return 0;
      }
      default:
        process.stderr.write(`unknown command ${safeText(JSON.stringify(cmd))}\n\n${HELP}\n`);
        return 2;
    }
  } finally {
    await app.close();
  }
}

/** The audit log's actor for the CLI's state-changing commands: the unix user who ran it. */
function cliActor(): string {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = `uid-${process.getuid?.() ?? "?"}`;
  }
  return `cli:${actorPart(name)}`;
}

async function doctor(): Promise<number> {
  const cfg = loadConfig();
  const node = process.versions.node.split(".").map(Number);
  const nodeOk = (node[0] ?? 0) >= 24 || ((node[0] ?? 0) === 22 && (node[1] ?? 0) >= 22);
  print(`${nodeOk ? "ok  " : "down"} node: ${process.versions.node}`);
  // The same checks as the health_check tool; the store's only when state.json exists (doctor creates nothing).
  const store = existsSync(join(cfg.stateDir, "state.json"))
    ? new Store(cfg.stateDir, createLogger({ level: "error" }))
    : undefined;
  const h = await healthChecks({ cfg, version: packageVersion(), ...(store ? { store } : {}) });
  // Schedules and webhooks fire only in a serving process: whether one runs them, and whether the endpoints file reads.
  const automations = await automationChecks(cfg.stateDir, cfg.webhooksFile, createLogger({ level: "error" }));
  for (const c of [...h.checks, ...automations]) print(`${c.status.padEnd(4)} ${c.name}: ${c.detail}`);
  // nodes.json is read at start-up: a bad one stops the server, so say so here (`claude-sessions nodes` reaches them).
  const nodes = await loadNodes(cfg.nodesFile, cfg.stateDir).then(
    (n) => ({
      ok: true,
      detail: n.length
        ? `${n.length} configured (${n.map((x) => x.name).join(", ")}); claude-sessions nodes reaches them`
        : "none configured",
    }),
    (e: unknown) => ({ ok: false, detail: e instanceof Error ? e.message : String(e) }),
  );
  print(`${nodes.ok ? "ok  " : "down"} nodes: ${nodes.detail}`);
  const status =
    !nodeOk || !nodes.ok || automations.some((c) => c.status === "down")
      ? "down"
      : automations.some((c) => c.status === "degraded") && h.status === "ok"
        ? "degraded"
        : h.status;
  print(`status: ${status} (state directory ${cfg.stateDir})`);
  return status !== "down" ? 0 : 1;
}

async function audit(args: string[]): Promise<number> {
  const cfg = loadConfig();
  const i = args.indexOf("--since");
  const raw = i >= 0 ? args[i + 1] : undefined;
  const since = raw !== undefined ? parseSince(raw) : undefined;
  if (i >= 0 && !since) throw new Error("usage: claude-sessions audit [--since <ISO date | 90s | 15m | 2h | 7d>]");
  for (const l of await readAudit(cfg.stateDir, since)) print(JSON.stringify(l));
  return 0;
}

async function main(): Promise<void> {
  const [cmd, ...args] = process.argv.slice(2);
  if (cmd === "--version" || cmd === "-v") return print(packageVersion());
  if (cmd === "--help" || cmd === "-h" || cmd === "help") return print(HELP);
  if (cmd === "serve" && args.includes("--http")) return serveHttp(args);
  if (cmd === undefined || cmd === "serve") return serve();
  process.exitCode = await human(cmd, args);
}

/** A command's failure: its message on stderr, exit status 1. */
export function fail(e: unknown): never {
  const err = toSessionError(e);
  process.stderr.write(
    safeText(`claude-sessions: ${err.code === "INTERNAL" ? err.message : `${err.code}: ${err.message}\n${err.suggestion}`}`) +
      "\n",
  );
  process.exit(1);
}

/** Runs the command of process.argv (bin.ts, or cli/serve-early.ts when it cannot start the server early). */
export async function runCli(): Promise<void> {
  await main().catch(fail);
}
