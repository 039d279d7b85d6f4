/**
 * Where a session's process lives. `Host`: what every runner's host does (spawn, liveness, kill, remove, attach);
 * `TerminalHost` (tmux, pty) adds the terminal: paste, keys, screen. Nothing above runners/ runs tmux or imports
 * node-pty.
 */
import type { BackendKind } from "../core/events.js";
import type { StartInput } from "../api/index.js";
import type { LiveSession } from "../events/live.js";
import type { StoredOptions } from "../store/options.js";
import type { HostRef } from "../store/schema.js";
import { isAlive } from "../util/proc/process.js";
export type { HostRef };

/** A launch's options: what the record keeps, and what this launch alone gets (mcp_servers: never stored). */
export type LaunchOptions = StoredOptions & Pick<StartInput, "mcp_servers">;
export type { BackendKind };

/** What every plan says: the session, its folder and files, where it runs, and the child's environment. */
interface PlanBase {
  /** Our session id; the host derives its own names from it (tmux: cs-<id>). */
  id: string;
  /** The session's own directory under the state directory (server-made; holds the files below). */
  dir: string;
  cwd: string;
  /** The complete environment of the child (a terminal may replace TERM with its own). Handed over without argv. */
  env: Record<string, string>;
  /** Raw output is appended here (in `dir`; a symbolic link to the session's own log_file when it has one). */
  rawLogPath: string;
  /** The session's events log: the host appends {"hook_event_name":"cs:exit"} when the process ends. */
  eventsPath: string;
  /** Spawn generation of this process: the exit record carries it, so a late exit of an older process is ignored. */
  generation?: number;
}

/** A terminal host's plan: a program to run in a terminal of a size. */
export interface TerminalPlan extends PlanBase {
  /** argv of the program to run in the terminal (argv[0] is a path). */
  argv: string[];
  cols: number;
  rows: number;
}

/**
 * A conversation host's plan (headless): the host runs Claude itself — the binary, the Claude session id to start
 * with or the one to resume (and whether to fork), the session's launch options — and follows the session layer's
 * fold of the events log (no second watcher of the same file).
 */
export interface ConversationPlan extends PlanBase {
  /** The claude binary. */
  claude: string;
  claude_session_id: string;
  resume_id?: string;
  fork?: boolean;
  /** Resume only up to and including this transcript entry. */
  resume_at?: string;
  options: LaunchOptions;
  /** The session layer's fold and waiters of `eventsPath`. */
  live: LiveSession;
  /** A team session's member server configuration file (`--mcp-config`). */
  member_mcp_config?: string;
  /** A sandboxed session: the CLI runs as `<node> <launcher> <spec> -- <the SDK's command and args>`. */
  launcher?: SandboxRunner;
  /** Under an account: its rate_limit_events' figures go to this file (claude/account-windows.ts). */
  windows_file?: string;
}

/** How a sandboxed headless session's CLI is started (sandbox/launcher.ts; its spec is written before the spawn). */
export interface SandboxRunner {
  node: string;
  launcher: string;
  spec_path: string;
}

export type SpawnSpec = TerminalPlan | ConversationPlan;

export interface Spawned {
  pid: number;
  /** Where the host keeps the process, in its own words: the record keeps it and gives it back to `Host.owns`. */
  ref: HostRef;
}

export interface Liveness {
  /** The terminal (tmux session / pty) exists. */
  exists: boolean;
  /** The process in it is still running. */
  alive: boolean;
  pid?: number;
  exitCode?: number;
}

/** Whether a session of a host that lives in a server process (pty, headless) is held by this one or by nobody alive. */
export function ownedInProcess(ref: HostRef | undefined): boolean {
  const by = ref?.owner_pid;
  return by === undefined || by === process.pid || !isAlive(by);
}

/** The reference a host that lives in this server process gives its sessions. */
export function inProcessRef(): HostRef {
  return { owner_pid: process.pid };
}

/** Named keys the orchestrator sends. */
export type Key = "Enter" | "Escape" | "Up" | "Down" | "Tab" | "BTab" | "C-c" | "1" | "2" | "3" | "4";

export interface KillResult {
  exitCode?: number;
  forced: boolean;
  /** Processes of the session's tree still running after the kill. */
  left?: number[];
}

export interface Host<P extends SpawnSpec = SpawnSpec> {
  readonly kind: BackendKind;
  /** Whether a session outlives this server process. */
  readonly survivesRestart: boolean;
  spawn(plan: P): Promise<Spawned>;
  /**
   * Whether this server process reaches the session's process through this host, by the reference its spawn gave
   * (the record keeps it): a host whose sessions outlive servers always does; one whose sessions live in a server
   * process does unless another live server process holds it (that one sees its exit and records it).
   */
  owns(ref: HostRef | undefined): boolean;
  /** Liveness of all sessions of this host, in one call. Keyed by our session id. */
  list(): Promise<Map<string, Liveness>>;
  /**
   * Signals the process group; escalates to SIGKILL after graceMs (0: at once). Then ends the rest of the
   * session's process tree (children that left the group with setsid, daemons tagged with the session id).
   * Resolves when gone; `left` lists pids still running after all that (normally absent).
   */
  kill(id: string, opts: { graceMs: number; pid?: number }): Promise<KillResult>;
  /** Removes what is left of the session's home (dead tmux session, ended headless process). */
  remove(id: string): Promise<void>;
  /** Forgets an ended session the server no longer follows (what the host keeps of it in this process). */
  forget?(id: string): void;
  /** Sessions the host keeps something of in this process (tests). */
  readonly kept?: number;
  /** Releases resources of this host in this process (pty, headless: ends its sessions). */
  close?(): Promise<void>;
  /** The command a person runs to watch a session, where the host allows it (tmux). */
  attachCommand?(id: string): string;
  /** The same as argv, for the CLI's `attach` to run. */
  attachArgv?(id: string): string[];
  /**
   * The exit status of a session whose exit was recorded without one, when the host can still find it out
   * (tmux 3.3 can run pane-died before it knows the status, and can miss the SIGCHLD: it is nudged to reap).
   */
  settleExit?(id: string): Promise<number | undefined>;
}

/** A host with a terminal: the terminal driver pastes, presses keys and reads the screen through it. */
export interface TerminalHost extends Host<TerminalPlan> {
  /** Bracketed paste of text into the terminal (no trailing Enter). */
  paste(id: string, text: string): Promise<void>;
  /**
   * Each piece as its own bracketed paste, back to back, in one write (no trailing Enter): what `paste` does piece by
   * piece, without a round trip per piece. Hosts without it are given the pieces one `paste` at a time.
   */
  pasteEach?(id: string, pieces: readonly string[]): Promise<void>;
  keys(id: string, keys: readonly Key[]): Promise<void>;
  /**
   * The visible screen as plain text; with `above`, up to that many lines of scrollback before it (a prompt taller
   * than the screen is drawn in full only there).
   */
  screen(id: string, opts?: { above?: number }): Promise<string>;
}
