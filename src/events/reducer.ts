/**
 * The pure fold from a session's event log to its status. Every server process, including one
 * started after a crash, reaches the same state by replaying the same log.
 */
import { assertNever } from "../core/errors.js";
import { canMove, isLive, type Status } from "../core/status.js";
import { isLimitFailure, limitOf } from "../core/limit.js";
import type { EventName } from "../core/events.js";
import { isBlockedEvent, isFold } from "./parse.js";
import type { Folded, FoldedLimit, LogEvent } from "./types.js";

// The fold's shapes (types.ts) and the line parser (parse.ts), for the modules that read them from here.
export { HOOK_EVENTS, OWN_EVENTS, type EventName, type HookEventName, type OwnEventName } from "../core/events.js";
export type { BlockedScreen, Folded, FoldedLimit, LogEvent, PendingPermission } from "./types.js";
export { parseEventLine } from "./parse.js";

/** A reset time the message does not give (an API key's 429): the limit is looked at again after this. */
export const LIMIT_RATE_WAIT_MS = 60_000;

function noteLimit(f: Folded, ev: LogEvent, seq: number, message: string | undefined): Folded {
  const at = ev.ts ? Date.parse(ev.ts) : NaN;
  const info: FoldedLimit = { ...limitOf(message ?? "rate limit", Number.isFinite(at) ? at : 0, LIMIT_RATE_WAIT_MS), seq };
  // Without the event's time a reset read from "resets 8pm" has no day: the server that sees it records it.
  if (!Number.isFinite(at)) delete info.resets_at;
  f.limit = {
    ...info,
    ...(ev.ts ? { since: ev.ts } : {}),
    ...(f.last_prompt !== undefined ? { prompt: f.last_prompt } : {}),
    ...(ev.prompt_id ? { prompt_id: ev.prompt_id } : {}),
  };
  return f;
}

export function initialFold(): Folded {
  return {
    status: "starting",
    turn_count: 0,
    prompts_submitted: 0,
    background_tasks: 0,
    responses: 0,
    response_chars: 0,
    seq: 0,
  };
}

function move(f: Folded, to: Status): Status {
  return canMove(f.status, to) ? to : f.status;
}

/** The prompt id of the turn that just ended, when its end event says it. */
function endedPrompt(f: Folded, promptId: string | undefined): void {
  if (promptId) f.turn_prompt_id = promptId;
  else delete f.turn_prompt_id;
}

/** A turn that ended in an error: counted, the session idle (usable), the message kept. */
function failTurn(f: Folded, message: string | undefined, promptId?: string): Folded {
  f.turn_count += 1;
  endedPrompt(f, promptId);
  f.status = move(f, "idle");
  f.last_turn = "failed";
  f.last_error = message ?? "the turn failed";
  delete f.pending_permission;
  delete f.blocked;
  return f;
}

/** Events that show the CLI moved on: a "needs input" notice before them is over. */
const PROGRESS: ReadonlySet<string> = new Set([
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PermissionRequest",
  "PermissionDenied",
  "Stop",
  "StopFailure",
  "SessionEnd",
  "cs:exit",
  "cs:answered",
  "cs:interrupted",
  "cs:turn_failed",
]);

