/**
 * A driver holds the conversation with one kind of session: it knows how to wait until a new session takes
 * prompts, deliver a prompt and confirm it became a turn, answer a permission request, interrupt a turn and
 * read what the session shows. The session layer stays the same whatever the driver: hooks feed the event
 * log, the reducer folds it, waiters wake on the fold, the store keeps the records.
 *
 * The terminal driver (runners/terminal) talks to Claude Code's interactive screen through a TerminalHost (tmux or
 * a PTY): pastes, keys, and the screen as a fallback signal where no hook fires.
 */
import type { CallContext } from "../core/context.js";
import type { LiveSession } from "../events/live.js";
import type { LogEvent } from "../events/reducer.js";
import type { PermissionDecision, WaitOutput } from "../api/index.js";

/** An answer to a pending permission request. */
export interface PermissionAnswer {
  decision: PermissionDecision;
  /** deny: the reason Claude is told; allow: a note. */
  message?: string;
  /** allow: the tool input to run instead. */
  updated_input?: Record<string, unknown>;
}

/** A session as a driver sees it. */
export interface DriverSession {
  readonly id: string;
  /** The session's fold and its waiters. */
  readonly live: LiveSession;
  /** The raw output of the terminal (what the program printed, e.g. before it died). */
  readonly rawLogPath: string;
  /** Appends one of the server's own events (cs:*) to the session's log and folds it. */
  emit(ev: LogEvent): Promise<void>;
}

/** What the screen watch knows when it asks a driver to look at a quiet turn. */
export interface ProbeOptions {
  /** Milliseconds since the session's last event. */
  quietMs: number;
  /** A screen the server does not know is reported as blocked (kind unknown) once the turn was quiet this long. */
  unknownAfterMs: number;
}

/** The choice answer_prompt pressed, as the screen labelled it. */
export interface PromptAnswer {
  kind: string;
  label: string;
}

export interface ReadyOptions {
  /** Answer Claude Code's "trust this folder" screen with Yes. */
  trustWorkspace: boolean;
  timeoutMs: number;
  /** argv[0] and argv[1] of what runs: a doppler wrapper's failures are reported as DOPPLER_ERROR. */
  underDoppler: boolean;
  /** The first prompt travels with the launch (`Driver.carried`): nothing will be typed, so ready needs no input box. */
  promptCarried?: boolean;
}

export interface Delivery {
  sent_at: string;
  /** Enter presses it took (1 when the first was taken). */
  attempts: number;
}

/** What a driver can say about one turn beyond the fold: tokens, cost and the SDK's figures (headless). */
export type TurnFigures = Pick<
  WaitOutput,
  | "usage"
  | "model_usage"
  | "cost_usd"
  | "cost_complete"
  | "duration_ms"
  | "duration_api_ms"
  | "num_turns"
  | "stop_reason"
  | "error_subtype"
  | "permission_denials"
  | "structured_output"
>;

/** A command only the server gives (reset_session, compact_session); the text typed is made by the driver. */
export type SessionCommand = { kind: "clear" } | { kind: "compact"; instructions?: string };

export interface Driver {
  /** Forgets what the driver keeps of a session the server no longer follows. */
  forget?(id: string): void;
  /** Sessions the driver keeps something of (tests: nothing is kept of forgotten sessions). */
  readonly kept?: number;
  /**
   * After the process was spawned: resolves once the session takes prompts; otherwise throws a SessionError
   * that says why (a first-run screen, what the process printed before it died, a time-out with the screen).
   */
  awaitReady(s: DriverSession, opts: ReadyOptions, ctx: CallContext): Promise<void>;
  /** Types a prompt into a session that takes one and resolves once Claude accepted it (UserPromptSubmit). */
  deliver(s: DriverSession, text: string, ctx: CallContext): Promise<Delivery>;
  /**
   * The first prompt travels with the launch (the runner's plan took it: `LaunchPlan.carriesPrompt`): called right
   * after the spawn, before the process is ready; hands the prompt over if the plan did not, and resolves once it
   * became a turn (UserPromptSubmit, compared with the text where a terminal is involved). `startTimeoutMs`: how long
   * start-up itself may take (awaitReady's bound); the driver adds its own time for the prompt to be taken.
   */
  carried?(s: DriverSession, text: string, startTimeoutMs: number, ctx: CallContext): Promise<Delivery>;
  /** Runs a bash-mode line ("!command") and resolves once the session took it (no hook fires for it). */
  runShell(s: DriverSession, text: string, ctx: CallContext): Promise<string>;
  /** Answers the pending permission request and resolves once the answer took effect. */
  answerPermission(s: DriverSession, answer: PermissionAnswer, ctx: CallContext): Promise<void>;
  /** Stops the running turn (bounded by timeoutMs); the fold says whether it stopped. */
  interrupt(s: DriverSession, timeoutMs: number, ctx: CallContext): Promise<void>;
  /**
   * A turn with no events for a while (the session layer's screen watch): notices a turn that ended without a hook
   * (an Esc typed by a person), a screen that waits for an answer (cs:blocked) and that screen going (cs:unblocked).
   */
  probe(s: DriverSession, o: ProbeOptions): Promise<void>;
  /** Picks one of the choices of the screen that blocks the session (by label or 1-based number) and confirms it went. */
  answerPrompt(s: DriverSession, choice: string | number, ctx: CallContext): Promise<PromptAnswer>;
  /**
   * Runs /clear or /compact in an idle session and resolves once its SessionStart (source clear or compact) is in
   * the fold; the only slash commands the server ever gives, from its own text.
   */
  command(s: DriverSession, cmd: SessionCommand, timeoutMs: number, ctx: CallContext): Promise<void>;
  /** What the session shows now, as plain text. */
  screen(s: DriverSession): Promise<string>;
  /**
   * The figures of the session's prompt number `prompt` (1-based, as `prompts_submitted` counts), when it knows them.
   * `now`: only if they are already in (undefined otherwise), unless the turn's answer itself is in them.
   */
  turnFigures?(s: DriverSession, prompt: number, o?: { now?: boolean }): Promise<TurnFigures | undefined>;
}
