/**
 * The shapes of the fold (reducer.ts): one event line as the log holds it, and the status a session's events fold to,
 * with its pending permission, the screen that blocks it and the usage limit its last turn hit.
 */
import type { BlockedKind, Status } from "../core/status.js";
import type { LimitInfo } from "../core/limit.js";
import type { EventName } from "../core/events.js";

/** One parsed line of events.jsonl. Fields beyond these are kept but not relied on (the format is Claude's). */
export interface LogEvent {
  hook_event_name: EventName;
  session_id?: string;
  transcript_path?: string;
  source?: string;
  model?: string;
  prompt?: string;
  prompt_id?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
  last_assistant_message?: string;
  background_tasks?: unknown[];
  error?: string;
  reason?: string;
  message?: string;
  notification_type?: string;
  exit_code?: number;
  claude_session_id?: string;
  /** PermissionRequest: the CLI's suggested permission updates (what "always allow" would apply). */
  permission_suggestions?: unknown;
  /** PermissionRequest (written by the permission hook), cs:permission_fallback: the hook's request key. */
  cs_request?: string;
  /** cs:answered: the sequence number of the PermissionRequest that was answered. */
  permission_seq?: number;
  /** cs:spawn, cs:exit: the spawn generation (an exit of an older generation is the old process's, and ignored). */
  generation?: number;
  /** cs:blocked: the screen that holds the session (kind, its text, the choices answer_prompt offers). */
  blocked?: { kind: BlockedKind; text: string; choices: string[] };
  /** cs:sandbox_violation (written by the sandbox launcher): network (a refused connection) or secret (a sentinel sent where it does not belong). */
  violation?: "network" | "secret";
  /** cs:snapshot: the fold of everything the log held before it was compacted. */
  fold?: Folded;
  /** cs:limit_wait: the limit (by its seq) the server parked the session for, when it lifts and when the wake is due. */
  limit_seq?: number;
  resets_at?: string;
  due_at?: string;
  /** The line was longer than the reader's cap: only its name (and session id) were kept. */
  oversized?: boolean;
  ts?: string;
}

export interface PendingPermission {
  tool_name: string;
  tool_input: unknown;
  /** Sequence number of the PermissionRequest event. */
  seq: number;
  since?: string;
  /** The CLI's permission suggestions (permission_suggestions), applied by allow_always. */
  suggestions?: unknown[];
  /** The key of the permission hook waiting for the server's decision (absent: only the dialog can answer). */
  request?: string;
  /** The hook gave up waiting (cs:permission_fallback): only the on-screen dialog can answer now. */
  fallback?: boolean;
}

/** A screen of Claude Code that waits for an answer (cs:blocked), other than a permission request. */
export interface BlockedScreen {
  kind: BlockedKind;
  /** What the screen says, brief. */
  text: string;
  /** Its choices, in screen order (answer_prompt takes one by label or 1-based number); empty for unknown. */
  choices: string[];
  /** Sequence number of the cs:blocked event. */
  seq: number;
  since?: string;
  /** The status to go back to when the screen goes without a hook (cs:unblocked). */
  from: Status;
}

export interface Folded {
  status: Status;
  claude_session_id?: string;
  transcript_path?: string;
  /** Turns that ended (Stop or StopFailure). */
  turn_count: number;
  /** Prompts Claude accepted (UserPromptSubmit). */
  prompts_submitted: number;
  last_prompt?: string;
  /**
   * The prompt_id of the last ended turn (Stop, StopFailure), which its transcript prompt line carries as
   * `promptId`. Not UserPromptSubmit's: for a prompt queued during a turn it fires at once with the running turn's id.
   */
  turn_prompt_id?: string;
  last_response?: string;
  /** Outcome of the last ended turn. */
  last_turn?: "completed" | "failed" | "interrupted";
  last_error?: string;
  pending_permission?: PendingPermission;
  /** A screen holds the session (status blocked). */
  blocked?: BlockedScreen;
  /** Background tasks still running when the last Stop fired (a Stop with these is not the end of the work). */
  background_tasks: number;
  /**
   * The CLI said it waits for the user (Notification `agent_needs_input`, 2.1.330+: e.g. auto mode's "can't check"
   * screen, ~6 s after it opened); cleared by the next sign of progress.
   */
  needs_input?: { message: string; since?: string };
  /** Tool calls auto mode denied in the current turn (PermissionDenied hook; the turn goes on without them). */
  permission_denials?: Array<{ tool_name: string; tool_use_id: string; tool_input: unknown; reason?: string }>;
  exit_code?: number;
  end_reason?: string;
  /** A team member asked to be ended (its request_shutdown, issue 25): the reason, until its process ends or a new one starts. */
  shutdown_requested?: string;
  last_event_at?: string;
  /** Replies received over the whole log (every ended turn with a reply, across processes) and their length. */
  responses: number;
  response_chars: number;
  /** The last SessionStart of this process: its source (startup, resume, clear, compact) and sequence number. */
  session_start?: { source: string; seq: number };
  /** Spawn generation of the current process (from cs:spawn), when the spawner gave one. */
  generation?: number;
  /** Sandbox violations over the whole log (cs:sandbox_violation): refused connections and sentinels sent elsewhere. */
  sandbox_violations?: number;
  /**
   * The last turn ended on a usage or rate limit (StopFailure `rate_limit`, issue 33): until a prompt is taken again
   * (UserPromptSubmit) or the server finds the prompt answered (cs:limit_over). Kept across a hibernation and a wake.
   */
  limit?: FoldedLimit;
  /** Events folded so far (the next event's sequence number). */
  seq: number;
}

/**
 * A limit as the fold keeps it: what the CLI said, and the prompt the limit interrupted. `resets_at` is known once the
 * event had a time (headless events do; hook lines do not) or the server recorded it (cs:limit_wait).
 */
export interface FoldedLimit extends Omit<LimitInfo, "resets_at"> {
  resets_at?: string;
  /** Sequence number of the event that said it (one limit, one wake: the wake's claim is named by it). */
  seq: number;
  since?: string;
  /** The prompt that hit the limit and its prompt_id (its transcript line carries it as promptId). */
  prompt?: string;
  prompt_id?: string;
  /** When the server will wake the session (cs:limit_wait: resets_at plus its jitter and the fleet's spacing). */
  wake_at?: string;
}
