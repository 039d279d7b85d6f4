/**
 * Server configuration, read once from the environment. Every knob has a default that works on a
 * person's machine; tests point the state dir and the tmux socket somewhere private.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { SessionError } from "./core/errors.js";
import { BACKEND_KINDS, type BackendKind } from "./core/events.js";
import {
  DEFAULT_PERMISSION_TIMEOUT_MS,
  isPermissionMode,
  PERMISSION_MODES,
  SERVER_DEFAULT_PERMISSION_MODE,
  type PermissionModeName,
} from "./core/modes.js";
import type { Level } from "./util/log.js";
import { parseList } from "./util/proc/programs.js";
import { parseRootList } from "./util/fs/root-list.js";

/** The operator's list of directories sessions may work in. */
export const ROOTS_ENV = "CLAUDE_SESSIONS_ROOTS";

/** CLAUDE_SESSIONS_TOOLSETS: the toolsets a server offers (src/server/toolsets.ts). */
export const TOOLSET_NAMES = ["all", "core", "context", "teams", "history", "admin", "automations"] as const;
export type ToolsetName = (typeof TOOLSET_NAMES)[number];

/** A comma list of toolset names (empty: all); an unknown name stops the server at start. */
export function parseToolsets(v: string | undefined): ToolsetName[] {
  const names = (v ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
  const bad = names.filter((n) => !(TOOLSET_NAMES as readonly string[]).includes(n));
  if (bad.length)
    throw new Error(
      `CLAUDE_SESSIONS_TOOLSETS: unknown toolset ${bad.map((b) => JSON.stringify(b)).join(", ")} (the toolsets are ${TOOLSET_NAMES.join(", ")})`,
    );
  return names.length ? (names as ToolsetName[]) : ["all"];
}

export const SANDBOX_MODES = ["off", "on", "required"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export interface Config {
  stateDir: string;
  /** CLAUDE_SESSIONS_TOOLSETS: the toolsets tools/list offers (default all). */
  toolsets: ToolsetName[];
  /** Claude Code's configuration directory (CLAUDE_CONFIG_DIR, as the CLI reads it; else ~/.claude): transcripts live under it. */
  claudeConfigDir: string;
  /** CLAUDE_SESSIONS_ACCOUNTS: the operator's accounts file (src/claude/accounts.ts), read at each start that names one. */
  accountsFile?: string | undefined;
  /** The tmux program (CLAUDE_SESSIONS_TMUX); unset: the tmux runner's default, tmux on PATH. */
  tmuxPath?: string;
  tmuxSocketName?: string;
  tmuxSocketPath?: string;
  claudePath?: string;
  dopplerPath?: string;
  dopplerProject?: string;
  dopplerConfig?: string;
  defaultBackend?: BackendKind;
  maxSessions: number;
  maxSessionDurationMs: number;
  maxMessageChars: number;
  startTimeoutMs: number;
  /** CLAUDE_SESSIONS_WARM_POOL: headless sessions kept started per run_task cwd and options (0: none). */
  warmPool: number;
  killGraceMs: number;
  allowBypassPermissions: boolean;
  /** CLAUDE_SESSIONS_ALLOW_BYPASS=sandboxed: bypassPermissions only for sandboxed sessions ("YOLO in a box"). */
  allowBypassSandboxed: boolean;
  /** CLAUDE_SESSIONS_SANDBOX: off (default; a caller may still ask for one), on (every session unless it asks for none), required (none may opt out). */
  sandbox: SandboxMode;
  /** CLAUDE_SESSIONS_SANDBOX_HOSTS: what a sandboxed session may reach (host, host:port, *.domain, IP literals), checked at each sandboxed start. */
  sandboxHosts: string[];
  /** CLAUDE_SESSIONS_SECRET_HOSTS: a JSON file naming the hosts each secret's real value may be sent to (read at each sandboxed start). */
  secretHostsFile?: string | undefined;
  /** CLAUDE_SESSIONS_SANDBOX_CA_FILE: PEM roots a sandbox's proxy also trusts upstream (and its trust bundle holds). */
  sandboxCaFile?: string | undefined;
  /**
   * CLAUDE_SESSIONS_SANDBOX_PLAINTEXT_API: a sandboxed session's API key may be put back on a plain-HTTP
   * ANTHROPIC_BASE_URL that is not loopback (a gateway on a private network; the key then crosses it in cleartext).
   */
  sandboxPlaintextApi: boolean;
  /**
   * CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE: the mode of sessions started without permission_mode (default
   * "default"), always passed to the CLI explicitly. bypassPermissions still needs CLAUDE_SESSIONS_ALLOW_BYPASS.
   */
  defaultPermissionMode: PermissionModeName;
  /** CLAUDE_SESSIONS_ALLOW_AUTOUPDATE: leave the CLI's auto-updater on (by default sessions get DISABLE_AUTOUPDATER=1). */
  allowAutoupdate: boolean;
  /** CLAUDE_SESSIONS_ALLOW_BASH_MODE: callers may send shell commands through Claude Code's bash mode. */
  allowBashMode: boolean;
  /**
   * CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS: how long a terminal session's PermissionRequest hook waits for
   * respond_permission before Claude falls back to its on-screen dialog (0: no hook, the dialog only); a headless
   * session's unanswered request is denied after it (0: the default, DEFAULT_PERMISSION_TIMEOUT_MS).
   */
  permissionTimeoutMs: number;
  /** CLAUDE_SESSIONS_HISTORY_KEEP: the execution history keeps this many newest records (default 10,000). */
  historyKeep: number;
  /** CLAUDE_SESSIONS_HISTORY_MAX_AGE_DAYS: and none older than this many days (0, the default: no age limit). */
  historyMaxAgeDays: number;
  /**
   * CLAUDE_SESSIONS_UNKNOWN_SCREEN_MS: a turn whose screen shows neither work nor the input box nor a known prompt, with
   * no hook for this long, is reported as blocked (kind unknown) instead of staying busy until the caller's time-out.
   */
  unknownScreenMs: number;
  /** CLAUDE_SESSIONS_ALLOW_SETUP_SHELL: start_session's setup_command may be a shell command line (run with /bin/sh -c). */
  allowSetupShell: boolean;
  /** CLAUDE_SESSIONS_SETUP_COMMANDS: the programs (names or absolute paths) a setup_command may run; none by default. */
  setupCommands: string[];
  /** CLAUDE_SESSIONS_CHECKS: the operator's checks file (JSON) for fan_out and merge_worktree (issue 34). */
  checksFile?: string | undefined;
  /** CLAUDE_SESSIONS_MAX_FAN_OUT: the most sessions one fan_out may start (default 8). */
  maxFanOut: number;
  /** CLAUDE_SESSIONS_ALLOW_MCP_SERVERS: headless mcp_servers may start any program (stdio servers). */
  allowMcpServers: boolean;
  /** CLAUDE_SESSIONS_MCP_COMMANDS: the programs a headless stdio MCP server may be (without the switch above). */
  mcpCommands: string[];
  /** CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE (default on; 0 turns it off): callers may pass trust_workspace: true. */
  allowTrustWorkspace: boolean;
  /** CLAUDE_SESSIONS_ALLOW_ENV: variables of the refused kind (sessions/gates.ts) a caller's env may still set. */
  allowEnv: string[];
  /** CLAUDE_SESSIONS_PERMISSION_MODES: the permission modes callers may choose (unset: all; bypass also needs its switch). */
  permissionModes?: string[];
  /** CLAUDE_SESSIONS_ALLOW_TOOL_RULES (default on; 0 turns it off): callers may pass allowed_tools. */
  allowToolRules: boolean;
  /** CLAUDE_SESSIONS_ALLOW_ADD_DIRS (default on; 0 turns it off): callers may pass add_dirs. */
  allowAddDirs: boolean;
  cols: number;
  rows: number;
  logLevel: Level;
  /** CLAUDE_SESSIONS_EVENTS_MAX_BYTES: a session's events log past this is compacted into a snapshot (one archive kept). */
  eventsMaxBytes: number;
  /** CLAUDE_SESSIONS_OUTPUT_LOG_MAX_BYTES: a session's raw output past this moves to output.log.1 (one archive kept). */
  outputLogMaxBytes: number;
  /** CLAUDE_SESSIONS_STRICT_RESULTS (tests): a tool result that does not match its output schema is an INTERNAL error. */
  strictResults: boolean;
  logFile?: string;
  /** CLAUDE_SESSIONS_IDLE_TTL_MS: an idle session ends gracefully after this long (still resumable); 0 = never. */
  idleTtlMs: number;
  /** CLAUDE_SESSIONS_HIBERNATE_AFTER_MS: an idle session is hibernated (process ended, woken by the next prompt) after this long; 0 = never. */
  hibernateAfterMs: number;
  /**
   * CLAUDE_SESSIONS_ON_LIMIT: what a session does when a turn hits a usage limit: wait (parked, woken after the reset),
   * fail (stays idle, limited), or switch_account (a session under an account continues at once on another account
   * with room, its prompt sent there; none with room: wait).
   */
  onLimit: "wait" | "fail" | "switch_account";
  /**
   * CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN: the fleet's wakes after a limit, at most this many a minute, evenly spaced
   * (every server on the state dir together).
   */
  limitWakesPerMin: number;
  /** CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS: how long a limit with no reset time (an API key's 429) is waited out. */
  limitRateWaitMs: number;
  /** CLAUDE_SESSIONS_LIMIT_JITTER_MS: a parked session is woken at resets_at plus a random delay up to this. */
  limitJitterMs: number;
  /** CLAUDE_SESSIONS_MAX_LIVE: a start or wake past this many live processes hibernates the least recently used idle session; 0 = no limit. */
  maxLive: number;
  /**
   * CLAUDE_SESSIONS_WAKE_ANYWHERE (a coordinator's, with nodes): a prompt to a hibernated session whose machine is full
   * (MAX_LIVE, or MAX_CONCURRENT_SESSIONS) moves it to the machine with room first, and it wakes there; off: it wakes where it is.
   */
  wakeAnywhere: boolean;
  /** CLAUDE_SESSIONS_BUSY_MAX_MS: a turn busy longer than this is interrupted and flagged; 0 = never. */
  busyMaxMs: number;
  /** CLAUDE_SESSIONS_MAX_QUEUE: prompts a session holds with `queue: true` while a turn runs; past it QUEUE_FULL. */
  maxQueue: number;
  /** CLAUDE_SESSIONS_MEMBER_MESSAGES_PER_MIN: prompts one team member may send (message_teammate, handoff) per minute; 0 = no limit. */
  memberMessagesPerMin: number;
  /** CLAUDE_SESSIONS_RETAIN_DEAD_MS: records of sessions dead longer than this are pruned with their directories; 0 = never. */
  retainDeadMs: number;
  /** CLAUDE_SESSIONS_ALLOW_CONFIGURE: the configure tool may change settings at run time. */
  allowConfigure: boolean;
  /** CLAUDE_SESSIONS_ALLOW_SENSITIVE: callers may ask for argv, system prompts and environment names (include_sensitive). */
  allowSensitive: boolean;
  /** CLAUDE_SESSIONS_AUDIT_MAX_BYTES: audit.jsonl is rotated to audit.jsonl.1 past this size. */
  auditMaxBytes: number;
  /**
   * CLAUDE_SESSIONS_ROOTS: the directories (real paths) sessions may work in, whoever starts them (MCP, web, CLI,
   * member tools); empty: anywhere. A client that declares MCP roots is confined further (sessions/launch/roots.ts).
   */
  roots: string[];
  /** CLAUDE_SESSIONS_HTTP_MAX_CLIENTS: MCP sessions an HTTP server holds at once (default 256). */
  httpMaxClients: number;
  /** CLAUDE_SESSIONS_HTTP_IDLE_MS: an HTTP MCP session with no request and no open stream this long ends (default 30 min; 0: only evicted at the cap). */
  httpIdleMs: number;
  /** CLAUDE_SESSIONS_WEB_ROOTS: the directories (real paths) the web view may start sessions in; empty: none. */
  webRoots: string[];
  /** CLAUDE_SESSIONS_NODES: the operator's nodes file (then it must exist); unset: <state>/nodes.json if there. */
  nodesFile?: string;
  /** CLAUDE_SESSIONS_PRICES: the operator's price file (USD per million tokens per model). */
  pricesFile?: string;
  /** CLAUDE_SESSIONS_WEBHOOKS: the operator's webhook endpoints file (src/automations/webhooks/config.ts reads it). */
  webhooksFile?: string;
  /** CLAUDE_SESSIONS_SCHEDULE_TICK_MS: how often a serving process looks for due schedules (50–60000, default 1000). */
  scheduleTickMs: number;
}

/**
 * CLAUDE_SESSIONS_TOKEN, the HTTP server's bearer token when the operator sets one. A secret, so it is not a Config
 * field (a Config may be shown); the HTTP server reads it once and removes it from the environment sessions inherit.
 */
export function takeOperatorToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = env.CLAUDE_SESSIONS_TOKEN || undefined;
  delete env.CLAUDE_SESSIONS_TOKEN; // sessions' processes inherit the server's environment
  return token;
}

/** The operator settings read before the rest of the server loads (src/bin.ts re-executes with tuned heap flags). */
export const EARLY_SETTINGS = ["CLAUDE_SESSIONS_DIR", "CLAUDE_SESSIONS_NO_REEXEC"] as const;

function oneOf<T extends string>(env: NodeJS.ProcessEnv, key: string, values: readonly T[], dflt: T): T {
  const v = env[key];
  if (v === undefined || v === "") return dflt;
  if (!(values as readonly string[]).includes(v))
    throw new Error(`${key} must be one of ${values.join(", ")} (got ${JSON.stringify(v)})`);
  return v as T;
}

function num(env: NodeJS.ProcessEnv, key: string, dflt: number, min = 1): number {
  const v = env[key];
  if (v === undefined || v === "") return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) {
    throw new SessionError("INVALID_ARGUMENT", `${key} must be a number ≥ ${min} (got ${JSON.stringify(v)})`, {
      suggestion: `Unset it for the default (${dflt}).`,
    });
  }
  return Math.floor(n);
}