export function reduce(prev: Folded, ev: LogEvent): Folded {
  const f: Folded = { ...prev, seq: prev.seq + 1 };
  if (f.needs_input && PROGRESS.has(ev.hook_event_name)) delete f.needs_input;
  if (ev.ts) f.last_event_at = ev.ts;
  if (ev.transcript_path) f.transcript_path = ev.transcript_path;
  const name = ev.hook_event_name;
  // Any hook of the turn means the screen that held it is gone (the CLI went on): back to busy, then the event.
  if (f.blocked && CLEARS_BLOCKED.has(name)) {
    if (f.status === "blocked") f.status = f.blocked.from === "ready" || f.blocked.from === "idle" ? f.blocked.from : "busy";
    delete f.blocked;
  }
  switch (name) {
    case "cs:spawn":
      // A new process for this record (start or resume): everything about the old process is over.
      return {
        ...initialFold(),
        seq: f.seq,
        turn_count: f.turn_count,
        prompts_submitted: f.prompts_submitted,
        responses: f.responses,
        response_chars: f.response_chars,
        ...(f.sandbox_violations ? { sandbox_violations: f.sandbox_violations } : {}),
        ...(f.limit ? { limit: f.limit } : {}),
        ...(ev.claude_session_id
          ? { claude_session_id: ev.claude_session_id }
          : f.claude_session_id
            ? { claude_session_id: f.claude_session_id }
            : {}),
        ...(f.last_response !== undefined ? { last_response: f.last_response } : {}),
        ...(f.last_prompt !== undefined ? { last_prompt: f.last_prompt } : {}),
        ...(f.last_event_at ? { last_event_at: f.last_event_at } : {}),
        ...(typeof ev.generation === "number" ? { generation: ev.generation } : {}),
      };
    case "SessionStart":
      // A fork reports the parent's id here; the new id shows from UserPromptSubmit on, so don't take it.
      if (f.status === "starting") f.status = "ready";
      else if (ev.source === "clear" && f.status !== "dead") f.status = move(f, "ready");
      // /clear (reset_session) starts a new conversation in the same process: its id is the one to follow.
      if (ev.source === "clear" && ev.session_id) f.claude_session_id = ev.session_id;
      f.session_start = { source: typeof ev.source === "string" ? ev.source : "unknown", seq: prev.seq };
      return f;
    case "UserPromptSubmit":
      if (ev.session_id) f.claude_session_id = ev.session_id;
      f.prompts_submitted += 1;
      if (ev.prompt !== undefined) f.last_prompt = ev.prompt;
      // Its hook runs in the background (claude/hooks.ts): should its line still land after its turn's end
      // (the turn's events waited for it in vain), it is counted but does not reopen the turn.
      if (ev.prompt_id !== undefined && ev.prompt_id === f.turn_prompt_id && f.turn_count >= f.prompts_submitted) return f;
      f.status = move(f, "busy");
      delete f.pending_permission;
      delete f.permission_denials;
      delete f.limit;
      return f;
    case "PreToolUse":
    case "PostToolUse":
      if (f.status === "waiting_for_permission") {
        f.status = "busy";
        delete f.pending_permission;
      }
      return f;
    case "PermissionRequest":
      f.status = move(f, "waiting_for_permission");
      if (f.status === "waiting_for_permission") {
        f.pending_permission = { tool_name: ev.tool_name ?? "unknown", tool_input: ev.tool_input ?? null, seq: prev.seq };
        if (ev.ts) f.pending_permission.since = ev.ts;
        if (Array.isArray(ev.permission_suggestions)) f.pending_permission.suggestions = ev.permission_suggestions;
        if (typeof ev.cs_request === "string") f.pending_permission.request = ev.cs_request;
      }
      return f;
    case "cs:permission_fallback":
      // The hook of this request stopped waiting: Claude shows its dialog, answered by keys from now on.
      if (f.pending_permission?.request !== undefined && f.pending_permission.request === ev.cs_request) {
        f.pending_permission = { ...f.pending_permission, fallback: true };
      }
      return f;
    case "Notification":
      if (ev.notification_type === "agent_needs_input" && isLive(f.status)) {
        f.needs_input = {
          message: typeof ev.message === "string" ? ev.message : "Claude Code needs input",
          ...(ev.ts ? { since: ev.ts } : {}),
        };
      }
      return f;
    case "PermissionDenied":
      // Auto mode's classifier (or its fallback) refused a tool call: the model is told, the turn goes on.
      f.permission_denials = [
        ...(f.permission_denials ?? []),
        {
          tool_name: ev.tool_name ?? "unknown",
          tool_use_id: ev.tool_use_id ?? "",
          tool_input: ev.tool_input ?? null,
          ...(typeof ev.reason === "string" ? { reason: ev.reason } : {}),
        },
      ].slice(-20);
      return f;
    case "cs:blocked":
      // The server saw a screen that waits for an answer while no hook fired (runners/terminal/screen/blocking.ts).
      if (
        isBlockedEvent(ev.blocked) &&
        (f.status === "busy" || f.status === "ready" || f.status === "idle" || f.status === "blocked")
      ) {
        const from = f.status === "blocked" ? (f.blocked?.from ?? "busy") : f.status;
        f.status = "blocked";
        f.blocked = {
          kind: ev.blocked.kind,
          text: ev.blocked.text,
          choices: [...ev.blocked.choices],
          seq: prev.seq,
          from,
          ...(ev.ts ? { since: ev.ts } : {}),
        };
      }
      return f;
    case "cs:unblocked":
      // The screen went (answered, or gone by itself) with no hook to say so.
      if (f.status === "blocked") {
        f.status = f.blocked?.from ?? "busy";
        delete f.blocked;
      }
      return f;
    case "Stop":
      f.turn_count += 1;
      endedPrompt(f, ev.prompt_id);
      f.status = move(f, "idle");
      if (ev.last_assistant_message !== undefined) {
        f.last_response = ev.last_assistant_message;
        f.responses += 1;
        f.response_chars += ev.last_assistant_message.length;
      }
      f.last_turn = "completed";
      f.background_tasks = Array.isArray(ev.background_tasks) ? ev.background_tasks.length : 0;
      delete f.pending_permission;
      delete f.last_error;
      return f;
    case "StopFailure":
      // The hook may land after the headless engine recorded the turn's failure (cs:turn_failed) from the SDK's
      // result, on a loaded machine even after the next prompt was taken: a turn already ended is not ended twice.
      // A limit is noted even when the headless engine ended the turn first (cs:turn_failed).
      if (isLimitFailure(ev.error, ev.last_assistant_message)) {
        const g = f.turn_count < f.prompts_submitted ? failTurn(f, ev.last_assistant_message ?? ev.error, ev.prompt_id) : f;
        return g.last_turn === "failed" ? noteLimit(g, ev, prev.seq, ev.last_assistant_message) : g;
      }
      return f.turn_count < f.prompts_submitted ? failTurn(f, ev.last_assistant_message ?? ev.error, ev.prompt_id) : f;
    case "cs:turn_failed":
      // The headless engine's record of a turn that ended with an error result and no Stop/StopFailure hook
      // (max_turns, max_budget_usd, structured-output retries): the same outcome as StopFailure.
      if (f.turn_count >= f.prompts_submitted) return f;
      failTurn(f, ev.message ?? ev.error);
      return isLimitFailure(ev.error, ev.message) ? noteLimit(f, ev, prev.seq, ev.message) : f;
    case "cs:limit_wait":
      // The server parked the session for this limit: its reset (the operator's wait when the CLI gave none) and the wake.
      if (
        f.limit &&
        f.limit.seq === ev.limit_seq &&
        typeof ev.resets_at === "string" &&
        Number.isFinite(Date.parse(ev.resets_at))
      ) {
        f.limit = { ...f.limit, resets_at: ev.resets_at, ...(typeof ev.due_at === "string" ? { wake_at: ev.due_at } : {}) };
      }
      return f;
    case "cs:limit_over":
      // The server found the limited prompt answered after all, or the limit was let go: nothing waits any more.
      delete f.limit;
      return f;
    case "cs:answered":
      // A dialog answered with Allow: the tool runs now, and no hook says so before PostToolUse (the real CLI).
      if (f.status === "waiting_for_permission" && f.pending_permission?.seq === ev.permission_seq) {
        f.status = "busy";
        delete f.pending_permission;
      }
      return f;
    case "cs:interrupted":
      if (f.status === "busy" || f.status === "waiting_for_permission" || f.status === "blocked") {
        f.turn_count += 1;
        endedPrompt(f, undefined);
        f.status = "idle";
        f.last_turn = "interrupted";
        delete f.pending_permission;
        delete f.blocked;
      }
      return f;
    case "SessionEnd":
      // /clear ends the conversation, not the process: a SessionStart (source clear) follows.
      if (ev.reason === "clear") return f;
      // A hibernated session's process is already over: a late end of it changes nothing.
      if (f.status === "hibernated") return f;
      f.status = move(f, "dead");
      if (ev.reason) f.end_reason = ev.reason;
      delete f.pending_permission;
      return f;
    case "cs:exit":
      // The late exit of a process this record has since replaced (resume) says nothing about the new one.
      if (typeof ev.generation === "number" && f.generation !== undefined && ev.generation < f.generation) return f;
      // A hibernated session ends only by kill_session (reason "kill"), not by a late exit of its ended process.
      if (f.status === "hibernated" && ev.reason !== "kill") return f;
      f.status = move(f, "dead");
      if (typeof ev.exit_code === "number") f.exit_code = ev.exit_code;
      f.end_reason ??= "exit";
      delete f.pending_permission;
      delete f.blocked;
      return f;
    case "cs:shutdown_requested":
      // A member's request_shutdown: a client approves with kill_session, a team lead with end_teammate.
      f.shutdown_requested = ev.reason ?? "requested";
      return f;
    case "cs:hibernated":
      // The server ended the process on purpose (idle time, kill_session {hibernate}, MAX_LIVE, shutdown): the
      // conversation is kept and the next prompt wakes it. One of an older generation is the old process's.
      if (typeof ev.generation === "number" && f.generation !== undefined && ev.generation < f.generation) return f;
      if (f.status === "starting") return f;
      f.status = "hibernated";
      delete f.pending_permission;
      delete f.blocked;
      delete f.needs_input;
      return f;
    case "cs:sandbox_violation":
      // Counted whatever the status: a refusal may come after the turn that caused it ended.
      f.sandbox_violations = (f.sandbox_violations ?? 0) + 1;
      return f;
    case "cs:snapshot":
      // The first line of a compacted log: everything before it, folded. A malformed one changes nothing.
      return isFold(ev.fold) ? { ...ev.fold } : f;
    case "cs:start_failed":
      // The orchestrator's verdict on a start that did not reach ready, whatever the process did.
      f.status = "error";
      f.last_error = ev.message ?? ev.reason ?? "start failed";
      return f;
    default:
      return assertNever(name);
  }
}

/** Events that show the CLI went on past a screen: the turn's hooks and the process's end. */
const CLEARS_BLOCKED: ReadonlySet<EventName> = new Set<EventName>([
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PermissionRequest",
  "PermissionDenied",
  "Stop",
  "StopFailure",
  "SessionEnd",
  "cs:turn_failed",
  "cs:interrupted",
  "cs:start_failed",
]);

export function foldAll(events: Iterable<LogEvent>, from: Folded = initialFold()): Folded {
  let f = from;
  for (const e of events) f = reduce(f, e);
  return f;
}
