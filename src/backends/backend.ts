/**
 * The one interface both terminal backends implement. Nothing above backends/ runs tmux or imports node-pty.
 */
import type { BackendKind } from "../core/events.js";
export type { BackendKind };

export interface SpawnSpec {
  /** Our session id; the backend derives its own names from it (tmux: cs-<id>). */
  id: string;
  /** The session's own directory under the state directory (server-made; holds the files below). */
  dir: string;
  /** argv of the program to run in the terminal (argv[0] is a path). */
  argv: string[];
  cwd: string;
  /** The complete environment of the child (the backend may replace TERM with its terminal's). Handed over without argv. */
  env: Record<string, string>;
  cols: number;
  rows: number;
  /** Raw terminal output is appended here (in `dir`; a symbolic link to the session's own log_file when it has one). */
  rawLogPath: string;
  /** The session's events log: the backend appends {"hook_event_name":"cs:exit"} when the process ends. */
  eventsPath: string;
  /** Spawn generation of this process: the exit record carries it, so a late exit of an older process is ignored. */
  generation?: number;
  /**
   * The conversation, for a backend that runs Claude itself rather than `argv` (headless): the Claude session id
   * to start with, or the one to resume (and whether to fork), and the session's launch options.
   */
  conversation?: { claude_session_id: string; resume_id?: string; fork?: boolean; options: Record<string, unknown> };
}

export interface Spawned {
  pid: number;
  /** tmux: the pane id (%N); pty: undefined. */
  paneId?: string;
  /** The name a person uses to reach the terminal (tmux session), when there is one. */
  target?: string;
  /** The terminal server's socket (tmux -L name / -S path), when it is not the default one. */
  socket?: string;
}

export interface Liveness {
  /** The terminal (tmux session / pty) exists. */
  exists: boolean;
  /** The process in it is still running. */
  alive: boolean;
  pid?: number;
  exitCode?: number;
}

/** Named keys the orchestrator sends. */
export type Key = "Enter" | "Escape" | "Up" | "Down" | "Tab" | "BTab" | "C-c" | "1" | "2" | "3" | "4";

export interface KillResult {
  exitCode?: number;
  forced: boolean;
  /** Processes of the session's tree still running after the kill. */
  left?: number[];
}

export interface Backend {
  readonly kind: BackendKind;
  /** Whether a session outlives this server process. */
  readonly survivesRestart: boolean;
  spawn(spec: SpawnSpec): Promise<Spawned>;
  /** Bracketed paste of text into the terminal (no trailing Enter). */
  paste(id: string, text: string): Promise<void>;
  keys(id: string, keys: readonly Key[]): Promise<void>;
  /**
   * The visible screen as plain text; with `above`, up to that many lines of scrollback before it (a prompt taller
   * than the screen is drawn in full only there).
   */
  screen(id: string, opts?: { above?: number }): Promise<string>;
  /** Liveness of all sessions of this backend, in one call. Keyed by our session id. */
  list(): Promise<Map<string, Liveness>>;
  /**
   * Signals the process group; escalates to SIGKILL after graceMs (0: at once). Then ends the rest of the
   * session's process tree (children that left the group with setsid, daemons tagged with the session id).
   * Resolves when gone; `left` lists pids still running after all that (normally absent).
   */
  kill(id: string, opts: { graceMs: number; pid?: number }): Promise<KillResult>;
  /** Removes what is left of the terminal (dead tmux session). */
  remove(id: string): Promise<void>;
  /** Releases resources of this backend in this process (pty: ends its sessions). */
  close?(): Promise<void>;
  /** The command a person runs to watch a session, where the backend allows it (tmux). */
  attachCommand?(id: string): string;
  /** The same as argv, for the CLI's `attach` to run. */
  attachArgv?(id: string): string[];
  /**
   * The exit status of a session whose exit was recorded without one, when the backend can still find it out
   * (tmux 3.3 can run pane-died before it knows the status, and can miss the SIGCHLD: it is nudged to reap).
   */
  settleExit?(id: string): Promise<number | undefined>;
}