/** A bad list is a typed error at start (the CLI prints its code). */
function typed<T>(read: () => T): T {
  try {
    return read();
  } catch (e) {
    throw new SessionError("INVALID_ARGUMENT", e instanceof Error ? e.message : String(e));
  }
}

/** A switch that is on unless set to 0/false/no/off. */
function off(v: string | undefined): boolean {
  return v !== undefined && /^(0|false|no|off)$/i.test(v.trim());
}

function bool(v: string | undefined): boolean {
  return v !== undefined && /^(1|true|yes|on)$/i.test(v);
}

function isBackendKind(v: string): v is BackendKind {
  return (BACKEND_KINDS as readonly string[]).includes(v);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const backend = env.CLAUDE_SESSIONS_BACKEND;
  if (backend !== undefined && backend !== "" && !isBackendKind(backend)) {
    const kinds = BACKEND_KINDS.map((k) => JSON.stringify(k));
    throw new Error(
      `CLAUDE_SESSIONS_BACKEND must be ${kinds.slice(0, -1).join(", ")} or ${kinds.at(-1)} (got ${JSON.stringify(backend)})`,
    );
  }
  const mode = env.CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE || SERVER_DEFAULT_PERMISSION_MODE;
  if (!isPermissionMode(mode)) {
    throw new Error(
      `CLAUDE_SESSIONS_DEFAULT_PERMISSION_MODE must be one of ${PERMISSION_MODES.join(", ")} (got ${JSON.stringify(mode)})`,
    );
  }
  const sandbox = (env.CLAUDE_SESSIONS_SANDBOX || "off").trim().toLowerCase();
  if (!(SANDBOX_MODES as readonly string[]).includes(sandbox))
    throw new Error(
      `CLAUDE_SESSIONS_SANDBOX must be ${SANDBOX_MODES.join(", ")} (got ${JSON.stringify(env.CLAUDE_SESSIONS_SANDBOX)})`,
    );
  const level = (env.CLAUDE_SESSIONS_LOG_LEVEL ?? "info") as Level;
  const cfg: Config = {
    stateDir: resolve(env.CLAUDE_SESSIONS_DIR || join(homedir(), ".claude", "sessions")),
    toolsets: parseToolsets(env.CLAUDE_SESSIONS_TOOLSETS),
    claudeConfigDir: resolve(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude")),
    maxSessions: num(env, "MAX_CONCURRENT_SESSIONS", 10),
    maxSessionDurationMs: num(env, "MAX_SESSION_DURATION", 24 * 60 * 60 * 1000),
    maxMessageChars: num(env, "CLAUDE_SESSIONS_MAX_MESSAGE_CHARS", 100_000),
    startTimeoutMs: num(env, "CLAUDE_SESSIONS_START_TIMEOUT_MS", 30_000, 100),
    warmPool: num(env, "CLAUDE_SESSIONS_WARM_POOL", 0, 0),
    killGraceMs: num(env, "CLAUDE_SESSIONS_KILL_GRACE_MS", 5_000, 0),
    allowBypassPermissions: bool(env.CLAUDE_SESSIONS_ALLOW_BYPASS),
    allowBypassSandboxed: (env.CLAUDE_SESSIONS_ALLOW_BYPASS ?? "").trim().toLowerCase() === "sandboxed",
    sandbox: sandbox as SandboxMode,
    sandboxHosts: parseList(env.CLAUDE_SESSIONS_SANDBOX_HOSTS),
    ...(env.CLAUDE_SESSIONS_ACCOUNTS ? { accountsFile: resolve(env.CLAUDE_SESSIONS_ACCOUNTS) } : {}),
    ...(env.CLAUDE_SESSIONS_SECRET_HOSTS ? { secretHostsFile: resolve(env.CLAUDE_SESSIONS_SECRET_HOSTS) } : {}),
    sandboxPlaintextApi: bool(env.CLAUDE_SESSIONS_SANDBOX_PLAINTEXT_API),
    ...(env.CLAUDE_SESSIONS_SANDBOX_CA_FILE ? { sandboxCaFile: resolve(env.CLAUDE_SESSIONS_SANDBOX_CA_FILE) } : {}),
    defaultPermissionMode: mode,
    allowAutoupdate: bool(env.CLAUDE_SESSIONS_ALLOW_AUTOUPDATE),
    allowBashMode: bool(env.CLAUDE_SESSIONS_ALLOW_BASH_MODE),
    permissionTimeoutMs: num(env, "CLAUDE_SESSIONS_PERMISSION_TIMEOUT_MS", DEFAULT_PERMISSION_TIMEOUT_MS, 0),
    historyKeep: num(env, "CLAUDE_SESSIONS_HISTORY_KEEP", 10_000, 1),
    historyMaxAgeDays: num(env, "CLAUDE_SESSIONS_HISTORY_MAX_AGE_DAYS", 0, 0),
    unknownScreenMs: num(env, "CLAUDE_SESSIONS_UNKNOWN_SCREEN_MS", 10_000, 1000),
    allowSetupShell: bool(env.CLAUDE_SESSIONS_ALLOW_SETUP_SHELL),
    setupCommands: parseList(env.CLAUDE_SESSIONS_SETUP_COMMANDS),
    ...(env.CLAUDE_SESSIONS_CHECKS ? { checksFile: resolve(env.CLAUDE_SESSIONS_CHECKS) } : {}),
    maxFanOut: num(env, "CLAUDE_SESSIONS_MAX_FAN_OUT", 8, 1),
    allowMcpServers: bool(env.CLAUDE_SESSIONS_ALLOW_MCP_SERVERS),
    mcpCommands: parseList(env.CLAUDE_SESSIONS_MCP_COMMANDS),
    allowTrustWorkspace: !off(env.CLAUDE_SESSIONS_ALLOW_TRUST_WORKSPACE),
    allowToolRules: !off(env.CLAUDE_SESSIONS_ALLOW_TOOL_RULES),
    allowAddDirs: !off(env.CLAUDE_SESSIONS_ALLOW_ADD_DIRS),
    allowEnv: parseList(env.CLAUDE_SESSIONS_ALLOW_ENV),
    cols: num(env, "CLAUDE_SESSIONS_COLS", 200, 20),
    rows: num(env, "CLAUDE_SESSIONS_ROWS", 50, 10),
    logLevel: ["debug", "info", "warn", "error"].includes(level) ? level : "info",
    strictResults: bool(env.CLAUDE_SESSIONS_STRICT_RESULTS),
    eventsMaxBytes: num(env, "CLAUDE_SESSIONS_EVENTS_MAX_BYTES", 32 * 1024 * 1024, 4096),
    outputLogMaxBytes: num(env, "CLAUDE_SESSIONS_OUTPUT_LOG_MAX_BYTES", 64 * 1024 * 1024, 4096),
    idleTtlMs: num(env, "CLAUDE_SESSIONS_IDLE_TTL_MS", 6 * 60 * 60 * 1000, 0),
    hibernateAfterMs: num(env, "CLAUDE_SESSIONS_HIBERNATE_AFTER_MS", 0, 0),
    maxLive: num(env, "CLAUDE_SESSIONS_MAX_LIVE", 0, 0),
    wakeAnywhere: bool(env.CLAUDE_SESSIONS_WAKE_ANYWHERE),
    onLimit: oneOf(env, "CLAUDE_SESSIONS_ON_LIMIT", ["wait", "fail", "switch_account"] as const, "wait"),
    limitWakesPerMin: num(env, "CLAUDE_SESSIONS_LIMIT_WAKES_PER_MIN", 6, 1),
    limitRateWaitMs: num(env, "CLAUDE_SESSIONS_LIMIT_RATE_WAIT_MS", 60_000, 1000),
    limitJitterMs: num(env, "CLAUDE_SESSIONS_LIMIT_JITTER_MS", 30_000, 0),
    busyMaxMs: num(env, "CLAUDE_SESSIONS_BUSY_MAX_MS", 2 * 60 * 60 * 1000, 0),
    maxQueue: num(env, "CLAUDE_SESSIONS_MAX_QUEUE", 10, 1),
    memberMessagesPerMin: num(env, "CLAUDE_SESSIONS_MEMBER_MESSAGES_PER_MIN", 20, 0),
    retainDeadMs: num(env, "CLAUDE_SESSIONS_RETAIN_DEAD_MS", 7 * 24 * 60 * 60 * 1000, 0),
    allowConfigure: bool(env.CLAUDE_SESSIONS_ALLOW_CONFIGURE),
    allowSensitive: bool(env.CLAUDE_SESSIONS_ALLOW_SENSITIVE),
    auditMaxBytes: num(env, "CLAUDE_SESSIONS_AUDIT_MAX_BYTES", 10 * 1024 * 1024, 1024),
    roots: parseRootList(ROOTS_ENV, env[ROOTS_ENV]),
    httpMaxClients: num(env, "CLAUDE_SESSIONS_HTTP_MAX_CLIENTS", 256, 1),
    httpIdleMs: num(env, "CLAUDE_SESSIONS_HTTP_IDLE_MS", 30 * 60 * 1000, 0),
    scheduleTickMs: num(env, "CLAUDE_SESSIONS_SCHEDULE_TICK_MS", 1000, 50),
    webRoots: typed(() => parseRootList("CLAUDE_SESSIONS_WEB_ROOTS", env.CLAUDE_SESSIONS_WEB_ROOTS)),
  };
  if (env.CLAUDE_SESSIONS_NODES) cfg.nodesFile = resolve(env.CLAUDE_SESSIONS_NODES);
  if (env.CLAUDE_SESSIONS_PRICES) cfg.pricesFile = env.CLAUDE_SESSIONS_PRICES;
  if (env.CLAUDE_SESSIONS_WEBHOOKS) cfg.webhooksFile = env.CLAUDE_SESSIONS_WEBHOOKS;
  if (cfg.scheduleTickMs > 60_000) {
    throw new SessionError(
      "INVALID_ARGUMENT",
      `CLAUDE_SESSIONS_SCHEDULE_TICK_MS must be an integer from 50 to 60000 (got ${cfg.scheduleTickMs})`,
      { suggestion: "Unset it for the default (1000)." },
    );
  }
  if (env.CLAUDE_SESSIONS_TMUX_SOCKET) cfg.tmuxSocketName = env.CLAUDE_SESSIONS_TMUX_SOCKET;
  if (env.CLAUDE_SESSIONS_TMUX) cfg.tmuxPath = env.CLAUDE_SESSIONS_TMUX;
  if (env.CLAUDE_SESSIONS_TMUX_SOCKET_PATH) cfg.tmuxSocketPath = env.CLAUDE_SESSIONS_TMUX_SOCKET_PATH;
  if (env.CLAUDE_PATH) cfg.claudePath = env.CLAUDE_PATH;
  if (env.DOPPLER_PATH) cfg.dopplerPath = env.DOPPLER_PATH;
  if (env.DOPPLER_PROJECT) cfg.dopplerProject = env.DOPPLER_PROJECT;
  if (env.DOPPLER_CONFIG) cfg.dopplerConfig = env.DOPPLER_CONFIG;
  if (backend !== undefined && isBackendKind(backend)) cfg.defaultBackend = backend;
  if (env.CLAUDE_SESSIONS_LOG_FILE) cfg.logFile = env.CLAUDE_SESSIONS_LOG_FILE;
  if (env.CLAUDE_SESSIONS_PERMISSION_MODES !== undefined) cfg.permissionModes = parseList(env.CLAUDE_SESSIONS_PERMISSION_MODES);
  return cfg;
}
