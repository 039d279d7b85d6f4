/**
 * A Runner is one way of running sessions: where the process lives (its host), how the conversation is held (its
 * driver), and what it can do (its capabilities). The session layer asks capabilities; it never names a kind.
 */
import { CLAUDE_OPTIONS } from "../api/index.js";
import type { ClaudeOptions, DopplerWrap, LaunchMode } from "../claude/launch.js";
import { statusLineCommand } from "../claude/account-windows.js";
import type { BackendKind } from "../core/events.js";
import type { LiveSession } from "../events/live.js";
import type { Driver } from "./driver.js";
import type { Host, LaunchOptions, Spawned, TerminalHost } from "./host.js";
import type { PromptInput } from "./prompt.js";
import type { SandboxSpec } from "../sandbox/spec.js";
import type { SessionError } from "../core/errors.js";
import type { ScriptPaths } from "../claude/scripts.js";
import type { Config } from "../config.js";
import type { Logger } from "../util/log.js";
import type { CallContext } from "../core/context.js";

export type { LaunchOptions };

/** Start/resume options that only some runners honour (every runner honours the others). */
export const RUNNER_OPTIONS = [...CLAUDE_OPTIONS, "doppler", "resume_at"] as const;
export type RunnerOption = (typeof RUNNER_OPTIONS)[number];

/** Options a runner may keep in a session's record for resume_session: its own, and the limits it applies itself. */
export const KEEPABLE_OPTIONS = ["max_turns", "max_budget_usd", ...CLAUDE_OPTIONS.filter((k) => k !== "mcp_servers")] as const;
export type KeepableOption = (typeof KEEPABLE_OPTIONS)[number];

export interface Capabilities {
  /** A terminal: paste, keys, a screen (stream_output mode screen, typing into other CLIs' sessions). */
  screen: boolean;
  /** Sessions outlive this server process. */
  survivesRestart: boolean;
  /** run_task starts its sessions here when the call names no backend. */
  taskDefault: boolean;
  /** Keeps ready spares for start_session and run_task (CLAUDE_SESSIONS_WARM_POOL; sessions/launch/warm-pool.ts). */
  warmPool: boolean;
  /** Claude shows its folder-trust screen, which the driver answers; else the server checks trust before starting. */
  trustScreen: boolean;
  /** max_turns is the CLI's own agentic turn limit (kept in options); else the server counts prompts. */
  ownTurnLimit: boolean;
  /** max_budget_usd stops a turn in the CLI itself (the SDK's maxBudgetUsd); else the server watches the transcript (sessions/life/budget-watch.ts). */
  ownBudget: boolean;
  /** Runs Claude Code under the sandbox launcher when the request has a sandbox (LaunchRequest.sandbox); else such a start is refused. */
  sandbox: boolean;
  /** How prompts reach the conversation, and so what a prompt may hold (prompt.ts): typed into the input box, or a message. */
  prompts: PromptInput;
  /** Which of RUNNER_OPTIONS it honours (the rest are refused, never silently ignored). */
  honours: readonly RunnerOption[];
  /** Options it honours only from a Claude Code version on (measured; older versions refuse them). */
  since?: Partial<Record<RunnerOption, string>>;
  /** Which options a session's record keeps for resume_session (never one that may hold secrets). */
  keeps: readonly KeepableOption[];
}

/** What the session layer knows of a launch; each runner makes its own plan of it. */
export interface LaunchRequest {
  id: string;
  dir: string;
  cwd: string;
  settingsPath: string;
  eventsPath: string;
  rawLogPath: string;
  cols: number;
  rows: number;
  /** The claude binary. */
  claude: string;
  mode: LaunchMode;
  claudeOptions: ClaudeOptions;
  doppler?: DopplerWrap | undefined;
  /** The session's own variables (caller's env, its ids, the server's policy), on top of the server's environment. */
  env: Record<string, string>;
  /** The session's launch options (stored and this launch's own). */
  options: LaunchOptions;
  /** The session's first prompt (validated), for a runner that can send it with the launch (`LaunchPlan.carriesPrompt`). */
  prompt?: string | undefined;
  /** The server's blocking permission hook (`<state>/bin/permission.sh`, how long it waits), for a runner that uses one. */
  permission?: { script: string; timeoutMs: number } | undefined;
  /** A team session's member server (sessions/teams/members.ts): every runner adds its configuration and allows its tools. */
  member?: MemberLaunch | undefined;
  /** A sandboxed session (sessions/launch/sandbox.ts): the runner runs the launcher in place of Claude Code. */
  sandbox?: SandboxLaunch | undefined;
  /** A session under an account: where the CLI's report of the account's usage windows goes (claude/account-windows.ts). */
  windowsFile?: string | undefined;
}

/** A sandboxed launch: `<node> <launcher> <specPath>` runs Claude Code's argv (added by the runner) under the spec. */
export interface SandboxLaunch {
  node: string;
  launcher: string;
  specPath: string;
  spec: Omit<SandboxSpec, "argv">;
}

/** A team session's member server for one launch: its MCP configuration file, its name, the files written before the spawn. */
export interface MemberLaunch {
  configPath: string;
  serverName: string;
  files: ReadonlyArray<{ path: string; text: string }>;
}

/** The session's settings with the member server's tools allowed (so a member never stalls on a prompt for them). */
export function withMemberTools(
  settings: { permissions: { deny: string[]; allow?: string[] } } & Record<string, unknown>,
  member: MemberLaunch | undefined,
): object {
  if (!member) return settings;
  return {
    ...settings,
    permissions: { ...settings.permissions, allow: [...(settings.permissions.allow ?? []), `mcp__${member.serverName}`] },
  };
}

/**
 * The session's settings with a status line that keeps the account's usage windows (an interactive CLI under an
 * account: the status line's input is the only place it reports them; claude/account-windows.ts). It takes the place
 * of the person's own status line in such a session.
 */
export function withStatusLine(settings: object, windowsFile: string | undefined): object {
  return windowsFile ? { ...settings, statusLine: { type: "command", command: statusLineCommand(windowsFile) } } : settings;
}

/** A runner's plan of one launch. */
export interface LaunchPlan {
  /** What the record shows as its command and args. */
  command: string[];
  /** Start-up output is doppler's first (a failure there is a DOPPLER_ERROR). */
  underDoppler: boolean;
  /** The session's settings.json (its hooks), written once by the session layer before the spawn. */
  settings: object;
  /** Scripts those hooks run: each must be the server's own (checked before the settings are written). */
  hookScripts: string[];
  /** The plan took `LaunchRequest.prompt`: the driver's `carried` confirms it once the process runs (nothing is typed). */
  carriesPrompt?: boolean;
  /** Private files (0600) the session layer writes before the spawn: the member server's configuration and secret hash. */
  files?: ReadonlyArray<{ path: string; text: string }> | undefined;
  /** Starts the process; `live` is the session layer's fold of the events log. */
  spawn(session: { live: LiveSession; generation?: number | undefined }): Promise<Spawned>;
}

/** The Claude session id a launch runs under. */
export function claudeIdOf(mode: LaunchMode): string {
  return mode.kind === "new" ? mode.claudeSessionId : (mode.fork?.newId ?? mode.resumeId);
}

/** What a runner kind is made of (registry.ts): the server's configuration, its log and the scripts sessions run. */
export interface RunnerSetup {
  cfg: Config;
  log: Logger;
  scripts: ScriptPaths;
}

/** A program that shows Claude Code's screen, to type one prompt into (Runner.typeInto), and how to name it in errors. */
export interface TypeIntoSpec {
  /** A private id for the terminal (the host derives its names from it). */
  id: string;
  /** A folder for the terminal's files (the tmux launcher's hand-off); removed after. */
  dir: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** What the program shows, for errors ("background session 1f1b096b"). */
  name: string;
  /** The command a person runs to look at it themselves ("claude attach 1f1b096b"). */
  hint: string;
  /** Refuses (throws) a screen whose footer shows a permission mode the server's gates do not pass. */
  gate(mode: string): void;
}

/** What a runner says of itself in health_check and `doctor`: one check, named by what it needs. */
export interface RunnerHealth {
  /** The check's name (tmux, pty, agent_sdk): what this runner's sessions need on the machine. */
  check: string;
  /** Its sessions can start here. */
  ok: boolean;
  detail: string;
}

export interface Runner {
  readonly kind: BackendKind;
  readonly caps: Capabilities;
  /** Where its sessions' processes live. */
  readonly host: Host;
  /** The same host as a terminal, when it has one (caps.screen). */
  readonly terminal?: TerminalHost;
  readonly driver: Driver;
  plan(req: LaunchRequest): LaunchPlan;
  /** Whether this server can run its sessions at all (asked once at start-up): undefined, or the error a caller gets. */
  available(): Promise<SessionError | undefined>;
  /** Whether what its sessions need is on this machine now (a program's version, a module that loads). */
  health(): Promise<RunnerHealth>;
  /** Releases what it holds in this process (sessions that end with it are ended). */
  close(): Promise<void>;
  /**
   * A terminal runner: runs a program that shows Claude Code's screen (`claude attach <id>`) in a private terminal,
   * types one prompt into its empty input box and closes it (terminal/type-into.ts).
   */
  typeInto?(spec: TypeIntoSpec, text: string, ctx: CallContext): Promise<void>;
}
